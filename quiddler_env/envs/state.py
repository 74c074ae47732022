"""The AEC env's `state()`: the whole game as one float32 vector, for centralised critics.

PRIVILEGED: the state holds every hand and the draw pile's composition, which no seat may
see. It is for critics and other training-time helpers (MAPPO-style centralised value
functions, privileged-information training, analysis), never for choosing a move: a policy
acts on its own `observe(agent)` only. Seats are absolute (seat 0 first), not relative as in
the observations.

| slice | size | content | scale |
|---|---|---|---|
| `hands` | 31*n | every seat's hand, count per face, seat 0 first | raw count |
| `draw_pile` | 31 | the draw pile's cards, count per face (not their order) | raw count |
| `draw_pile_size` | 1 | cards in the draw pile | / 118 |
| `discard_pile` | 31 | the discard pile's cards, count per face | raw count |
| `discard_top` | 31 | top of the discard pile, one-hot (all zero if empty) | 0/1 |
| `known_taken` | 31*n | per seat: cards it took from the discard pile and surely still holds (public) | raw count |
| `totals` | n | running totals | / 100 |
| `round` | 1 | round number (1-based) | / number of rounds |
| `hand_size` | 1 | cards dealt this round | / 11 |
| `phase` | 5 | one-hot: draw, discard, game over, lay, challenge (`core.game.Phase` order) | 0/1 |
| `current_player` | n | the seat to move, one-hot (all zero once the game is over) | 0/1 |
| `dealer` | n | the dealer's seat, one-hot | 0/1 |
| `went_out` | n | the seat that went out this round, one-hot (all zero if nobody) | 0/1 |
| `turns_this_round` | 1 | turns played this round, as the observation's | / (turn cap x players), at most 1 |
| `laid` | n | who has laid this round | 0/1 |
| `laid_cards` | 31*n | the cards each seat laid in words | raw count |
| `laid_figures` | 3*n | each laid layout's card points, longest word, words | / 100, / 22, / 11 |
| `candidates` | 3*K | in the lay phase: the mover's candidate layouts' figures (K = 16) | / 100, / 22, / 11 |

With `challenges: true` these follow (W = 11 word slots per seat):

| slice | size | content | scale |
|---|---|---|---|
| `candidate_bluff` | K | in the lay phase: 1 at the mover's candidate that is a bluff | 0/1 |
| `word_cards` | 31*W*n | per seat, per laid word: its cards | raw count |
| `word_figures` | 2*W*n | each laid word's card points and letters | / 100, / 22 |
| `word_valid` | W*n | the referee's verdict on each laid word, challenged or not (privileged) | 0/1 |
| `word_challenged` | W*n | the word has been challenged this round | 0/1 |
| `challenge_record` | 3*n | per seat: challenges made, won and lost this round | raw count |

`state_layout(n, challenges).view(vec)` splits a vector into these named slices; `state_box(config)`
is the env's `state_space`.

Seat-relative states (the training envs' privileged critic input): `seat_relative(vec, seat, ...)` lists
the seats from `seat` on, as the observations do (`seat` first, then the next seat clockwise, ...), in
every per-seat slice (`hands`, `known_taken`, `totals`, `current_player`, `dealer`, `went_out`, `laid`,
`laid_cards`, `laid_figures` and the challenge variant's `word_*` and `challenge_record`); the other
slices are as above. `seat_states` builds these vectors for many games at once from each seat's
observation and the engine's `HiddenArrays` (numpy over the games), at the positions the training envs
hand back: the seat to move, or the game over.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from ..core.cards import COUNTS, DECK_SIZE, FACE_INDEX, NUM_FACES, POINTS
from ..core.config import MAX_HAND_SIZE, QuiddlerConfig
from ..core.engine import HiddenArrays
from ..core.game import Phase, QuiddlerGame
from ..core.laying import MAX_CANDIDATES, MAX_LAID_WORDS
from ..core.observation import (
    LETTERS_SCALE,
    TOTAL_SCALE,
    layout_counts,
    layout_figures,
    observation_layout,
    turns_fraction,
)
from .common import observation_bounds

NUM_PHASES = len(Phase)

# The slices whose bounds are the observation's slice of the same name (same size, same scale).
_AS_OBSERVED = ("totals", "laid_figures", "candidates", "word_figures", "challenge_record")


@dataclass(frozen=True)
class StateLayout:
    """Names and positions of the state slices for a table of `num_players`."""

    num_players: int
    slices: dict[str, slice]
    size: int
    challenges: bool = False

    def view(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Split a state vector into its named slices (views, no copy); per-seat slices come back shaped
        (n, ...): `hands`, `known_taken` and `laid_cards` (n, 31), `laid_figures` (n, 3), `candidates` (K, 3)."""
        out = {name: vector[s] for name, s in self.slices.items()}
        n = self.num_players
        for name in ("hands", "known_taken", "laid_cards"):
            out[name] = out[name].reshape(n, NUM_FACES)
        out["laid_figures"] = out["laid_figures"].reshape(n, 3)
        out["candidates"] = out["candidates"].reshape(MAX_CANDIDATES, 3)
        if self.challenges:
            w = MAX_LAID_WORDS
            out["word_cards"] = out["word_cards"].reshape(n, w, NUM_FACES)
            out["word_figures"] = out["word_figures"].reshape(n, w, 2)
            out["word_valid"] = out["word_valid"].reshape(n, w)
            out["word_challenged"] = out["word_challenged"].reshape(n, w)
            out["challenge_record"] = out["challenge_record"].reshape(n, 3)
        return out


