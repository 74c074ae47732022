"""evaluate.py's output folder holds exactly one complete run; rule flags come from QuiddlerConfig; workers die with it."""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from quiddler_agents.cli import evaluate
from quiddler_agents.evaluation.report import PLOTS
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.files import FolderLock

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "evaluate.py"
RUN_FILES = {"results.json", "games.csv", "report.md", *PLOTS}
SMALL = ["--players", "greedy", "random", "--games", "2", "--hand-sizes", "3", "--workers", "1", "--quiet"]


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def check_complete(out: Path) -> dict:
    """The folder holds one whole run: its files, and a results.json that games.csv agrees with."""
    doc = json.loads((out / "results.json").read_text())
    expected = RUN_FILES | ({"games.jsonl"} if doc["run"]["save_games"] else set())
    assert {p.name for p in out.iterdir()} == expected
    rows = list(csv.DictReader((out / "games.csv").open()))
    t = doc["tournament"]
    assert len(rows) == t["games"] * t["table_size"]
    totals = defaultdict(list)
    for r in rows:
        totals[r["player"]].append(int(r["total"]))
    for label, p in doc["summary"]["players"].items():
        assert p["games"] == len(totals[label])
        assert sum(totals[label]) / len(totals[label]) == pytest.approx(p["final_score"]["estimate"], abs=1e-5)
    if "games.jsonl" in expected:
        games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
        assert [g["totals"] for g in games] == [
            [int(r["total"]) for r in rows if int(r["game"]) == g["game"]] for g in games
        ]
    return doc


