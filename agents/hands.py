"""Hand helpers shared by the scripted bots, on top of the core solver."""

from __future__ import annotations

from collections.abc import Sequence

from quiddler_env.core.cards import POINTS


def hand_points(counts: Sequence[int]) -> int:
    """Sum of the card points of a hand (31 face counts)."""
    return sum(POINTS[f] * c for f, c in enumerate(counts) if c)


def with_card(counts: Sequence[int], face: int) -> list[int]:
    """A copy of the hand (31 face counts) plus one card of `face`."""
    out = list(counts)
    out[face] += 1
    return out
