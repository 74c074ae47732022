"""Reads: the search's determinizations weighed by what the neighbours' last moves say of their hands."""

from __future__ import annotations

import numpy as np
import pytest

import quiddler_agents
from quiddler_agents import reads
from quiddler_agents.base import SeatView
from quiddler_agents.reads import READ_WEIGHT, Evidence, contradictions
from quiddler_agents.search import SearchAgent
from quiddler_env.core import actions as A
from quiddler_env.core.cards import NUM_FACES, new_deck
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.game import Phase, QuiddlerGame
from quiddler_env.core.observation import encode_observation
from quiddler_env.core.solver import get_solver

from .test_agents import random_states

RULES = QuiddlerConfig(num_players=2)


def _slow_contradictions(evidence: Evidence, hands, solver) -> int:
    """The same judgement from whole best layouts, one hand at a time (no discard tables)."""

    def best(hand):
        return solver.best_layout(hand, counts=True).score

    found = 0
    if evidence.declined >= 0:
        hand = list(hands[1])
        taken = hand.copy()
        taken[evidence.declined] += 1
        kept = [best([c - (f == g) for g, c in enumerate(taken)]) for f in range(NUM_FACES) if taken[f]]
        found += max(kept) > best(hand)
    if evidence.discarded >= 0:
        hand = list(hands[-1])
        hand[evidence.discarded] += 1
        kept = {f: best([c - (f == g) for g, c in enumerate(hand)]) for f in range(NUM_FACES) if hand[f]}
        found += kept[evidence.discarded] < max(kept.values())
    return found


def test_contradictions_agree_with_whole_layouts_on_random_hands():
    solver = get_solver(load_dictionary("enable"), 2)
    rng = np.random.default_rng(4)
    deck = np.asarray(new_deck())
    seen = set()
    for _ in range(300):
        size = int(rng.integers(3, 11))
        cards = rng.permutation(deck)
        hands = [np.bincount(cards[k * size : (k + 1) * size], minlength=NUM_FACES).tolist() for k in range(3)]
        evidence = Evidence(int(cards[3 * size]), int(cards[3 * size + 1]))
        found = contradictions(evidence, hands, solver)
        assert found == _slow_contradictions(evidence, hands, solver)
        seen.add(found)
    assert seen == {0, 1, 2}  # every count happens: the test reaches both judgements


def _seat_game(seed: int) -> QuiddlerGame:
    game = QuiddlerGame(QuiddlerConfig(num_players=2, hand_sizes=(5, 6)))
    game.reset(seed)
    return game


def _drive(game: QuiddlerGame, bot: SearchAgent, opponent_takes: bool) -> tuple[int, int]:
    """The bot (seat `game.current_player` at the start) plays a turn; the opponent takes or declines its discard,
    then discards its first card that keeps the game going. Returns (the bot's discard, the opponent's)."""
    me = game.current_player
    bot.act(encode_observation(game, me), game.legal_action_mask())  # the draw
    game.step(A.DRAW_PILE)
    obs = encode_observation(game, me)
    legal = [a for a in np.flatnonzero(game.legal_action_mask()) if A.DISCARD_BASE <= a < A.GO_OUT_BASE]
    action = bot.act(obs, game.legal_action_mask())
    if not A.DISCARD_BASE <= action < A.GO_OUT_BASE:
        action = int(legal[0])
        bot._reads.played(SeatView.decode(obs, 2), action)  # the bot's memory follows the move made
    game.step(action)
    game.step(A.TAKE_DISCARD if opponent_takes else A.DRAW_PILE)
    mine = action - A.DISCARD_BASE
    hand = game.hands[game.current_player]
    theirs = next(f for f in range(NUM_FACES) if hand[f] and (f != mine or not opponent_takes))
    game.step(A.DISCARD_BASE + theirs)
    return mine, theirs


@pytest.mark.parametrize("takes", [False, True])
def test_the_bot_remembers_its_discard_and_what_the_next_seat_did(takes):
    for seed in range(20):
        game = _seat_game(seed)
        bot = SearchAgent(1, game.config, samples=2, reads=True)
        me = game.current_player
        mine, theirs = _drive(game, bot, opponent_takes=takes)
        if game.phase != Phase.DRAW or game.current_player != me or game.discard_pile[-1] == mine:
            continue  # someone went out, or the opponent threw the same face back: another deal
        bot.act(encode_observation(game, me), game.legal_action_mask())
        assert bot._evidence == Evidence(-1 if takes else mine, theirs)
        return
    raise AssertionError("no deal played through")


def test_the_first_movers_first_top_is_nobodys_discard():
    game = _seat_game(3)
    bot = SearchAgent(1, game.config, samples=2, reads=True)
    bot.act(encode_observation(game, game.current_player), game.legal_action_mask())
    assert bot._evidence == Evidence()


def test_weights_make_a_weighted_mean_of_the_deals(monkeypatch):
    """With every weight 1 the values are search's plain means; with weight on the first deal only, they are the
    values of that one deal (the same deal the one-sample bot plays first, from the same seed)."""
    obs, mask = next(
        (o, m)
        for _, o, m in random_states(RULES, seed=8, count=200)
        if SeatView.decode(o, 2).phase == "discard" and not SeatView.decode(o, 2).final_turn
    )
    seat = SeatView.decode(obs, 2)
    candidates = SearchAgent(0, RULES)._candidates(seat, [int(a) for a in np.flatnonzero(mask)])
    plain = SearchAgent(5, RULES, samples=8).rollout_values(seat, obs, candidates)
    monkeypatch.setattr("quiddler_agents.search.deal_weight", lambda *_: 1.0)
    weighed = SearchAgent(5, RULES, samples=8, reads=True)
    np.testing.assert_array_equal(weighed.rollout_values(seat, obs, candidates), plain)
    weights = iter([1.0] + [0.0] * 7)
    monkeypatch.setattr("quiddler_agents.search.deal_weight", lambda *_: next(weights))
    first = SearchAgent(5, RULES, samples=8, reads=True).rollout_values(seat, obs, candidates)
    np.testing.assert_allclose(first, SearchAgent(5, RULES, samples=1).rollout_values(seat, obs, candidates))
    assert reads.READ_WEIGHT == READ_WEIGHT and 0 < READ_WEIGHT < 1


def test_reads_is_a_spec_parameter_of_search_and_guided():
    assert quiddler_agents.make("search:reads=true", config=RULES).reads
    assert quiddler_agents.make("guided:reads=true", config=RULES).reads
    assert not quiddler_agents.make("search", config=RULES).reads
