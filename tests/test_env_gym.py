"""The single-agent env `Quiddler-v0` and the self-play wrapper: API checkers, opponents, rewards, SB3 training."""

from __future__ import annotations

import importlib.util

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from sb3_contrib import MaskablePPO
from sb3_contrib.common.wrappers import ActionMasker
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import SubprocVecEnv

import quiddler_env  # noqa: F401  (registers the Gymnasium ids)
from quiddler_env.core import actions as A
from quiddler_env.core.observation import encode_observation, observation_layout
from quiddler_env.envs.gym_env import QuiddlerEnv, UniformRandomPolicy
from quiddler_env.envs.selfplay import SelfPlayEnv

SHORT = {"hand_sizes": [3, 5, 4]}


def play(env, seed, rng=None):
    """One episode with random legal learner actions; returns (total reward, last info, steps)."""
    rng = rng or np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        assert env.observation_space.contains(obs)
        mask = env.action_masks()
        np.testing.assert_array_equal(mask, info["action_mask"].astype(bool))
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        total += reward
        steps += 1
        if terminated or truncated:
            return total, info, steps


# -- API checkers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options", [{}, {"num_players": 3, "learner_seat": "random", "reward_mode": "relative"}, {"num_players": 8}]
)
def test_gymnasium_check_env(options):
    env = gym.make("Quiddler-v0", **options)
    check_env(env.unwrapped)  # made through the registry, so it also renders every mode from the spec


@pytest.mark.parametrize("options", [{}, {"num_players": 4, "learner_seat": "random", "reward_mode": "win_loss"}])
def test_sb3_check_env(options):
    sb3_check_env(QuiddlerEnv(**options), warn=True)


def test_selfplay_env_passes_the_checkers():
    check_env(SelfPlayEnv(num_players=3), skip_render_check=True)  # not registered: no spec to render from
    sb3_check_env(SelfPlayEnv(), warn=True)


def test_registered_entry_point_and_spaces():
    env = gym.make("Quiddler-v0", num_players=3)
    assert isinstance(env.unwrapped, QuiddlerEnv)
    assert env.observation_space.shape == (observation_layout(3).size,)
    assert env.observation_space.dtype == np.float32
    assert env.action_space.n == A.NUM_ACTIONS


# -- the learner's view -------------------------------------------------------------------------------


def test_learner_always_moves_and_sees_its_own_encoding():
    env = QuiddlerEnv(num_players=3, learner_seat=1)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=2)
    for _ in range(100):
        game = env.game
        assert game.current_player == 1 == info["seat"]
        np.testing.assert_array_equal(obs, encode_observation(game, 1))
        np.testing.assert_array_equal(info["action_mask"], game.legal_action_mask())
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if terminated or truncated:
            break
    assert env.game.turns_this_round > 0 or env.game.round > 0


def test_round_score_return_is_the_final_total():
    env = QuiddlerEnv(num_players=3, learner_seat="random", **SHORT)
    for seed in range(3):
        total, info, _ = play(env, seed)
        assert info["round"] == 3 and len(info["round_result"]) == 3
        assert total == pytest.approx(env.game.totals[env.seat] / 100)
        assert info["winners"] == env.game.winners()
        assert not env.action_masks().any()


def test_win_loss_relative_and_lead_rewards():
    env = QuiddlerEnv(num_players=2, reward_mode="win_loss", **SHORT)
    total, _, _ = play(env, 5)
    totals = env.game.totals
    expected = 0.0 if totals[0] == totals[1] else (1.0 if totals[0] > totals[1] else -1.0)
    assert total == expected
    env = QuiddlerEnv(num_players=2, reward_mode="relative", reward_scale=1.0, **SHORT)
    total, _, _ = play(env, 6)
    assert total == pytest.approx(env.game.totals[0] - env.game.totals[1])
    for seed in (6, 7, 8):
        env = QuiddlerEnv(num_players=3, learner_seat="random", reward_mode="lead", reward_scale=1.0, **SHORT)
        total, info, _ = play(env, seed)
        totals, seat = env.game.totals, info["seat"]
        assert total == pytest.approx(totals[seat] - max(t for q, t in enumerate(totals) if q != seat))