def staging_left(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.") and p.suffix == ".tmp")


# -- rule flags -------------------------------------------------------------------------------------


def test_every_rule_field_has_a_flag_and_a_help():
    parser = evaluate.build_parser()
    actions = {a.dest: a for a in parser._actions}
    for option in QuiddlerConfig.rule_options():
        if option.name == "num_players":  # the table size: --table-size
            assert option.kind is None and actions["table_size"].help
            continue
        assert option.name in evaluate.RULE_FLAGS, f"rule option {option.name} has no evaluate.py flag"
        action = actions[option.name]
        assert option.flag in action.option_strings and option.help in action.help


def test_rule_flags_reach_the_config():
    args = evaluate.build_parser().parse_args(
        [
            "--players",
            "greedy",
            "random",
            "--hand-sizes",
            "3",
            "4",
            "--min-word-cards",
            "1",
            "--two-player-bonus",
            "both",
            "--bonus-value",
            "0",
            "--score-floor",
            "none",
            "--go-out",
            "forced",
            "--dictionary",
            "enable",
            "--turn-cap",
            "none",
        ]  # fmt: skip
    )
    rules = QuiddlerConfig.from_mapping(evaluate.resolve(args)["rules"])
    assert rules == QuiddlerConfig(
        hand_sizes=(3, 4), min_word_cards=1, two_player_bonus="both", bonus_value=0, score_floor="none",
        go_out="forced", turn_cap=None,
    )  # fmt: skip
    with pytest.raises(SystemExit) as exit_:
        evaluate.build_parser().parse_args(["--turn-cap", "many"])
    assert exit_.value.code == 2


# -- the output folder ------------------------------------------------------------------------------


@pytest.mark.parametrize("out", ["", " ", "\t "])
def test_empty_out_is_refused_and_nothing_written(out, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.md").write_text("mine")
    assert evaluate.main([*SMALL, "--out", out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("evaluate.py: error: out must name an output folder")
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"] and (tmp_path / "report.md").read_text() == "mine"


def test_config_file_empty_out_is_refused(tmp_path, capsys):
    config = tmp_path / "eval.yaml"
    config.write_text('players: [greedy, random]\nout: ""\n')
    assert evaluate.main(["--config", str(config)]) == 2
    assert "out must name an output folder" in capsys.readouterr().err


def test_rerun_replaces_the_folder_whole(tmp_path, capsys):
    out = tmp_path / "res"
    assert evaluate.main([*SMALL, "--seed", "1", "--save-games", "--out", str(out)]) == 0
    assert check_complete(out)["seed"] == 1 and (out / "games.jsonl").exists()
    assert evaluate.main([*SMALL, "--seed", "2", "--out", str(out)]) == 0
    assert check_complete(out)["seed"] == 2
    assert not (out / "games.jsonl").exists()  # the first run's saved games are gone with it
    assert staging_left(out) == []


def test_a_folder_of_other_files_is_refused_not_replaced(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "report.md").write_text("my notes")
    assert evaluate.main([*SMALL, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"output folder {out} is not empty and holds no results.json of evaluate.py" in err[0]
    assert [p.name for p in out.iterdir()] == ["report.md"] and (out / "report.md").read_text() == "my notes"

    # A run's folder with a file of the user's added is refused too: a rerun would delete it.
    run = tmp_path / "run"
    assert evaluate.main([*SMALL, "--out", str(run)]) == 0
    (run / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert evaluate.main([*SMALL, "--out", str(run)]) == 2
    assert "holds 'notes.txt', which evaluate.py did not write" in capsys.readouterr().err
    assert (run / "notes.txt").read_text() == "mine"


def test_a_killed_runs_temporaries_are_removed_at_start(tmp_path, capsys):
    out = tmp_path / "res"
    assert evaluate.main([*SMALL, "--out", str(out)]) == 0
    stale = tmp_path / ".res.k1lled_x.tmp"  # a staging folder of a killed run
    stale.mkdir()
    (stale / "games.csv").write_text("half")
    (out / ".results.json.abc123.tmp").write_text("half")  # an older evaluate.py's temporary file
    sibling = tmp_path / ".other.k1lled_x.tmp"  # another folder's: not ours to remove
    sibling.mkdir()
    assert evaluate.main([*SMALL, "--seed", "3", "--out", str(out)]) == 0
    assert not stale.exists() and sibling.exists()
    assert check_complete(out)["seed"] == 3


@pytest.mark.slow
def test_a_folder_another_run_is_writing_is_refused(tmp_path):
    out = tmp_path / "res"
    with FolderLock(out, what="output folder"):
        proc = start(*SMALL, "--out", out)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0] == (
        f"evaluate.py: error: output folder {out} is being written by another process (pid {os.getpid()})"
    )
    assert not out.exists()
    proc = start(*SMALL, "--out", out)  # the lock released: the next run goes ahead
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    check_complete(out)


@pytest.mark.slow
def test_kill_9_at_random_moments_leaves_the_old_run_or_the_new_one(tmp_path):
    out = tmp_path / "res"
    args = ["--players", "greedy", "random", "--games", "4", "--hand-sizes", "3", "4", "--workers", "1", "--quiet"]
    began = time.monotonic()
    first = start(*args, "--seed", "1", "--save-games", "--out", out)
    assert first.wait(timeout=240) == 0, first.stderr.read()
    seconds = time.monotonic() - began
    assert check_complete(out)["seed"] == 1
    rng = random.Random(10)
    seen = []
    for _ in range(6):
        proc = start(*args, "--seed", "2", "--out", out)
        time.sleep(rng.uniform(0.3, 1.1) * seconds)
        proc.kill()
        proc.wait(timeout=60)
        doc = check_complete(out)  # never a mix: one run's files, whole
        assert doc["seed"] in (1, 2)
        assert ("games.jsonl" in {p.name for p in out.iterdir()}) == (doc["seed"] == 1)
        seen.append(doc["seed"])
    proc = start(*args, "--seed", "3", "--out", out)
    assert proc.wait(timeout=240) == 0, proc.stderr.read()
    assert check_complete(out)["seed"] == 3
    assert staging_left(out) == []  # what the kills left is gone
    print(f"kill -9 over an old run: folder held seeds {seen}")


# -- worker processes --------------------------------------------------------------------------------


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has ended; only its exit status waits to be read


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
def test_workers_end_when_evaluate_is_killed(tmp_path):
    out = tmp_path / "res"
    proc = start(
        "--players",
        "greedy",
        "random",
        "--games",
        "4000",
        "--workers",
        "2",
        "--engine",
        "single",
        "--quiet",
        "--out",
        out,
    )
    try:
        deadline = time.monotonic() + 120
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 2:
            assert proc.poll() is None, proc.stderr.read()
            workers = {
                c for c in children(proc.pid) if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()
            }  # fmt: skip
            time.sleep(0.2)
        assert len(workers) >= 2, "the worker processes did not start"
        time.sleep(3)  # let them get into their games
        assert all(alive(w) for w in workers)
        everyone = children(proc.pid)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(c) for c in everyone):
        time.sleep(0.1)
    left = [c for c in everyone if alive(c)]
    for c in left:  # do not leave them to the rest of the suite
        os.kill(c, signal.SIGKILL)
    assert left == [], f"processes {left} outlived their killed parent"
    assert not out.exists()


WATCHED = """
import os, sys, time
from quiddler_agents.evaluation.tournament import die_with_parent
if sys.argv[1] == "poll":
    sys.platform = "darwin"  # the fallback: a thread polling os.getppid()
die_with_parent(int(sys.argv[2]) if len(sys.argv) > 2 else os.getppid())
print(os.getpid(), flush=True)
time.sleep(120)
"""
MIDDLE = (
    "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2]]); time.sleep(120)"
)


@pytest.mark.slow
@pytest.mark.parametrize("way", ["prctl", "poll"])
def test_die_with_parent_ends_a_child_of_a_killed_process(way):
    # A parent already gone (here: another pid than the real parent) ends the child at once.
    early = subprocess.run([sys.executable, "-c", WATCHED, way, "1"], cwd=ROOT, capture_output=True, timeout=120)
    assert early.returncode == 1 and early.stdout == b""
    middle = subprocess.Popen(
        [sys.executable, "-c", MIDDLE, WATCHED, way], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        line = middle.stdout.readline()
        assert line.strip().isdigit(), middle.stderr.read()
        child = int(line)
        assert alive(child)
    finally:
        middle.kill()
        middle.wait(timeout=30)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and alive(child):
        time.sleep(0.1)
    if alive(child):
        os.kill(child, signal.SIGKILL)
        pytest.fail(f"child {child} outlived its killed parent")


def test_out_dot_names_the_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.md").write_text("mine")
    assert evaluate.main([*SMALL, "--out", "."]) == 2
    assert f"output folder {tmp_path} is not empty" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]
    (tmp_path / "res").mkdir()
    monkeypatch.chdir(tmp_path / "res")
    assert evaluate.main([*SMALL, "--out", "../res"]) == 0  # an empty folder, named through its parent
    assert check_complete(tmp_path / "res")["run"]["out"] == "../res"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == ["report.md", "res"]


def test_replay_refuses_a_fifo_at_once(tmp_path, capsys):
    fifo = tmp_path / "games.jsonl"
    os.mkfifo(fifo)
    began = time.monotonic()
    assert evaluate.main(["--replay", str(fifo), "--game", "0"]) == 2
    assert time.monotonic() - began < 5
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"cannot read saved games {fifo}" in err[0] and "not a regular file" in err[0]
