"""MkDocs hooks: the pages' tables that the code declares, rendered from those declarations at build time.

A page names a table with an HTML comment, `<!-- table:NAME -->`; an unknown name fails the build.
"""

from __future__ import annotations

import re

from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor

TABLE = re.compile(r"<!-- table:([a-z0-9-]+) -->")


def _cell(value) -> str:
    text = "null" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _rule_options() -> str:
    from quiddler_env.core.config import QuiddlerConfig

    rows = ["| option | default | values | what it does |", "|---|---|---|---|"]
    for option in QuiddlerConfig.rule_options():
        values = ", ".join(f"`{c}`" for c in option.choices) if option.choices else (option.kind or "")
        if option.bounds is not None:
            values += f" {option.bounds[0]}..{option.bounds[1]}"
        rows.append(f"| `{option.name}` | `{_cell(option.default)}` | {values} | {_cell(option.help)} |")
    return "\n".join(rows)


def _env_options() -> str:
    from quiddler_env.envs.common import ENV_OPTIONS

    rows = ["| option | default | envs | what it does |", "|---|---|---|---|"]
    for option in ENV_OPTIONS:
        rows.append(
            f"| `{option.name}` | `{_cell(option.default)}` | {', '.join(option.kinds)} | {_cell(option.doc)} |"
        )
    return "\n".join(rows)


def _observation_sizes() -> str:
    from quiddler_env.core.observation import observation_layout

    names = list(observation_layout(2).slices)
    head = "| players | size | " + " | ".join(f"`{n}`" for n in names) + " |"
    rows = [head, "|" + "---|" * (len(names) + 2)]
    for n in range(2, 9):
        layout = observation_layout(n)
        sizes = [str(layout.slices[name].stop - layout.slices[name].start) for name in names]
        rows.append(f"| {n} | {layout.size} | " + " | ".join(sizes) + " |")
    # The challenge variant appends its slices after these.
    extra = [name for name in observation_layout(2, True).slices if name not in names]
    rows += ["", "With `challenges: true` these slices follow:", ""]
    rows += ["| players | size | " + " | ".join(f"`{n}`" for n in extra) + " |", "|" + "---|" * (len(extra) + 2)]
    for n in range(2, 9):
        layout = observation_layout(n, True)
        sizes = [str(layout.slices[name].stop - layout.slices[name].start) for name in extra]
        rows.append(f"| {n} | {layout.size} | " + " | ".join(sizes) + " |")
    return "\n".join(rows)


def _env_versions() -> str:
    from quiddler_env.envs.versions import versions_table

    return versions_table()


def _leaderboard(benchmark: str) -> str:
    """The leaderboard of a declared benchmark, from the cards committed under benchmarks/cards/NAME/."""
    from pathlib import Path

    from quiddler_agents.evaluation.benchmark import get_protocol
    from quiddler_agents.evaluation.leaderboard import committed_cards, render_leaderboard

    get_protocol(benchmark)  # an undeclared name fails the build
    return render_leaderboard(committed_cards(benchmark, Path(__file__).resolve().parents[1] / "benchmarks" / "cards"))


TABLES = {
    "rule-options": _rule_options,
    "env-options": _env_options,
    "observation-sizes": _observation_sizes,
    "env-versions": _env_versions,
}
LEADERBOARD = "leaderboard-"
"""`<!-- table:leaderboard-NAME -->`: the leaderboard of benchmark NAME."""


def on_page_markdown(markdown: str, page, config, files) -> str:
    def table(match: re.Match) -> str:
        name = match.group(1)
        if name.startswith(LEADERBOARD):
            return _leaderboard(name[len(LEADERBOARD) :])
        if name not in TABLES:
            raise ValueError(f"{page.file.src_path}: unknown table {name!r}; known: {', '.join(TABLES)}")
        return TABLES[name]()

    return TABLE.sub(table, markdown)


class _RootLinks(Preprocessor):
    """Files included whole from the repository root (CHANGELOG.md, through pymdownx.snippets) link the pages as
    docs/NAME.md and the images as docs/img/...; the pages live in docs/, so they link NAME.md and img/... Runs
    after pymdownx.snippets has pasted the file in (a lower priority runs later), before MkDocs checks the links."""

    def run(self, lines: list[str]) -> list[str]:
        return [line.replace("](docs/", "](") for line in lines]


class _RootLinksExtension(Extension):
    def extendMarkdown(self, md) -> None:  # noqa: N802 (Markdown's name)
        md.preprocessors.register(_RootLinks(md), "root_links", 1)


def on_config(config):
    config.markdown_extensions.append(_RootLinksExtension())
    return config
