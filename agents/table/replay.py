"""The replay viewer's data: every position of a saved game, every hand face up, with the round results.

A saved game is a line of `games.jsonl` (`evaluate.py --save-games`) or a table game saved
from the page (`TableGame.record`): both hold the rules, the deal seed, the decks and the
moves. `replay_frames` replays the moves in a `QuiddlerGame` (each checked legal; an
unfinished table game simply ends early) and returns one frame per position.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from quiddler_env.core import actions as A
from quiddler_env.core import files
from quiddler_env.core.cards import FACES
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import Phase, QuiddlerGame

from ..evaluation.schedule import deal_cards
from ..human import move_name


def replay_records(path: Path) -> list[dict[str, Any]]:
    """The saved games of a games.jsonl file (a ValueError names a line that is not one)."""
    records = []
    with io.TextIOWrapper(files.open_regular(path), encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path.name} line {number} is not JSON: {exc.msg}") from None
            if not isinstance(record, dict) or "actions" not in record:
                raise ValueError(f"{path.name} line {number} is not a saved game")
            records.append(record)
    return records


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
            None if (over or lay is None) else {"words": [w.upper() for w in lay.spelled], "unused": list(lay.unused)}
            for lay in game.laid
        ],
        "to_move": None if over else game.current_player,
        "phase": "over" if over else {Phase.DRAW: "draw", Phase.DISCARD: "discard", Phase.LAY: "lay"}[game.phase],
        "totals": list(game.totals),
        "results": None
        if results is None
        else [r.to_dict() | {"spelled": [w.upper() for w in r.spelled]} for r in results],
    }


def replay_frames(record: dict[str, Any]) -> dict[str, Any]:
    """Seats, rules and one frame per position (the deal, then after each move) of a saved game."""
    try:
        rules = QuiddlerConfig.from_mapping(record["rules"])
        seed = int(record["deal_seed"])
        moves = [(int(s), int(a)) for s, a in record["actions"]]
        seats = [str(s) for s in record["seats"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"the saved game is incomplete or malformed: {exc}") from None
    decks, rng = deal_cards(seed, rules.num_rounds)
    if record.get("decks") is not None and [[FACES[f] for f in d] for d in decks] != record["decks"]:
        raise ValueError(f"its decks do not match its deal seed {seed}")
    game = QuiddlerGame(rules)
    game.reset(rng=rng, decks=decks)
    frames = [_position(game, None, None, None)]
    for k, (seat, action) in enumerate(moves):
        if game.is_over or seat != game.current_player or not game.is_legal(action):
            raise ValueError(f"move {k} ({seat}, {action}) is not legal in the replay")
        top = game.discard_pile[-1] if action == A.TAKE_DISCARD and game.discard_pile else -1
        name = f"{seats[seat]}: {move_name(action, top)}"
        results = game.step(action)
        frames.append(_position(game, name, seat, results))
    return {
        "seats": seats,
        "rules": rules.to_dict(),
        "frames": frames,
        "winners": game.winners() if game.is_over else None,
    }