_LAYOUTS: dict[tuple[int, bool], StateLayout] = {}


def state_layout(num_players: int, challenges: bool = False) -> StateLayout:
    """The state's slice table for `num_players` (cached)."""
    layout = _LAYOUTS.get((num_players, challenges))
    if layout is None:
        n, f, k = num_players, NUM_FACES, MAX_CANDIDATES
        sizes = [
            ("hands", f * n),
            ("draw_pile", f),
            ("draw_pile_size", 1),
            ("discard_pile", f),
            ("discard_top", f),
            ("known_taken", f * n),
            ("totals", n),
            ("round", 1),
            ("hand_size", 1),
            ("phase", NUM_PHASES),
            ("current_player", n),
            ("dealer", n),
            ("went_out", n),
            ("turns_this_round", 1),
            ("laid", n),
            ("laid_cards", f * n),
            ("laid_figures", 3 * n),
            ("candidates", 3 * k),
        ]
        if challenges:
            w = n * MAX_LAID_WORDS
            sizes += [
                ("candidate_bluff", k),
                ("word_cards", f * w),
                ("word_figures", 2 * w),
                ("word_valid", w),
                ("word_challenged", w),
                ("challenge_record", 3 * n),
            ]
        slices, start = {}, 0
        for name, size in sizes:
            slices[name] = slice(start, start + size)
            start += size
        layout = _LAYOUTS[num_players, challenges] = StateLayout(n, slices, start, challenges)
    return layout


