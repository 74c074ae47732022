"""The documentation site's sources: every page in mkdocs.yml's nav exists and is its own page (no README
sections pasted in), the changelog is in order, every zoo entry tells its story, and the generated tables cover
every declared option (the build itself, `mkdocs build --strict`, runs in .ci/run; the pages' Python blocks run in
tests/test_doc_examples.py)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

import quiddler_env
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.observation import observation_layout
from quiddler_env.envs.common import ENV_OPTIONS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")
CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Page:
    class file:
        src_path = "test.md"


def _nav_pages() -> list[str]:
    # mkdocs.yml's own tags (!ENV, python names) are not used in it, so safe_load reads it.
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    return [page for entry in nav for page in entry.values()]


def test_every_page_in_the_nav_exists_and_every_page_is_in_the_nav():
    pages = _nav_pages()
    assert len(pages) == len(set(pages))
    assert sorted(pages) == sorted(p.name for p in DOCS.glob("*.md"))
    for page in ("coming-from.md", "rules.md", "environments.md", "observations.md", "training.md"):
        assert page in pages
    for page in ("evaluation.md", "integrations.md", "table.md", "benchmarks.md", "api.md", "changes.md"):
        assert page in pages


def test_each_page_is_its_own_page():
    assert "--8<--" not in README, "the README marks no sections for the pages: each page is written as its own"
    for page in DOCS.glob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert "README.md" not in re.findall(r'--8<-- "([^"]+)"', text), page.name
        assert text.startswith("# ") or text.startswith('--8<-- "CHANGELOG.md"'), f"{page.name} has no title"
    assert '--8<-- "CHANGELOG.md"' in (DOCS / "changes.md").read_text(encoding="utf-8")


def test_the_changelog_lists_the_versions_newest_first():
    versions = re.findall(r"^## \[(\d+)\.(\d+)\.(\d+)\] - \d{4}-\d{2}-\d{2}$", CHANGELOG, re.MULTILINE)
    numbers = [tuple(map(int, v)) for v in versions]
    assert numbers == sorted(numbers, reverse=True) and len(set(numbers)) == len(numbers)
    assert ".".join(map(str, numbers[0])) == quiddler_env.__version__  # the newest release is the package's
    assert CHANGELOG.index("## [Unreleased]") < CHANGELOG.index("## [" + quiddler_env.__version__ + "]")
    assert "## Changes in" not in README, "the history lives in CHANGELOG.md"


def test_every_zoo_entry_tells_its_story():
    from quiddler_agents.zoo import ZOO_DIR, entries

    for name in entries():
        story = (ZOO_DIR / name / "README.md").read_text(encoding="utf-8")
        assert story.startswith(f"# `zoo:{name}`"), name
        assert f"agents/zoo/{name}/README.md" in (DOCS / "evaluation.md").read_text(encoding="utf-8")


def test_the_option_tables_list_every_declared_option():
    hooks = _hooks()
    rules = hooks.on_page_markdown("<!-- table:rule-options -->", _Page, None, None)
    for name in QuiddlerConfig.field_names():
        assert f"| `{name}` |" in rules
    envs = hooks.on_page_markdown("<!-- table:env-options -->", _Page, None, None)
    assert [line.split("`")[1] for line in envs.splitlines()[2:]] == [o.name for o in ENV_OPTIONS]
    sizes = hooks.on_page_markdown("<!-- table:observation-sizes -->", _Page, None, None).splitlines()
    assert sizes[2].startswith(f"| 2 | {observation_layout(2).size} |")
    assert len(sizes) == 2 + 7 + 3 + 2 + 7 and sizes[-7].startswith(f"| 2 | {observation_layout(2, True).size} |")


def test_an_unknown_table_fails_the_build():
    with pytest.raises(ValueError, match="unknown table 'rule-option'"):
        _hooks().on_page_markdown("<!-- table:rule-option -->", _Page, None, None)
