"""The documentation site's sources: every README section a page includes exists, and the generated tables cover
every declared option (the build itself, `mkdocs build --strict`, runs in .ci/run)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.envs.common import ENV_OPTIONS
from quiddler_env.envs.observation import observation_layout

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Page:
    class file:
        src_path = "test.md"


def test_every_included_readme_section_is_marked_once():
    included = set()
    for page in (ROOT / "docs").glob("*.md"):
        included |= set(re.findall(r'--8<-- "README\.md:([a-z-]+)"', page.read_text()))
    assert {"intro", "rules", "environments", "integrations", "speed", "training"} <= included
    for name in included:
        assert README.count(f"<!-- --8<-- [start:{name}] -->") == 1, name
        assert README.count(f"<!-- --8<-- [end:{name}] -->") == 1, name
        assert README.index(f"[start:{name}]") < README.index(f"[end:{name}]")


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
