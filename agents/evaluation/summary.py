"""The figures of a tournament: per player, per pair, ratings; all from the played games.

Units of independence: with duplicate deals the games of one deal share their cards,
so intervals on means treat each deal as one unit (the mean over its games); without
duplicate deals every game is its own unit. Win rates use the Wilson interval over
games, as asked for; with duplicate deals that is conservative, since a deal's
games give each player every seat's cards once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..extras import missing
from .stats import (
    DEFAULT_CONFIDENCE,
    Interval,
    clustered_mean_interval,
    openskill_ratings,
    ranks_from_totals,
    welch_interval,
    wilson_interval,
)
from .tournament import PlayedGame, Tournament


def _interval(iv: Interval) -> dict[str, Any]:
    return iv.to_dict()


def _longest(current: tuple[int, str] | None, word: str) -> tuple[int, str]:
    """Longest by letters; among equals the alphabetically first, so the answer is order-free."""
    key = (len(word), word)
    if current is None or key[0] > current[0] or (key[0] == current[0] and key[1] < current[1]):
        return key
    return current


def summarize(
    tournament: Tournament, played: Sequence[PlayedGame], confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, Any]:
    """Every figure of the report, JSON-ready, computed in game order (so it is the same for any worker count)."""
    labels = tournament.labels
    pool = len(labels)
    played = sorted(played, key=lambda g: g.game)
    hand_sizes = sorted(set(tournament.rules.hand_sizes))

    # Per player accumulators.
    finals: list[list[float]] = [[] for _ in range(pool)]
    final_deals: list[list[int]] = [[] for _ in range(pool)]
    wins = [0] * pool
    ties = [0] * pool
    rank_sum = [0] * pool
    rounds_played = [0] * pool
    went_out = [0] * pool
    words = [0] * pool
    longest: list[tuple[int, str] | None] = [None] * pool
    longest_game: list[int | None] = [None] * pool
    by_size: list[dict[int, tuple[list[float], list[int]]]] = [{h: ([], []) for h in hand_sizes} for _ in range(pool)]
    seat_wins = [[0] * tournament.table_size for _ in range(pool)]
    seat_games = [[0] * tournament.table_size for _ in range(pool)]
    challenge_keys = ("made", "won", "lost", "challenged", "challenge_points")
    challenges = [dict.fromkeys(challenge_keys + ("words_laid", "failed"), 0) for _ in range(pool)]

    for g in played:
        ranks = ranks_from_totals(g.totals)
        top = max(g.totals)
        n_top = sum(t == top for t in g.totals)
        for seat, p in enumerate(g.seats):
            total = g.totals[seat]
            finals[p].append(total)
            final_deals[p].append(g.deal)
            rank_sum[p] += ranks[seat]
            seat_games[p][seat] += 1
            if total == top:
                if n_top == 1:
                    wins[p] += 1
                    seat_wins[p][seat] += 1
                else:
                    ties[p] += 1
            for rnd in g.rounds:
                result = rnd["results"][seat]
                rounds_played[p] += 1
                went_out[p] += bool(result["went_out"])
                words[p] += len(result["spelled"])
                for word in result["spelled"]:
                    before = longest[p]
                    longest[p] = _longest(before, word)
                    if longest[p] != before:
                        longest_game[p] = g.game
                if "challenge" in result:
                    score = result["challenge"]
                    tally = challenges[p]
                    for key in challenge_keys:
                        tally[key] += score[key]
                    tally["failed"] += len(score["failed"])
                    tally["words_laid"] += len(result["spelled"]) + len(score["failed"])
                scores, deals = by_size[p][rnd["hand_size"]]
                scores.append(result["round_score"])
                deals.append(g.deal)

    players: dict[str, Any] = {}
    for p, label in enumerate(labels):
        n = len(finals[p])
        players[label] = {
            "spec": tournament.specs[p],
            "games": n,
            "wins": wins[p],
            "ties": ties[p],
            "losses": n - wins[p] - ties[p],
            "win_rate": _interval(wilson_interval(wins[p], n, confidence)),
            "tie_rate": ties[p] / n if n else None,
            "mean_rank": rank_sum[p] / n if n else None,
            "final_score": {
                **_interval(clustered_mean_interval(finals[p], final_deals[p], confidence)),
                "min": min(finals[p]) if n else None,
                "max": max(finals[p]) if n else None,
            },
            "round_score_by_hand_size": {
                str(h): _interval(clustered_mean_interval(*by_size[p][h], confidence)) for h in hand_sizes
            },
            "rounds": rounds_played[p],
            "go_out_rate": _interval(wilson_interval(went_out[p], rounds_played[p], confidence)),
            "words_per_round": words[p] / rounds_played[p] if rounds_played[p] else None,
            "longest_word": (
                {"word": longest[p][1].upper(), "letters": longest[p][0], "game": longest_game[p]}
                if longest[p]
                else None
            ),
            "win_rate_by_seat": [
                wilson_interval(seat_wins[p][s], seat_games[p][s], confidence).estimate
                for s in range(tournament.table_size)
            ],
        }
        if tournament.rules.challenges:
            c = challenges[p]
            players[label]["challenges"] = {
                **c,
                "success_rate": _interval(wilson_interval(c["won"], c["made"], confidence)),
                "challenged_rate": c["challenged"] / c["words_laid"] if c["words_laid"] else None,
                "failed_rate": c["failed"] / c["challenged"] if c["challenged"] else None,
            }

    pairs = []
    for a in range(pool):
        for b in range(a + 1, pool):
            pairs.append(_pair(tournament, played, a, b, confidence))

    ratings = None
    if pool > 2 and missing("openskill") is None:  # OpenSkill: the eval extra (without it, no ratings)
        ratings = {
            "model": "openskill PlackettLuce (default mu 25, sigma 25/3), games in order",
            "players": openskill_ratings(labels, [(g.seats, g.totals) for g in played], confidence),
        }
    return {
        "confidence": confidence,
        "units": "deal" if tournament.duplicate else "game",
        "games": len(played),
        "players": players,
        "pairs": pairs,
        "ratings": ratings,
    }


def _pair(tournament: Tournament, played: Sequence[PlayedGame], a: int, b: int, confidence: float) -> dict[str, Any]:
    """Head to head: games where both sat, who finished ahead, and the score difference a - b."""
    labels = tournament.labels
    a_totals, b_totals, diffs, deals = [], [], [], []
    a_ahead = b_ahead = level = 0
    for g in played:
        if a not in g.seats or b not in g.seats:
            continue
        ta, tb = g.totals[g.seats.index(a)], g.totals[g.seats.index(b)]
        a_totals.append(ta)
        b_totals.append(tb)
        diffs.append(ta - tb)
        deals.append(g.deal)
        if ta > tb:
            a_ahead += 1
        elif tb > ta:
            b_ahead += 1
        else:
            level += 1
    n = len(diffs)
    return {
        "a": labels[a],
        "b": labels[b],
        "games": n,
        "a_ahead": a_ahead,
        "b_ahead": b_ahead,
        "level": level,
        "a_win_rate": _interval(wilson_interval(a_ahead, n, confidence)),
        "score_difference": {
            # Raw: the two players' totals as independent samples (what a naive comparison does).
            "raw": {**_interval(welch_interval(a_totals, b_totals, confidence)), "method": "Welch, games independent"},
            # Paired: the difference within each unit (the deal's games, or the game), so the cards' luck cancels.
            "paired": {
                **_interval(clustered_mean_interval(diffs, deals, confidence)),
                "method": f"paired t over {'deals' if tournament.duplicate else 'games'}",
            },
        },
    }
