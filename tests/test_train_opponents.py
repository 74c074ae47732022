"""Training opponents: the per-episode mixture, the league pool on disk, the training env, the run-folder CSVs."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from quiddler_agents.policies import load_policy
from quiddler_agents.training.opponents import LEAGUE, OpponentMixture
from quiddler_agents.training.runfiles import CsvTable
from quiddler_agents.training.sb3.league import League, member_name
from quiddler_agents.training.sb3.opponents import make_training_env
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.observation import observation_layout

RULES = QuiddlerConfig(num_players=2)


def _tiny_model():
    from sb3_contrib import MaskablePPO

    from quiddler_env.envs.gym_env import QuiddlerEnv

    return MaskablePPO(
        "MlpPolicy", QuiddlerEnv(RULES), n_steps=16, batch_size=16, policy_kwargs={"net_arch": [8]}, seed=0
    )


def test_mixture_draws_follow_the_weights_and_the_seed():
    mix = OpponentMixture([("random", 3.0), ("greedy", 1.0)], RULES)
    assert mix.probabilities() == {"random": 0.75, "greedy": 0.25}
    draws = []
    for seed in range(2000):
        mix.reset(seed)
        draws.append(mix.current_name)
    share = Counter(draws)["random"] / len(draws)
    assert 0.72 < share < 0.78
    # The same seed draws the same policy, in a fresh object too.
    other = OpponentMixture([("random", 3.0), ("greedy", 1.0)], RULES)
    for seed in (0, 1, 17, 1999):
        other.reset(seed)
        assert other.current_name == draws[seed]
    # Agents are built once per spec and reused across episodes.
    built = {}
    for seed in range(20):
        mix.reset(seed)
        assert built.setdefault(mix.current_name, mix.current) is mix.current
    assert set(built) == {"random", "greedy"}


def test_mixture_plays_legal_moves_and_checks_its_input():
    mix = OpponentMixture([("greedy", 1.0)], RULES)
    with pytest.raises(RuntimeError, match="before reset"):
        mix.act(np.zeros(observation_layout(2).size, dtype=np.float32), np.ones(64, dtype=np.int8))
    with pytest.raises(ValueError, match="weight of 'random'"):
        OpponentMixture([("random", 0.0)], RULES)
    with pytest.raises(ValueError, match="at least one"):
        OpponentMixture([], RULES)
    env = make_training_env(RULES, {"learner_seat": "random"}, [("random", 1.0), ("greedy", 1.0)])
    seen = set()
    for episode in range(6):
        obs, info = env.reset(seed=episode)
        done = False
        rng = np.random.default_rng(episode)
        while not done:
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            done = terminated or truncated
        assert len(info["opponent_policies"]) == 1 and "winners" in info
        seen.update(info["opponent_policies"])
    assert seen == {"random", "greedy"}


def test_league_pool_is_bounded_saved_and_loaded_safely(tmp_path):
    model = _tiny_model()
    league = League(tmp_path, pool_size=2)
    for step in (100, 200, 300):
        assert league.add(model, step, {"config": RULES.to_dict()}) == member_name(step)
    assert league.state() == [member_name(200), member_name(300)]
    assert league.add(model, 300) == member_name(300) and len(league.state()) == 2  # a repeat is not a new member
    for path in league.paths():
        desc = json.loads((tmp_path / "league" / path.rsplit("/", 1)[1] / "policy.json").read_text())
        assert desc["league_step"] in (200, 300)
        agent = load_policy(path, config=RULES)  # weights only: the safe loader
        assert agent.observation_size == observation_layout(2).size
    assert not list((tmp_path / "league").glob(".*"))  # no temporary folders left
    # A resumed run rebuilds the pool from the names saved in its checkpoint.
    again = League(tmp_path, pool_size=2, members=league.state())
    assert again.paths() == league.paths()
    with pytest.raises(FileNotFoundError, match="step_000000999"):
        League(tmp_path, pool_size=2, members=[member_name(999)])

    mix = OpponentMixture([("random", 1.0)], RULES, league_weight=3.0, league_members=league.paths())
    probs = mix.probabilities()
    assert probs["random"] == pytest.approx(0.25)
    assert probs[f"{LEAGUE}:{league.paths()[0]}"] == pytest.approx(0.375)
    names = set()
    for seed in range(40):
        mix.reset(seed)
        names.add(mix.current_name)
        mask = np.zeros(64, dtype=np.int8)
        mask[[0, 1]] = 1
        obs = np.zeros(observation_layout(2).size, dtype=np.float32)
        assert mix.act(obs, mask) in (0, 1)
    assert len(names) == 3
    mix.set_league(league.paths()[1:])
    assert set(mix.probabilities()) == {"random", f"{LEAGUE}:{league.paths()[1]}"}
    # A league member drawn by the training env plays whole games.
    env = make_training_env(RULES, {}, [("random", 1.0)], 5.0, league.paths())
    obs, _ = env.reset(seed=3)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
        done = terminated or truncated
    assert info["opponent_policies"][0] in ("random", *(f"{LEAGUE}:{p}" for p in league.paths()))


def test_csv_table_appends_extends_and_truncates(tmp_path):
    path = tmp_path / "train.csv"
    table = CsvTable(path)
    table.append({"step": 10, "a": 1.5})
    table.append({"step": 20, "a": 2.0})
    table.append({"step": 30, "a": 3.0, "b": 7})  # a new column rewrites the header
    lines = path.read_text().splitlines()
    assert lines[0] == "step,a,b" and lines[1] == "10,1.5," and lines[3] == "30,3,7"
    # A torn last line (a killed write) and the rows after the checkpoint are dropped on resume.
    path.write_text(path.read_text() + "40,4")
    resumed = CsvTable(path, keep_until=20)
    assert [r["step"] for r in resumed.read()] == ["10", "20"]
    assert path.read_text().splitlines() == ["step,a,b", "10,1.5,", "20,2,"]
    resumed.append({"step": 30, "a": 3.5})
    assert path.read_text().splitlines()[-1] == "30,3.5,"


def test_time_to_strength_is_the_first_evaluation_at_each_level():
    from quiddler_agents.training.runfiles import time_to_strength

    def row(step, opponent, win, seconds):
        return {"step": str(step), "opponent": opponent, "win_rate": str(win), "run_seconds": str(seconds)}

    rows = [
        row(0, "expert", 0.40, 10),
        row(0, "greedy", 0.70, 11),
        row(100, "expert", 0.52, 300),  # 50% reached here...
        row(100, "greedy", 0.50, 301),
        row(200, "expert", 0.48, 600),  # ...and a later dip does not undo it
        row(300, "expert", 0.55, 900),  # 55% exactly counts
        row(300, "greedy", 0.80, 901),
    ]
    got = time_to_strength(rows[::-1])  # the rows' order does not matter: steps do
    assert got["expert"] == {"0.50": {"step": 100, "run_seconds": 300.0}, "0.55": {"step": 300, "run_seconds": 900.0}}
    assert got["greedy"] == {"0.50": {"step": 0, "run_seconds": 11.0}, "0.55": {"step": 0, "run_seconds": 11.0}}
    # The warm start's evaluations (step 0, before the learning curve's first) come first by the clock.
    warm = [{**row(0, "expert", 0.51, 40), "stage": "after DAgger round 1"}, row(0, "expert", 0.45, 50)]
    assert time_to_strength(warm[::-1])["expert"]["0.50"] == {"step": 0, "run_seconds": 40.0}
    # Never reached, or rows from before the run clock: None.
    assert time_to_strength([row(0, "search", 0.3, 5)])["search"] == {"0.50": None, "0.55": None}
    old = [{"step": "0", "opponent": "expert", "win_rate": "0.9", "run_seconds": ""}]
    assert time_to_strength(old)["expert"] == {"0.50": None, "0.55": None}


@pytest.mark.slow
@pytest.mark.parametrize("vec_env", ["dummy", "subproc", "batched"])
def test_training_vec_env_masks_match_the_envs(vec_env):
    from quiddler_agents.training.config import RunConfig
    from quiddler_agents.training.sb3.trainer import build_vec_env

    cfg = RunConfig.from_mapping({"opponents": [{"spec": "random"}], "train": {"n_envs": 2, "vec_env": vec_env}})
    venv = build_vec_env(cfg, [])
    try:
        venv.seed(0)
        venv.reset()
        rng = np.random.default_rng(0)
        episodes = 0
        for _ in range(150):
            served = np.stack(venv.env_method("action_masks"))
            asked = np.stack(venv.venv.env_method("action_masks"))  # past the cache, to the envs themselves
            assert served.dtype == bool and np.array_equal(served, asked)
            actions = [int(rng.choice(np.flatnonzero(m))) for m in served]
            _, _, dones, _ = venv.step(np.array(actions))
            episodes += int(dones.sum())
        assert episodes >= 2  # the masks after automatic resets were checked too
        assert venv.env_seconds > 0
    finally:
        venv.close()
