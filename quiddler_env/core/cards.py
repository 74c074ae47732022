"""The Quiddler deck: 31 card faces, their points and counts (118 cards), declared once.

Faces are indexed in a fixed order: the letters A..Z (0..25), then the combination
cards ER, CL, IN, TH, QU (26..30). Every other module (action table, observations,
solver) uses these indices.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

# (face, points, count) in face-index order.
_DECK_TABLE: tuple[tuple[str, int, int], ...] = (
    ("A", 2, 10),
    ("B", 8, 2),
    ("C", 8, 2),
    ("D", 5, 4),
    ("E", 2, 12),
    ("F", 6, 2),
    ("G", 6, 4),
    ("H", 7, 2),
    ("I", 2, 8),
    ("J", 13, 2),
    ("K", 8, 2),
    ("L", 3, 4),
    ("M", 5, 2),
    ("N", 5, 6),
    ("O", 2, 8),
    ("P", 6, 2),
    ("Q", 15, 2),
    ("R", 5, 6),
    ("S", 3, 4),
    ("T", 3, 6),
    ("U", 4, 6),
    ("V", 11, 2),
    ("W", 10, 2),
    ("X", 12, 2),
    ("Y", 4, 4),
    ("Z", 14, 2),
    ("ER", 7, 2),
    ("CL", 10, 2),
    ("IN", 7, 2),
    ("TH", 9, 2),
    ("QU", 9, 2),
)

FACES: tuple[str, ...] = tuple(face for face, _, _ in _DECK_TABLE)
"""Face names in index order."""
NUM_FACES: int = len(FACES)  # 31
FACE_INDEX: dict[str, int] = {face: i for i, face in enumerate(FACES)}
POINTS: tuple[int, ...] = tuple(points for _, points, _ in _DECK_TABLE)
COUNTS: tuple[int, ...] = tuple(count for _, _, count in _DECK_TABLE)
DECK_SIZE: int = sum(COUNTS)  # 118
COMBINATIONS: tuple[str, ...] = tuple(f for f in FACES if len(f) == 2)
LETTERS: tuple[int, ...] = tuple(len(face) for face in FACES)
"""Number of letters each face contributes to a word (1, or 2 for a combination)."""

POINTS_ARRAY = np.asarray(POINTS, dtype=np.int64)
COUNTS_ARRAY = np.asarray(COUNTS, dtype=np.int64)

assert NUM_FACES == 31 and DECK_SIZE == 118


def face_id(face: str) -> int:
    """Index of a face name (case-insensitive); ValueError naming the bad face."""
    try:
        return FACE_INDEX[face.upper()]
    except (KeyError, AttributeError):
        raise ValueError(f"unknown card face {face!r}; faces are: {' '.join(FACES)}") from None


def parse_hand(hand: Iterable[str | int]) -> list[int]:
    """Face names (or indices) to a list of face indices, validated."""
    out = []
    for card in hand:
        if isinstance(card, (int, np.integer)) and not isinstance(card, bool):
            if not 0 <= int(card) < NUM_FACES:
                raise ValueError(f"face index {card} out of range 0..{NUM_FACES - 1}")
            out.append(int(card))
        else:
            out.append(face_id(card))
    return out


def hand_counts(hand: Iterable[str | int]) -> list[int]:
    """A hand as 31 face counts."""
    counts = [0] * NUM_FACES
    for f in parse_hand(hand):
        counts[f] += 1
    return counts


def counts_to_faces(counts: Iterable[int]) -> list[int]:
    """31 face counts to a sorted list of face indices."""
    out: list[int] = []
    for f, c in enumerate(counts):
        out.extend([f] * int(c))
    return out


def new_deck() -> list[int]:
    """All 118 cards as face indices, in face order (shuffle it with the game's generator)."""
    return counts_to_faces(COUNTS)