def test_random_seat_varies_and_seeds_repeat():
    env = QuiddlerEnv(num_players=4, learner_seat="random")
    seats = {env.reset(seed=s)[1]["seat"] for s in range(20)}
    assert len(seats) > 1
    a = play(QuiddlerEnv(num_players=3, learner_seat="random", **SHORT), 9)
    b = play(QuiddlerEnv(num_players=3, learner_seat="random", **SHORT), 9)
    assert a[0] == b[0] and a[2] == b[2]


def test_illegal_learner_action_ends_the_episode():
    env = QuiddlerEnv()
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(A.discard(0))  # discarding in the draw phase
    assert terminated and not truncated and reward == -1.0 and info["illegal_action"]
    assert not info["action_mask"].any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env = QuiddlerEnv(illegal_reward=-5)
    env.reset(seed=0)
    assert env.step(99)[1] == -5.0


def test_max_cycles_truncates():
    env = QuiddlerEnv(max_cycles=3)
    env.reset(seed=0)
    results = [env.step(int(np.flatnonzero(env.action_masks())[0])) for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True] and not results[-1][2]


# -- opponents --------------------------------------------------------------------------------


class Recorder:
    """Always plays the first legal action; records what it was shown."""

    def __init__(self):
        self.calls: list[tuple[np.ndarray, np.ndarray]] = []
        self.seeds: list[int] = []

    def reset(self, seed=None):
        self.seeds.append(seed)

    def act(self, observation, action_mask):
        self.calls.append((observation, action_mask))
        return int(np.flatnonzero(action_mask)[0])


def test_opponents_get_their_own_observation_and_mask():
    first, second = Recorder(), Recorder()
    env = QuiddlerEnv(num_players=3, learner_seat=0, opponents=[first, second], **SHORT)
    play(env, 1)
    assert first.calls and second.calls and first.seeds and second.seeds
    for obs, mask in first.calls + second.calls:
        assert obs.shape == (observation_layout(3).size,) and mask.dtype == np.int8
        assert mask.sum() > 0 and env.observation_space.contains(obs)
    # The observation is the one of the seat to move: its phase slice agrees with its mask.
    phase = observation_layout(3).slices["phase"]
    for obs, mask in first.calls:
        assert (obs[phase][0] == 1) == bool(mask[A.DRAW_PILE] or mask[A.TAKE_DISCARD])


def test_one_policy_object_plays_every_opponent_seat():
    shared = Recorder()
    env = QuiddlerEnv(num_players=4, opponents=shared, **SHORT)
    env.reset(seed=0)
    assert len(env.opponents) == 3 and all(p is shared for p in env.opponents)
    assert len(shared.seeds) == 1  # reset once per object, not once per seat


def test_bad_opponents_are_reported():
    with pytest.raises(ValueError, match="2 policies given for 1 opponent"):
        QuiddlerEnv(opponents=[UniformRandomPolicy(), UniformRandomPolicy()])
    with pytest.raises(ValueError, match="option 'opponents'"):
        QuiddlerEnv(opponents=42)
    with pytest.raises(ValueError, match="option 'learner_seat': bad value 2"):
        QuiddlerEnv(learner_seat=2)

    class Cheater:
        def act(self, observation, action_mask):
            return A.go_out(0)

    env = QuiddlerEnv(opponents=Cheater(), learner_seat=1)
    with pytest.raises(ValueError, match="chose illegal action 33"):
        env.reset(seed=0)


def test_random_policy_is_seeded_and_legal():
    mask = np.zeros(64, dtype=np.int8)
    mask[[3, 9, 40]] = 1
    a, b = UniformRandomPolicy(7), UniformRandomPolicy(7)
    picks = [a.act(None, mask) for _ in range(30)]
    assert picks == [b.act(None, mask) for _ in range(30)]
    assert set(picks) == {3, 9, 40}
    with pytest.raises(ValueError, match="no legal action"):
        a.act(None, np.zeros(64, dtype=np.int8))


