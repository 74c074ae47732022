"""`benchmarks/handover.py`: the helper moves exactly at the decisions of the kinds handed over; a game's result
per seat (`GameRecord.seat_result`) shares a tie for the top."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

import quiddler_agents
from quiddler_agents.arena import GameRecord, play_game, rotated_deal
from quiddler_agents.coach import decision_kind
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame

SCRIPT = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks" / "handover.py"))


class Counted:
    """A bot that notes the kind of every decision it is asked (read from the live game)."""

    def __init__(self, spec: str, rules: QuiddlerConfig):
        self.bot = quiddler_agents.make(spec, seed=0, config=rules)
        self.kinds: list[str] = []
        self.game: QuiddlerGame | None = None

    def reset(self, seed=None):
        self.bot.reset(seed)

    def act(self, observation, action_mask=None):
        self.kinds.append(decision_kind(self.game))
        return self.bot.act(observation, action_mask)


@pytest.mark.parametrize("handed", [{"go_out"}, {"draw", "last_turn"}])
def test_the_helper_moves_at_the_kinds_handed_over_and_only_there(handed):
    rules = QuiddlerConfig(num_players=2)
    player, helper = Counted("greedy", rules), Counted("random", rules)
    bot = SCRIPT["Handover"](player, helper, frozenset(handed))
    game = QuiddlerGame(rules)
    bot.live = player.game = helper.game = game
    play_game([bot, quiddler_agents.make("greedy", seed=1, config=rules)], 3, game=game)
    assert helper.kinds and set(helper.kinds) <= handed
    assert player.kinds and not set(player.kinds) & handed


def test_an_unknown_kind_is_refused_by_name():
    with pytest.raises(SystemExit, match="unknown kind 'go-out'"):
        SCRIPT["parse_kinds"]("draw+go-out")
    assert SCRIPT["parse_kinds"]("none") == frozenset()


def test_a_seat_result_shares_a_tie_for_the_top():
    record = GameRecord(totals=[10, 10, 4], winners=[0, 1], decisions=0)
    assert record.seat_result(0) == (0.5, 10 - 7)
    assert record.seat_result(2) == (0.0, 4 - 10)
    assert GameRecord(totals=[3, 9], winners=[1], decisions=0).seat_result(1) == (1.0, 6)


def test_a_rotated_deal_seats_the_bot_in_every_seat_and_reports_its_results():
    rules = QuiddlerConfig(num_players=3)
    bot = Counted("greedy", rules)
    opponents = [quiddler_agents.make("random", seed=k, config=rules) for k in range(2)]
    games = []

    def before(game):
        bot.game = game
        games.append(game)

    played = []
    act = bot.act

    def noting(observation, action_mask=None):
        played.append((len(games), bot.game.current_player))
        return act(observation, action_mask)

    bot.act = noting
    results = rotated_deal(bot, opponents, 11, 5, rules, before)
    seats = [sorted({s for g, s in played if g == k + 1}) for k in range(3)]
    assert seats == [[0], [1], [2]]
    for seat, (game, result) in enumerate(zip(games, results, strict=True)):
        totals = game.totals
        top = max(totals)
        won = 1 / totals.count(top) if totals[seat] == top else 0.0
        assert result == (won, totals[seat] - (sum(totals) - totals[seat]) / 2)
