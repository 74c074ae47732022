"""The batched engine plays exactly as the single-game engine: random games replayed move by move in both.

`tests/batch_parity.py` does the replay; `benchmarks/parity.py` runs it over 100,000 games and more.
"""

from __future__ import annotations

import numpy as np
import pytest

from quiddler_env.core import actions as A
from quiddler_env.core.batch import BatchGame, StreamGenerator, game_seed
from quiddler_env.core.cards import new_deck
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import IllegalActionError, QuiddlerGame

from .batch_parity import GO_OUT_CHANCE, RULE_SETS, replay, state_differences

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
        games.reset(seed=0, decks=np.zeros((3, 2, 118), dtype=np.int8))
    with pytest.raises(ValueError, match="9 stacked decks for 8 rounds"):
        games.reset(seed=0, decks=np.zeros((2, 9, 118), dtype=np.int8))
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


def test_the_first_rounds_can_be_stacked_and_the_rest_shuffled():
    """As `QuiddlerGame.reset(decks=...)` with fewer decks than rounds: those rounds deal them, later ones shuffle."""
    rng = np.random.default_rng(3)
    deck = np.asarray(new_deck(), dtype=np.int8)
    decks = np.stack([[rng.permutation(deck) for _ in range(2)]])
    batch = BatchGame(num_games=1)
    batch.reset(seeds=np.asarray([game_seed(9, 0)], dtype=np.uint64), decks=decks)
    single = QuiddlerGame(solver=batch.solver)
    single.reset(rng=StreamGenerator(game_seed(9, 0)), decks=decks[0].tolist())
    while not single.is_over:
        assert state_differences(single, batch.game(0)) == []
        action = int(np.flatnonzero(single.legal_action_mask())[0])  # the lowest legal move: draws, first faces
        results = single.step(action)
        batch.step(np.asarray([action]))
        if results is not None:
            assert batch.round_results(0) == results
    assert single.totals == batch.totals[0].tolist()


@pytest.mark.parametrize("rules", [{}, {"layout": "choose", "num_players": 3}])
def test_a_batch_game_as_a_quiddler_game_plays_on_as_the_batch_game(rules):
    """`BatchGame.game(i)` is a copy that continues the same game: same cards, same reshuffles, same results."""
    config = QuiddlerConfig(**rules)
    batch = BatchGame(config, num_games=2)
    batch.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(37):  # into the game: some rounds scored, some cards laid
        batch.step(np.asarray([rng.choice(np.flatnonzero(m)) for m in batch.action_masks()]))
    copy = batch.game(1)
    before = batch.hands()[1].copy()
    copy.hands[copy.current_player][0] += 1  # a copy: changing it changes nothing in the batch
    assert np.array_equal(batch.hands()[1], before)
    copy = batch.game(1)
    games = np.asarray([1])
    while not copy.is_over:
        mask = copy.legal_action_mask()
        assert np.array_equal(mask, batch.action_masks(games)[0])
        action = int(rng.choice(np.flatnonzero(mask)))
        results = copy.step(action)
        batch.step(np.asarray([action]), games)
        assert state_differences(copy, batch.game(1)) == []
        if results is not None:
            assert batch.round_results(1) == results
    assert copy.totals == batch.totals[1].tolist() and batch.is_over[1]


def test_a_loaded_game_plays_on_as_the_quiddler_game():
    """`BatchGame.load` writes a `QuiddlerGame` position into a row; from it both engines play the same."""
    source = BatchGame(num_games=1)
    source.reset(seed=8)
    rng = np.random.default_rng(2)
    for _ in range(23):  # a few rounds in, mid-round
        source.step(np.asarray([rng.choice(np.flatnonzero(source.action_masks()[0]))]))
    while source.went_out[0] >= 0 or source.phase[0] not in (0, 1):
        source.step(np.asarray([np.flatnonzero(source.action_masks()[0])[0]]))
    game = source.game(0)
    target = BatchGame(num_games=3)
    target.load(1, game, seed=77)
    assert state_differences(game, target.game(1)) == []
    game.rng = StreamGenerator(77)  # the loaded row deals and reshuffles from its own seed
    row = np.asarray([1])
    while not game.is_over:
        mask = game.legal_action_mask()
        assert np.array_equal(mask, target.action_masks(row)[0])
        action = int(rng.choice(np.flatnonzero(mask)))
        results = game.step(action)
        target.step(np.asarray([action]), row)
        assert state_differences(game, target.game(1)) == []
        if results is not None:
            assert target.round_results(1) == results
    with pytest.raises(ValueError, match="only a draw or discard phase"):
        target.load(0, game)
