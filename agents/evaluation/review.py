"""The review of saved games: every decision weighed by the coach (`agents.coach`), the points lost.

A saved game (a line of `games.jsonl` from `evaluate.py --save-games`, or a game saved at
the browser table) is replayed move by move (`replay.replay_states`, which checks every
move). At each decision of the reviewed seats with more than one legal move the coach
weighs the moves (the search bot's values, with the move played valued beside them), and
the loss of the move played is the best value minus its value (>= 0). The review lists
the costliest decisions, with what the search bot would have played, and the losses
summed per player and per kind of decision (`coach.KINDS`). Every decision's generator
is seeded from (seed, game, move number): the same review twice gives the same numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from quiddler_env.core import files
from quiddler_env.core.config import QuiddlerConfig

from ..coach import KINDS, Coach, move_namer
from ..search import DEFAULT_SAMPLES
from .replay import ReplayError, replay_states, saved_games

FORMAT = "quiddler-review-1"
COSTLIEST = 20
"""Decisions listed as the costliest (the JSON keeps every decision of every game)."""
VALUES = (
    "points for the player: rollouts = the search bot's mean round-score difference (own minus the opponents' mean) "
    "over its determinizations; expert = the expert's points of the hand or layout kept, with the bonuses it expects; "
    "challenge = the bots' expected gain of a challenge (0: let the words stand)"
)
LARGE = 2.0
"""A loss from this many points on is shown with the best move in the replay viewer."""


def review_game(
    record: dict[str, Any], coach_for: Callable[[QuiddlerConfig], Coach], seats: Iterable[int] | None = None
) -> dict[str, Any]:
    """One saved game's decisions, weighed (`coach_for(rules)` gives the coach of its rules)."""
    game_index = record.get("game", 0)
    labels = [str(s) for s in record.get("seats") or []]
    decisions: list[dict[str, Any]] = []
    pending = None
    coach = None
    # Yield `move` is the game before move `move` (yield 0: as dealt), after move `move - 1`.
    for move, (game, seat, action, _taken) in enumerate(replay_states(record, finished=False, deal=True)):
        if seat is None:
            coach = coach_for(game.config)
            if len(labels) != game.num_players:
                raise ReplayError(f"saved game {game_index!r}: {len(labels)} seats named for {game.num_players}")
            wanted = set(range(game.num_players) if seats is None else seats)
            bad = sorted(s for s in wanted if not 0 <= s < game.num_players)
            if bad:
                raise ReplayError(
                    f"seat {bad[0]} is not a seat of saved game {game_index!r} (seats 0..{game.num_players - 1})"
                )
        else:
            if pending is not None:
                advice, name, round_ = pending
                loss = advice.loss(action)
                decisions.append(
                    {
                        "move": move - 1,
                        "round": round_,
                        "seat": seat,
                        "player": labels[seat],
                        "played": {"action": action, "move": name(action)},
                        "value": None if advice.value(action) is None else round(advice.value(action), 3),
                        "loss": None if loss is None else round(loss, 3),
                    }
                    | advice.to_dict(name)
                )
            pending = None
        if game.is_over:
            break
        p = game.current_player
        if p in wanted and len(game.legal_actions()) > 1:
            # The move played is valued beside the bot's candidates: read it ahead from the record.
            nxt = record["actions"][move] if move < len(record["actions"]) else None
            played = int(nxt[1]) if nxt is not None else None
            pending = (coach.advise(game, (game_index, move), played), move_namer(game), game.round + 1)
    return {
        "game": game_index,
        "seats": labels,
        "totals": list(game.totals),
        "finished": bool(game.is_over),
        "decisions": decisions,
    }


def summarise(games: list[dict[str, Any]]) -> dict[str, Any]:
    players: dict[str, dict[str, Any]] = {}
    for g in games:
        for d in g["decisions"]:
            row = players.setdefault(
                d["player"],
                {
                    "games": set(),
                    "decisions": 0,
                    "weighed": 0,
                    "loss": 0.0,
                    "kinds": {k: {"decisions": 0, "loss": 0.0} for k in KINDS},
                },
            )
            row["games"].add(g["game"])
            row["decisions"] += 1
            if d["loss"] is None:
                continue
            row["weighed"] += 1
            row["loss"] += d["loss"]
            kind = row["kinds"][d["kind"]]
            kind["decisions"] += 1
            kind["loss"] += d["loss"]
    for row in players.values():
        n = len(row["games"])
        row["games"] = n
        row["loss"] = round(row["loss"], 3)
        row["loss_per_game"] = round(row["loss"] / n, 3) if n else 0.0
        row["loss_per_decision"] = round(row["loss"] / row["weighed"], 3) if row["weighed"] else 0.0
        for kind in row["kinds"].values():
            kind["loss"] = round(kind["loss"], 3)
            kind["loss_per_game"] = round(kind["loss"] / n, 3) if n else 0.0
    return players


