"""Replaying a saved game (`games.jsonl` from `evaluate.py --save-games`) turn by turn.

The saved line holds the rules, the deal seed, the stacked decks and every action.
The replay rebuilds the game from them, checks the decks against the seed, steps
through the actions printing the `ansi` table after every turn (every hand shown),
and checks the final totals against the saved ones.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from quiddler_env.core import actions as A
from quiddler_env.core import files
from quiddler_env.core.cards import FACES
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import Phase, QuiddlerGame
from quiddler_env.core.levels import level_dictionary
from quiddler_env.core.solver import HandSolver, get_solver
from quiddler_env.envs.common import describe_move, render_table

from .tournament import deal_cards


class ReplayError(ValueError):
    """A saved-games file or game that cannot be replayed (the message names which)."""


def saved_games(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """The saved games of a games.jsonl file, in order (a ReplayError names a line that is not one)."""
    path = Path(path)
    try:
        # Only a regular file: a FIFO at the path would block the read.
        with io.TextIOWrapper(files.open_regular(path), encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = files.loads_json(line)
                except json.JSONDecodeError as exc:
                    raise ReplayError(f"{path} line {number} is not JSON: {exc.msg}") from None
                if not isinstance(record, dict) or "game" not in record:
                    raise ReplayError(f"{path} line {number} is not a saved game (no 'game' field)")
                yield record
    except UnicodeDecodeError:
        raise ReplayError(f"{path} is not a text file of saved games") from None
    except OSError as exc:
        raise ReplayError(f"cannot read saved games {path}: {exc.strerror or exc}") from None


def read_game(path: str | os.PathLike, game: int) -> dict[str, Any]:
    """The saved game with index `game` from a games.jsonl file."""
    seen = 0
    for record in saved_games(path):
        seen += 1
        if record["game"] == game:
            return record
    raise ReplayError(f"game {game} is not in {path} ({seen} games saved there)")


def seat_level_solvers(seats: list[Any], rules: QuiddlerConfig) -> list[HandSolver | None]:
    """Per seat of a saved game (its spec, or the spec with a `#2` label suffix), the solver of the bot's
    `level` if its spec has one, else None (the referee's), as `BaseAgent.seat_solver` gave it in play."""
    from ..registry import parse_spec

    out: list[HandSolver | None] = []
    for label in seats:
        try:
            _, _, params = parse_spec(re.sub(r"#\d+$", "", str(label)))
        except ValueError:
            params = {}
        level = params.get("level")
        out.append(
            None if level is None else get_solver(level_dictionary(level, rules.dictionary), rules.min_word_cards)
        )
    if len(out) != rules.num_players:
        return [None] * rules.num_players
    return out


def replay_states(
    record: dict[str, Any], *, finished: bool = True, deal: bool = False
) -> Iterator[tuple[QuiddlerGame, int | None, int | None, int | None]]:
    """Step through a saved game; yields (game after the move, seat, action, card taken or None).

    `finished`: the game must end with its last action, at the saved totals (a game saved
    mid-way at the browser table is replayed with `finished=False`). `deal`: first yield the
    dealt game, before any move, as (game, None, None, None)."""
    try:
        rules = QuiddlerConfig.from_mapping(record["rules"])
        seed = int(record["deal_seed"])
        actions = [(int(s), int(a)) for s, a in record["actions"]]
        saved_decks = record["decks"]
    except (KeyError, TypeError, ValueError) as exc:
        raise ReplayError(f"saved game {record.get('game')!r} is incomplete or malformed: {exc}") from None
    decks, rng = deal_cards(seed, rules.num_rounds)
    if [[FACES[f] for f in deck] for deck in decks] != saved_decks:
        raise ReplayError(f"saved game {record.get('game')!r}: the decks do not match its deal seed {seed}")
    game = QuiddlerGame(rules)
    if not game.seat_words:  # a bot's level: the words its seat laid by (rules without vocabularies)
        game.set_seat_solvers(seat_level_solvers(record.get("seats") or [], rules))
    game.reset(rng=rng, decks=decks)
    if deal:
        yield game, None, None, None
    for turn, (seat, action) in enumerate(actions):
        if game.is_over or seat != game.current_player or not game.is_legal(action):
            raise ReplayError(
                f"saved game {record.get('game')!r}: move {turn} ({seat}, {action}) is not legal in the replay"
            )
        taken = game.discard_pile[-1] if action == A.TAKE_DISCARD else None
        game.step(action)
        yield game, seat, action, taken
    if not finished:
        return
    if not game.is_over:
        raise ReplayError(f"saved game {record.get('game')!r}: the actions end before the game does")
    if list(game.totals) != list(record.get("totals", [])):
        raise ReplayError(
            f"saved game {record.get('game')!r}: the replay ends with totals {game.totals}, "
            f"the file says {record.get('totals')}"
        )


def replay_game(record: dict[str, Any], write: Callable[[str], None] = print) -> list[int]:
    """Print a saved game turn by turn (a table after every discard); returns the final totals."""
    names = [f"{seat}:{label}" for seat, label in enumerate(record.get("seats", []))]
    rules = record.get("rules", {})
    write(
        f"game {record.get('game')} (deal {record.get('deal')}, rotation {record.get('rotation')}): "
        + ", ".join(names)
        + f"; rules {json.dumps(rules, sort_keys=True)}"
    )
    turn = 0
    pending = ""
    game = None
    for game, seat, action, taken in replay_states(record):
        if len(names) != game.num_players:
            raise ReplayError(f"saved game {record.get('game')!r}: {len(names)} seats named for {game.num_players}")
        move = describe_move(names[seat], action, taken if taken is not None else 0)
        if action in (A.DRAW_PILE, A.TAKE_DISCARD):
            pending = move
            continue
        turn += 1
        write("")
        write(f"-- turn {turn}: {pending + '; ' if pending else ''}{move}")
        pending = ""
        finished_round = game.rounds_completed and (game.phase == Phase.GAME_OVER or game.turns_this_round == 0)
        if finished_round:
            write(f"== round {game.rounds_completed} over")
        write(render_table(game, names, list(range(game.num_players)), None))
    assert game is not None
    winners = ", ".join(names[p] for p in game.winners())
    write("")
    write(
        f"final totals: {', '.join(f'{n} {t}' for n, t in zip(names, game.totals, strict=True))}; winner(s): {winners}"
    )
    return list(game.totals)