# -- SB3 -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_maskable_ppo_learns_through_subproc_vec_env():
    # "module:id" makes each worker import quiddler_env (which registers the id) before gym.make;
    # workers started by pytest do not run the test module's imports.
    venv = make_vec_env("quiddler_env:Quiddler-v0", n_envs=2, seed=0, vec_env_cls=SubprocVecEnv, env_kwargs=SHORT)
    try:
        model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
        model.learn(total_timesteps=256)
        assert model.num_timesteps >= 256
        obs = venv.reset()
        masks = np.stack(venv.env_method("action_masks"))
        actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert all(masks[i, a] for i, a in enumerate(actions))
    finally:
        venv.close()


def test_one_model_plays_every_seat_of_the_aec_env():
    # PettingZoo's SB3 action-mask tutorial pattern: a thin wrapper, ActionMasker, one MaskablePPO.
    env = ActionMasker(SelfPlayEnv(num_players=3, **SHORT), lambda e: e.unwrapped.action_masks())
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    selfplay = SelfPlayEnv(num_players=3, **SHORT)
    obs, info = selfplay.reset(seed=1)
    movers = set()
    while True:
        movers.add(info["agent"])
        action, _ = model.predict(obs, action_masks=selfplay.action_masks(), deterministic=True)
        obs, _, terminated, truncated, info = selfplay.step(int(action))
        if terminated or truncated:
            break
    assert movers == {"player_0", "player_1", "player_2"}
    assert selfplay.aec.unwrapped.game.is_over


def test_selfplay_rewards_add_up_to_every_seats_total():
    env = SelfPlayEnv(num_players=2, **SHORT)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=3)
    per_agent = {"player_0": 0.0, "player_1": 0.0}
    while True:
        agent = info["agent"]
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        per_agent[agent] += reward
        if terminated or truncated:
            break
    game = env.aec.unwrapped.game
    # The agent that ends the game collects everything due to it; the other's last round is still pending.
    ender = agent
    assert per_agent[ender] == pytest.approx(game.totals[int(ender[-1])] / 100)
    other = "player_1" if ender == "player_0" else "player_0"
    pending = env.aec._cumulative_rewards[other]
    assert per_agent[other] + pending == pytest.approx(game.totals[int(other[-1])] / 100)


# -- the conventions researchers rely on (issue 43) ------------------------------------------------------


def trajectory(env, seed, steps=None):
    """One episode of random legal learner moves from a generator of `seed`: the observations and rewards."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out = [obs]
    while steps is None or len(out) <= steps:
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        out += [obs, reward]
        if terminated or truncated:
            break
    return out


def same(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_opponents_by_agent_spec_strings_one_agent_per_seat_seeded_by_the_env():
    from quiddler_agents.registry import make as make_agent

    env = gym.make("Quiddler-v0", num_players=3, opponents="greedy", **SHORT)
    opponents = env.unwrapped.opponents
    assert [type(p).__name__ for p in opponents] == ["GreedyAgent", "GreedyAgent"] and opponents[0] is not opponents[1]
    # The string plays as the registry's agent passed as an object, and the env's seed fixes the whole game.
    built = gym.make("Quiddler-v0", num_players=3, opponents=[make_agent("greedy"), make_agent("greedy")], **SHORT)
    first = trajectory(env, 4)
    assert same(first, trajectory(built, 4)) and same(first, trajectory(env, 4))
    assert same(first, trajectory(gym.make("Quiddler-v0", num_players=3, opponents="greedy", **SHORT), 4))
    assert not same(first, trajectory(env, 5))
    # A list mixes specs (with parameters) and objects; specs are checked with the registry's message.
    mixed = QuiddlerEnv(num_players=3, opponents=["expert:samples=4", UniformRandomPolicy()], **SHORT)
    assert type(mixed.opponents[0]).__name__ == "ExpertAgent" and isinstance(mixed.opponents[1], UniformRandomPolicy)
    assert same(trajectory(mixed, 2), trajectory(mixed, 2))
    with pytest.raises(ValueError, match="option 'opponents': unknown agent 'gredy'"):
        gym.make("Quiddler-v0", opponents="gredy")
    with pytest.raises(ValueError, match="option 'opponents': entry 1 .* neither an agent spec nor a policy"):
        QuiddlerEnv(num_players=3, opponents=["greedy", 3])


def test_features_gym_on_string_opponents():
    from quiddler_env.wrappers import FeaturesGym

    env = FeaturesGym(gym.make("Quiddler-v0", opponents="greedy", **SHORT))
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and obs.shape[0] > observation_layout(2).size
    assert np.array_equal(env.action_masks(), info["action_mask"].astype(bool))
    obs, *_ = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert env.observation_space.contains(obs)


class IllegalCount(gym.Wrapper):
    """One more wrapper over `gym.make`'s, counting the illegal learner actions."""

    def __init__(self, env):
        super().__init__(env)
        self.illegal = self.steps = 0

    def step(self, action):
        out = self.env.step(action)
        self.illegal += bool(out[-1].get("illegal_action"))
        self.steps += 1
        return out


