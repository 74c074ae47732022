"""`benchmarks/hidden_cards.py`'s sighted bot: its deals hold the live game's hidden hands and no other cards."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest

import quiddler_agents
from quiddler_env.core.cards import NUM_FACES
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.observation import encode_observation

SCRIPT = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks" / "hidden_cards.py"))


def cards(game: QuiddlerGame) -> np.ndarray:
    """Count per face of every card in the round's hands, draw pile and discard pile."""
    counts = np.sum(game.hands, axis=0) + np.bincount(game.draw_pile, minlength=NUM_FACES)
    return counts + np.bincount(game.discard_pile, minlength=NUM_FACES)


@pytest.mark.parametrize("players", [2, 3])
def test_a_sighted_deal_holds_the_opponents_true_hands(players):
    rules = QuiddlerConfig(num_players=players)
    bot = SCRIPT["sighted"](quiddler_agents.make("search", seed=1, config=rules))
    greedy = [quiddler_agents.make("greedy", seed=k, config=rules) for k in range(players)]
    game = QuiddlerGame(rules)
    game.reset(5)
    bot.live = game
    checked = taken = 0
    while not game.is_over:  # the bot deals at every seat's turn: seat 0 of a deal is the player to move
        p = game.current_player
        obs, mask = encode_observation(game, p), game.legal_action_mask()
        seat = bot.view(obs)
        if seat.phase in ("draw", "discard") and not seat.final_turn:
            deal = bot._determinize(seat, bot._turns(obs), bot._batch(seat.hand_size))
            assert deal.hands == [list(game.hands[(p + k) % players]) for k in range(players)]
            assert len(deal.draw_pile) == len(game.draw_pile)
            assert (cards(deal) == cards(game)).all()
            checked += 1
            taken += sum(map(sum, seat.opponent_taken))
        game.step(greedy[p].act(obs, mask))
    assert checked > 10
    assert taken > 0  # some deals were checked with cards the opponents visibly took
