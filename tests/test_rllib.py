"""The rllib backend: the MultiAgentEnv adapter, the masked module, and a tiny run killed, resumed, evaluated.

Needs the extra (`pip install -e .[rllib]`, in its own virtual env: RLlib 2.60 wants
gymnasium 1.2.x); skipped where Ray is not installed. CI runs it in that env. The
run-folder behaviour shared with sb3 (checksums, fallback, best/final) is the run
layer's and tested there; here the backend's part of it: RLlib's checkpoint restores,
a broken one is skipped, the exported bundle plays without Ray.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")

import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

from quiddler_agents.policies.rllib import actor_network  # noqa: E402
from quiddler_agents.training.config import load_run_config  # noqa: E402
from quiddler_agents.training.rllib.config import check_rllib_run  # noqa: E402
from quiddler_agents.training.rllib.env import QuiddlerMultiAgentEnv  # noqa: E402
from quiddler_agents.training.rllib.trainer import actor_state, module_spec  # noqa: E402

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


def test_the_adapter_takes_the_runs_rules_object():
    from quiddler_env.core.config import QuiddlerConfig

    rules = QuiddlerConfig(num_players=3, hand_sizes=(3, 4))
    env = QuiddlerMultiAgentEnv({"rules": rules, "env": {"reward_mode": "round_score"}})
    assert env.num_players == 3 and env.raw.config == rules
    with pytest.raises(ValueError, match="env_config 'rules' must be a QuiddlerConfig"):
        QuiddlerMultiAgentEnv({"rules": rules.to_dict()})


def test_layout_choose_gives_every_seat_its_lay_moves():
    """`layout: choose` reaches RLlib: 64 + K actions, and the learners' lay moves are masked steps like any other."""
    from quiddler_env.core import actions as A
    from quiddler_env.core.laying import MAX_CANDIDATES

    for config in (
        {"env": {"num_players": 3, "layout": "choose"}},
        {"env": {"num_players": 2, "layout": "choose"}, "self_play": False, "opponents": [["greedy", 1.0]]},
    ):
        env = QuiddlerMultiAgentEnv(config)
        assert all(space.n == A.NUM_ACTIONS + MAX_CANDIDATES for space in env.action_spaces.values())
        lays = 0
        obs, _ = env.reset(seed=2)
        rng = np.random.default_rng(2)
        while True:
            (agent,) = obs
            action = int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))
            lays += action >= A.LAY_BASE
            obs, _, terminateds, truncateds, _ = env.step({agent: action})
            if terminateds["__all__"] or truncateds["__all__"]:
                break
        assert lays >= len(env.raw.game.config.hand_sizes)  # a learner lays at least once a round


def test_the_challenge_variant_reaches_rllib_as_rule_options():
    """`challenges: true` reaches RLlib: 158 actions, the variant's observation, and challenge moves are played."""
    from quiddler_env.core import actions as A
    from quiddler_env.core.observation import observation_layout

    rules = {"num_players": 3, "challenges": True, "layout": "choose", "vocabularies": ["enable:0.5:1"]}
    env = QuiddlerMultiAgentEnv({"env": rules})
    assert all(space.n == A.NUM_CHALLENGE_ACTIONS for space in env.action_spaces.values())
    size = observation_layout(3, True).size
    assert all(space["observation"].shape == (size,) for space in env.observation_spaces.values())
    moves = 0
    rng = np.random.default_rng(4)
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        while True:
            (agent,) = obs
            action = int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))
            moves += action >= A.PASS
            obs, _, terminateds, truncateds, _ = env.step({agent: action})
            if terminateds["__all__"] or truncateds["__all__"]:
                break
    assert moves > 0  # passes and challenges were asked of the learners


@pytest.mark.slow
def test_a_tiny_rllib_run_trains_on_the_challenge_variant_and_its_bundle_plays_it(tmp_path):
    run = tmp_path / "run"
    variant = ["env.challenges=true", "env.layout=choose", "env.vocabularies=[enable:0.5:1, enable:0.5:2]"]
    _run(["train.py", "--config", str(CONFIG), "--run-dir", str(run), "--quiet", "train.total_timesteps=150", *TINY,
          "rllib.num_env_runners=0", *variant])  # fmt: skip
    final = json.loads((run / "final" / "policy.json").read_text())
    assert final["action_size"] == 158 and final["config"]["challenges"] is True
    out = tmp_path / "eval"
    args = ["evaluate.py", "--players", f"policy:{run}", "greedy", "--games", "2", "--workers", "1", "--seed", "1"]
    rules = ["--challenges", "true", "--layout", "choose", "--vocabularies", "enable:0.5:1", "enable:0.5:2"]
    _run([*args, *rules, "--out", str(out), "--quiet"])
    players = json.loads((out / "results.json").read_text())["summary"]["players"]
    assert all("challenges" in p for p in players.values())


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
    with pytest.raises(ValueError, match="env_config 'env'.*reward_mode"):
        QuiddlerMultiAgentEnv({"env": {"num_players": 2, "reward_mode": "points"}})
    with pytest.raises(ValueError, match="env_config 'env'.*illegal_reward"):  # an option of Quiddler-v0 only
        QuiddlerMultiAgentEnv({"env": {"num_players": 2, "illegal_reward": -1.0}})
    with pytest.raises(ValueError, match="self_play"):
        QuiddlerMultiAgentEnv({"env": {"num_players": 2}, "self_play": "yes"})
    for weight in (True, 0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="must be a positive number"):
            QuiddlerMultiAgentEnv({"env": {"num_players": 2}, "self_play": False, "opponents": [["greedy", weight]]})


