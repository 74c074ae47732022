"""Observation features under the rules' vocabularies: each row's seat is read off its observation and the solver
is that seat's words, so a policy is told only of words its seat can lay."""

from __future__ import annotations

import numpy as np

from quiddler_agents.base import plain_seat
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.observation import encode_observation, observation_layout, plain_seats
from quiddler_env.core.solver import get_solver
from quiddler_env.core.vocabulary import load_seat_vocabulary
from quiddler_env.features import ObservationFeatures, feature_set


def _positions(config: QuiddlerConfig, seed: int, steps: int = 400):
    """(observation, seat) of every seat at random positions of a random game of `config`."""
    game = QuiddlerGame(config)
    game.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        if game.is_over:
            break
        out.extend((encode_observation(game, seat), seat) for seat in range(config.num_players))
        legal = game.legal_actions()
        game.step(int(rng.choice(legal)))
    return out


def test_the_seat_read_off_a_plain_observation_is_the_observers_in_every_round():
    config = QuiddlerConfig(num_players=3, hand_sizes=[3, 4, 5, 6])
    positions = _positions(config, seed=5, steps=2000)
    observations = np.stack([obs for obs, _ in positions])
    rounds = observations[:, observation_layout(3).slices["round"]][:, 0]
    assert len(np.unique(rounds)) == config.num_rounds  # every round, so every dealer
    seats = np.asarray([seat for _, seat in positions])
    assert np.array_equal(plain_seats(observations, 3, config.num_rounds), seats)
    assert all(plain_seat(obs, config) == seat for obs, seat in positions[:50])


def test_features_use_each_seats_own_words_under_the_rules_vocabularies():
    config = QuiddlerConfig(num_players=2, hand_sizes=[5, 6, 7], vocabularies=["level-1", "referee"])
    features = ObservationFeatures("solver_v1", config)
    compute = feature_set("solver_v1").compute  # the readable, row-by-row definition
    referee = get_solver(load_dictionary(config.dictionary), config.min_word_cards)
    level_1 = get_solver(load_seat_vocabulary("level-1", config.dictionary), config.min_word_cards)
    positions = _positions(config, seed=11)
    batch = features.batch(np.stack([obs for obs, _ in positions]))
    differs = 0
    for row, (obs, seat) in zip(batch, positions, strict=True):
        own = level_1 if seat == 0 else referee
        expected = compute(obs, 2, own)
        np.testing.assert_allclose(row[obs.size :], expected, rtol=0, atol=1e-6)
        np.testing.assert_allclose(features(obs)[obs.size :], expected, rtol=0, atol=1e-6)
        if seat == 0:
            differs += not np.allclose(expected, compute(obs, 2, referee), atol=1e-6)
    assert differs > 0  # seat 0's level-1 words do change what it is told


def test_without_vocabularies_every_seat_gets_the_referees_words():
    config = QuiddlerConfig(num_players=2, hand_sizes=[5, 6])
    features = ObservationFeatures("solver_v1", config)
    referee = features.solver
    positions = _positions(config, seed=3, steps=60)
    batch = features.batch(np.stack([obs for obs, _ in positions]))
    compute = feature_set("solver_v1").compute
    for row, (obs, _) in zip(batch, positions, strict=True):
        np.testing.assert_allclose(row[obs.size :], compute(obs, 2, referee), rtol=0, atol=1e-6)
