"""The batched engine plays exactly as the single-game engine: random games replayed move by move in both.

`tests/batch_parity.py` does the replay; `benchmarks/parity.py` runs it over 100,000 games and more.
"""

from __future__ import annotations

import numpy as np
import pytest

from quiddler_env.core import actions as A
from quiddler_env.core.batch import BatchGame, StreamGenerator, game_seed
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import IllegalActionError, QuiddlerGame

from .batch_parity import GO_OUT_CHANCE, RULE_SETS, replay

GAMES = {"eight_big_hands": 2, "two_long_rounds": 6}


@pytest.mark.parametrize("name", list(RULE_SETS))
def test_batch_engine_replays_the_single_engine(name):
    report = replay(
        QuiddlerConfig(**RULE_SETS[name]),
        seed=11,
        games=GAMES.get(name, 24),
        go_out_chance=GO_OUT_CHANCE.get(name, 0.3),
    )
    assert report.games == GAMES.get(name, 24)
    assert report.rounds == report.games * len(QuiddlerConfig(**RULE_SETS[name]).hand_sizes)
    if name in ("eight_big_hands", "two_long_rounds"):
        assert report.reshuffles > 0  # the replay did reach the reshuffle
    if name == "short_cap_total_floor":
        assert report.turn_caps > 0  # and the turn cap


@pytest.mark.parametrize("rules", [{}, {"num_players": 6, "turn_cap": None, "hand_sizes": [10, 11]}])
def test_stacked_decks_replay_too(rules):
    config = QuiddlerConfig(**rules)
    report = replay(config, seed=2, games=4 if rules else 20, go_out_chance=0.02 if rules else 0.3, stacked=True)
    assert report.rounds == report.games * config.num_rounds
    if rules:
        assert report.reshuffles > 0  # reshuffles of a stacked game draw from the game's generator in both engines


def test_stacked_decks_are_checked():
    games = BatchGame(num_games=2)
    with pytest.raises(ValueError, match="decks of shape"):
        games.reset(seed=0, decks=np.zeros((2, 3, 118), dtype=np.int8))
    bad = np.zeros((2, 8, 118), dtype=np.int8)
    with pytest.raises(ValueError, match="all 118 cards exactly once"):
        games.reset(seed=0, decks=bad)


def test_a_game_of_a_batch_is_the_same_whatever_the_batch_size():
    small, large = BatchGame(num_games=3), BatchGame(num_games=40)
    small.reset(seed=5)
    large.reset(seed=5)
    assert np.array_equal(small.hands(), large.hands()[:3])
    assert np.array_equal(small.observe(), large.observe()[:3])
    # ... and game 2 alone, in the single engine, deals the same cards.
    game = QuiddlerGame()
    game.reset(rng=StreamGenerator(game_seed(5, 2)))
    assert game.hands == large.hands()[2].tolist()


def test_seeds_differ_between_games_and_seeds():
    a, b = BatchGame(num_games=4), BatchGame(num_games=4)
    a.reset(seed=1)
    b.reset(seed=2)
    hands = [h.tobytes() for h in a.hands()] + [h.tobytes() for h in b.hands()]
    assert len(set(hands)) == 8
    assert game_seed(1, [0, 1, 2]).tolist() == [game_seed(1, i) for i in range(3)]


def test_an_illegal_action_moves_no_game_and_names_the_game():
    games = BatchGame(num_games=3)
    games.reset(seed=0)
    before = games.ints.copy(), games.cards.copy()
    with pytest.raises(IllegalActionError, match=r"illegal action 40 for player 0 in game 1"):
        games.step(np.asarray([A.DRAW_PILE, 40, A.DRAW_PILE]))
    assert np.array_equal(games.ints, before[0]) and np.array_equal(games.cards, before[1])
    with pytest.raises(ValueError, match="2 actions for 3 games"):
        games.step(np.asarray([0, 0]))


def test_bad_batch_sizes_are_refused():
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="num_games must be a positive integer"):
            BatchGame(num_games=bad)


def test_the_state_of_1024_games_is_small():
    games = BatchGame(num_games=1024, config=QuiddlerConfig(num_players=8))
    assert games.nbytes() < 8 * 2**20