def state_bounds(config: QuiddlerConfig) -> tuple[np.ndarray, np.ndarray]:
    """Per-entry (low, high) float32 bounds of the state vector under `config`: counts up to the copies of
    each face, the figures and totals as the observation's (`common.observation_bounds`), the rest [0, 1]."""
    n = config.num_players
    layout = state_layout(n, config.challenges)
    s = layout.slices
    low = np.zeros(layout.size, dtype=np.float32)
    high = np.ones(layout.size, dtype=np.float32)
    counts = np.asarray(COUNTS, dtype=np.float32)
    for name in ("hands", "draw_pile", "discard_pile", "known_taken", "laid_cards", "word_cards"):
        if name in s:
            high[s[name]] = np.tile(counts, (s[name].stop - s[name].start) // NUM_FACES)
    obs_low, obs_high = observation_bounds(config)
    obs_slices = observation_layout(n, config.challenges).slices
    for name in _AS_OBSERVED:
        if name in s:
            low[s[name]] = obs_low[obs_slices[name]]
            high[s[name]] = obs_high[obs_slices[name]]
    return low, high


def state_box(config: QuiddlerConfig) -> spaces.Box:
    """The `state_space`: a float32 Box with `state_bounds(config)`."""
    low, high = state_bounds(config)
    return spaces.Box(low=low, high=high, dtype=np.float32)


def encode_state(game: QuiddlerGame) -> np.ndarray:
    """The state vector of `game` now (privileged: every hand and the draw pile; see the module docstring)."""
    n, f = game.num_players, NUM_FACES
    layout = state_layout(n, game.challenges)
    s = layout.slices
    out = np.zeros(layout.size, dtype=np.float32)
    out[s["hands"]] = np.asarray(game.hands, dtype=np.float32).reshape(-1)
    if game.draw_pile:
        out[s["draw_pile"]] = np.bincount(game.draw_pile, minlength=f)
    out[s["draw_pile_size"]] = len(game.draw_pile) / DECK_SIZE
    out[s["discard_pile"]] = game.discard_counts
    if game.discard_pile:
        out[s["discard_top"].start + game.discard_pile[-1]] = 1.0
    out[s["known_taken"]] = np.asarray(game.known_taken, dtype=np.float32).reshape(-1)
    out[s["totals"]] = np.asarray(game.totals, dtype=np.float32) / TOTAL_SCALE
    out[s["round"]] = (game.round + 1) / game.config.num_rounds
    out[s["hand_size"]] = game.hand_size / MAX_HAND_SIZE
    out[s["phase"].start + int(game.phase)] = 1.0
    if game.phase != Phase.GAME_OVER:
        out[s["current_player"].start + game.current_player] = 1.0
    out[s["dealer"].start + game.dealer] = 1.0
    if game.went_out is not None:
        out[s["went_out"].start + game.went_out] = 1.0
    out[s["turns_this_round"]] = turns_fraction(game.turns_this_round, game.config.turn_cap, n)
    laid_cards, laid_figures = s["laid_cards"].start, s["laid_figures"].start
    for seat in game.lay_order:
        layout_ = game.laid[seat]
        if layout_ is not None:
            out[s["laid"].start + seat] = 1.0
            out[laid_cards + seat * f : laid_cards + (seat + 1) * f] = layout_counts(layout_)
            out[laid_figures + 3 * seat : laid_figures + 3 * seat + 3] = layout_figures(layout_)
    if game.phase == Phase.LAY:
        start = s["candidates"].start
        for k, candidate in enumerate(game.candidates):
            out[start + 3 * k : start + 3 * k + 3] = layout_figures(candidate)
    if game.challenges:
        _encode_challenges(game, out, s)
    return out


def _encode_challenges(game: QuiddlerGame, out: np.ndarray, s: dict[str, slice]) -> None:
    w, f = MAX_LAID_WORDS, NUM_FACES
    if game.phase == Phase.LAY and game.candidate_bluff is not None:
        out[s["candidate_bluff"].start + game.candidate_bluff] = 1.0
    referee = game.solver.dictionary
    challenged = {(c.player, c.word) for c in game.challenge_log}
    for seat in game.lay_order:
        for j, word in enumerate(game.laid[seat].words):
            slot = seat * w + j
            cards = [FACE_INDEX[face] for face in word]
            start = s["word_cards"].start + slot * f
            np.add.at(out[start : start + f], cards, 1.0)
            figures = s["word_figures"].start + 2 * slot
            out[figures] = sum(POINTS[c] for c in cards) / TOTAL_SCALE
            out[figures + 1] = len(game.laid[seat].spelled[j]) / LETTERS_SCALE
            out[s["word_valid"].start + slot] = float(referee.lookup(cards) >= 0)
            out[s["word_challenged"].start + slot] = float((seat, j) in challenged)
    record = s["challenge_record"].start
    for c in game.challenge_log:
        out[record + 3 * c.challenger] += 1.0
        out[record + 3 * c.challenger + (2 if c.valid else 1)] += 1.0


# -- seat-relative states, many games at once --------------------------------------------------------

# The per-seat slices and the shape of one seat's block (seats first).
_PER_SEAT = {
    "hands": (NUM_FACES,),
    "known_taken": (NUM_FACES,),
    "totals": (),
    "current_player": (),
    "dealer": (),
    "went_out": (),
    "laid": (),
    "laid_cards": (NUM_FACES,),
    "laid_figures": (3,),
    "word_cards": (MAX_LAID_WORDS, NUM_FACES),
    "word_figures": (MAX_LAID_WORDS, 2),
    "word_valid": (MAX_LAID_WORDS,),
    "word_challenged": (MAX_LAID_WORDS,),
    "challenge_record": (3,),
}
# The slices a seat's observation holds as the relative state does (same size, order and scale), when the seat
# is to move or the game is over.
_FROM_OBSERVATION = (
    "discard_top",
    "draw_pile_size",
    "discard_pile",
    "totals",
    "round",
    "hand_size",
    "went_out",
    "turns_this_round",
    "laid",
    "laid_cards",
    "laid_figures",
    "candidates",
    "candidate_bluff",
    "word_cards",
    "word_figures",
    "word_challenged",
    "challenge_record",
)
_DECK = np.asarray(COUNTS, dtype=np.int64)


def seat_relative(vector: np.ndarray, seat: int, num_players: int, challenges: bool = False) -> np.ndarray:
    """The state vector (absolute seats, as `encode_state`) with its per-seat slices listed from `seat` on."""
    layout = state_layout(num_players, challenges)
    out = np.array(vector, dtype=np.float32, copy=True)
    order = (np.arange(num_players) + seat) % num_players
    for name, block in _PER_SEAT.items():
        if name in layout.slices:
            s = layout.slices[name]
            out[s] = vector[s].reshape(num_players, *block)[order].reshape(-1)
    return out


def _roll(rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """rows (G, n, ...) by absolute seat -> by seat relative to seats[g]."""
    n = rows.shape[1]
    order = (np.arange(n)[None, :] + seats[:, None]) % n
    return rows[np.arange(rows.shape[0])[:, None], order]


def _one_hot(out: np.ndarray, where: slice, index: np.ndarray, on: np.ndarray | None = None) -> None:
    rows = np.arange(out.shape[0]) if on is None else np.flatnonzero(on)
    out[rows, where.start + index[rows]] = 1.0


def seat_states(
    hidden: HiddenArrays, seats: np.ndarray, observations: np.ndarray, num_players: int, challenges: bool = False
) -> np.ndarray:
    """The seat-relative state of G games (float32 (G, size)): game g's from `seats[g]` on (`seat_relative`).

    `observations` (G, observation size) are each seat's own, `hidden` the games' `HiddenArrays`; each game is
    at its seat's move or over (where a seat's observation shows the lay phase's candidates). Privileged: for
    critics, never for a policy."""
    n = num_players
    layout = state_layout(n, challenges)
    s = layout.slices
    obs_s = observation_layout(n, challenges).slices
    seats = np.asarray(seats, dtype=np.int64)
    G = seats.shape[0]
    out = np.zeros((G, layout.size), dtype=np.float32)
    for name in _FROM_OBSERVATION:
        if name in s:
            out[:, s[name]] = observations[:, obs_s[name]]
    hands = _roll(hidden.hands, seats)
    out[:, s["hands"]] = hands.reshape(G, -1)
    out[:, s["draw_pile"]] = _DECK - hidden.hands.sum(axis=1) - hidden.discard_counts  # the cards nobody holds
    out[:, s["known_taken"]] = _roll(hidden.known_taken, seats).reshape(G, -1)
    _one_hot(out, s["phase"], hidden.phase)
    over = hidden.phase == int(Phase.GAME_OVER)
    _one_hot(out, s["current_player"], (hidden.current_player - seats) % n, on=~over)
    _one_hot(out, s["dealer"], (hidden.dealer - seats) % n)
    if challenges:
        out[:, s["word_valid"]] = _roll(hidden.word_valid, seats).reshape(G, -1)
    return out


__all__ = [
    "StateLayout",
    "encode_state",
    "seat_relative",
    "seat_states",
    "state_bounds",
    "state_box",
    "state_layout",
]
