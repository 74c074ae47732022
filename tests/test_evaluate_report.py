"""Output files of agents.evaluation.report: atomic writes, the output folder check, tiny tournaments."""

from __future__ import annotations

import json

import pytest

from agents.evaluation.report import (
    PLOTS,
    atomic_write,
    atomic_write_text,
    games_csv,
    prepare_output,
    report_markdown,
    results_document,
    results_json,
    write_outputs,
)
from agents.evaluation.summary import summarize
from agents.evaluation.tournament import Tournament, run_tournament
from quiddler_env.core.config import QuiddlerConfig


def test_atomic_write_keeps_the_old_file_when_interrupted(tmp_path):
    path = tmp_path / "results.json"
    atomic_write_text(path, "complete\n")

    def half_then_fail(fh):
        fh.write("half wri")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, half_then_fail)
    assert path.read_text() == "complete\n"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temporary file left behind


def test_prepare_output_names_the_problem(tmp_path):
    assert prepare_output(tmp_path / "a" / "b").is_dir()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ValueError, match=f"output folder {blocker} exists and is not a folder"):
        prepare_output(blocker)
    with pytest.raises(ValueError, match="is not writable"):
        prepare_output(blocker / "sub")


def test_one_game_tournament_reports_without_intervals(tmp_path):
    t = Tournament(("greedy", "random"), games=1, seed=2, duplicate=False, rules=QuiddlerConfig(hand_sizes=(3,)))
    played = run_tournament(t)
    summary = summarize(t, played)
    player = summary["players"]["greedy"]
    assert player["final_score"]["low"] is None and player["final_score"]["n"] == 1  # one unit: no interval
    assert player["win_rate"]["low"] is not None  # Wilson still has one
    run = {"workers": 1, "seconds": 0.5, "games_per_second": 2.0, "out": str(tmp_path), "argv": []}
    document = results_document(t, summary, run)
    assert json.loads(results_json(document))["summary"]["players"]["greedy"]["games"] == 1
    report = report_markdown(document)
    assert "| `greedy` | 1 |" in report and "## Ratings" not in report
    assert games_csv(t, played).count("\n") == 1 + 2
    written = write_outputs(tmp_path, t, played, summary, run, save_games=True)
    assert [p.name for p in written][-1] == "results.json"  # written last: its presence means a complete run
    assert {p.name for p in tmp_path.iterdir()} == {"results.json", "games.csv", "report.md", "games.jsonl", *PLOTS}