@pytest.mark.parametrize("seat", [True, False, 1.0, -1, 2, "player_1", None])
def test_adapter_checks_the_learner_seat_as_quiddler_v0_does(seat):
    """`True` is not seat 1: the adapter uses the env's own check (`common.check_learner_seat`)."""
    import gymnasium as gym

    import quiddler_env  # noqa: F401  (registers Quiddler-v0)
    from quiddler_env.envs.common import check_learner_seat

    with pytest.raises(ValueError, match="learner_seat"):
        check_learner_seat(seat, 2)
    with pytest.raises(ValueError, match="learner_seat"):
        gym.make("Quiddler-v0", num_players=2, learner_seat=seat)
    with pytest.raises(ValueError, match="option 'learner_seat': bad value"):
        QuiddlerMultiAgentEnv(
            {"env": {"num_players": 2}, "self_play": False, "learner_seat": seat, "opponents": [["random", 1]]}
        )


def test_adapter_takes_what_quiddler_v0_takes():
    env = QuiddlerMultiAgentEnv(
        {"env": {"num_players": 3}, "self_play": False, "learner_seat": np.int64(2), "opponents": [["random", 1]]}
    )
    assert env.learner_seat == 2 and type(env.learner_seat) is int
    env.reset(seed=0)
    assert env.agents == ["player_2"]


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


TINY = [
    "algo.n_steps=150",
    "algo.batch_size=50",
    "algo.n_epochs=1",
    "algo.net_arch=[32, 32]",
    "train.checkpoint_every=150",
    "train.keep_checkpoints=5",
    "eval.every=300",
    "eval.at_start=true",
    "eval.games=2",
    "eval.opponents=[greedy]",
    "rllib.num_envs_per_env_runner=2",
]

# train.py, SIGKILLed by itself right after the first checkpoint past step 0 is in place.
KILLED_AFTER_FIRST_CHECKPOINT = """
import os, runpy, signal, sys
from quiddler_agents.training import run
write = run.RunSession.checkpoint
def checkpoint(self, trainer, step):
    folder = write(self, trainer, step)
    if step > 0:
        os.kill(os.getpid(), signal.SIGKILL)
    return folder
run.RunSession.checkpoint = checkpoint
sys.argv = ["train.py", *sys.argv[1:]]
runpy.run_path("train.py", run_name="__main__")
"""

