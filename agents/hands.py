"""Hand helpers shared by the scripted bots."""

from __future__ import annotations

from collections.abc import Sequence


def with_card(counts: Sequence[int], face: int) -> list[int]:
    """A copy of the hand (31 face counts) plus one card of `face`."""
    out = list(counts)
    out[face] += 1
    return out