def saved_records(path: str | Path) -> Iterable[dict[str, Any]]:
    """The saved games of `path`: a games.jsonl file (one game a line), or one game saved at the table (one JSON
    object over several lines); a ReplayError names what is wrong."""
    try:
        whole = files.loads_json(files.read_text(path))
    except (OSError, UnicodeDecodeError, ValueError):
        whole = None  # not one JSON document: read line by line (saved_games names the problem)
    if isinstance(whole, dict):
        if "actions" not in whole:
            raise ReplayError(f"{path} is not a saved game (no 'actions' field)")
        yield whole
        return
    yield from saved_games(path)


def review(
    path: str | Path,
    *,
    seat: int | None = None,
    games: Iterable[int] | None = None,
    seed: int = 0,
    samples: int = DEFAULT_SAMPLES,
    top: int = 4,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The review of the saved games in `path` (all, or those whose index is in `games`), of every seat or one."""
    coaches: dict[str, Coach] = {}

    def coach_for(rules: QuiddlerConfig) -> Coach:
        key = json.dumps(rules.to_dict(), sort_keys=True)
        if key not in coaches:
            coaches[key] = Coach(rules, samples=samples, top=top, seed=seed)
        return coaches[key]

    wanted = None if games is None else set(games)
    reviewed = []
    for record in saved_records(path):
        if wanted is not None and record.get("game") not in wanted:
            continue
        reviewed.append(review_game(record, coach_for, None if seat is None else [seat]))
        if progress is not None:
            progress(len(reviewed))
    if not reviewed:
        raise ReplayError(f"no saved game to review in {path}")
    every = [d | {"game": g["game"]} for g in reviewed for d in g["decisions"] if d["loss"] is not None]
    every.sort(key=lambda d: (-d["loss"], d["game"], d["move"]))
    return {
        "format": FORMAT,
        "file": Path(path).name,
        "seat": seat,
        "seed": seed,
        "samples": samples,
        "top": top,
        "values": VALUES,
        "players": summarise(reviewed),
        "costliest": every[:COSTLIEST],
        "games": reviewed,
    }


def _kinds_table(players: dict[str, Any]) -> list[str]:
    lines = [
        "| player | games | decisions weighed | loss | per game | " + " | ".join(KINDS) + " |",
        "|---|---:|---:|---:|---:|" + "---:|" * len(KINDS),
    ]
    for name, row in players.items():
        kinds = " | ".join(f"{row['kinds'][k]['loss']:.1f} ({row['kinds'][k]['decisions']})" for k in KINDS)
        lines.append(
            f"| {name} | {row['games']} | {row['weighed']} | {row['loss']:.1f} | {row['loss_per_game']:.1f} | {kinds} |"
        )
    return lines


def review_markdown(data: dict[str, Any]) -> str:
    """The review as a Markdown report: losses per player and kind, then the costliest decisions."""
    seat = "every seat" if data["seat"] is None else f"seat {data['seat']}"
    out = [
        f"# Review of {data['file']}",
        "",
        f"{len(data['games'])} game(s), {seat}; coach: search, {data['samples']} determinizations, "
        f"top {data['top']} discards, seed {data['seed']}.",
        "",
        "Values are points for the player. Draws and discards: the search bot's rollout values (its round score "
        "minus the opponents' mean). Last turns and lay choices: the expert's points of the hand kept. Challenges: "
        "the bots' expected gain of each challenge, 0 for letting the words stand. The loss of a move is the best "
        "value weighed minus its value.",
        "",
        "## Points lost per kind of decision",
        "",
        "Loss summed over the games (decisions weighed in brackets).",
        "",
        *_kinds_table(data["players"]),
        "",
        "## The costliest decisions",
        "",
        "| game | round | move | player | kind | played | search plays | best | loss |",
        "|---:|---:|---:|---|---|---|---|---|---:|",
    ]
    for d in data["costliest"]:
        out.append(
            f"| {d['game']} | {d['round']} | {d['move']} | {d['player']} (seat {d['seat']}) | {d['kind']} | "
            f"{d['played']['move']} ({d['value']:+.1f}) | {d['search']['move']} | {d['best']['move']} | {d['loss']:.1f} |"
        )
    return "\n".join(out) + "\n"


def write_review(data: dict[str, Any], out: str | Path) -> tuple[Path, Path]:
    """Write review.json and review.md into folder `out` (each atomically); returns their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return files.write_json(out / "review.json", data), files.write_atomic(out / "review.md", review_markdown(data))


def move_losses(data: dict[str, Any], game: int) -> dict[int, dict[str, Any]]:
    """Game `game`'s weighed decisions by move number (the replay viewer's column)."""
    for g in data["games"]:
        if g["game"] == game:
            return {d["move"]: d for d in g["decisions"]}
    return {}
