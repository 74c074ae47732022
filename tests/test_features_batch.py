"""The compiled feature sets give the same floats as the Python ones, row by row."""

from __future__ import annotations

import numpy as np
import pytest

from quiddler_env.core.batch import BatchGame
from quiddler_env.core.batch_bots import GREEDY, RANDOM
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.features import FEATURE_SETS, ObservationFeatures


def observations(config: QuiddlerConfig, games: int, seed: int) -> np.ndarray:
    """Observations of every seat at many points of random and greedy games (draw, discard and lay phases)."""
    batch = BatchGame(config, games)
    batch.reset(seed=seed)
    rows = []
    rng = np.random.default_rng(seed)
    for _ in range(60):
        live = batch.all_games[~batch.is_over]
        if live.size == 0:
            break
        for p in range(config.num_players):
            rows.append(batch.observe(np.full(live.size, p), live))
        masks = batch.action_masks(live)
        batch.step(np.argmax(rng.random(masks.shape) * masks + masks, axis=1), live)
        bots = np.where(rng.random((games, config.num_players)) < 0.5, RANDOM, GREEDY).astype(np.int8)
        bots[:, 0] = -1
        moves = np.zeros(games, dtype=np.int64)
        batch.play_bots(live, bots, moves)
    return np.concatenate(rows)


@pytest.mark.parametrize("rules", [{}, {"num_players": 3, "min_word_cards": 1}, {"layout": "choose"}])
@pytest.mark.parametrize("name", list(FEATURE_SETS))
def test_batch_features_equal_the_python_features(name, rules):
    config = QuiddlerConfig(**rules)
    features = ObservationFeatures(name, config)
    obs = observations(config, 12, seed=len(rules))
    if name != "solver_v1":
        obs = obs[::3]  # the Python odds search hundreds of hands a row
    got = features.batch(obs)
    python = features.features.compute
    want = np.stack([np.concatenate([o, python(o, config.num_players, features.solver)]) for o in obs])
    assert got.shape == want.shape == (obs.shape[0], features.size)
    assert np.array_equal(got, want)
    assert np.array_equal(np.stack([features(o) for o in obs[:50]]), want[:50])  # one row at a time: the same
    extra = want[:, features.base_size :]
    assert (extra[:, 0] != 0).any() and (extra[:, 8:] != 0).any()  # draw and discard features were both exercised
    if name == "solver_v2":
        assert (extra[:, 132] != 0).any() and (extra[:, 133:] != 0).any()  # and both kinds of odds
        assert ((extra[:, 132:] >= 0) & (extra[:, 132:] <= 1)).all()


def test_batch_features_refuse_the_wrong_width():
    features = ObservationFeatures("solver_v1", QuiddlerConfig())
    with pytest.raises(ValueError, match="a 2-player table has rows of 287"):
        features.batch(np.zeros((3, 10), dtype=np.float32))


def test_the_memo_gives_the_searched_answers():
    """The batch kernel remembers searches by hand: asked again, in another order, the floats are the same."""
    config = QuiddlerConfig(num_players=2)
    features = ObservationFeatures("solver_v1", config)
    obs = observations(config, 16, seed=9)
    first = features.batch(obs)
    order = np.random.default_rng(0).permutation(obs.shape[0])
    again = features.batch(obs[order])
    assert np.array_equal(again, first[order])
    fresh = ObservationFeatures("solver_v1", config)  # an empty memo
    assert np.array_equal(fresh.batch(obs[order]), first[order])
    python = features.features.compute
    assert np.array_equal(first, np.stack([np.concatenate([o, python(o, 2, features.solver)]) for o in obs]))


def test_the_batch_memo_is_built_once_per_solver(monkeypatch):
    # A memo is megabytes of zeros: building one per call (and dropping it) cost a sixth of guided's rollouts.
    import quiddler_env.features as features_module

    built = []
    real = features_module.new_feature_memo
    monkeypatch.setattr(features_module, "new_feature_memo", lambda: built.append(1) or real())
    config = QuiddlerConfig()
    features = ObservationFeatures("solver_v1", config)
    obs = observations(config, 4, seed=5)
    first = features.batch(obs)
    for _ in range(5):
        assert np.array_equal(features.batch(obs), first)  # the memo's hits give the same floats
    assert len(built) == 1
