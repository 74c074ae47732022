"""Every fenced Python block of the README and the documentation pages runs, as a reader would paste it.

Each ```python block runs in a fresh namespace, in a scratch folder (so a block that trains or evaluates
writes there), or from the repository root when it reads `configs/`. A block that cannot run here is
marked just before its fence with `<!-- skip-example: the reason -->`; there are few, each with a reason.
The blocks keep tiny budgets (short hand sizes, a few hundred training steps, two-game evaluations).
"""

from __future__ import annotations

import os
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 300
MAX_SKIPPED = 3

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")
SKIP = re.compile(r"^\s*<!--\s*skip-example:(?P<reason>.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced Python block: where it is (page, line of its opening fence), its code, why it is skipped."""

    page: str
    line: int
    code: str
    skip: str | None = None

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def python_blocks(text: str, page: str) -> list[Block]:
    """The ```python blocks of a Markdown text, each with the skip marker on the line before its fence, if any.

    A skip marker without a reason, one not followed by a Python block, or a fence left open is a ValueError."""
    lines = text.splitlines()
    blocks: list[Block] = []
    used_markers: set[int] = set()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, fence = opening["indent"], opening["fence"]
        end = i + 1
        while end < len(lines) and not re.fullmatch(rf"[ \t]*{re.escape(fence[0])}{{{len(fence)},}}\s*", lines[end]):
            end += 1
        if end == len(lines):
            raise ValueError(f"{page}:{i + 1}: a code fence that is never closed")
        if opening["info"].lower() in ("python", "py"):
            body = [line[len(indent) :] if line.startswith(indent) else line for line in lines[i + 1 : end]]
            skip = None
            before = i - 1
            while before >= 0 and not lines[before].strip():
                before -= 1
            if before >= 0 and (marker := SKIP.match(lines[before])):
                skip = marker["reason"].strip()
                if not skip:
                    raise ValueError(f"{page}:{before + 1}: a skip-example marker must say why")
                used_markers.add(before)
            blocks.append(Block(page, i + 1, textwrap.dedent("\n".join(body)), skip))
        i = end + 1
    for number, line in enumerate(lines):
        if SKIP.match(line) and number not in used_markers and not _in_code(lines, number):
            raise ValueError(f"{page}:{number + 1}: a skip-example marker that is not just before a Python block")
    return blocks


def _in_code(lines: list[str], number: int) -> bool:
    """Whether line `number` is inside a fenced block (where a marker is only an example of one)."""
    inside: str | None = None
    for line in lines[:number]:
        fence = FENCE.match(line)
        if inside is None and fence is not None:
            inside = fence["fence"]
        elif inside is not None and re.fullmatch(rf"[ \t]*{re.escape(inside[0])}{{{len(inside)},}}\s*", line):
            inside = None
    return inside is not None


def run_block(block: Block, scratch: Path) -> None:
    """Run a block in a fresh namespace, from the repository root if it reads configs/, else from `scratch`.

    The code keeps its lines' numbers in the page, so a traceback names the page and the line that failed."""
    code = compile("\n" * block.line + block.code, block.page, "exec")
    here = os.getcwd()
    os.chdir(ROOT if "configs/" in block.code else scratch)
    try:
        exec(code, {"__name__": "__main__"})
    finally:
        os.chdir(here)


def _all_blocks() -> list[Block]:
    return [
        b for page in PAGES for b in python_blocks(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix())
    ]


BLOCKS = _all_blocks()


# Slow: the blocks train (a few hundred PPO steps), evaluate and play whole games (about 20 s in all on 2 cores).
@pytest.mark.slow
@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_the_example_runs(block: Block, tmp_path: Path) -> None:
    if block.skip:
        pytest.skip(block.skip)
    run_block(block, tmp_path)


def test_the_examples_are_found_and_few_are_skipped():
    pages = {b.page for b in BLOCKS}
    assert {"README.md", "docs/coming-from.md", "docs/environments.md"} <= pages
    assert sum(b.page == "README.md" for b in BLOCKS) >= 4  # one per entry point at least
    skipped = [b for b in BLOCKS if b.skip]
    assert len(skipped) <= MAX_SKIPPED, [b.name for b in skipped]
    assert all(len(b.skip) >= 10 for b in skipped), "each skipped example says why"


def test_a_broken_example_is_reported(tmp_path):
    page = "\n".join(
        [
            "# A page",  # 1
            "",
            "```python",  # 3
            "x = 1",
            "```",
            "",
            "```bash",
            "exit 1",
            "```",
            "",
            "<!-- skip-example: needs a Ray cluster -->",  # 11
            "```python",  # 12
            "import a_module_that_is_not_there",
            "```",
            "",
            "- in a list:",
            "",
            "    ```python",  # 18
            "    y = 2",
            "    raise RuntimeError('broken')",  # 20
            "    ```",
        ]
    )
    blocks = python_blocks(page, "page.md")
    assert [(b.line, b.skip) for b in blocks] == [(3, None), (12, "needs a Ray cluster"), (18, None)]
    run_block(blocks[0], tmp_path)
    with pytest.raises(RuntimeError, match="broken") as failure:
        run_block(blocks[2], tmp_path)
    last = failure.tb
    while last.tb_next is not None:
        last = last.tb_next
    assert (last.tb_frame.f_code.co_filename, last.tb_lineno) == ("page.md", 20)  # the page's own line


def test_a_skip_marker_needs_a_reason_and_a_block():
    with pytest.raises(ValueError, match="page.md:1: a skip-example marker must say why"):
        python_blocks("<!-- skip-example: -->\n```python\npass\n```\n", "page.md")
    with pytest.raises(ValueError, match="page.md:1: a skip-example marker that is not just before"):
        python_blocks("<!-- skip-example: no block -->\n\ntext\n```bash\nls\n```\n", "page.md")
    with pytest.raises(ValueError, match="page.md:1: a code fence that is never closed"):
        python_blocks("```python\npass\n", "page.md")


def test_the_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; the detail belongs in docs/"
