"""The observation vector: what one seat may see, in named slices.

Every env (AEC, single-agent) and every bot uses this one encoding. Opponents are
listed in seat order starting with the next seat clockwise ("relative seats"), so
a policy is the same whichever seat it plays. Nothing private to another player is
encoded: opponents' hands appear only as the cards they publicly took from the
discard pile and must still hold; the draw pile only as its size.

| slice | size | content | scale |
|---|---|---|---|
| `hand` | 31 | own hand, count per face (faces in `FACES` order) | raw count |
| `discard_top` | 31 | top of the discard pile, one-hot (all zero if empty) | 0/1 |
| `hand_size` | 1 | cards dealt this round | / 11 |
| `phase` | 2 | one-hot: draw, discard | 0/1 |
| `final_turn` | 1 | 1 once someone has gone out: the turns left are last turns | 0/1 |
| `went_out` | n | relative seat of the player who went out, one-hot | 0/1 |
| `discard_pile` | 31 | faces in the discard pile (all were seen face up) | raw count |
| `opponent_taken` | 31*(n-1) | per opponent (relative seat order): cards taken from the discard pile and surely still held | raw count |
| `unseen` | 31 | cards of each face not in own hand, the discard pile or `opponent_taken` | raw count |
| `draw_pile_size` | 1 | cards in the draw pile | / 118 |
| `totals` | n | running totals, own first, then relative seats | / 100 |
| `round` | 1 | round number (1-based) | / number of rounds |
| `seat_from_dealer` | n | own seat relative to the dealer (0 = dealer), one-hot | 0/1 |
| `turns_this_round` | 1 | turns played this round | / (turn cap x players), 0 without cap |
| `laying` | 1 | 1 in the lay phase (`layout: choose`): the move is which candidate to lay | 0/1 |
| `laid` | n | who has laid this round, own first, then relative seats | 0/1 |
| `laid_cards` | 31*n | the cards each player laid in words (public from its laying moment), own first | raw count |
| `laid_figures` | 3*n | each laid layout's card points (used - unused), longest word (letters), words | / 100, / 22, / 11 |
| `candidates` | 3*K | in the lay phase: each candidate layout's card points, longest word, words (K = `laying.MAX_CANDIDATES`; zeros past the last) | / 100, / 22, / 11 |

A player who has not laid shows nothing in the laid slices; the candidates are the
observing player's own, and only in its lay phase.
"""

from __future__ import annotations

import numpy as np

from ..core.cards import COUNTS, DECK_SIZE, FACE_INDEX, NUM_FACES
from ..core.config import MAX_HAND_SIZE
from ..core.game import Phase, QuiddlerGame
from ..core.observation_slices import (  # the slice table, declared in core so the batched engine shares it
    LETTERS_SCALE,
    TOTAL_SCALE,
    WORDS_SCALE,
    ObservationLayout,
    observation_layout,
)
from ..core.solver import Layout

__all__ = [
    "LETTERS_SCALE",
    "TOTAL_SCALE",
    "WORDS_SCALE",
    "ObservationLayout",
    "encode_observation",
    "layout_counts",
    "layout_figures",
    "observation_layout",
]

_DECK_COUNTS = np.asarray(COUNTS, dtype=np.float32)


def encode_observation(game: QuiddlerGame, player: int) -> np.ndarray:
    """The float32 observation vector of `player` in the current state of `game`."""
    n = game.num_players
    layout = observation_layout(n)
    s = layout.slices
    obs = np.zeros(layout.size, dtype=np.float32)
    hand = game.hands[player]
    obs[s["hand"]] = hand
    if game.discard_pile:
        obs[s["discard_top"].start + game.discard_pile[-1]] = 1.0
    obs[s["hand_size"]] = game.hand_size / MAX_HAND_SIZE
    if game.phase in (Phase.DRAW, Phase.DISCARD):
        obs[s["phase"].start + int(game.phase)] = 1.0
    elif game.phase == Phase.LAY and game.current_player == player:
        obs[s["laying"]] = 1.0
        start = s["candidates"].start
        for k, layout in enumerate(game.candidates):
            obs[start + 3 * k : start + 3 * k + 3] = layout_figures(layout)
    if game.went_out is not None:
        obs[s["final_turn"]] = 1.0
        obs[s["went_out"].start + (game.went_out - player) % n] = 1.0
    obs[s["discard_pile"]] = game.discard_counts
    taken = s["opponent_taken"].start
    known = np.zeros(NUM_FACES, dtype=np.float32)
    laid_cards, laid_figures, laid = s["laid_cards"].start, s["laid_figures"].start, s["laid"].start
    for seat in game.lay_order:  # only those who laid (most steps: nobody yet)
        k = (seat - player) % n
        layout = game.laid[seat]
        if layout is not None:
            obs[laid + k] = 1.0
            obs[laid_cards + k * NUM_FACES : laid_cards + (k + 1) * NUM_FACES] = layout_counts(layout)
            obs[laid_figures + 3 * k : laid_figures + 3 * k + 3] = layout_figures(layout)
    for k in range(1, n):
        seat = (player + k) % n
        row = game.known_taken[seat]
        obs[taken + (k - 1) * NUM_FACES : taken + k * NUM_FACES] = row
        if game.laid[seat] is None:
            known += row
        else:  # cards it surely holds: those it took from the discard pile and those it laid (they may overlap)
            known += np.maximum(row, obs[laid_cards + k * NUM_FACES : laid_cards + (k + 1) * NUM_FACES])
    unseen = _DECK_COUNTS - obs[s["hand"]] - obs[s["discard_pile"]] - known
    obs[s["unseen"]] = np.maximum(unseen, 0.0)
    obs[s["draw_pile_size"]] = len(game.draw_pile) / DECK_SIZE
    tot = s["totals"].start
    for k in range(n):
        obs[tot + k] = game.totals[(player + k) % n] / TOTAL_SCALE
    obs[s["round"]] = (game.round + 1) / game.config.num_rounds
    obs[s["seat_from_dealer"].start + (player - game.dealer) % n] = 1.0
    cap = game.config.turn_cap
    obs[s["turns_this_round"]] = game.turns_this_round / (cap * n) if cap else 0.0
    return obs


def layout_counts(layout: Layout) -> np.ndarray:
    """The cards a layout lays in words, as 31 face counts."""
    counts = np.zeros(NUM_FACES, dtype=np.float32)
    for word in layout.words:
        for face in word:
            counts[FACE_INDEX[face]] += 1
    return counts


def layout_figures(layout: Layout) -> tuple[float, float, float]:
    """A layout's three figures as the observation scales them: card points, longest word, words."""
    return (layout.score / TOTAL_SCALE, layout.longest / LETTERS_SCALE, layout.n_words / WORDS_SCALE)
