"""`train.vec_env: batched`: MaskablePPO on the batched engine (agents/training/sb3/batched.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from quiddler_agents.training.checks import RunConfigError
from quiddler_agents.training.config import RunConfig
from quiddler_agents.training.sb3.trainer import build_vec_env

pytestmark = pytest.mark.slow  # training records the platform (a uname process)

ROOT = Path(__file__).resolve().parent.parent
TINY = {
    "name": "tiny-batched",
    "seed": 5,
    "env": {"num_players": 2, "hand_sizes": [3, 4]},
    "opponents": [{"spec": "random", "weight": 1.0}, {"spec": "greedy", "weight": 1.0}],
    "algo": {"n_steps": 16, "batch_size": 64, "n_epochs": 1, "net_arch": [16], "observation_features": "solver_v1"},
    "train": {
        "total_timesteps": 512,
        "n_envs": 16,
        "vec_env": "batched",
        "checkpoint_every": 256,
        "progress_bar": False,
    },
    "eval": {"every": 512, "games": 2, "opponents": ["random"], "at_start": False},
}


def _train_module():
    spec = importlib.util.spec_from_file_location("train_script", ROOT / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(tmp_path: Path, name: str, **train) -> Path:
    data = json.loads(json.dumps(TINY))
    data["train"].update(train)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    rc = _train_module().main(["--config", str(path), "--run-dir", str(tmp_path / name), "--quiet"])
    assert rc == 0
    return tmp_path / name


def test_a_batched_run_is_complete_and_the_same_seed_gives_the_same_model(tmp_path):
    a, b = _run(tmp_path, "a"), _run(tmp_path, "b")
    summary = json.loads((a / "summary.json").read_text())
    assert summary["num_timesteps"] == 512
    assert json.loads((a / "final" / "policy.json").read_text())["observation_features"] == "solver_v1"
    wa = torch.load(a / "final" / "policy.pt", weights_only=True)
    wb = torch.load(b / "final" / "policy.pt", weights_only=True)
    assert all(torch.equal(wa[k], wb[k]) for k in wa)


def test_episode_ends_carry_the_outcome_and_the_opponents():
    cfg = RunConfig.from_mapping({**TINY, "train": {**TINY["train"], "n_envs": 6}})
    venv = build_vec_env(cfg, [])
    assert venv.unwrapped.config is cfg.rules  # the run's own rules object, not a re-parsed copy
    venv.seed(1)
    obs = venv.reset()
    assert obs.shape == (6, venv.observation_space.shape[0]) and obs.shape[1] == 287 + 132
    rng = np.random.default_rng(0)
    ended = 0
    names = set()
    for _ in range(200):
        masks = np.stack(venv.env_method("action_masks"))
        obs, rewards, dones, infos = venv.step(np.argmax(rng.random(masks.shape) * masks + masks, axis=1))
        for done, info in zip(dones, infos, strict=True):
            if done:
                ended += 1
                assert info["terminal_observation"].shape == (287 + 132,)
                assert set(info["winners"]) <= {0, 1} and info["seat"] in (0, 1)
                assert len(info["opponent_policies"]) == 1
                names.update(info["opponent_policies"])
                assert "episode" in info  # VecMonitor's episode statistics
    assert ended >= 6 and names == {"random", "greedy"}
    venv.close()


def test_python_opponents_and_league_members_play_in_the_batch(tmp_path):
    run = _run(tmp_path, "pool", total_timesteps=256)
    cfg = RunConfig.from_mapping(
        {**TINY, "opponents": [{"spec": "expert", "weight": 1.0}], "league": {"enabled": True, "weight": 1.0}}
    )
    venv = build_vec_env(cfg, [str(run / "final")])
    venv.seed(2)
    venv.reset()
    seen = set()
    rng = np.random.default_rng(1)
    for _ in range(150):
        masks = np.stack(venv.env_method("action_masks"))
        _, _, dones, infos = venv.step(np.argmax(rng.random(masks.shape) * masks + masks, axis=1))
        for done, info in zip(dones, infos, strict=True):
            if done:
                seen.update(info["opponent_policies"])
    assert "expert" in seen and any(name.startswith("league:") for name in seen)
    venv.env_method("set_league", [])
    venv.close()


def test_batched_refuses_what_it_cannot_do():
    with pytest.raises(RunConfigError, match="layout shaping is not available with train.vec_env: batched"):
        RunConfig.from_mapping({**TINY, "env": {"layout_shaping": 0.5}})
    with pytest.raises(RunConfigError, match="'train.vec_env': batched is the sb3 backend's"):
        RunConfig.from_mapping({**TINY, "backend": "rllib"})
