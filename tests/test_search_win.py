"""`search:win=true`: a move's value is the chance to finish the game on top, not the points it makes."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import numpy as np
import pytest

import quiddler_agents
from quiddler_agents.base import SeatView
from quiddler_agents.search import ROUND_SPREAD, SearchAgent, rounds_after, win_chances
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.observation import encode_observation

from .test_agents import random_states

ROOT = Path(__file__).resolve().parents[1]


def test_in_the_last_round_only_the_top_total_wins_and_a_shared_top_counts_half():
    totals = [[120, 100], [100, 120], [110, 110], [90, 90, 80], [90, 95, 20], [91, 90, 90, 90]]
    rows = [win_chances(np.array([t]), 0)[0] for t in totals]
    assert rows == [1.0, 0.0, 0.5, 0.5, 0.0, 1.0]


@pytest.mark.parametrize("lead", [-40, -13, -3, 0, 5, 13, 26, 60])
@pytest.mark.parametrize("rounds_left", [1, 3, 7])
def test_before_the_last_round_a_lead_is_read_against_normal_noise_of_the_rounds_to_come(lead, rounds_left):
    chance = win_chances(np.array([[200 + lead, 200]]), rounds_left)[0]
    normal = 0.5 * (1 + math.erf(lead / (ROUND_SPREAD * math.sqrt(rounds_left)) / math.sqrt(2)))
    assert abs(chance - normal) < 0.01


def test_a_lead_counts_for_more_as_the_rounds_run_out_and_every_opponent_must_be_passed():
    ahead = np.array([[130, 100]])
    chances = [win_chances(ahead, k)[0] for k in (7, 3, 1, 0)]
    assert chances == sorted(chances) and chances[-1] == 1.0
    # Ahead of one opponent, level with another: about half of the one-opponent chance.
    three = win_chances(np.array([[130, 100, 130]]), 2)[0]
    assert three == pytest.approx(win_chances(ahead, 2)[0] * 0.5, abs=1e-9)


def test_rounds_after_the_one_in_play_come_from_the_observed_round_number():
    assert [rounds_after(r / 8, 8) for r in range(1, 9)] == [7, 6, 5, 4, 3, 2, 1, 0]
    config = QuiddlerConfig(hand_sizes=(3, 5, 7))
    for game, obs, _ in random_states(config, seed=2, count=30):
        seat = SeatView.decode(obs, 2)
        assert rounds_after(seat.round_fraction, config.num_rounds) == config.num_rounds - 1 - game.round


def _decisions(config, count=60):
    for _, obs, mask in random_states(config, seed=5, count=count):
        seat = SeatView.decode(obs, 2)
        if seat.phase in ("draw", "discard") and not seat.final_turn and mask.sum() > 1:
            yield obs, mask


def test_the_win_bot_takes_the_best_chance_then_the_most_points(monkeypatch):
    config = QuiddlerConfig()
    bot = quiddler_agents.make("search:samples=8:win=true", seed=0, config=config)
    obs, mask = next(_decisions(config))
    legal = [int(a) for a in np.flatnonzero(mask)]
    candidates = bot._candidates(SeatView.decode(obs, 2), legal)
    assert len(candidates) >= 2
    points = np.arange(len(candidates), dtype=float)[::-1].copy()  # the first has the most points
    chances = np.full(len(candidates), 0.4)
    chances[-2:] = 0.6  # the last two have the best chance; of them the first has more points
    monkeypatch.setattr(bot, "_rollouts", lambda *args: (points, chances))
    weighing = bot.weigh(obs, mask)
    assert weighing.choice == candidates[-2]
    assert weighing.basis == "win" and list(weighing.values) == list(chances)


def test_the_win_bot_plays_as_search_when_the_game_is_long_decided():
    """In the last round, far ahead (or behind), every candidate wins (or loses) in every deal, so points
    decide, as they do for `search`, on the same determinizations."""
    config = QuiddlerConfig(hand_sizes=(4, 6))
    checked = 0
    for game, _, mask in random_states(config, seed=5, count=80):
        if game.round != config.num_rounds - 1:
            continue
        for lead in (1000, -1000):
            p = game.current_player
            game.totals = [lead if k == p else 0 for k in range(2)]
            obs = encode_observation(game, p)
            seat = SeatView.decode(obs, 2)
            if seat.phase not in ("draw", "discard") or seat.final_turn or mask.sum() < 2:
                continue
            win, points = (
                quiddler_agents.make(f"search:samples=8:win={w}", seed=3, config=config).weigh(obs, mask)
                for w in ("true", "false")
            )
            assert win.choice == points.choice
            if win.values is not None:
                assert set(np.asarray(win.values).tolist()) == {1.0 if lead > 0 else 0.0}
                checked += 1
    assert checked >= 10


def test_round_spread_is_the_spread_of_round_scores_between_like_players():
    differences = runpy.run_path(str(ROOT / "benchmarks" / "round_spread.py"))["round_differences"]
    for players, games in ((2, 60), (4, 20)):
        spread = np.concatenate(list(differences(players, "expert", games, seed=77).values())).std()
        assert 0.85 * ROUND_SPREAD < spread < 1.15 * ROUND_SPREAD, (players, spread)


def test_win_is_a_spec_parameter_that_takes_true_or_false_only():
    assert quiddler_agents.make("search:win=true", seed=0).win is True
    assert quiddler_agents.make("guided:win=true", seed=0, config=QuiddlerConfig()).win is True
    with pytest.raises(ValueError, match="win='maybe' is not a valid bool"):
        quiddler_agents.make("search:win=maybe", seed=0)
    with pytest.raises(ValueError, match="search: win must be true or false, got 1"):
        SearchAgent(0, win=1)
