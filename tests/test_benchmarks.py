"""The benchmark scripts run as the README gives them, `python benchmarks/NAME.py`, from any folder.

A script run that way has `benchmarks/` on its path, not the checkout's root, so each one that
needs `agents` (or `train.py`, which imports it) must put the root there itself; a fresh clone
has no installed `agents` package to fall back on (the wheel installs it as `quiddler_agents`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
USERS = [p for p in SCRIPTS if "agents" in (text := p.read_text(encoding="utf-8")) or "train.py" in text]
"""The scripts that import the checkout's `agents` (directly or through train.py)."""

pytestmark = pytest.mark.slow  # each test starts a Python process


def test_there_are_benchmarks():
    assert len(SCRIPTS) >= 10, [p.name for p in SCRIPTS]
    assert {"bench_train.py", "bench_evaluate.py", "ladder.py"} <= {p.name for p in USERS}


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_help_from_another_folder(script, tmp_path):
    done = subprocess.run(
        [sys.executable, str(script), "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


@pytest.mark.parametrize("script", USERS, ids=[p.stem for p in USERS])
def test_the_checkouts_agents_import_from_another_folder(script, tmp_path):
    # Loading the script (not as __main__) runs its top level, as `python SCRIPT` would; after that the
    # `quiddler_agents` its main imports must be this checkout's, and bench_train must load train.py.
    code = (
        "import runpy, sys\n"
        f"ns = runpy.run_path({str(script)!r})\n"
        "import quiddler_agents\n"
        "print(quiddler_agents.__file__)\n"
        "if '_train_module' in ns:\n"
        "    print(callable(ns['_train_module']().main))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "No module named 'quiddler_agents'" in done.stderr:
        pytest.fail(f"{script.name} run from another folder cannot import the checkout's agents")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.split()
    assert Path(lines[0]).resolve().is_relative_to(ROOT / "agents"), lines
    if script.name == "bench_train.py":
        assert lines[1] == "True"
