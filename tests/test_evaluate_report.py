"""Output files of quiddler_agents.evaluation.report: the output folder check, a run written whole, tiny tournaments."""

from __future__ import annotations

import json
import os

import pytest

from quiddler_agents.evaluation.report import (
    PLOTS,
    check_output,
    games_csv,
    report_markdown,
    results_document,
    results_json,
    write_run,
)
from quiddler_agents.evaluation.summary import summarize
from quiddler_agents.evaluation.tournament import Tournament, run_tournament
from quiddler_env.core.config import QuiddlerConfig


def test_check_output_names_the_problem(tmp_path):
    assert check_output(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert not (tmp_path / "a").exists()  # checked, not made
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ValueError, match=f"output folder {blocker} exists and is not a folder"):
        check_output(blocker)
    with pytest.raises(ValueError, match="is a file, not a folder"):
        check_output(blocker / "sub")
    for empty in ("", "  ", "\t"):
        with pytest.raises(ValueError, match="out must name an output folder"):
            check_output(empty)


def test_check_output_refuses_a_folder_of_other_files(tmp_path):
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "report.md").write_text("my report")
    with pytest.raises(ValueError, match="holds no results.json of evaluate.py"):
        check_output(mine)
    (mine / "results.json").write_text('{"not": "ours"}')
    with pytest.raises(ValueError, match="holds no results.json of evaluate.py"):
        check_output(mine)
    (tmp_path / "empty").mkdir()
    assert check_output(tmp_path / "empty") == tmp_path / "empty"


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
    out = tmp_path / "run"
    written = write_run(out, t, played, summary, run, save_games=True)
    assert [p.name for p in written][-1] == "results.json"  # written last: its presence means a complete run
    assert {p.name for p in out.iterdir()} == {"results.json", "games.csv", "report.md", "games.jsonl", *PLOTS}
    assert written == [out / p.name for p in written]
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no staging folder left beside it
    mask = os.umask(0)
    os.umask(mask)
    assert all((p.stat().st_mode & 0o777) == 0o666 & ~mask for p in written)  # as open() would make them
    assert (out.stat().st_mode & 0o777) == 0o777 & ~mask
    check_output(out)  # a run's folder may be replaced by the next run

    # The next run without saved games replaces the folder whole: no games.jsonl of the first run stays.
    write_run(out, t, played, summary, run, save_games=False)
    assert {p.name for p in out.iterdir()} == {"results.json", "games.csv", "report.md", *PLOTS}
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="holds 'notes.txt', which evaluate.py did not write"):
        check_output(out)
