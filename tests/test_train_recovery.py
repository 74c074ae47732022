"""Nothing lost when a run goes wrong: bad input is one line and leaves no folder, a broken checkpoint is skipped,
a killed run (kill -9 at random moments, during checkpoint and final writes) resumes to one consistent bundle."""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import itertools
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from quiddler_agents.training.run import checkpoints, read_checkpoint_state
from quiddler_env.core import files

pytestmark = pytest.mark.slow  # every test here trains or starts train.py

ROOT = Path(__file__).resolve().parent.parent
TINY = {
    "name": "tiny",
    "seed": 3,
    "env": {"num_players": 2, "hand_sizes": [3, 4]},
    "opponents": ["random"],
    "algo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "net_arch": [16]},
    "train": {
        "total_timesteps": 512,
        "n_envs": 2,
        "vec_env": "dummy",
        "checkpoint_every": 128,
        "keep_checkpoints": 5,
        "progress_bar": False,
    },
    "eval": {"every": 256, "games": 2, "opponents": ["random"]},
}


def _config(tmp_path: Path, **changes) -> Path:
    data = json.loads(json.dumps(TINY))
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split("__")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _train_module():
    spec = importlib.util.spec_from_file_location("train_script", ROOT / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TRAIN = _train_module()


def _main(capsys, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    rc = TRAIN.main([*args, "--quiet"])
    return rc, capsys.readouterr().err


def _one_line_error(rc: int, err: str, *needles: str) -> None:
    assert rc == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("train.py: error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, err)


def _steps(path: Path) -> list[int]:
    rows = path.read_text().splitlines()
    col = rows[0].split(",").index("step")
    return [int(r.split(",")[col]) for r in rows[1:]]


def _check_bundle(folder: Path) -> dict:
    """A bundle folder is one save: its files match the checksums in its policy.json."""
    desc = json.loads((folder / "policy.json").read_text())
    assert hashlib.sha256((folder / "policy.pt").read_bytes()).hexdigest() == desc["weights_sha256"], folder
    if "model_sha256" in desc:
        assert hashlib.sha256((folder / "model.zip").read_bytes()).hexdigest() == desc["model_sha256"], folder
    return desc


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A tiny finished run: checkpoints at 0, 128, 256, 384 and 512 steps."""
    base = tmp_path_factory.mktemp("finished")
    rc = TRAIN.main(["--config", str(_config(base)), "--run-dir", str(base / "run"), "--quiet"])
    assert rc == 0
    assert [s for s, _ in checkpoints(base / "run")] == [512, 384, 256, 128, 0]
    return base / "run"


def test_bad_input_is_one_line_and_leaves_no_run_folder(tmp_path, capsys):
    config = _config(tmp_path)
    run = tmp_path / "run"
    broken = tmp_path / "broken.txt.gz"
    broken.write_bytes(b"\x1f\x8b\x08 not really gzip")
    refused = tmp_path / "refused"  # a policy bundle whose weights are a pickle of something else
    refused.mkdir()
    (refused / "policy.pt").write_bytes(pickle.dumps({"x": 1}))
    digest = hashlib.sha256((refused / "policy.pt").read_bytes()).hexdigest()
    (refused / "policy.json").write_text(json.dumps({"format": 1, "weights_sha256": digest}))
    cases = [
        (["env.dictionary=" + str(tmp_path / "missing.txt")], ["'env.dictionary'", "missing.txt"]),
        (["env.dictionary=" + str(broken)], ["'env.dictionary'", "broken.txt.gz"]),
        (["opponents=[policy:" + str(tmp_path / "nobundle") + "]"], ["'opponents[0].spec'", "nobundle"]),
        (["opponents=[policy:" + str(refused) + "]"], ["'opponents[0].spec'", "refused"]),
        (["eval.opponents=[policy:" + str(tmp_path / "nobundle") + "]"], ["'eval.opponents[0]'"]),
    ]
    for overrides, needles in cases:
        rc, err = _main(capsys, "--config", str(config), "--run-dir", str(run), *overrides)
        _one_line_error(rc, err, *needles)
        assert not run.exists(), overrides

    a_file = tmp_path / "a_file"
    a_file.write_text("mine")
    rc, err = _main(capsys, "--config", str(config), "--run-dir", str(a_file))
    _one_line_error(rc, err, "is a file, not a folder")
    assert a_file.read_text() == "mine"
    rc, err = _main(capsys, "--config", str(config), "--run-dir", "/proc/quiddler-run")
    _one_line_error(rc, err, "not writable")

    empty = tmp_path / "empty.yaml"
    empty.write_text("# all defaults?\n")
    rc, err = _main(capsys, "--config", str(empty), "--run-dir", str(run))
    _one_line_error(rc, err, "is empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["tiny.yaml", "broken.txt.gz", "refused", "a_file", "empty.yaml"]
    )


def test_resume_before_the_first_checkpoint(tmp_path, capsys):
    """A run folder holding only its config (killed during the warm start): resume says how to start it again."""
    run = tmp_path / "run"
    run.mkdir()
    cfg_text = _config(tmp_path).read_text()
    (run / "config.yaml").write_text(cfg_text)
    (run / "run.json").write_text("{}")
    rc, err = _main(capsys, "--resume", str(run))
    _one_line_error(rc, err, "no checkpoint to resume from", f"--run-dir {run}")
    rc, err = _main(capsys, "--config", str(run / "config.yaml"), "--run-dir", str(run))
    assert rc == 0, err  # a folder without a checkpoint holds nothing to lose: it is started over
    assert [s for s, _ in checkpoints(run)][0] == 512


def test_corrupt_checkpoints_fall_back_to_the_newest_intact_one(finished_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    ck = {s: p for s, p in checkpoints(run)}
    (ck[512] / "state.json").write_text('{"format": 2, "num_timesteps": 5')  # torn JSON
    weights = ck[384] / "policy" / "policy.pt"
    weights.write_bytes(weights.read_bytes()[:100])  # truncated
    # A pickle in place of the optimiser, with state.json updated to match it: the loader itself must refuse it.
    (ck[256] / "optimizer.pt").write_bytes(pickle.dumps(os.getcwd))
    state = json.loads((ck[256] / "state.json").read_text())
    state["files"]["optimizer.pt"] = hashlib.sha256((ck[256] / "optimizer.pt").read_bytes()).hexdigest()
    (ck[256] / "state.json").write_text(json.dumps(state))

    rc, err = _main(capsys, "--resume", str(run), "train.total_timesteps=640")
    assert rc == 0, err
    assert "step_000000512" in err and "step_000000384" in err and "step_000000256" in err
    assert "resuming from the newest intact checkpoint, step_000000128" in err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["resumed_from"] == 128 and summary["num_timesteps"] == 640
    assert _steps(run / "train.csv") == list(range(128, 641, 128))  # the rows after 128 were played again
    assert _check_bundle(run / "final")["num_timesteps"] == 640

    for _, folder in checkpoints(run):
        (folder / "state.json").write_text("not json")
    before = (run / "config.yaml").read_bytes()
    rc, err = _main(capsys, "--resume", str(run), "train.total_timesteps=768")
    _one_line_error(rc, err, "no checkpoint can be restored")
    assert (run / "config.yaml").read_bytes() == before


def test_resume_below_the_steps_done_changes_nothing(finished_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    before = {p.relative_to(run): p.read_bytes() for p in run.rglob("*") if p.is_file()}
    rc, err = _main(capsys, "--resume", str(run), "train.total_timesteps=256")
    _one_line_error(rc, err, "'train.total_timesteps'", "256", "512 steps")
    assert {p.relative_to(run): p.read_bytes() for p in run.rglob("*") if p.is_file()} == before


def test_stale_temporaries_are_removed_at_the_next_start(finished_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    (run / "checkpoints" / ".step_000000640.k1ll3d.tmp").mkdir()
    (run / "checkpoints" / ".step_000000640.k1ll3d.tmp" / "optimizer.pt").write_bytes(b"half")
    (run / ".train.csv.x7.tmp").write_text("step\n1")
    (run / ".eval.abc.tmp").mkdir()
    os.replace(run / "best", run / ".best.old")  # a swap interrupted between its two renames
    rc, err = _main(capsys, "--resume", str(run))
    assert rc == 0, err
    assert not [p for p in run.rglob(".*")], "temporaries left behind"
    _check_bundle(run / "best")


def test_a_run_folder_has_one_writer(finished_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    with files.FolderLock(run):
        rc, err = _main(capsys, "--resume", str(run))
        _one_line_error(rc, err, "is being written by another process")
        rc, err = _main(capsys, "--config", str(_config(tmp_path)), "--run-dir", str(run), "--force")
        _one_line_error(rc, err, "is being written by another process")
    assert checkpoints(run)  # the run is still there


# -- kill -9 -------------------------------------------------------------------------------------------


def _popen(args: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "train.py", *args, "--quiet"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _kill_when(proc: subprocess.Popen, seen, rng: np.random.Generator, timeout: float = 180) -> bool:
    """Poll until `seen()` is true, then kill -9 after a random delay of up to 20 ms; False if the run ended first."""
    deadline = time.monotonic() + timeout
    while not seen():
        if proc.poll() is not None:
            return False
        assert time.monotonic() < deadline, "the awaited write never came"
        time.sleep(0.0005)
    time.sleep(float(rng.uniform(0, 0.02)))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stderr.close()
    return proc.returncode == -signal.SIGKILL


def _new_staging(folder: Path, prefix: str):
    """True once a staging folder `prefix*` appears in `folder` that was not there when this was called
    (a killed write's leftovers are there until the resumed run removes them)."""
    stale = {e.name for e in os.scandir(folder)} if folder.is_dir() else set()
    return lambda: (
        folder.is_dir() and any(e.name.startswith(prefix) and e.name not in stale for e in os.scandir(folder))
    )


def _check_intact(run: Path) -> None:
    """After a kill: every listed checkpoint verifies, best/ and final/ are each one whole bundle."""
    for _, folder in checkpoints(run):
        read_checkpoint_state(folder)  # raises on any file that does not match
    for name in ("best", "final"):
        if (run / name).exists():
            _check_bundle(run / name)


@pytest.mark.slow
def test_kill_9_at_random_moments_then_resume_and_evaluate(tmp_path):
    rng = np.random.default_rng(2026)
    total = 2048
    config = _config(tmp_path, train__total_timesteps=total, train__checkpoint_every=256, eval__every=512)
    run = tmp_path / "run"
    kills = []
    proc = _popen(["--config", str(config), "--run-dir", str(run)])
    # 1, 2: inside checkpoint writes (their staging folder is there); 3: at a random time; 4: inside the final write.
    plan = ["checkpoint", "checkpoint", "random", "final"]
    for kind in plan:
        if kind == "random":
            deadline = time.monotonic() + float(rng.uniform(1.0, 4.0))
            seen = lambda deadline=deadline: time.monotonic() > deadline  # noqa: E731
        elif kind == "checkpoint":
            # a later checkpoint's write (a kill inside the first one is the case of the test above)
            staging = _new_staging(run / "checkpoints", ".step_")
            seen = lambda staging=staging: bool(checkpoints(run)) and staging()  # noqa: E731
        else:
            seen = _new_staging(run, ".final.")
        killed = _kill_when(proc, seen, rng)
        kills.append((kind, killed))
        _check_intact(run)
        proc = _popen(["--resume", str(run)])
    proc.wait(timeout=300)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.returncode == 0, err[-3000:]
    assert sum(k for _, k in kills) >= 3, kills  # most kills landed while the run was going

    _check_intact(run)
    final = _check_bundle(run / "final")
    summary = json.loads((run / "summary.json").read_text())
    assert summary["num_timesteps"] == final["num_timesteps"] == total
    rollout = TINY["algo"]["n_steps"] * TINY["train"]["n_envs"]
    assert _steps(run / "train.csv") == list(range(rollout, total + 1, rollout))  # every rollout once
    evals = _steps(run / "eval.csv")
    assert evals == sorted(set(evals)) == list(range(0, total + 1, 512))
    meta = json.loads((run / "run.json").read_text())
    assert 2 <= len(meta["resumes"]) <= len(plan)  # a session killed before it restored records no resume

    # What evaluate.py plays is the final bundle, and its results name that bundle's weights.
    out = tmp_path / "eval"
    done = subprocess.run(
        [sys.executable, "evaluate.py", "--players", f"policy:{run}", "random", "--games", "4", "--workers", "1"]
        + ["--quiet", "--out", str(out)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert final["weights_sha256"] in (out / "results.json").read_text()


@pytest.mark.slow
def test_kill_9_in_the_warm_start_then_resume_after_its_last_stage(tmp_path):
    """Expert iteration's rounds are saved whole (`pretrain/`): killed during one of those writes or between them,
    `--resume` goes on after the last finished stage, and the run ends with every round done once."""
    rng = np.random.default_rng(45)
    config = _config(
        tmp_path,
        pretrain={
            "teacher": "greedy",
            "games": 6,
            "epochs": 2,
            "batch_size": 64,
            "dagger_rounds": 3,
            "dagger_games": 3,
            "dagger_teacher": "guided:samples=2",
            "eval_each_round": True,
        },
        train__total_timesteps=256,
    )
    run = tmp_path / "run"
    progress = run / "pretrain" / "progress.json"

    def stage() -> int:
        try:
            return json.loads(progress.read_text())["stage"]
        except (OSError, ValueError):
            return -1

    proc = _popen(["--config", str(config), "--run-dir", str(run)])
    # 1: inside the write of a stage after the first (its staging folder is there); 2: between stages.
    staging = _new_staging(run, ".pretrain.")
    assert _kill_when(proc, lambda: stage() >= 0 and staging(), rng)
    done = stage()
    assert done >= 0 and not checkpoints(run)  # killed in the warm start: only its progress is there
    proc = _popen(["--resume", str(run)])
    assert _kill_when(proc, lambda: stage() > done, rng)
    proc = _popen(["--resume", str(run)])
    proc.wait(timeout=300)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.returncode == 0, err[-3000:]
    figures = json.loads((run / "pretrain.json").read_text())
    assert [r["round"] for r in figures["dagger"]] == [1, 2, 3]
    assert all(r["teacher"] == "guided:samples=2" for r in figures["dagger"])
    assert [s for s, _ in checkpoints(run)][0] == 256
    assert not (run / "pretrain").exists()  # the first checkpoint made the warm start's progress unneeded
    _check_bundle(run / "final")
    # The run's clock carried over the kills: the stages kept, then the evaluations, never going back (a tiny
    # run's last stage and first evaluation may share a tenth of a second).
    stages = json.loads((checkpoints(run)[0][1] / "state.json").read_text())["warm_start_evals"]
    assert [r["stage"] for r in stages] == ["after the imitation"] + [f"after DAgger round {k}" for k in (1, 2, 3)]
    with (run / "eval.csv").open() as fh:
        clock = [r["run_seconds"] for r in stages] + [float(r["run_seconds"]) for r in csv.DictReader(fh)]
    assert clock[0] > 0 and all(a <= b for a, b in itertools.pairwise(clock)), clock
    summary = json.loads((run / "summary.json").read_text())
    assert set(summary["time_to_strength"]) == {"random"}
