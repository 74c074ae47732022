"""The single-agent env `Quiddler-v0` and the self-play wrapper: API checkers, opponents, rewards, SB3 training."""

from __future__ import annotations

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
from quiddler_env.envs.gym_env import QuiddlerEnv, UniformRandomPolicy
from quiddler_env.envs.observation import encode_observation, observation_layout
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
