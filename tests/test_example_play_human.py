"""examples/play_human.py: a whole scripted game at the terminal, and its errors."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "examples" / "play_human.py"


def run(args: list[str], stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=120
    )


@pytest.mark.slow
def test_scripted_game_to_the_end():
    # "1" is always a legal move number; junk input is re-asked, not fatal.
    out = run(["--rounds", "2", "--seed", "4", "--opponents", "greedy"], "help\nnonsense\n" + "1\n" * 60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("Round over:") == 2
    totals = re.search(r"Final totals: \[(\d+), (\d+)\]", out.stdout)
    assert totals is not None
    last_you = re.findall(r"you(?: \(went out\))?: .*total (\d+)", out.stdout)[-1]
    assert int(last_you) == int(totals.group(1))


@pytest.mark.slow
def test_end_of_input_leaves_cleanly_and_bad_options_exit_2():
    out = run(["--rounds", "1"], "")
    assert out.returncode == 0 and "Game left." in out.stdout
    bad = run(["--seat", "5"], "")
    assert bad.returncode == 2 and "--seat 5" in bad.stderr
    unknown = run(["--opponents", "grandmaster"], "")
    assert unknown.returncode == 2 and "grandmaster" in unknown.stderr