def test_masks_through_gym_make_wrappers():
    env = gym.make("Quiddler-v0", num_players=3, **SHORT)
    _, info = env.reset(seed=0)
    for _ in range(20):
        mask = info["action_mask"].astype(bool)
        assert np.array_equal(env.get_wrapper_attr("action_masks")(), mask)  # Gymnasium 1.x: through the wrappers
        assert np.array_equal(env.unwrapped.action_masks(), mask)
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[0]))
        if terminated or truncated:
            break


def test_maskable_ppo_on_gym_make_reads_the_envs_masks():
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: IllegalCount(gym.make("Quiddler-v0", **SHORT)) for _ in range(2)])
    assert is_masking_supported(venv)
    venv.seed(0)
    venv.reset()
    expected = np.stack([e.unwrapped.action_masks() for e in venv.envs])
    assert np.array_equal(get_action_masks(venv), expected) and expected.any(axis=1).all()
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    # Every move the model made was legal: unmasked, most of its 64 actions would end the game as illegal.
    assert sum(e.steps for e in venv.envs) >= 256 and sum(e.illegal for e in venv.envs) == 0


def test_the_learners_mask_is_empty_only_once_the_episode_is_over():
    env = gym.make("Quiddler-v0", num_players=3, learner_seat="random", **SHORT)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        _, info = env.reset(seed=seed)
        while True:
            assert info["action_mask"].any()
            _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            if terminated or truncated:
                assert not info["action_mask"].any()  # documented: no move after the end; the user resets
                break
        assert env.reset(seed=seed + 10)[1]["action_mask"].any()


