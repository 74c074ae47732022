"""train.py as a user runs it (subprocesses, tiny budgets): the run folder, a safe-loading model, kill + resume."""

from __future__ import annotations

import csv
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # every test here trains or starts train.py

ROOT = Path(__file__).resolve().parent.parent
# Small nets and short rollouts: every run here takes seconds.
TINY = [
    "algo.net_arch=[32, 32]",
    "algo.n_steps=128",
    "algo.batch_size=128",
    "algo.n_epochs=2",
    "pretrain.games=8",
    "pretrain.epochs=1",
]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _train(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "train.py", *args], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout
    )


def _steps(csv_path: Path) -> list[int]:
    lines = csv_path.read_text().splitlines()
    col = lines[0].split(",").index("step")
    return [int(line.split(",")[col]) for line in lines[1:]]


def test_tiny_run_writes_the_whole_run_folder(tmp_path):
    run = tmp_path / "run"
    proc = _train(
        "--config",
        "configs/quickstart.yaml",
        "--run-dir",
        str(run),
        *TINY,
        "train.total_timesteps=1024",
        "train.n_envs=2",
        "train.vec_env=subproc",
        "train.checkpoint_every=512",
        "eval.every=512",
        "eval.games=4",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "] training: 1024 steps in " in proc.stderr  # the progress lines (not a terminal: lines, not a bar)
    assert "vs random: win" in proc.stdout and "model: " in proc.stdout

    for name in (
        "config.yaml",
        "run.json",
        "train.csv",
        "eval.csv",
        "learning_curve.png",
        "summary.json",
        "final/model.zip",
        "final/policy.pt",
        "final/policy.json",
        "best/policy.json",
        "best/policy.pt",
    ):
        assert (run / name).is_file(), name
    assert list((run / "tensorboard").glob("events.out.tfevents.*"))
    assert (run / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in run.rglob(".*")]  # no temporary files or folders left behind

    meta = json.loads((run / "run.json").read_text())
    assert "train.total_timesteps=1024" in meta["command"]
    assert meta["packages"]["stable-baselines3"] and meta["packages"]["torch"]
    assert len(meta["dictionary"]["identity"]) == 64
    resolved = (run / "config.yaml").read_text()
    assert "total_timesteps: 1024" in resolved and "hand_sizes:" in resolved

    assert _steps(run / "train.csv") == [256, 512, 768, 1024]
    header = (run / "train.csv").read_text().splitlines()[0]
    assert "time/env_share" in header and "rollout/win_rate" in header
    evals = (run / "eval.csv").read_text().splitlines()
    assert sorted({(int(line.split(",")[0])) for line in evals[1:]}) == [0, 512, 1024]
    assert {line.split(",")[evals[0].split(",").index("opponent")] for line in evals[1:]} == {"random", "greedy"}

    checkpoints = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert checkpoints == ["step_000000512", "step_000001024"]  # keep_checkpoints: 2
    last = run / "checkpoints" / "step_000001024"
    for name in ("policy/model.zip", "policy/policy.pt", "policy/policy.json", "optimizer.pt", "rng.pt", "state.json"):
        assert (last / name).is_file(), name
    state = json.loads((last / "state.json").read_text())
    assert state["num_timesteps"] == 1024
    # state.json lists every other file of the checkpoint with its sha256.
    import hashlib

    listed = {p.relative_to(last).as_posix() for p in last.rglob("*") if p.is_file() and p.name != "state.json"}
    assert set(state["files"]) == listed
    for name, digest in state["files"].items():
        assert hashlib.sha256((last / name).read_bytes()).hexdigest() == digest, name
    summary = json.loads((run / "summary.json").read_text())
    assert summary["num_timesteps"] == 1024 and 0 < summary["session"]["env_share"] <= 1.0

    # The final model loads without unpickling anything and plays legal games.
    from quiddler_agents import make, play_game

    desc = json.loads((run / "final" / "policy.json").read_text())
    assert desc["num_timesteps"] == 1024 and desc["config"]["num_players"] == 2
    policy = make(f"policy:{run / 'model.zip'}", seed=0, num_players=2)
    record = play_game([policy, make("random", seed=1, num_players=2)], seed=5)
    assert len(record.totals) == 2 and record.decisions > 0

    # The README's evaluation of the quick start: the policy sets the table (2 players) for random and greedy.
    out = tmp_path / "eval"
    proc = subprocess.run(
        [sys.executable, "evaluate.py", "--players", f"policy:{run / 'model.zip'}", "random", "greedy"]
        + ["--games", "6", "--workers", "1", "--quiet", "--out", str(out)],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["tournament"]["table_size"] == 2
    assert results["summary"]["players"][f"policy:{run / 'model.zip'}"]["games"] >= 2


def test_killed_run_resumes_to_the_requested_total(tmp_path):
    run = tmp_path / "run"
    args = [
        "--config",
        "configs/selfplay.yaml",
        "--run-dir",
        str(run),
        "--quiet",
        *TINY,
        "train.total_timesteps=4096",
        "train.n_envs=2",
        "train.vec_env=subproc",
        "train.checkpoint_every=512",
        "league.snapshot_every=512",
        "league.pool_size=2",
        "eval.every=1024",
        "eval.games=2",
        "eval.opponents=[random]",
    ]
    proc = subprocess.Popen(
        [sys.executable, "train.py", *args], cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 240
    try:
        while not (run / "checkpoints" / "step_000001024").exists():
            assert proc.poll() is None, f"train.py ended before it was killed: {proc.stderr.read().decode()[-2000:]}"
            assert time.monotonic() < deadline, "no checkpoint at step 1024 in time"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)  # no chance to clean up: like a crash or a lost machine
    finally:
        proc.wait(timeout=60)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    assert not (run / "final").exists()

    resumed = _train("--resume", str(run), "--quiet")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["num_timesteps"] == 4096
    assert 1024 <= summary["resumed_from"] < 4096
    # One row per rollout, none missing, none repeated, across the kill.
    assert _steps(run / "train.csv") == list(range(256, 4097, 256))
    eval_steps = _steps(run / "eval.csv")
    # The run's clock goes on across the kill: each evaluation later than the one before, none at zero.
    with (run / "eval.csv").open() as fh:
        clock = [float(row["run_seconds"]) for row in csv.DictReader(fh)]
    assert clock[0] > 0 and all(a < b for a, b in itertools.pairwise(clock)), clock
    assert eval_steps == sorted(eval_steps) and sorted(set(eval_steps)) == [0, 1024, 2048, 3072, 4096]
    assert len(eval_steps) == 5  # one opponent: one row per evaluation
    state = json.loads((run / "checkpoints" / "step_000004096" / "state.json").read_text())
    assert state["num_timesteps"] == 4096
    assert state["backend_state"]["league"] == ["step_000003584", "step_000004096"]  # the newest pool_size copies
    members = sorted(p.name for p in (run / "league").iterdir())
    assert members == [f"step_{s:09d}" for s in range(512, 4097, 512)]
    meta = json.loads((run / "run.json").read_text())
    assert len(meta["resumes"]) == 1 and "--resume" in meta["resumes"][0]["command"]

    # A finished run can be extended: the step count continues from the total.
    more = _train("--resume", str(run), "--quiet", "train.total_timesteps=4608", "eval.every=1000000")
    assert more.returncode == 2 and "'eval.every' defines the run" in more.stderr
    more = _train("--resume", str(run), "--quiet", "train.total_timesteps=4608")
    assert more.returncode == 0, more.stderr[-3000:]
    assert _steps(run / "train.csv") == list(range(256, 4609, 256))
    assert json.loads((run / "final" / "policy.json").read_text())["num_timesteps"] == 4608
    # Resuming a finished run trains nothing and leaves the step count where it is.
    again = _train("--resume", str(run), "--quiet")
    assert again.returncode == 0, again.stderr[-3000:]
    assert _steps(run / "train.csv") == list(range(256, 4609, 256))
    assert json.loads((run / "summary.json").read_text())["num_timesteps"] == 4608


def test_same_seed_same_model(tmp_path):
    import torch

    weights = []
    for name in ("a", "b"):
        proc = _train(
            "--config",
            "configs/quickstart.yaml",
            "--run-dir",
            str(tmp_path / name),
            "--quiet",
            *TINY,
            "train.total_timesteps=512",
            "train.n_envs=1",
            "eval.games=2",
            "eval.at_start=false",
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        weights.append(torch.load(tmp_path / name / "final" / "policy.pt", weights_only=True))
    assert weights[0].keys() == weights[1].keys()
    for key in weights[0]:
        assert torch.equal(weights[0][key], weights[1][key]), key
    a, b = (np.loadtxt(tmp_path / n / "train.csv", delimiter=",", skiprows=1, usecols=0) for n in ("a", "b"))
    assert np.array_equal(a, b)


def test_cli_errors_and_print_config(tmp_path):
    bad = _train("--config", "configs/quickstart.yaml", "algo.n_stpes=3")
    assert bad.returncode == 2 and "'algo.n_stpes'" in bad.stderr and "Traceback" not in bad.stderr
    bad = _train("--config", "configs/quickstart.yaml", "env.num_players=9")
    assert bad.returncode == 2 and "'env.num_players'" in bad.stderr
    bad = _train("--config", str(tmp_path / "nope.yaml"))
    assert bad.returncode == 2 and "does not exist" in bad.stderr
    bad = _train("--resume", str(tmp_path))
    assert bad.returncode == 2 and "not a run folder" in bad.stderr
    shown = _train(
        "--config",
        "configs/quickstart.yaml",
        "--run-dir",
        str(tmp_path / "x"),
        "--print-config",
        "train.total_timesteps=1234",
        "env.num_players=3",
    )
    assert shown.returncode == 0, shown.stderr
    assert "total_timesteps: 1234" in shown.stdout and "num_players: 3" in shown.stdout
    assert not (tmp_path / "x").exists()  # printing the config writes nothing
