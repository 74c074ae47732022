"""Issue 42, safe and sound: what the commands promise when things go wrong.

Bad word lists and too deeply nested files are one line and exit code 2; a full disk is
one line naming the file, with the run's checkpoints whole and its lock gone; SIGTERM ends
train.py and evaluate.py as Ctrl-C does: one line, 128 + the signal, workers shut down,
and the run resumes.
"""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from quiddler_agents.cli import evaluate as evaluate_cli
from quiddler_agents.cli import train as train_cli
from quiddler_agents.evaluation.replay import ReplayError, saved_games
from quiddler_agents.evaluation.report import is_results_document
from quiddler_agents.policies.bundle import PolicyLoadError, read_description
from quiddler_agents.training import CheckpointError, RunConfigError
from quiddler_agents.training.config import parse_override
from quiddler_agents.training.run import checkpoints, read_checkpoint_state
from quiddler_env.core import files
from quiddler_env.core.config import QuiddlerConfig
from tests.test_train_recovery import TINY  # the same tiny run

ROOT = Path(__file__).resolve().parent.parent
DEEP = 100_000
"""Levels of nesting in the crafted files: far beyond what Python's parsers follow (about 1,000)."""


def _config(tmp_path: Path, **sections) -> Path:
    data = {**json.loads(json.dumps(TINY)), **sections}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _one_line(rc: int, err: str, prog: str, *needles: str, status: int = 2) -> str:
    """The command failed with `status` and said so in one line starting `prog: error:` holding every needle."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == status and len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), (rc, err)
    for needle in needles:
        assert needle in lines[0], (needle, err)
    return lines[0]


def _train(capsys, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    rc = train_cli.main([*args, "--quiet"])
    return rc, capsys.readouterr().err


def _evaluate(capsys, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    rc = evaluate_cli.main(list(args))
    return rc, capsys.readouterr().err


def _nested(path: Path, suffix: str = "") -> Path:
    path.write_text("[" * DEEP + "]" * DEEP + suffix)
    return path


# -- 1. seat vocabularies: one line, exit 2 ------------------------------------------------------------


def test_a_mapping_is_not_a_list_of_vocabularies():
    for value in ({"referee": 1}, {"enable": None, "referee": None}, {"referee"}):
        with pytest.raises(ValueError, match="config key 'vocabularies': bad value .* a list of vocabulary specs"):
            QuiddlerConfig(challenges=True, vocabularies=value)
    assert QuiddlerConfig(challenges=True, vocabularies=["referee", "enable"]).vocabularies == ("referee", "enable")


def test_a_mapping_or_a_set_is_not_a_list_of_hand_sizes():
    for value in ({3: 1, 4: 1}, {3, 4}):
        with pytest.raises(ValueError, match="config key 'hand_sizes': bad value .* a list of 1..16 integers"):
            QuiddlerConfig(hand_sizes=value)
    assert QuiddlerConfig(hand_sizes=(4, 3)).hand_sizes == (4, 3)


def test_train_refuses_bad_vocabularies_in_one_line(tmp_path, capsys):
    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    config = _config(tmp_path, env={"num_players": 2, "hand_sizes": [3, 4], "challenges": True})
    run = tmp_path / "run"
    cases = [
        ("[/nonexist.txt]", ["'env.vocabularies[0]'", "word list not found: /nonexist.txt"]),
        (f"[{fifo}]", ["'env.vocabularies[0]'", "not a regular file", str(fifo)]),
        (f"[referee, {tmp_path / 'missing.txt'}]", ["'env.vocabularies[1]'", "missing.txt"]),
        ("{a: 1}", ["'env.vocabularies'", "a list of vocabulary specs"]),  # not read as its keys
        ("{referee: 1}", ["'env.vocabularies'", "a list of vocabulary specs"]),
    ]
    for value, needles in cases:
        rc, err = _train(capsys, "--config", str(config), "--run-dir", str(run), f"env.vocabularies={value}")
        _one_line(rc, err, "train.py", *needles)
        assert not run.exists(), value
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo.txt", "tiny.yaml"]  # no lock file either


def test_evaluate_refuses_bad_vocabularies_in_one_line(tmp_path, capsys):
    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    game = ["--players", "greedy", "random", "--games", "2", "--hand-sizes", "3", "--workers", "1", "--quiet"]
    for vocabularies, needle in (("/nonexist.txt", "word list not found"), (str(fifo), "not a regular file")):
        rc, err = _evaluate(capsys, *game, "--out", str(out), "--challenges", "true", "--vocabularies", vocabularies)
        _one_line(rc, err, "evaluate.py", "'vocabularies[0]'", needle, vocabularies)
    rc, err = _evaluate(capsys, *game, "--out", str(out), "--dictionary", "/nonexist.txt")
    _one_line(rc, err, "evaluate.py", "'dictionary'", "/nonexist.txt")
    for mapping in ("{a: 1}", "{referee: 1}"):
        config = tmp_path / "eval.yaml"
        config.write_text(f"rules: {{challenges: true, vocabularies: {mapping}}}\n")
        rc, err = _evaluate(capsys, *game, "--out", str(out), "--config", str(config))
        _one_line(rc, err, "evaluate.py", "'vocabularies'", "a list of vocabulary specs")
    assert not out.exists()


# -- 1. a full disk: one line naming the file, the lock gone, the checkpoints whole ----------------------


def _disk_full_at(monkeypatch, run: Path, name: str, after_checkpoints: int) -> None:
    """`files.write_json` fails as on a full disk (ENOSPC, no file named: a failed write() names none) when it
    writes a file called `name` and the run folder holds `after_checkpoints` checkpoints or more."""
    real = files.write_json

    def write_json(path, data):
        if Path(path).name == name and len(checkpoints(run)) >= after_checkpoints:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(path, data)

    monkeypatch.setattr(files, "write_json", write_json)


@pytest.mark.slow  # trains
def test_a_full_disk_is_one_line_and_the_run_resumes(tmp_path, capsys, monkeypatch):
    config = _config(tmp_path)
    run = tmp_path / "run"
    _disk_full_at(monkeypatch, run, "state.json", after_checkpoints=2)  # the third checkpoint's write fails
    rc, err = _train(capsys, "--config", str(config), "--run-dir", str(run))
    _one_line(
        rc,
        err,
        "train.py",
        f"run folder {run}: writing {run / 'checkpoints' / 'step_000000256'} failed: No space left on device",
        f"continue with train.py --resume {run}",
        status=1,
    )
    assert [s for s, _ in checkpoints(run)] == [128, 0]
    for _, folder in checkpoints(run):
        read_checkpoint_state(folder)  # whole: every file matches its checksum
    assert not [p for p in run.rglob(".*")], "temporaries left behind"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "tiny.yaml"]  # the lock file went with the lock

    monkeypatch.undo()  # room again
    rc, err = _train(capsys, "--resume", str(run))
    assert rc == 0, err
    assert json.loads((run / "summary.json").read_text())["num_timesteps"] == 512


@pytest.mark.slow  # trains
def test_a_full_disk_before_the_first_checkpoint_leaves_nothing(tmp_path, capsys, monkeypatch):
    config = _config(tmp_path)
    run = tmp_path / "run"
    _disk_full_at(monkeypatch, run, "state.json", after_checkpoints=0)
    rc, err = _train(capsys, "--config", str(config), "--run-dir", str(run))
    _one_line(rc, err, "train.py", f"run folder {run}: writing", "No space left on device", "nothing is kept", status=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.yaml"]


def test_a_failed_write_names_its_file(tmp_path, monkeypatch):
    """An OSError from a write() or fsync() names no file: the atomic writers say which one they were writing."""

    def no_space(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "fsync", no_space)
    target = tmp_path / "a.json"
    with pytest.raises(OSError, match=re.escape(f"No space left on device: '{target}'")):
        files.write_json(target, {})
    final = tmp_path / "bundle"
    named = re.escape(f"No space left on device: '{final / 'policy.json'}'")  # not its staged temporary's name
    with pytest.raises(OSError, match=named), files.staged_folder(final) as staged:
        files.write_json(staged / "policy.json", {})
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no temporaries


def test_the_lock_file_goes_with_the_lock(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    first = files.FolderLock(folder, "run folder").acquire()
    assert first.path.read_text() == str(os.getpid())
    # A second process opens the lock file just before the first releases (and removes) it: the removed file
    # it then locks is no lock at all, so it must lock the file at the path instead.
    real_flock = files.fcntl.flock

    def flock_after_the_release(fd, operation):
        monkeypatch.setattr(files.fcntl, "flock", real_flock)
        first.release()
        return real_flock(fd, operation)

    monkeypatch.setattr(files.fcntl, "flock", flock_after_the_release)
    second = files.FolderLock(folder, "run folder").acquire()
    assert os.fstat(second._fd).st_ino == os.stat(second.path).st_ino
    with pytest.raises(files.FolderBusyError, match="is being written by another process"):
        files.FolderLock(folder, "run folder").acquire()
    second.release()
    assert list(tmp_path.iterdir()) == []


# -- 2. files nested too deeply: the same one line as any bad file -------------------------------------------


def test_deeply_nested_files_are_bad_files_not_recursion_errors(tmp_path):
    with pytest.raises(ValueError, match="nest too deeply"):
        files.read_json(_nested(tmp_path / "x.json"))
    with pytest.raises(ValueError, match=re.escape(f"config file {tmp_path / 'x.yaml'} is not valid YAML: it nests")):
        files.read_yaml_mapping(_nested(tmp_path / "x.yaml"))
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    _nested(bundle / "policy.json")
    with pytest.raises(PolicyLoadError, match=re.escape(f"policy description {bundle / 'policy.json'} is not valid")):
        read_description(bundle)
    with pytest.raises(ReplayError, match="line 1 is not JSON"):
        list(saved_games(_nested(tmp_path / "games.jsonl", "\n")))
    assert not is_results_document(_nested(tmp_path / "results.json"))
    checkpoint = tmp_path / "step_000000000"
    checkpoint.mkdir()
    _nested(checkpoint / "state.json")
    with pytest.raises(CheckpointError, match="state.json is unreadable"):
        read_checkpoint_state(checkpoint)
    with pytest.raises(RunConfigError, match="the value is not valid YAML: it nests too deeply"):
        parse_override("env.hand_sizes=" + "[" * 5000 + "]" * 5000)


def test_commands_refuse_a_deeply_nested_policy_json_in_one_line(tmp_path, capsys):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    _nested(bundle / "policy.json")
    (bundle / "policy.pt").write_bytes(b"")
    out = tmp_path / "out"
    game = ["--players", f"policy:{bundle}", "random", "--games", "2", "--workers", "1", "--out", str(out)]
    for trust in ("--no-trust-models", "--trust-models"):  # the description is read before any model file
        rc, err = _evaluate(capsys, *game, trust)
        _one_line(rc, err, "evaluate.py", f"policy description {bundle / 'policy.json'} is not valid JSON")
    rc, err = _evaluate(capsys, "--replay", str(_nested(tmp_path / "games.jsonl", "\n")))
    _one_line(rc, err, "evaluate.py", "games.jsonl line 1 is not JSON")
    rc, err = _evaluate(capsys, "--config", str(_nested(tmp_path / "eval.yaml")))
    _one_line(rc, err, "evaluate.py", "eval.yaml is not valid YAML")
    config = _config(tmp_path)
    rc, err = _train(
        capsys, "--config", str(config), "--run-dir", str(tmp_path / "run"), f"opponents=[policy:{bundle}]"
    )
    _one_line(rc, err, "train.py", "'opponents[0].spec'", "is not valid JSON")
    rc, err = _train(capsys, "--config", str(_nested(tmp_path / "run.yaml")))
    _one_line(rc, err, "train.py", "run.yaml is not valid YAML")
    assert not out.exists() and not (tmp_path / "run").exists()


# -- 3. SIGTERM as Ctrl-C ------------------------------------------------------------------------------------


def _start(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, script, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ctrl_c_as_at_a_terminal,
    )


def _ctrl_c_as_at_a_terminal() -> None:
    # A test run started in the background of a script inherits SIGINT ignored, and Python keeps an ignored
    # SIGINT ignored: the command under test gets Ctrl-C as a terminal gives it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for(proc: subprocess.Popen, seen, what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not seen():
        assert proc.poll() is None, f"the command ended before {what}: {proc.communicate()[1][-3000:]}"
        assert time.monotonic() < deadline, f"no {what} in {timeout} s"
        time.sleep(0.05)


def _stop(proc: subprocess.Popen, sig: signal.Signals) -> tuple[int, list[str]]:
    proc.send_signal(sig)
    # Generous: Python runs a signal's handler between bytecodes, so one arriving while numba compiles a kernel
    # the cache lacks waits for the compile (minutes on a loaded 2-core CI machine).
    _, err = proc.communicate(timeout=300)
    return proc.returncode, [line for line in err.splitlines() if line.strip()]


def _children(pid: int) -> list[int]:
    """The live child processes of `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.slow
def test_sigint_and_sigterm_stop_train_in_one_line_and_the_run_resumes(tmp_path):
    config = _config(tmp_path)
    run = tmp_path / "run"
    resume = f"train.py: interrupted; continue from the last checkpoint with: train.py --resume {run}"
    proc = _start("train.py", "--config", str(config), "--run-dir", str(run), "--quiet", "train.total_timesteps=100000")
    _wait_for(proc, lambda: len(checkpoints(run)) >= 2, "second checkpoint")
    assert _stop(proc, signal.SIGINT) == (130, [resume])

    proc = _start("train.py", "--resume", str(run), "--quiet")
    newest = checkpoints(run)[0][0]
    _wait_for(proc, lambda: checkpoints(run)[0][0] > newest, "new checkpoint")
    assert _stop(proc, signal.SIGTERM) == (143, [resume])
    for _, folder in checkpoints(run):
        read_checkpoint_state(folder)  # every checkpoint whole
    assert not [p for p in run.rglob(".*")], "temporaries left behind"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "tiny.yaml"]  # no lock file

    total = checkpoints(run)[0][0] + 128
    done = subprocess.run(
        [sys.executable, "train.py", "--resume", str(run), "--quiet", f"train.total_timesteps={total}"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((run / "summary.json").read_text())["num_timesteps"] == total


@pytest.mark.slow
def test_sigterm_stops_train_before_its_first_checkpoint_leaving_nothing(tmp_path):
    config = _config(tmp_path, pretrain={"teacher": "greedy", "games": 100000, "epochs": 1})
    run = tmp_path / "run"
    proc = _start("train.py", "--config", str(config), "--run-dir", str(run), "--quiet")
    _wait_for(proc, lambda: (run / "config.yaml").exists(), "run folder")  # imitating its teacher's 100,000 games
    assert _stop(proc, signal.SIGTERM) == (
        143,
        ["train.py: interrupted before the run's first checkpoint; nothing is kept"],
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.yaml"]


@pytest.mark.slow
def test_sigterm_stops_evaluate_and_its_workers_in_one_line(tmp_path):
    out = tmp_path / "out"
    proc = _start(
        "evaluate.py",
        *("--players", "greedy", "random", "--engine", "single", "--workers", "2", "--games", "100000"),
        *("--out", str(out)),
    )
    # The pool's two workers and the resource tracker of its semaphores are up: the games are being played.
    _wait_for(proc, lambda: len(_children(proc.pid)) >= 3, "worker processes")
    time.sleep(1)
    workers = _children(proc.pid)
    rc, lines = _stop(proc, signal.SIGTERM)
    assert (rc, lines) == (143, [f"evaluate.py: interrupted; no results written ({out} is as it was)"])
    assert list(tmp_path.iterdir()) == []  # no results, no staging folder, no lock file
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()], "a worker outlived evaluate.py"
