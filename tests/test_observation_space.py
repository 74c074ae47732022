"""Every observation lies in its declared space: random legal games under every rule option, in the AEC env,
`Quiddler-v0` and the vector env (their encoders: `core.observation.encode_observation` and the compiled
`batch_kernels.observe_row`)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from hypothesis import example, given, settings
from hypothesis import strategies as st

import quiddler_env
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.observation import observation_layout

RULE_OPTIONS = {o.name: o for o in QuiddlerConfig.rule_options()}
CHOICES = {name: o.choices for name, o in RULE_OPTIONS.items() if o.choices and name != "challenges"}
"""Every rule option with choices (min_word_cards, two_player_bonus, score_floor, go_out, layout), each choice."""


def _bonus_values() -> list[int]:
    bounds = getattr(RULE_OPTIONS["bonus_value"], "bounds", None) or (-10, 10)  # (before bounds were declared)
    return [0, RULE_OPTIONS["bonus_value"].default, *bounds]


def rules(challenges: bool) -> st.SearchStrategy[dict]:
    """Rule options of a short game: every choice of every option, turn caps from 1 to none, 2..8 players."""
    fields = {name: st.sampled_from(choices) for name, choices in CHOICES.items()}
    fields["num_players"] = st.integers(2, 8)
    fields["hand_sizes"] = st.sampled_from([(3, 4), (1, 2, 3), (2,), (4, 1), (11,), (6, 9)])
    fields["turn_cap"] = st.sampled_from([1, 2, 3, None, RULE_OPTIONS["turn_cap"].default])
    fields["bonus_value"] = st.sampled_from(_bonus_values())
    if challenges:
        fields["challenges"] = st.booleans()
    # Without a cap a round ends only when someone goes out: a hand of one card never does with words of two
    # cards or more (such a game never ends), and random play takes long to lay a big hand in words.
    return st.fixed_dictionaries(fields).filter(lambda r: r["turn_cap"] is not None or 1 < min(r["hand_sizes"]) <= 4)


KNOWN = {"num_players": 3, "hand_sizes": (3, 4), "turn_cap": 1}
"""The issue's case: with a turn cap, the final turns after a late go-out ran `turns_this_round` past 1."""
MAX_STEPS = 20_000
"""Far more steps than any of these games takes (a few hundred at most): a game past it does not end."""
SETTINGS = settings(max_examples=150, deadline=None, database=None, derandomize=True)


def assert_inside(space: spaces.Space, obs, where: str, num_players: int, challenges: bool = False) -> None:
    """obs in space, its dtype the space's, and where not, which entries (by slice name) and by how much."""
    if isinstance(space, spaces.Dict):
        assert set(obs) == set(space.spaces), where
        for key, sub in space.spaces.items():
            assert_inside(sub, obs[key], f"{where}[{key!r}]", num_players, challenges)
        assert space.contains(obs), where
        return
    assert isinstance(obs, np.ndarray) and obs.dtype == space.dtype and obs.shape == space.shape, (where, obs)
    outside = np.argwhere((obs < space.low) | (obs > space.high))
    if outside.size and obs.dtype == np.float32:
        slices = observation_layout(num_players, challenges).slices
        index = int(outside[0][-1])
        name = next(n for n, s in slices.items() if s.start <= index < s.stop)
        value = obs[tuple(outside[0])]
        low, high = space.low[tuple(outside[0])], space.high[tuple(outside[0])]
        raise AssertionError(f"{where}: entry {index} ({name}) = {value} outside [{low}, {high}]")
    assert not outside.size, (where, outside)
    assert space.contains(obs), where


def play_aec(rule: dict, seed: int) -> int:
    """A random legal game in `quiddler_env.env`; every agent's observation checked after every step."""
    aec = quiddler_env.env(**rule)
    n, challenges = rule["num_players"], rule.get("challenges", False)
    rng = np.random.default_rng(seed)
    aec.reset(seed=seed)
    steps = 0
    for agent in aec.agent_iter():
        observation, _, terminated, truncated, _ = aec.last()
        for other in aec.agents:
            seen = observation if other == agent else aec.observe(other)
            assert_inside(aec.observation_space(other), seen, f"{other} at step {steps}", n, challenges)
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(observation["action_mask"])))
        aec.step(action)
        steps += 1
        assert steps < MAX_STEPS, "the game did not end"
    return steps


def play_gym(rule: dict, seed: int) -> int:
    """A random legal game of `Quiddler-v0` (random opponents), from a random learner seat."""
    e = gym.make("Quiddler-v0", learner_seat="random", **rule)
    n, challenges = rule["num_players"], rule.get("challenges", False)
    rng = np.random.default_rng(seed)
    obs, info = e.reset(seed=seed)
    steps, done = 0, False
    while not done:
        assert_inside(e.observation_space, obs, f"step {steps}", n, challenges)
        obs, _, terminated, truncated, info = e.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        done = terminated or truncated
        steps += 1
        assert steps < MAX_STEPS, "the game did not end"
    assert_inside(e.observation_space, obs, "the end", n, challenges)
    return steps


def play_vector(rule: dict, seed: int, num_envs: int = 3) -> int:
    """Random legal steps of the vector env until every sub-env has ended a game (next-step autoreset)."""
    envs = gym.make_vec("Quiddler-v0", num_envs=num_envs, vectorization_mode="vector_entry_point", **rule)
    n = rule["num_players"]
    rng = np.random.default_rng(seed)
    obs, infos = envs.reset(seed=seed)
    ended = np.zeros(num_envs, dtype=bool)
    steps = 0
    while not ended.all():
        assert_inside(envs.observation_space, obs, f"step {steps}", n)
        for i in range(num_envs):
            assert_inside(envs.single_observation_space, obs[i], f"sub-env {i} at step {steps}", n)
        masks = infos["action_mask"]
        actions = np.argmax(rng.random(masks.shape) * masks + masks, axis=1)
        obs, _, terminated, truncated, infos = envs.step(actions)
        ended |= terminated | truncated
        steps += 1
        assert steps < MAX_STEPS, "the games did not end"
    assert_inside(envs.observation_space, obs, "the end", n)
    return steps


@SETTINGS
@given(rule=rules(challenges=True), seed=st.integers(0, 2**16))
@example(rule={**KNOWN, "challenges": False}, seed=0)
def test_aec_observations_stay_in_their_space(rule, seed):
    assert play_aec(rule, seed) > 0


@SETTINGS
@given(rule=rules(challenges=True), seed=st.integers(0, 2**16))
@example(rule={**KNOWN, "challenges": False}, seed=0)
def test_quiddler_v0_observations_stay_in_their_space(rule, seed):
    assert play_gym(rule, seed) > 0


@SETTINGS
@given(rule=rules(challenges=False), seed=st.integers(0, 2**16))  # the batched engine has no challenge variant
@example(rule=KNOWN, seed=0)
def test_vector_env_observations_stay_in_their_space(rule, seed):
    assert play_vector(rule, seed) > 0
