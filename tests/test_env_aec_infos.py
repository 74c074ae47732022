"""The AEC env's `infos` option: "flat" infos (the same keys and shapes at every step, for collectors that stack
them, such as Tianshou's) agree with the game and with the default "full" infos; `last_round_results()`; and
`SelfPlayEnv` without the train extra."""

from __future__ import annotations

import copy
import importlib
import pickle
import sys

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from quiddler_env.envs import gym_env
from quiddler_env.envs.quiddler_v0 import FLAT_INFO_KEYS, env, raw_env

pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
]

BLUFFS = {"challenges": True, "layout": "choose", "vocabularies": ["enable:0.5:3"]}
RULES = [
    pytest.param({"hand_sizes": [3, 4, 5]}, id="2p"),
    pytest.param({"num_players": 3, "hand_sizes": [4, 3], "score_floor": "none", "reward_mode": "relative"}, id="3p"),
    pytest.param({"num_players": 4, "hand_sizes": [3, 5], "layout": "choose", "score_floor": "total"}, id="4p-choose"),
    pytest.param({"num_players": 3, "hand_sizes": [4, 3], "two_player_bonus": "both", **BLUFFS}, id="3p-challenges"),
    pytest.param({"num_players": 2, "hand_sizes": [3, 3], "go_out": "forced", "bonus_value": 0}, id="2p-forced"),
]


def _step_random(aec, rng: np.random.Generator) -> int | None:
    obs, _, terminated, truncated, _ = aec.last()
    if terminated or truncated:
        action = None
    else:
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.integers(legal.size)])
    aec.step(action)
    return action


def _play(aec, seed: int, actions=None, rng=None):
    """Play one game from `reset(seed)` (the given actions, or random legal ones); returns the actions and, per
    agent step, (agent, its last() info, every agent's info, the rewards, the round results so far)."""
    aec.reset(seed=seed)
    raw = aec.unwrapped
    played, record = [], []
    for i, agent in enumerate(aec.agent_iter()):
        info = aec.last()[-1]
        record.append((agent, info, dict(aec.infos), dict(aec.rewards), raw.game.round_history))
        if actions is None:
            played.append(_step_random(aec, rng))
        else:
            aec.step(actions[i])
    return played, record


def _check_flat(info: dict, num_players: int) -> None:
    assert list(info) == list(FLAT_INFO_KEYS)
    for key in ("round_scores", "round_bonuses", "totals"):
        assert info[key].shape == (num_players,) and info[key].dtype == np.int64, key
    for key in ("seat", "round", "winner_count"):
        assert type(info[key]) is int, key
    assert type(info["round_ended"]) is bool and type(info["illegal_action"]) is bool


@pytest.mark.parametrize("rules", RULES)
def test_flat_infos_have_the_same_keys_and_shapes_every_step_and_agree_with_the_game(rules):
    n = rules.get("num_players", 2)
    floor = rules.get("score_floor", "round")
    for seed in (0, 1):
        flat, full = env(infos="flat", **rules), env(**rules)
        actions, record = _play(flat, seed, rng=np.random.default_rng(seed))
        _, full_record = _play(full, seed, actions=actions)
        game = flat.unwrapped.game
        assert game.totals == full.unwrapped.game.totals  # the option changes the infos only

        everything = [info for _, info, infos, _, _ in record for info in [info, *infos.values()]]
        for info in everything:
            _check_flat(info, n)
        for key in FLAT_INFO_KEYS:  # numpy (and so a collector) stacks them
            values = [np.asarray(info[key]) for info in everything]
            assert len({(v.shape, v.dtype) for v in values}) == 1, key
            assert np.stack(values).shape == (len(values), *values[0].shape)

        for (agent, info, infos, rewards, history), full_step in zip(record, full_record, strict=True):
            _, full_info, _, full_rewards, _ = full_step
            assert rewards == full_rewards
            totals = [r.total for r in history[-1]] if history else [0] * n
            for who, one in infos.items():  # every agent's info: its seat, the rounds scored, the totals now
                assert one["seat"] == flat.unwrapped.agent_name_mapping[who]
                assert one["round"] == len(history) and one["totals"].tolist() == totals
                assert not one["illegal_action"]
            assert info is infos[agent]
            # A round's figures as the full info's round_result has them, until the agent acts.
            assert info["round_ended"] == ("round_result" in full_info)
            if info["round_ended"]:
                result = full_info["round_result"]
                assert info["round"] == full_info["round"]
                assert info["round_scores"].tolist() == [r["round_score"] for r in result]
                assert info["round_bonuses"].tolist() == [sum(r["bonuses"].values()) for r in result]
                assert info["totals"].tolist() == [r["total"] for r in result]
                before = np.asarray([r.total for r in history[-2]] if len(history) > 1 else [0] * n)
                summed = before + info["round_scores"]
                assert info["totals"].tolist() == (np.maximum(summed, 0) if floor == "total" else summed).tolist()
            else:
                assert not info["round_scores"].any() and not info["round_bonuses"].any()
            assert (info["winner_count"] > 0) == ("winners" in full_info)
        last = record[-1][1]
        assert last["round_ended"] and last["round"] == len(rules["hand_sizes"])
        assert last["totals"].tolist() == game.totals and last["winner_count"] == len(game.winners())
        assert flat.unwrapped.last_round_results() == [r.to_dict() for r in game.round_history[-1]]
        assert flat.unwrapped.last_round_results() == full.unwrapped.last_round_results()


