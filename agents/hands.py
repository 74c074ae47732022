"""Hand evaluation shared by the scripted bots, on top of the core solver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from quiddler_env.core.cards import POINTS
from quiddler_env.core.solver import HandSolver


class Option(NamedTuple):
    """The best layout left after discarding one card of `face` from a hand."""

    face: int
    score: int
    n_words: int
    longest: int
    goes_out: bool


def discard_options(solver: HandSolver, counts: Sequence[int]) -> tuple[Option, ...]:
    """For a hand after drawing (31 counts): one `Option` per face in it, ascending by face.

    Uses the solver's batch query `discard_options` when it has one (one table for
    all discards); otherwise asks `best_layout` once per face.
    """
    batch = getattr(solver, "discard_options", None)
    if batch is not None:
        return tuple(Option(o.face, o.score, o.n_words, o.longest, o.goes_out) for o in batch(counts))
    out = []
    rest = list(counts)
    for f, c in enumerate(counts):
        if not c:
            continue
        rest[f] -= 1
        lay = solver.best_layout(rest, counts=True)
        out.append(Option(f, lay.score, lay.n_words, lay.longest, lay.goes_out and sum(rest) > 0))
        rest[f] += 1
    return tuple(out)


def hand_points(counts: Sequence[int]) -> int:
    """Sum of the card points of a hand."""
    return sum(POINTS[f] * c for f, c in enumerate(counts) if c)


def with_card(counts: Sequence[int], face: int) -> list[int]:
    """A copy of the hand plus one card of `face`."""
    out = list(counts)
    out[face] += 1
    return out
