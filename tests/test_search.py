"""The `search` bot: its determinizations are positions its seat cannot tell from the real one, its budget
holds, and its rollouts are the engine's own games."""

from __future__ import annotations

import numpy as np
import pytest

import quiddler_agents
from quiddler_agents.base import SeatView
from quiddler_agents.params import MAX_SAMPLES
from quiddler_agents.search import CHUNK
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import Phase, QuiddlerGame
from quiddler_env.core.observation import encode_observation, observation_layout

from .test_agents import random_states

SEEN = ("hand", "discard_top", "hand_size", "phase", "discard_pile", "opponent_taken", "unseen", "draw_pile_size")
SEEN += ("totals", "seat_from_dealer", "turns_this_round")


@pytest.mark.parametrize("num_players", [2, 3, 6])
def test_a_determinization_looks_to_the_seat_exactly_like_the_real_game(num_players):
    """Seen from the searching seat, every sampled position encodes as the real observation (its own
    seat 0, the opponents in relative order); only the hidden cards differ."""
    config = QuiddlerConfig(num_players=num_players)
    bot = quiddler_agents.make("search:samples=2", seed=0, config=config)
    layout = observation_layout(num_players)
    differ = checked = 0
    for game, obs, _ in random_states(config, seed=num_players, count=80):
        seat = SeatView.decode(obs, num_players)
        if seat.final_turn or seat.phase not in ("draw", "discard"):
            continue
        batch = bot._batch(seat.hand_size)
        position = bot._determinize(seat, bot._turns(obs), batch)
        assert position.card_count() == 118
        sampled = layout.view(encode_observation(position, 0))
        real = layout.view(obs)
        for name in SEEN:
            np.testing.assert_array_equal(sampled[name], real[name], err_msg=name)
        opponents = [position.hands[k] for k in range(1, num_players)]
        truth = [game.hands[(game.current_player + k) % num_players] for k in range(1, num_players)]
        differ += opponents != truth
        checked += 1
    assert checked > 30 and differ > checked // 2  # the hidden cards really are sampled


def test_the_time_cap_stops_between_chunks_and_values_every_candidate():
    config = QuiddlerConfig()
    bot = quiddler_agents.make(f"search:samples={MAX_SAMPLES}:ms=0.001", seed=1, config=config)
    for _, obs, mask in random_states(config, seed=3, count=40):
        seat = SeatView.decode(obs, 2)
        if seat.phase == "discard" and not seat.final_turn:
            candidates = bot._candidates(seat, [int(a) for a in np.flatnonzero(mask)])
            values = bot.rollout_values(seat, obs, candidates)
            assert values.shape == (len(candidates),) and np.isfinite(values).all()
            assert bot.last_samples == CHUNK  # one chunk, then the cap
            return
    raise AssertionError("no discard phase reached")


def test_rollout_values_are_round_score_differences_within_the_rules_bounds():
    """A value is own round score minus the opponents' mean: with the round floor at 0 it is at most the best
    a hand of that size can score, and a candidate that goes out is valued like any other move."""
    config = QuiddlerConfig()
    bot = quiddler_agents.make("search:samples=16", seed=2, config=config)
    seen = 0
    for _, obs, mask in random_states(config, seed=5, count=200):
        seat = SeatView.decode(obs, 2)
        if seat.phase != "draw" or seat.final_turn:
            continue
        values = bot.rollout_values(seat, obs, [int(a) for a in np.flatnonzero(mask)])
        bound = 10 * (seat.hand_size + 1) + 2 * config.bonus_value  # points per card at most 10 (Q, Z, ...)
        assert (np.abs(values) <= bound).all()
        seen += 1
        if seen == 10:
            return
    raise AssertionError("too few draw phases reached")


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["auto", "choose"])
def test_search_plays_the_challenge_variant_by_each_seats_vocabulary(layout):
    """Legal moves throughout (its rollouts on the batched engine, its challenges the expert's); its rollouts
    seat itself first with its own vocabulary, the others after it with theirs, and the referee judges."""
    vocabularies = ("enable:0.3:1", "referee", "enable:0.6:4")
    config = QuiddlerConfig(num_players=3, hand_sizes=(3, 4), challenges=True, layout=layout, vocabularies=vocabularies)
    game = QuiddlerGame(config)
    game.reset(seed=2)
    bots = [quiddler_agents.make("search:samples=4", seed=p, config=config) for p in range(3)]
    rollouts = challenges = 0
    while not game.is_over:
        p = game.current_player
        action = bots[p].act(encode_observation(game, p), game.legal_action_mask())
        assert game.is_legal(action)
        rollouts += bots[p].last_values is not None
        challenges += game.phase == Phase.CHALLENGE
        game.step(action)
    assert rollouts > 5 and challenges > 0
    batch = bots[1]._batch(3)
    assert batch.config.vocabularies == (vocabularies[1], vocabularies[2], vocabularies[0])
    assert batch.solver.dictionary.identity == game.solver.dictionary.identity
