"""The AEC and Quiddler-v0 examples run as scripts with tiny budgets and print their summary line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_example(name: str, *args: str) -> tuple[dict, str]:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stdout


@pytest.mark.slow
def test_random_aec_example():
    summary, out = run_example("random_aec.py", "--games", "2", "--players", "3", "--seed", "1")
    assert summary["games"] == 2 and summary["players"] == 3 and summary["agent_steps"] > 0
    assert out.count("winner(s)") == 2
    assert 0 < summary["mean_total"] < 1000


@pytest.mark.slow
def test_random_aec_example_rejects_bad_arguments():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "random_aec.py"), "--games", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 2 and "--games must be at least 1" in proc.stderr


@pytest.mark.slow
def test_maskable_ppo_example(tmp_path):
    model = tmp_path / "ppo.zip"
    summary, _ = run_example(
        # DummyVecEnv here: SubprocVecEnv is exercised in test_env_gym.py and costs seconds of worker start-up.
        "maskable_ppo.py",
        "--timesteps",
        "128",
        "--n-envs",
        "2",
        "--eval-games",
        "1",
        "--vec",
        "dummy",
        "--save",
        str(model),
    )
    assert summary["timesteps"] >= 128 and summary["saved"] == str(model)
    assert model.is_file() and not list(tmp_path.glob("*.tmp.zip"))
    assert summary["model_mean_total"] >= 0 and summary["random_mean_total"] >= 0


@pytest.mark.slow
def test_selfplay_example():
    summary, out = run_example("selfplay_aec.py", "--timesteps", "64", "--players", "2", "--games", "1")
    assert summary["timesteps"] >= 64 and summary["games"] == 1
    assert out.count("game 0: totals") == 1


@pytest.mark.slow
def test_vector_env_example():
    summary, _ = run_example("vector_env.py", "--num-envs", "16", "--games", "20", "--seed", "2")
    assert summary["episodes"] >= 20 and summary["learner_steps"] > 20 * 10
    assert 0 <= summary["win_rate"] < 0.5  # a random learner against greedy loses most games
    assert 0 < summary["mean_total"] < 1000
