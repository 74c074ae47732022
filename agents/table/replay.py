"""The replay viewer's data: every position of a saved game, every hand face up, with the round results.

A saved game is a line of `games.jsonl` (`evaluate.py --save-games`) or a table game saved
from the page (`TableGame.record`): both hold the rules, the deal seed, the decks and the
moves. `replay_frames` replays the moves in a `QuiddlerGame` (each checked legal; an
unfinished table game simply ends early) and returns one frame per position.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from quiddler_env.core.cards import FACES, POINTS
from quiddler_env.core.game import QuiddlerGame

from ..evaluation.replay import replay_states, saved_games
from ..human import move_name


def replay_records(path: Path) -> list[dict[str, Any]]:
    """The saved games of a games.jsonl file (`evaluation.replay.saved_games`)."""
    return list(saved_games(path))


def _position(game: QuiddlerGame, move: str | None, seat: int | None, results) -> dict[str, Any]:
    over = game.is_over
    return {
        "move": move,
        "seat": seat,
        "round": min(game.round + 1, game.config.num_rounds),
        "hands": [[FACES[f] for f, c in enumerate(h) for _ in range(c)] for h in game.hands] if not over else [],
        "discard_top": FACES[game.discard_pile[-1]] if game.discard_pile and not over else None,
        "draw_pile": 0 if over else len(game.draw_pile),
        "laid": [
            None
            if (over or lay is None)
            else {
                "words": [w.upper() for w in lay.spelled],
                "cards": [list(w) for w in lay.words],
                "unused": list(lay.unused),
            }
            for lay in game.laid
        ],
        "to_move": None if over else game.current_player,
        "phase": "over" if over else game.phase.name.lower(),
        "totals": list(game.totals),
        "results": None
        if results is None
        else [r.to_dict() | {"spelled": [w.upper() for w in r.spelled]} for r in results],
    }


def replay_frames(record: dict[str, Any]) -> dict[str, Any]:
    """Seats, rules and one frame per position (the deal, then after each move) of a saved game."""
    if not isinstance(record, dict):
        raise ValueError(f"not a saved game (a JSON {type(record).__name__}, not an object)")
    frames: list[dict[str, Any]] = []
    rounds = 0
    # replay_states checks the record, its decks against its seed and every move.
    for game, seat, action, taken in replay_states(record, finished=False, deal=True):
        if seat is None:
            seats = [str(s) for s in record.get("seats") or []]
            if len(seats) != game.num_players:
                raise ValueError(f"the saved game names {len(seats)} seats for {game.num_players} players")
        results = None
        if game.rounds_completed > rounds:
            rounds, results = game.rounds_completed, game.last_round_results
        name = None if seat is None else f"{seats[seat]}: {move_name(action, -1 if taken is None else taken)}"
        frames.append(_position(game, name, seat, results))
    return {
        "seats": seats,
        "rules": game.config.to_dict(),
        "points": dict(zip(FACES, POINTS, strict=True)),
        "frames": frames,
        "winners": game.winners() if game.is_over else None,
    }