# A script run with Ray made unimportable.
WITHOUT_RAY = """
import runpy, sys
sys.modules["ray"] = None
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _run(args: list[str], timeout: int = 300, *, rc: int = 0) -> subprocess.CompletedProcess:
    """A subprocess in its own process group (Ray's processes of a killed driver go with the group)."""
    env = {**os.environ, "RAY_DEDUP_LOGS": "0", "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    assert proc.returncode == rc, f"{args} gave {proc.returncode}, not {rc}:\n{out[-3000:]}\n{err[-5000:]}"
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def _column(path: Path, key: str) -> list[int]:
    with path.open() as fh:
        return [int(float(r[key])) for r in csv.DictReader(fh)]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fake_checkpoint(run: Path, step: int) -> Path:
    """A checkpoint whose files match state.json but whose algorithm/ RLlib cannot restore."""
    folder = run / "checkpoints" / f"step_{step:09d}"
    (folder / "algorithm").mkdir(parents=True)
    (folder / "algorithm" / "rllib_checkpoint.json").write_text("{}")
    listed = {"algorithm/rllib_checkpoint.json": _sha256(folder / "algorithm" / "rllib_checkpoint.json")}
    state = {"format": 2, "backend": "rllib", "num_timesteps": step, "next_eval": step, "next_checkpoint": step}
    (folder / "state.json").write_text(json.dumps({**state, "files": listed}))
    return folder


@pytest.mark.slow
def test_killed_run_resumes_from_its_checkpoint_and_its_final_bundle_plays_without_ray(tmp_path):
    run = tmp_path / "run"
    start = ["--config", str(CONFIG), "--run-dir", str(run), "--quiet", "train.total_timesteps=450", *TINY]
    # One iteration in the driver (no env runner actor): checkpoints at steps 0 and 150, then kill -9.
    _run(["-c", KILLED_AFTER_FIRST_CHECKPOINT, *start, "rllib.num_env_runners=0"], rc=-signal.SIGKILL)
    assert not (run / "summary.json").exists() and not (run / "final").exists()
    names = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert names == ["step_000000000", "step_000000150"], names
    ckpt = run / "checkpoints" / "step_000000150"
    for name in ("algorithm", "policy/policy.pt", "policy/policy.json", "state.json"):
        assert (ckpt / name).exists(), name
    state = json.loads((ckpt / "state.json").read_text())
    assert state["num_timesteps"] == 150 and state["backend_state"] == {"iteration": 1}
    assert json.loads((ckpt / "policy" / "policy.json").read_text())["num_timesteps"] == 150
    assert _column(run / "eval.csv", "step") == [0]  # eval.at_start
    # A newer checkpoint RLlib cannot restore is skipped (named), the intact one at 150 is used.
    _fake_checkpoint(run, 300)

    # Resume with one env runner actor: the step count and RLlib's iterations continue.
    proc = _run(["train.py", "--resume", str(run), "rllib.num_env_runners=1"])
    assert "step_000000300 cannot be restored by RLlib" in proc.stderr, proc.stderr[-3000:]
    assert "resuming from the newest intact checkpoint, step_000000150" in proc.stderr
    summary = json.loads((run / "summary.json").read_text())
    step = summary["num_timesteps"]  # an env runner actor may sample a move more than asked
    assert summary["backend"] == "rllib" and summary["resumed_from"] == 150
    assert 450 <= step < 480 and summary["session"]["steps"] == step - 150
    assert summary["backend_summary"]["num_env_runners"] == 1 and summary["backend_summary"]["iterations"] == 3
    assert summary["model"] == str(run / "final") and [r["opponent"] for r in summary["final_eval"]] == ["greedy"]
    steps = _column(run / "train.csv", "step")
    assert steps[0] == 150 and steps[-1] == step and len(steps) == 3 and steps == sorted(set(steps))
    assert _column(run / "train.csv", "iteration") == [1, 2, 3]
    evaluated = _column(run / "eval.csv", "step")
    assert evaluated == [0, next(s for s in steps if s >= 300), step]
    assert summary["best_step"] in evaluated
    assert "num_env_runners: 1" in (run / "config.yaml").read_text()
    assert len(json.loads((run / "run.json").read_text())["resumes"]) == 1
    newest = sorted((run / "checkpoints").glob("step_*"))[-1]
    assert newest.name == f"step_{step:09d}"
    assert json.loads((newest / "state.json").read_text())["backend_state"] == {"iteration": 3}
    final = json.loads((run / "final" / "policy.json").read_text())
    assert final["framework"] == "rllib" and final["hidden_layers"] == [32, 32] and final["num_timesteps"] == step
    assert final["weights_sha256"] == _sha256(run / "final" / "policy.pt")
    assert json.loads((run / "best" / "policy.json").read_text())["num_timesteps"] == summary["best_step"]
    assert not [p for p in run.rglob(".*")]  # no temporary files or folders left behind

    # The final bundle plays in evaluate.py with Ray unimportable (weights-only load, no pickle).
    out = tmp_path / "eval"
    args = ["evaluate.py", "--players", f"policy:{run}", "greedy", "--games", "4", "--workers", "1"]
    _run(["-c", WITHOUT_RAY, *args, "--seed", "3", "--out", str(out), "--quiet"])
    results = json.loads((out / "results.json").read_text())
    assert (out / "games.csv").exists()
    text = json.dumps(results)
    assert f"policy:{run}" in text and "greedy" in text
    assert final["weights_sha256"] in text  # results.json records the bundle that was played


@pytest.mark.slow
def test_no_cluster_at_ray_address_is_a_config_error_and_leaves_no_run_folder(tmp_path, monkeypatch):
    from quiddler_agents.training import RunConfigError, start_run

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    cfg = load_run_config(CONFIG, ["ray.address=auto", "train.total_timesteps=150", *TINY])
    with pytest.raises(RunConfigError, match=r"config key 'ray.address': cannot join 'auto': ConnectionError"):
        start_run(cfg, run_dir=tmp_path / "run", quiet=True)
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_rllib_own_pettingzoo_env_example_trains_on_the_registry_id():
    """examples/rllib_pettingzoo.py: RLlib's PettingZooEnv wrapper, the masked module shared by every seat."""
    from tests.test_examples_env import run_example

    summary, _ = run_example("rllib_pettingzoo.py", "--iterations", "1", "--batch", "256")
    assert summary["env"] == "quiddler/quiddler-v0" and summary["env_steps"] >= 256
    assert len(summary["episode_return_mean"]) == 1
