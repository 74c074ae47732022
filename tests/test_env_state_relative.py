"""The training envs' privileged states: the AEC env's `state()` seat-relative to the learner, for critics.

`QuiddlerVectorEnv.states()` builds them over all games from the engine's arrays, `Quiddler-v0`'s `state()` for its
one game; both must equal `envs.state.encode_state` (what the AEC env's `state()` returns) of the same position with
the learner's seat first (`seat_relative`).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import quiddler_env  # noqa: F401  (registers the ids)
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.observation import observation_layout
from quiddler_env.envs.quiddler_v0 import env as aec_env
from quiddler_env.envs.state import encode_state, seat_relative, state_box, state_layout
from quiddler_env.envs.vector_env import QuiddlerVectorEnv

RULES = [
    pytest.param(QuiddlerConfig(num_players=3), id="3p"),
    pytest.param(QuiddlerConfig(num_players=2, layout="choose"), id="2p-choose"),
    pytest.param(QuiddlerConfig(num_players=3, layout="choose", challenges=True), id="3p-challenges"),
]


def random_legal(rng, masks):
    return np.argmax(rng.random(masks.shape) * masks + masks, axis=1)


def expected(game, seat):
    """The AEC env's state of a `QuiddlerGame` position, the learner's seat first."""
    return seat_relative(encode_state(game), seat, game.num_players, game.challenges)


@pytest.mark.parametrize("rules", RULES)
def test_vector_env_states_are_the_aec_state_from_the_learners_seat(rules):
    envs = QuiddlerVectorEnv(6, rules, opponents="greedy", autoreset_mode="SameStep")
    envs.final_states = True
    envs.reset(seed=5)
    rng = np.random.default_rng(1)
    layout = state_layout(rules.num_players, rules.challenges)
    box = state_box(rules)
    phases, ended = set(), 0
    for _ in range(120):
        states = envs.states()
        assert states.shape == (6, layout.size) and states.dtype == np.float32
        for i in range(6):
            game = envs.games.game(i)
            np.testing.assert_allclose(states[i], expected(game, int(envs.seats[i])), atol=1e-6)
            assert box.contains(states[i])
            phases.add(int(game.phase))
        obs, _, terminated, truncated, infos = envs.step(random_legal(rng, envs.action_masks()))
        done = terminated | truncated
        if done.any():  # the final states: the ended games' last position, as their final observations show it
            final = infos["final_state"]
            assert (infos["_final_state"] == done).all() and not final[~done].any()
            obs_slices = observation_layout(rules.num_players, rules.challenges).slices
            for i in np.flatnonzero(done):
                view = layout.view(final[i])
                assert view["phase"][2] == 1.0 and not view["current_player"].any()  # game over
                np.testing.assert_array_equal(
                    final[i][layout.slices["totals"]], infos["final_obs"][i][obs_slices["totals"]]
                )
                ended += 1
    assert ended > 0 and {0, 1} | ({3} if rules.layout == "choose" else set()) <= phases  # each kind of move
    assert 4 in phases or not rules.challenges  # and the challenge phase's


def test_the_hidden_cards_are_in_the_state_not_in_the_observation():
    """The state's first hand is the learner's own (the observation's), the others' hands and the draw pile add up
    to the unseen cards the observation counts (the hidden information the critic reads)."""
    rules = QuiddlerConfig(num_players=3)
    envs = QuiddlerVectorEnv(4, rules, opponents="random")
    obs, _ = envs.reset(seed=2)
    states = envs.states()
    s, o = state_layout(3).view, observation_layout(3).slices
    for i in range(4):
        view = s(states[i])
        np.testing.assert_array_equal(view["hands"][0], obs[i][o["hand"]])
        hidden = view["hands"][1:].sum(axis=0) + view["draw_pile"]
        np.testing.assert_array_equal(hidden, obs[i][o["unseen"]])  # nobody has taken from the discard pile yet


@pytest.mark.parametrize("rules", RULES[:2])
def test_gym_env_state_is_the_aec_state_from_the_learners_seat(rules):
    env = gym.make("Quiddler-v0", config=rules, opponents="greedy", learner_seat="random").unwrapped
    rng = np.random.default_rng(4)
    for episode in range(3):
        env.reset(seed=episode)
        done = False
        while not done:
            np.testing.assert_allclose(env.state(), expected(env.game, env.seat), atol=1e-6)
            mask = env.action_masks()
            _, _, terminated, truncated, _ = env.step(int(random_legal(rng, mask[None])[0]))
            done = terminated or truncated
        np.testing.assert_allclose(env.state(), expected(env.game, env.seat), atol=1e-6)


def test_seat_relative_lists_the_seats_from_the_given_one():
    """`seat_relative` against the AEC env's own `state()`: seat k of the relative state is absolute seat
    (seat + k) % n in every per-seat slice, the rest unchanged."""
    aec = aec_env(config=QuiddlerConfig(num_players=3))
    aec.reset(seed=8)
    for _ in range(10):
        aec.step(int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0]))
    absolute = aec.state()
    layout = state_layout(3)
    for seat in range(3):
        rel = layout.view(seat_relative(absolute, seat, 3))
        ab = layout.view(absolute)
        for k in range(3):
            np.testing.assert_array_equal(rel["hands"][k], ab["hands"][(seat + k) % 3])
            np.testing.assert_array_equal(rel["totals"][k], ab["totals"][(seat + k) % 3])
            np.testing.assert_array_equal(rel["dealer"][k], ab["dealer"][(seat + k) % 3])
        np.testing.assert_array_equal(rel["draw_pile"], ab["draw_pile"])
        np.testing.assert_array_equal(rel["phase"], ab["phase"])
