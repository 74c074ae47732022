"""The RLlib backend: the MultiAgentEnv adapter, the masked module, and a tiny run trained, resumed, exported, evaluated.

Needs the extra (`pip install -e .[rllib]`, in its own virtual env: RLlib 2.60 wants
gymnasium 1.2.x); skipped where Ray is not installed. CI runs it in that env.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")

import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

from agents.rllib_policy import actor_network  # noqa: E402
from agents.training.config import load_run_config  # noqa: E402
from agents.training.rllib_backend import actor_state, module_spec  # noqa: E402
from agents.training.rllib_config import check_rllib_run  # noqa: E402
from agents.training.rllib_env import QuiddlerMultiAgentEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "rllib_selfplay.yaml"


def _play(env: QuiddlerMultiAgentEnv, seed: int, rng: np.random.Generator):
    """One game with random legal learner moves; returns (per-agent reward sums, steps, final step's obs, raw totals)."""
    obs, _ = env.reset(seed=seed)
    sums: dict[str, float] = {}
    steps = 0
    others_rewarded = False
    while True:
        (agent,) = obs  # exactly one agent, the one to move, gets an observation mid-game
        assert agent == env.raw.agent_selection
        mask = obs[agent]["action_mask"]
        action = int(rng.choice(np.flatnonzero(mask)))
        obs, rewards, terminateds, truncateds, _ = env.step({agent: action})
        steps += 1
        for a, r in rewards.items():
            sums[a] = sums.get(a, 0.0) + r
        if terminateds["__all__"] or truncateds["__all__"]:
            return sums, steps, obs, list(env.raw.game.totals), others_rewarded
        (nxt,) = obs
        others_rewarded |= any(a != nxt and r for a, r in rewards.items())
        assert rewards[nxt] is not None  # RLlib needs a reward with every observation


def test_self_play_adapter_gives_every_seat_its_round_rewards():
    env = QuiddlerMultiAgentEnv({"env": {"num_players": 3, "reward_mode": "round_score"}})
    assert env.agents == ["player_0", "player_1", "player_2"]
    sums, steps, final_obs, totals, others_rewarded = _play(env, seed=4, rng=np.random.default_rng(0))
    assert steps > 3 * 8  # every seat moves in every round
    assert set(final_obs) == set(env.agents)  # every agent sees the end
    for seat, agent in enumerate(env.agents):
        assert sums[agent] == pytest.approx(totals[seat] * 0.01)  # default scale: a total of 100 is a return of 1
    assert others_rewarded  # round rewards reach agents who did not make the last move


def test_bot_seats_play_inside_the_env_and_replay_by_seed():
    config = {
        "env": {"num_players": 3, "reward_mode": "round_score"},
        "self_play": False,
        "learner_seat": "random",
        "opponents": [["greedy", 1.0], ["random", 1.0]],
    }
    env = QuiddlerMultiAgentEnv(config)
    seats = set()
    for seed in range(6):
        sums, _, final_obs, totals, _ = _play(env, seed=seed, rng=np.random.default_rng(seed))
        (agent,) = env.agents
        seats.add(agent)
        assert set(final_obs) == {agent} and set(sums) == {agent}
        assert sums[agent] == pytest.approx(totals[int(agent[7:])] * 0.01)
    assert len(seats) > 1  # the learner's seat is drawn per episode
    a = _play(QuiddlerMultiAgentEnv(config), seed=11, rng=np.random.default_rng(5))
    b = _play(QuiddlerMultiAgentEnv(config), seed=11, rng=np.random.default_rng(5))
    assert a[0] == b[0] and a[1] == b[1] and a[3] == b[3]


def test_adapter_rejects_bad_settings():
    with pytest.raises(ValueError, match="opponents"):
        QuiddlerMultiAgentEnv({"env": {"num_players": 2}, "self_play": False})
    with pytest.raises(ValueError, match="learner_seat"):
        QuiddlerMultiAgentEnv({"env": {"num_players": 2}, "self_play": False, "learner_seat": 5})
    with pytest.raises(ValueError, match="bogus"):
        QuiddlerMultiAgentEnv({"bogus": 1})


def test_masked_module_samples_only_legal_moves_and_exports_exactly():
    cfg = load_run_config(CONFIG, ["algo.net_arch=[32, 16]"])
    plan = check_rllib_run(cfg)
    env = QuiddlerMultiAgentEnv(plan.env_config)
    spec = module_spec(cfg, plan)
    spec.observation_space = env.observation_spaces["player_0"]
    spec.action_space = env.action_spaces["player_0"]
    module = spec.build()
    observations, masks = [], []
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=2)
    while len(observations) < 64:
        (agent,) = obs
        observations.append(obs[agent]["observation"])
        masks.append(obs[agent]["action_mask"])
        obs, _, term, trunc, _ = env.step({agent: int(rng.choice(np.flatnonzero(masks[-1])))})
        if term["__all__"] or trunc["__all__"]:
            obs, _ = env.reset()
    x = torch.as_tensor(np.stack(observations))
    m = torch.as_tensor(np.stack(masks))
    with torch.no_grad():
        out = module.forward_exploration({Columns.OBS: {"observation": x, "action_mask": m}})
        dist = torch.distributions.Categorical(logits=out[Columns.ACTION_DIST_INPUTS])
        torch.manual_seed(0)
        samples = dist.sample((50,))
        assert bool(m.gather(1, samples.T).all())  # 3,200 draws, none illegal
        values = module.compute_values({Columns.OBS: {"observation": x, "action_mask": m}})
        assert values.shape == (64,)
        # The exported plain MLP gives the module's logits (all-legal mask: nothing masked away).
        weights = {k: v.numpy() for k, v in module.state_dict().items()}
        net = actor_network(x.shape[1], plan.fcnet_hiddens, plan.fcnet_activation)
        net.load_state_dict(actor_state(weights, plan.fcnet_hiddens))
        ones = torch.ones_like(m, dtype=torch.float32)
        want = module.forward_inference({Columns.OBS: {"observation": x, "action_mask": ones}})
        assert torch.allclose(want[Columns.ACTION_DIST_INPUTS], net(x), atol=1e-5)