def test_flat_keys_are_quiddler_v0s_less_the_mask_and_default_infos_stay_full():
    assert ("action_mask", *FLAT_INFO_KEYS) == gym_env.FLAT_INFO_KEYS  # one declaration, less the mask
    aec = raw_env(hand_sizes=[3])
    assert aec.info_mode == "full" and aec.last_round_results() == []
    aec.reset(seed=0)
    assert aec.infos == {"player_0": {}, "player_1": {}} and aec.last_round_results() == []
    flat = raw_env(hand_sizes=[3], infos="flat")
    flat.reset(seed=0)
    assert flat.infos["player_1"]["seat"] == 1 and flat.infos["player_0"]["round"] == 0
    assert not flat.infos["player_0"]["totals"].any() and flat.last_round_results() == []
    with pytest.raises(ValueError, match="option 'infos': bad value 'ragged'; allowed: full, flat"):
        raw_env(infos="ragged")


def test_an_illegal_move_under_env_is_in_the_movers_flat_info():
    aec = env(num_players=3, hand_sizes=[3], infos="flat")
    aec.reset(seed=2)
    mover = aec.agent_selection
    obs = aec.observe(mover)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    aec.step(illegal)
    assert all(aec.terminations.values()) and aec.rewards[mover] == -1
    for agent, info in aec.infos.items():
        _check_flat(info, 3)
        assert info["illegal_action"] == (agent == mover) and info["winner_count"] == 0
    with pytest.raises(Exception, match="illegal action"):
        raw = raw_env(hand_sizes=[3], infos="flat")
        raw.reset(seed=2)
        raw.step(illegal)  # the raw env raises, as in the full mode


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"infos": "flat"}, id="2p"),
        pytest.param({"infos": "flat", "num_players": 3, "max_cycles": 40, "score_floor": "total"}, id="3p-cycles"),
        pytest.param({"infos": "flat", "num_players": 4, "hand_sizes": [3, 4], "layout": "choose"}, id="4p-choose"),
    ],
)
def test_pettingzoos_api_and_seed_tests_pass_with_flat_infos(options):
    api_test(env(**options), num_cycles=150)
    seed_test(lambda: env(**options), num_cycles=150)


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("make", [env, raw_env], ids=["env", "raw_env"])
def test_a_copy_mid_game_keeps_the_flat_infos_and_plays_on_alike(make, how):
    original = make(num_players=3, hand_sizes=[3, 4], infos="flat")
    rng = np.random.default_rng(3)
    original.reset(seed=6)
    while not original.unwrapped.game.round_history:  # into the second round: the infos hold the first's
        _step_random(original, rng)
    twin = copy.deepcopy(original) if how == "deepcopy" else pickle.loads(pickle.dumps(original))
    assert twin.unwrapped.info_mode == "flat" and twin.unwrapped.last_round_results() == (
        original.unwrapped.last_round_results()
    )
    for _ in range(400):
        if not original.agents:
            break
        a, b = original.infos, twin.infos
        assert a.keys() == b.keys() and original.agent_selection == twin.agent_selection
        for agent in a:
            assert a[agent].keys() == b[agent].keys()
            for key in a[agent]:
                np.testing.assert_array_equal(a[agent][key], b[agent][key])
        action = _step_random(original, rng)
        twin.step(action)
    assert not original.agents and not twin.agents


def test_tianshou_collects_the_aec_env_with_flat_infos():
    pytest.importorskip("tianshou")
    from tianshou.algorithm.algorithm_base import Policy
    from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv

    class MaskedRandom(Policy):
        """Uniform over the legal moves of whichever seat acts (Tianshou's PettingZooEnv puts them in obs.mask)."""

        def forward(self, batch, state=None, **kwargs):
            rng = np.random.default_rng(len(batch))
            masks = np.asarray(batch.obs.mask)
            return Batch(act=np.array([rng.choice(np.flatnonzero(m)) for m in masks]), state=state)

    def make():
        return PettingZooEnv(env(num_players=3, hand_sizes=[3, 4], infos="flat"))

    envs = DummyVectorEnv([make for _ in range(2)])
    envs.seed(0)
    collector = Collector[CollectStats](
        MaskedRandom(action_space=make().action_space), envs, VectorReplayBuffer(4000, 2)
    )
    collector.reset()
    stats = collector.collect(n_episode=4)
    assert stats.n_collected_episodes >= 4
    info = collector.buffer.info
    size = len(collector.buffer)
    assert set(FLAT_INFO_KEYS) <= set(info.keys())
    assert np.asarray(info.round_scores)[:size].shape == (size, 3) and np.asarray(info.totals).shape[1:] == (3,)
    ended = np.asarray(info.round_ended)[:size]
    assert ended.any() and not np.asarray(info.round_scores)[:size][~ended].any()
    assert not np.asarray(info.illegal_action)[:size].any()
    assert set(np.asarray(info.winner_count)[:size][np.asarray(collector.buffer.terminated)[:size]]) - {0}


def test_selfplay_env_imports_and_plays_without_the_train_extra(monkeypatch):
    # SelfPlayEnv is a plain gymnasium Env: sb3-contrib is what trains on it, never what it imports.
    import quiddler_env.envs

    for name in ("sb3_contrib", "stable_baselines3", "torch"):  # the train extra's, as in the base install
        monkeypatch.setitem(sys.modules, name, None)  # `import sb3_contrib` now raises ImportError
    monkeypatch.delitem(sys.modules, "quiddler_env.envs.selfplay", raising=False)  # imported afresh, then restored
    monkeypatch.delattr(quiddler_env.envs, "selfplay", raising=False)
    selfplay = importlib.import_module("quiddler_env.envs.selfplay")
    with pytest.raises(ImportError):
        import sb3_contrib  # noqa: F401
    game = selfplay.SelfPlayEnv(hand_sizes=[3], infos="flat")
    _, info = game.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(500):
        _, _, terminated, truncated, info = game.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated or truncated:
            break
    assert terminated and set(FLAT_INFO_KEYS) <= set(info) and info["winner_count"] >= 1
