"""The observation's slice table: names, sizes and scales (the table itself is documented in
`quiddler_env.core.observation`, which encodes a `QuiddlerGame`; `core.batch` encodes batches with the same table).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cards import NUM_FACES
from .config import MAX_HAND_SIZE
from .laying import MAX_CANDIDATES, MAX_LAID_WORDS

TOTAL_SCALE = 100.0
LETTERS_SCALE = 2.0 * MAX_HAND_SIZE
"""The most letters a word can have: every card of the largest hand a two-letter card."""
WORDS_SCALE = float(MAX_HAND_SIZE)


@dataclass(frozen=True)
class ObservationLayout:
    """Names and positions of the observation slices for a table of `num_players`."""

    num_players: int
    slices: dict[str, slice]
    size: int
    challenges: bool = False

    def view(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Split an observation vector into its named slices (views, no copy).

        `opponent_taken` comes back shaped (n-1, 31), `laid_cards` (n, 31), `laid_figures` (n, 3),
        `candidates` (K, 3).
        """
        out = {name: vector[s] for name, s in self.slices.items()}
        n = self.num_players
        out["opponent_taken"] = out["opponent_taken"].reshape(n - 1, NUM_FACES)
        out["laid_cards"] = out["laid_cards"].reshape(n, NUM_FACES)
        out["laid_figures"] = out["laid_figures"].reshape(n, 3)
        out["candidates"] = out["candidates"].reshape(MAX_CANDIDATES, 3)
        if self.challenges:
            w = MAX_LAID_WORDS
            out["word_cards"] = out["word_cards"].reshape(n, w, NUM_FACES)
            out["word_figures"] = out["word_figures"].reshape(n, w, 2)
            for name in ("word_known", "word_challenged", "word_failed"):
                out[name] = out[name].reshape(n, w)
            out["challenge_record"] = out["challenge_record"].reshape(n, 3)
        return out


_LAYOUTS: dict[tuple[int, bool], ObservationLayout] = {}


def observation_layout(num_players: int, challenges: bool = False) -> ObservationLayout:
    """The slice table for `num_players`, with the challenge variant's slices after the others (cached)."""
    layout = _LAYOUTS.get((num_players, challenges))
    if layout is None:
        n = num_players
        sizes = [
            ("hand", NUM_FACES),
            ("discard_top", NUM_FACES),
            ("hand_size", 1),
            ("phase", 2),
            ("final_turn", 1),
            ("went_out", n),
            ("discard_pile", NUM_FACES),
            ("opponent_taken", NUM_FACES * (n - 1)),
            ("unseen", NUM_FACES),
            ("draw_pile_size", 1),
            ("totals", n),
            ("round", 1),
            ("seat_from_dealer", n),
            ("turns_this_round", 1),
            ("laying", 1),
            ("laid", n),
            ("laid_cards", NUM_FACES * n),
            ("laid_figures", 3 * n),
            ("candidates", 3 * MAX_CANDIDATES),
        ]
        if challenges:
            w = n * MAX_LAID_WORDS
            sizes += [
                ("seat", n),
                ("vocabulary_coverage", 1),
                ("challenging", 1),
                ("candidate_bluff", MAX_CANDIDATES),
                ("word_cards", NUM_FACES * w),
                ("word_figures", 2 * w),
                ("word_known", w),
                ("word_challenged", w),
                ("word_failed", w),
                ("challenge_record", 3 * n),
            ]
        slices, start = {}, 0
        for name, size in sizes:
            slices[name] = slice(start, start + size)
            start += size
        layout = _LAYOUTS[num_players, challenges] = ObservationLayout(n, slices, start, challenges)
    return layout