def _run(args: list[str], timeout: int = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "RAY_DEDUP_LOGS": "0", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    assert proc.returncode == 0, f"{args} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc


def _steps(run: Path) -> list[int]:
    with (run / "train.csv").open() as fh:
        return [int(float(r["step"])) for r in csv.DictReader(fh)]


@pytest.mark.slow
def test_train_checkpoint_resume_export_and_evaluate(tmp_path):
    run = tmp_path / "run"
    tiny = [
        "algo.n_steps=150",
        "algo.batch_size=50",
        "algo.n_epochs=1",
        "algo.net_arch=[32, 32]",
        "train.checkpoint_every=100",
        "eval.every=100000",
        "eval.games=2",
        "eval.opponents=[greedy]",
        "rllib.num_envs_per_env_runner=2",
    ]
    # One iteration in the driver (no env runner actor), then a checkpoint.
    first = ["train.py", "--config", str(CONFIG), "--run-dir", str(run), "--quiet", "train.total_timesteps=150"]
    _run([*first, "rllib.num_env_runners=0", *tiny])
    summary = json.loads((run / "summary.json").read_text())
    assert summary["backend"] == "rllib" and summary["num_timesteps"] >= 150
    (ckpt_step, ckpt), *_ = [(int(p.name[5:]), p) for p in (run / "checkpoints").iterdir()]
    assert ckpt_step == summary["num_timesteps"]
    for name in ("algorithm", "policy/policy.pt", "policy/policy.json", "state.json"):
        assert (ckpt / name).exists(), name
    for name in ("config.yaml", "run.json", "train.csv", "eval.csv", "learning_curve.png", "best/policy.json"):
        assert (run / name).exists(), name
    desc = json.loads((run / "policy.json").read_text())
    assert desc["framework"] == "rllib" and desc["hidden_layers"] == [32, 32] and desc["step"] == ckpt_step

    # Resume from the checkpoint with one env runner actor: the step count and iterations continue.
    _run(["train.py", "--resume", str(run), "--quiet", "train.total_timesteps=300", "rllib.num_env_runners=1"])
    resumed = json.loads((run / "summary.json").read_text())
    assert resumed["resumed_from"] == ckpt_step and resumed["num_timesteps"] >= 300
    steps = _steps(run)
    assert steps[0] == ckpt_step and steps == sorted(set(steps)) and len(steps) >= 2
    with (run / "train.csv").open() as fh:
        assert [int(r["iteration"]) for r in csv.DictReader(fh)] == list(range(1, len(steps) + 1))
    assert "num_env_runners: 1" in (run / "config.yaml").read_text()
    state = json.loads(sorted((run / "checkpoints").glob("step_*/state.json"))[-1].read_text())
    assert state["num_timesteps"] == resumed["num_timesteps"]

    # The exported policy plays in evaluate.py (loaded weights-only, no Ray involved in playing).
    out = tmp_path / "eval"
    proc = _run(
        [
            "evaluate.py",
            "--players",
            f"policy:{run}",
            "greedy",
            "--games",
            "4",
            "--workers",
            "1",
            "--seed",
            "3",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    results = json.loads((out / "results.json").read_text())
    assert (out / "games.csv").exists(), proc.stdout
    text = json.dumps(results)
    assert f"policy:{run}" in text and "greedy" in text
