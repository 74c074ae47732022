"""The feature wrappers of `quiddler_env.wrappers`: what an env user's network gets is what the shipped policies
and the training envs compute."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import quiddler_env
from quiddler_agents import make
from quiddler_agents.training.sb3.opponents import TrainingEnv
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.observation import observation_layout
from quiddler_env.envs.gym_env import QuiddlerEnv
from quiddler_env.features import FEATURE_BOUND, ObservationFeatures
from quiddler_env.wrappers import FeaturesAEC, FeaturesGym, FeaturesVector

EXTRA = 132  # solver_v1's floats


def test_aec_wrapper_passes_the_pettingzoo_api_and_seed_tests():
    api_test(FeaturesAEC(quiddler_env.env(num_players=3)), num_cycles=200)
    seed_test(lambda: FeaturesAEC(quiddler_env.env(num_players=2)), num_cycles=200)


def test_aec_wrapper_feeds_the_policy_what_the_shipped_champion_computes():
    champion = make("zoo:champion-2p")
    wrapped = FeaturesAEC(quiddler_env.env(num_players=2))
    plain = quiddler_env.env(num_players=2)
    space = wrapped.observation_space("player_0")["observation"]
    assert space.shape == (observation_layout(2).size + EXTRA,)
    for env in (wrapped, plain):
        env.reset(seed=11)
    rng = np.random.default_rng(0)
    checked = 0
    for agent in wrapped.agent_iter(2000):
        obs, _, term, trunc, _ = wrapped.last()
        base, *_ = plain.last()
        assert plain.agent_selection == agent
        assert np.array_equal(obs["action_mask"], base["action_mask"])
        assert np.array_equal(obs["observation"][:-EXTRA], base["observation"])
        assert space.contains(obs["observation"])
        if term or trunc:
            action = None
        else:
            mask = obs["action_mask"]
            with torch.no_grad():  # the network itself, on the wrapper's observation
                dist = champion.policy.get_distribution(
                    torch.as_tensor(obs["observation"][None]), action_masks=mask[None].astype(bool)
                )
            direct = dist.distribution.probs[0].numpy() * (mask > 0)
            np.testing.assert_allclose(
                direct / direct.sum(), champion.probabilities(base["observation"], mask), atol=1e-6
            )
            checked += 1
            action = int(rng.choice(np.flatnonzero(mask)))
        wrapped.step(action)
        plain.step(action)
    assert checked > 50  # a whole game


def test_gym_wrapper_matches_the_training_env():
    config = QuiddlerConfig(num_players=3)
    wrapped = FeaturesGym(QuiddlerEnv(config))
    check_env(FeaturesGym(QuiddlerEnv(config)), skip_render_check=True)
    training = TrainingEnv(config, features="solver_v1")
    assert wrapped.observation_space == training.observation_space
    rng = np.random.default_rng(1)
    for seed in (3, 4):
        a, _ = wrapped.reset(seed=seed)
        b, _ = training.reset(seed=seed)
        done = False
        while not done:
            np.testing.assert_array_equal(a, b)
            mask = wrapped.action_masks()
            assert np.array_equal(mask, training.action_masks())
            action = int(rng.choice(np.flatnonzero(mask)))
            a, ra, term, trunc, _ = wrapped.step(action)
            b, rb, _, _, _ = training.step(action)
            assert ra == rb
            done = term or trunc


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
def test_vector_wrapper_adds_the_features_of_every_row(mode):
    autoreset = getattr(gymnasium.vector.AutoresetMode, "NEXT_STEP" if mode == "NextStep" else "SAME_STEP")
    envs = gymnasium.make_vec(
        "Quiddler-v0", num_envs=8, vectorization_mode="vector_entry_point", num_players=2, autoreset_mode=autoreset
    )
    wrapped = FeaturesVector(envs)
    one = ObservationFeatures("solver_v1", QuiddlerConfig(num_players=2))
    assert wrapped.single_observation_space.shape == (observation_layout(2).size + EXTRA,)
    obs, _ = wrapped.reset(seed=5)
    rng = np.random.default_rng(2)
    finals = 0
    for _ in range(300):
        assert obs.shape == (8, one.size) and np.abs(obs[:, -EXTRA:]).max() <= FEATURE_BOUND
        for row in obs:  # the batched kernel, row by row against the one-observation path
            np.testing.assert_array_equal(row, one(row[: one.base_size]))
        masks = wrapped.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        obs, _, _, _, infos = wrapped.step(actions)
        if "final_obs" in infos:
            for i in np.flatnonzero(infos["_final_obs"]):
                final = infos["final_obs"][i]
                np.testing.assert_array_equal(final, one(final[: one.base_size]))
                finals += 1
    assert mode == "NextStep" or finals > 0


def test_a_wrapper_refuses_an_env_that_is_not_quiddler():
    with pytest.raises(TypeError, match="not a Quiddler env"):
        FeaturesGym(gymnasium.make("CartPole-v1"))
    with pytest.raises(ValueError, match="unknown observation feature set 'solver_v9'"):
        FeaturesAEC(quiddler_env.env(), features="solver_v9")