def flat_game(env, seed):
    """The infos of one game with `infos="flat"` (the reset's first), random legal learner moves."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    infos, results = [info], []
    while True:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        infos.append(info)
        if info["round_ended"]:
            results.append(env.unwrapped.last_round_results())
        if terminated or truncated:
            return infos, results


def test_flat_infos_have_the_same_keys_and_shapes_every_step_and_stack():
    from quiddler_env.envs.gym_env import FLAT_INFO_KEYS

    env = gym.make("Quiddler-v0", num_players=3, learner_seat="random", infos="flat", **SHORT)
    check_env(env.unwrapped, skip_render_check=True)
    for seed in range(2):
        infos, results = flat_game(env, seed)
        infos.append(env.unwrapped._flat_info(illegal=True))  # (the form of an illegal step's info)
        for key in FLAT_INFO_KEYS:
            values = [np.asarray(info[key]) for info in infos]
            assert all(set(info) == set(FLAT_INFO_KEYS) for info in infos)
            assert len({(v.shape, v.dtype) for v in values}) == 1, key
            assert np.stack(values).shape == (len(infos), *values[0].shape)
            assert np.issubdtype(values[0].dtype, np.number) or values[0].dtype == np.bool_
        infos.pop()
        game = env.unwrapped.game
        assert [info["round"] for info in infos if info["round_ended"]] == [1, 2, 3] and len(results) == 3
        for info, result in zip([i for i in infos if i["round_ended"]], results, strict=True):
            assert info["round_scores"].tolist() == [r["round_score"] for r in result]
            assert info["round_bonuses"].tolist() == [sum(r["bonuses"].values()) for r in result]
            assert info["totals"].tolist() == [r["total"] for r in result]
        assert not any(i["round_scores"].any() for i in infos if not i["round_ended"])
        assert infos[-1]["totals"].tolist() == game.totals and infos[-1]["winner_count"] == len(game.winners())
        assert all(i["winner_count"] == 0 for i in infos[:-1]) and not any(i["illegal_action"] for i in infos)
        assert env.unwrapped.last_round_results() == [r.to_dict() for r in game.round_history[-1]]
    # An illegal action's info is flat too; the default infos are the full ones, as before.
    env.reset(seed=0)
    info = env.step(63)[-1]
    assert set(info) == set(FLAT_INFO_KEYS) and info["illegal_action"] and not info["action_mask"].any()
    full = gym.make("Quiddler-v0", num_players=3, **SHORT)
    assert full.unwrapped.infos == "full" and full.unwrapped.last_round_results() == []
    _, info, _ = play(full.unwrapped, 0)
    assert {"round", "round_result", "winners"} <= set(info)
    with pytest.raises(ValueError, match="option 'infos': bad value 'ragged'; allowed: full, flat"):
        gym.make("Quiddler-v0", infos="ragged")


def test_tianshou_collects_quiddler_v0_with_flat_infos():
    pytest.importorskip("tianshou")
    from tianshou.algorithm.algorithm_base import Policy
    from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv

    class MaskedRandom(Policy):
        """Uniform over the legal moves, read from the stacked infos."""

        def forward(self, batch, state=None, **kwargs):
            masks = np.asarray(batch.info.action_mask)
            return Batch(act=np.array([np.flatnonzero(m)[len(np.flatnonzero(m)) // 2] for m in masks]), state=state)

    def make():
        return gym.make("Quiddler-v0", num_players=3, learner_seat="random", infos="flat", **SHORT)

    envs = DummyVectorEnv([make for _ in range(3)])
    envs.seed(0)
    collector = Collector[CollectStats](
        MaskedRandom(action_space=make().action_space), envs, VectorReplayBuffer(3000, 3)
    )
    collector.reset()
    stats = collector.collect(n_episode=6)
    assert stats.n_collected_episodes >= 6
    info = collector.buffer.info
    assert info.round_scores.shape[1:] == (3,) and info.action_mask.shape[1:] == (64,)
    assert not np.asarray(info.illegal_action).any()


@pytest.mark.slow  # RecordVideo starts ffmpeg
def test_quiddler_v0_renders_the_table_as_an_image_for_record_video(tmp_path):
    env = gym.make("Quiddler-v0", hand_sizes=[3, 4], opponents="greedy", render_mode="rgb_array")
    obs, info = env.reset(seed=3)
    frames = [env.render()]
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = terminated or truncated
        frames.append(env.render())
    assert all(f.dtype == np.uint8 and f.ndim == 3 and f.shape == frames[0].shape for f in frames)
    assert sum(not np.array_equal(a, b) for a, b in zip(frames, frames[1:], strict=False)) >= len(frames) // 2
    if importlib.util.find_spec("moviepy") is None:
        pytest.skip("RecordVideo needs moviepy")
    recorded = gym.wrappers.RecordVideo(
        gym.make("Quiddler-v0", hand_sizes=[3], render_mode="rgb_array"), str(tmp_path / "video")
    )
    obs, info = recorded.reset(seed=1)
    done = False
    while not done:
        obs, reward, terminated, truncated, info = recorded.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = terminated or truncated
    recorded.close()
    assert list((tmp_path / "video").glob("*.mp4"))
