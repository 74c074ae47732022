"""benchmarks/strength_curve.py: each kept checkpoint of a run over duplicate deals, on the run's clock."""

from __future__ import annotations

import json
import runpy
import shutil
from pathlib import Path

from quiddler_agents import zoo

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = runpy.run_path(str(ROOT / "benchmarks" / "strength_curve.py"))


def _run_folder(tmp_path: Path) -> Path:
    # Two checkpoints holding the zoo champion: one with the clock in its state.json and the bundle in
    # policy/, one whose clock only eval.csv gives and which is the bundle itself; and one folder with no bundle.
    run = tmp_path / "run"
    bundle = zoo.entry_path("champion-2p")
    first = run / "checkpoints" / "step_000000100"
    shutil.copytree(bundle, first / "policy")
    (first / "state.json").write_text(json.dumps({"run_seconds": 90.0}))
    shutil.copytree(bundle, run / "checkpoints" / "step_000000200")
    (run / "checkpoints" / "step_000000300").mkdir()
    (run / "eval.csv").write_text("step,opponent,win_rate,run_seconds\n100,random,0.1,80\n200,random,0.2,150.5\n")
    return run


def test_each_checkpoint_plays_as_evaluate_py_plays_it_on_the_run_clock(tmp_path):
    import evaluate

    run = _run_folder(tmp_path)
    rows = SCRIPT["strength_curve"](run, "random", games=6, seed=3, workers=1)
    assert [(r["step"], r["run_seconds"]) for r in rows] == [(100, 90.0), (200, 150.5)]
    # The same games as evaluate.py's own, with the same deals.
    out = tmp_path / "direct"
    bundle = run / "checkpoints" / "step_000000200"
    assert (
        evaluate.main(
            [
                "--players",
                f"policy:{bundle}",
                "random",
                "--games",
                "6",
                "--seed",
                "3",
                "--workers",
                "1",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    pair = json.loads((out / "results.json").read_text())["summary"]["pairs"][0]
    assert rows[1]["win_rate"] == pair["a_win_rate"]["estimate"]
    assert rows[1]["paired"] == pair["score_difference"]["paired"]
    assert rows[0]["win_rate"] == rows[1]["win_rate"]  # one policy, the same deals


def test_it_prints_the_table_and_the_first_checkpoint_at_each_level(tmp_path, capsys):
    run = _run_folder(tmp_path)
    assert SCRIPT["main"]([str(run), "--opponent", "random", "--games", "6", "--seed", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{run}: 6 games a checkpoint against random (--seed 3)"
    assert [line.split(" | ")[:2] for line in lines[3:5]] == [["| 100", "1.5"], ["| 200", "2.5"]]
    # The champion beats random in most games: both levels reached at the first checkpoint.
    assert lines[5:] == ["50% against random: 1.5 min (step 100)", "55% against random: 1.5 min (step 100)"]


def test_a_run_without_a_kept_policy_is_one_line(tmp_path):
    import pytest

    (tmp_path / "run" / "checkpoints" / "step_000000001").mkdir(parents=True)
    with pytest.raises(SystemExit, match="no checkpoint with a policy bundle in"):
        SCRIPT["strength_curve"](tmp_path / "run", "random", games=2, seed=0, workers=1)
