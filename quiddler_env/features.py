"""Observation features a policy may add to the observation vector: what the hand solver says about the hand.

A network that reads face counts must learn spelling to know which discard keeps
words together; the solver knows. A feature set is a pure function of one seat's
observation vector (so it sees nothing the seat may not see) that returns extra
floats appended to it. Training envs append them (`TrainingEnv(features=...)`), the
bundle's `policy.json` names the set (`"observation_features"`), and `PolicyAgent`
appends the same floats before the network, so a bundle plays wherever it loads.
An env user gets the same floats from the wrappers of `quiddler_env.wrappers`.

`solver_v1` (132 floats; scores / 50, word counts / 5, word lengths / 10):

| index | phase | content |
|---|---|---|
| 0..3 | draw | the hand's best layout now: score, words, longest word, 1 if it lays every card |
| 4..7 | draw | after taking the discard top and the best discard: score gain over now, words, longest word, 1 if it could go out |
| 8 + 4f .. 11 + 4f | discard | for each face f in the hand: the best layout of the hand without one f: score, words, longest word, 1 if it goes out |

Entries of the other phase, and of faces not in the hand, are 0.

The solver knows the seat's words: the referee's list, or with the rules' `vocabularies` outside the challenge
variant the seat's own vocabulary (within the referee's), the seat being read off the observation (its round and
its place from the dealer), so a policy is told only of words its seat can lay.

`solver_v2` (164 floats): `solver_v1`'s 132, then the odds the draw pile gives of going out, a card
drawn being any card the seat has not seen (the observation's `unseen` counts) with equal chance:

| index | phase | content |
|---|---|---|
| 132 | draw | the chance that a card from the draw pile lets the hand go out now |
| 133 + f | discard | for each face f in the hand: the chance that, with one f discarded, the next card from the draw pile lets the hand go out |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from quiddler_env.core.batch import solver_tables
from quiddler_env.core.borrow import borrow
from quiddler_env.core.cards import NUM_FACES, POINTS
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.observation import observation_layout, plain_seats
from quiddler_env.core.solver import HandSolver, get_solver
from quiddler_env.core.solver_kernel import best_layout_hand, discard_table, go_out_face_bits

SCORE_SCALE = 50.0
WORDS_SCALE = 5.0
LONGEST_SCALE = 10.0
FEATURE_BOUND = 20.0
"""Every feature lies in [-FEATURE_BOUND, FEATURE_BOUND] (a layout scores at most a few hundred points)."""
_POINTS = np.asarray(POINTS, dtype=np.int64)
_FACE_BITS = (1 << NUM_FACES) - 1


@dataclass(frozen=True)
class FeatureSet:
    """A named observation feature function and its size; `compute_batch` computes it for a batch of observations
    at once (compiled), with the same floats as `compute` row by row (`tests/test_features_batch.py`)."""

    name: str
    size: int
    compute: Callable[[np.ndarray, int, HandSolver], np.ndarray]
    summary: str
    compute_batch: Callable[..., np.ndarray]
    """(observations, num_players, solver, memo) -> features; memo: the set's own cache, or None."""


def _solver_v1(observation: np.ndarray, num_players: int, solver: HandSolver) -> np.ndarray:
    out = np.zeros(8 + 4 * NUM_FACES, dtype=np.float32)
    v = observation_layout(num_players).view(np.asarray(observation))
    hand = [int(c) for c in np.rint(v["hand"])]
    if sum(hand) == 0:
        return out
    if v["phase"][0] > 0.5:  # draw
        now = solver.best_layout(hand, counts=True)
        out[0:4] = (now.score / SCORE_SCALE, now.n_words / WORDS_SCALE, now.longest / LONGEST_SCALE, not now.unused)
        top = np.flatnonzero(v["discard_top"] > 0.5)
        if top.size:
            taken = list(hand)
            taken[int(top[0])] += 1
            options = solver.discard_options(taken)
            best = max(options, key=lambda o: (o.score, o.n_words, o.longest))
            out[4:8] = (
                (best.score - now.score) / SCORE_SCALE,
                best.n_words / WORDS_SCALE,
                best.longest / LONGEST_SCALE,
                any(o.goes_out for o in options),
            )
    elif v["phase"][1] > 0.5 and sum(hand) > 1:  # discard
        for o in solver.discard_options(hand):
            base = 8 + 4 * o.face
            out[base : base + 4] = (
                o.score / SCORE_SCALE,
                o.n_words / WORDS_SCALE,
                o.longest / LONGEST_SCALE,
                o.goes_out,
            )
    return np.clip(out, -FEATURE_BOUND, FEATURE_BOUND)


TABLE_SLOTS = 4096
BEST_SLOTS = 16384
GO_SLOTS = 65536
_TABLE_WIDTH = 3 + 1 + 5 * 12  # key, filled; fields m; then faces, used, words, longest, cover of each field
_BEST_WIDTH = 3 + 4  # key, filled; used, words, longest, lays every card


def new_feature_memo() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The feature sets' memo for batches: direct-mapped, exactly keyed by the hand (a miss just searches)."""
    return (
        np.zeros((TABLE_SLOTS, _TABLE_WIDTH), np.int64),
        np.zeros((BEST_SLOTS, _BEST_WIDTH), np.int64),
        np.zeros((GO_SLOTS, 4), np.int64),  # key, filled, can go out
    )


@njit(cache=True, nogil=True)
def _hand_key(h):
    k0 = np.int64(0)
    k1 = np.int64(0)
    for f in range(16):
        k0 |= h[f] << (4 * f)
    for f in range(16, NUM_FACES):
        k1 |= h[f] << (4 * (f - 16))
    mix = (np.uint64(k0) * np.uint64(0x9E3779B97F4A7C15)) ^ (np.uint64(k1) * np.uint64(0xBF58476D1CE4E5B9))
    return k0, k1, mix ^ (mix >> np.uint64(31))


@njit(cache=True, nogil=True)
def _table(h, min_cards, S, tables, best):
    """discard_table of h as (faces, used, words, longest, cover), from the memo or searched (and remembered,
    with the best layout of every h - f, which is what the next draw of that hand asks)."""
    k0, k1, mix = _hand_key(h)
    row = tables[np.int64(mix & np.uint64(tables.shape[0] - 1))]
    if row[2] == 1 and row[0] == k0 and row[1] == k1:
        m = row[3]
        return row[4 : 4 + m], row[16 : 16 + m], row[28 : 28 + m], row[40 : 40 + m], row[52 : 52 + m]
    faces, used, words, longs, cover = discard_table(h, S[0], min_cards, S[1], S[2], S[3], S[4], S[5], S[6], S[7])
    m = faces.shape[0]
    row[0], row[1], row[2], row[3] = k0, k1, 1, m
    for j in range(m):
        row[4 + j] = faces[j]
        row[16 + j] = used[j]
        row[28 + j] = words[j]
        row[40 + j] = longs[j]
        row[52 + j] = 1 if cover[j] else 0
        h[faces[j]] -= 1
        b0, b1, bmix = _hand_key(h)
        brow = best[np.int64(bmix & np.uint64(best.shape[0] - 1))]
        brow[0], brow[1], brow[2] = b0, b1, 1
        brow[3], brow[4], brow[5], brow[6] = used[j], words[j], longs[j], 1 if cover[j] else 0
        h[faces[j]] += 1
    return row[4 : 4 + m], row[16 : 16 + m], row[28 : 28 + m], row[40 : 40 + m], row[52 : 52 + m]


@njit(cache=True, nogil=True)
def _best(h, min_cards, S, best):
    """The best layout of h as (used, words, longest, lays every card), from the memo or searched."""
    k0, k1, mix = _hand_key(h)
    row = best[np.int64(mix & np.uint64(best.shape[0] - 1))]
    if row[2] == 1 and row[0] == k0 and row[1] == k1:
        return row[3], row[4], row[5], row[6] == 1
    used, terms, unused = best_layout_hand(h, S[0], min_cards, S[1], S[2], S[3], S[4], S[5], S[6], S[7])
    longest = 0
    for t in terms:
        longest = max(longest, S[6][t])
    row[0], row[1], row[2] = k0, k1, 1
    row[3], row[4], row[5], row[6] = used, terms.shape[0], longest, 1 if unused.shape[0] == 0 else 0
    return row[3], row[4], row[5], row[6] == 1


@njit(cache=True, nogil=True)
def _solver_v1_rows(obs, out, o_hand, o_top, o_phase, min_cards, S, tables, best):
    """`_solver_v1` for each row of obs (float32 (B, size)) into out (float32 (B, 132))."""
    obs, out, S, tables, best = borrow(obs, out, S, tables, best)  # Python calls this (`core.borrow`)
    h = np.zeros(NUM_FACES, np.int64)
    for b in range(obs.shape[0]):
        row = obs[b]
        o = out[b]
        o[:] = 0.0
        n_cards = 0
        for f in range(NUM_FACES):
            h[f] = np.int64(np.rint(row[o_hand + f]))
            n_cards += h[f]
        if n_cards == 0:
            continue
        total = 0
        for f in range(NUM_FACES):
            total += h[f] * _POINTS[f]
        if row[o_phase] > 0.5:  # draw
            used, n_words, longest, full = _best(h, min_cards, S, best)
            now = 2 * np.int64(used) - total
            o[0] = now / SCORE_SCALE
            o[1] = n_words / WORDS_SCALE
            o[2] = longest / LONGEST_SCALE
            o[3] = 1.0 if full else 0.0
            top = -1
            for f in range(NUM_FACES):
                if row[o_top + f] > 0.5:
                    top = f
                    break
            if top >= 0:
                h[top] += 1
                faces, used2, words, longs, cover = _table(h, min_cards, S, tables, best)
                total += _POINTS[top]
                best_s, best_w, best_l = -(10**9), -1, -1
                any_out = False
                for j in range(faces.shape[0]):
                    rest = total - _POINTS[faces[j]]
                    sc = 2 * np.int64(used2[j]) - rest
                    if sc > best_s or (
                        sc == best_s and (words[j] > best_w or (words[j] == best_w and longs[j] > best_l))
                    ):
                        best_s, best_w, best_l = sc, words[j], longs[j]
                    if cover[j] and rest > 0:
                        any_out = True
                o[4] = (best_s - now) / SCORE_SCALE
                o[5] = best_w / WORDS_SCALE
                o[6] = best_l / LONGEST_SCALE
                o[7] = 1.0 if any_out else 0.0
        elif row[o_phase + 1] > 0.5 and n_cards > 1:  # discard
            faces, used2, words, longs, cover = _table(h, min_cards, S, tables, best)
            for j in range(faces.shape[0]):
                rest = total - _POINTS[faces[j]]
                base = 8 + 4 * faces[j]
                o[base] = (2 * np.int64(used2[j]) - rest) / SCORE_SCALE
                o[base + 1] = words[j] / WORDS_SCALE
                o[base + 2] = longs[j] / LONGEST_SCALE
                o[base + 3] = 1.0 if (cover[j] and rest > 0) else 0.0
        for k in range(o.shape[0]):
            o[k] = min(max(o[k], -FEATURE_BOUND), FEATURE_BOUND)


def _solver_v1_batch(
    observations: np.ndarray, num_players: int, solver: HandSolver, memo: tuple | None = None
) -> np.ndarray:
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    s = observation_layout(num_players).slices
    out = np.empty((obs.shape[0], 8 + 4 * NUM_FACES), dtype=np.float32)
    tables, best, _ = memo if memo is not None else new_feature_memo()
    _solver_v1_rows(
        obs, out, s["hand"].start, s["discard_top"].start, s["phase"].start, solver.min_cards,
        solver_tables(solver), tables, best,
    )  # fmt: skip
    return out


ODDS_SIZE = 1 + NUM_FACES
"""`solver_v2`'s floats after `solver_v1`'s: the odds of going out now (draw), and after each face's discard."""


def _solver_v2(observation: np.ndarray, num_players: int, solver: HandSolver) -> np.ndarray:
    out = np.zeros(ODDS_SIZE, dtype=np.float32)
    v = observation_layout(num_players).view(np.asarray(observation))
    hand = [int(c) for c in np.rint(v["hand"])]
    unseen = [int(c) for c in np.rint(v["unseen"])]
    pool = sum(unseen)

    def odds(cards: list[int]) -> float:
        # A hand of n cards that draws one: can it go out (discard one, lay the rest)?
        hits = 0
        for c, u in enumerate(unseen):
            if u:
                cards[c] += 1
                hits += u if solver.go_out_faces(cards) else 0
                cards[c] -= 1
        return hits / pool

    if sum(hand) and pool:
        if v["phase"][0] > 0.5:  # draw
            out[0] = odds(list(hand))
        elif v["phase"][1] > 0.5 and sum(hand) > 1:  # discard
            for f in range(NUM_FACES):
                if hand[f]:
                    rest = list(hand)
                    rest[f] -= 1
                    out[1 + f] = odds(rest)
    return np.concatenate([_solver_v1(observation, num_players, solver), out])


@njit(cache=True, nogil=True)
def _can_go_out(h, min_cards, S, go):
    """Can hand h (after drawing) go out, from the memo or searched."""
    k0, k1, mix = _hand_key(h)
    row = go[np.int64(mix & np.uint64(go.shape[0] - 1))]
    if row[2] == 1 and row[0] == k0 and row[1] == k1:
        return row[3] == 1
    bits = go_out_face_bits(h, S[0], min_cards, S[1], S[2], S[3], S[4], S[7], False) & _FACE_BITS
    row[0], row[1], row[2], row[3] = k0, k1, 1, 1 if bits != 0 else 0
    return bits != 0


@njit(cache=True, nogil=True)
def _odds(h, unseen, pool, min_cards, S, go):
    hits = 0
    for c in range(NUM_FACES):
        if unseen[c] > 0:
            h[c] += 1
            if _can_go_out(h, min_cards, S, go):
                hits += unseen[c]
            h[c] -= 1
    return hits / pool


@njit(cache=True, nogil=True)
def _odds_rows(obs, out, o_hand, o_unseen, o_phase, min_cards, S, go):
    """`_solver_v2`'s odds (its last `ODDS_SIZE` floats) for each row of obs into out."""
    obs, out, S, go = borrow(obs, out, S, go)  # Python calls this (`core.borrow`)
    h = np.zeros(NUM_FACES, np.int64)
    unseen = np.zeros(NUM_FACES, np.int64)
    for b in range(obs.shape[0]):
        row = obs[b]
        o = out[b]
        o[:] = 0.0
        n_cards = 0
        pool = 0
        for f in range(NUM_FACES):
            h[f] = np.int64(np.rint(row[o_hand + f]))
            n_cards += h[f]
            unseen[f] = np.int64(np.rint(row[o_unseen + f]))
            pool += unseen[f]
        if n_cards == 0 or pool == 0:
            continue
        if row[o_phase] > 0.5:  # draw
            o[0] = _odds(h, unseen, pool, min_cards, S, go)
        elif row[o_phase + 1] > 0.5 and n_cards > 1:  # discard
            for f in range(NUM_FACES):
                if h[f] > 0:
                    h[f] -= 1
                    o[1 + f] = _odds(h, unseen, pool, min_cards, S, go)
                    h[f] += 1


def _solver_v2_batch(
    observations: np.ndarray, num_players: int, solver: HandSolver, memo: tuple | None = None
) -> np.ndarray:
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    memo = memo if memo is not None else new_feature_memo()
    s = observation_layout(num_players).slices
    first = _solver_v1_batch(obs, num_players, solver, memo)
    odds = np.empty((obs.shape[0], ODDS_SIZE), dtype=np.float32)
    _odds_rows(
        obs, odds, s["hand"].start, s["unseen"].start, s["phase"].start, solver.min_cards, solver_tables(solver),
        memo[2],
    )  # fmt: skip
    return np.concatenate([first, odds], axis=1)


FEATURE_SETS: dict[str, FeatureSet] = {
    "solver_v1": FeatureSet(
        "solver_v1",
        8 + 4 * NUM_FACES,
        _solver_v1,
        "best layout now / after taking the discard / after each discard",
        _solver_v1_batch,
    ),
    "solver_v2": FeatureSet(
        "solver_v2",
        8 + 4 * NUM_FACES + ODDS_SIZE,
        _solver_v2,
        "solver_v1, and the draw pile's odds of going out (now, and after each discard)",
        _solver_v2_batch,
    ),
}


def feature_set(name: str) -> FeatureSet:
    """The feature set called `name` (ValueError naming the known ones)."""
    try:
        return FEATURE_SETS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown observation feature set {name!r}; known: {', '.join(FEATURE_SETS)}") from None


class ObservationFeatures:
    """Appends a feature set to observation vectors of one table size and rule set."""

    def __init__(self, name: str, config: QuiddlerConfig) -> None:
        self.features = feature_set(name)
        if config.challenges:
            raise ValueError(
                f"observation features {name!r} are not defined for the challenge variant (challenges: true): "
                "they read the referee's words, not the seat's vocabulary"
            )
        self.config = config
        self.num_players = config.num_players
        self.base_size = observation_layout(self.num_players).size
        self._solvers: dict[str, HandSolver] = {}  # by vocabulary spec ("referee": the rules' dictionary)
        self._memos: dict[str, tuple] = {}  # the batch kernels' memo per solver (exact: keyed by the hand)

    @property
    def size(self) -> int:
        return self.base_size + self.features.size

    @property
    def solver(self) -> HandSolver:
        """The referee's solver (every seat's, unless the rules give the seats vocabularies)."""
        return self._solver_of("referee")

    def _solver_of(self, spec: str) -> HandSolver:
        solver = self._solvers.get(spec)
        if solver is None:
            from quiddler_env.core.vocabulary import REFEREE, load_seat_vocabulary

            cfg = self.config
            words = load_dictionary(cfg.dictionary) if spec == REFEREE else load_seat_vocabulary(spec, cfg.dictionary)
            solver = self._solvers[spec] = get_solver(words, cfg.min_word_cards)
        return solver

    def seat_specs(self, observations: np.ndarray) -> list[str]:
        """The vocabulary spec of each row's seat ("referee" for all without the rules' `vocabularies`)."""
        rows = np.asarray(observations).reshape(-1, self.base_size).shape[0]
        if not self.config.vocabularies:
            return ["referee"] * rows
        seats = plain_seats(observations, self.num_players, self.config.num_rounds)
        return [self.config.seat_vocabulary(int(seat)) for seat in seats]

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        """The observation with the features appended (float32)."""
        obs = np.asarray(observation, dtype=np.float32).reshape(-1)
        if obs.shape[0] != self.base_size:
            raise ValueError(
                f"observation has {obs.shape[0]} entries; a {self.num_players}-player table has {self.base_size}"
            )
        return self.batch(obs[None])[0]  # compiled, with the memo (`compute` gives the same floats, slower)

    def space(self, box):
        """The env's observation Box with this set's bounds appended (what a network reading them sees)."""
        from gymnasium import spaces

        extra = self.features.size
        return spaces.Box(
            low=np.concatenate([box.low, np.full(extra, -FEATURE_BOUND, dtype=np.float32)]),
            high=np.concatenate([box.high, np.full(extra, FEATURE_BOUND, dtype=np.float32)]),
            dtype=np.float32,
        )

    def batch(self, observations: np.ndarray) -> np.ndarray:
        """Observations (B, base size) with the features appended (float32 (B, size)), compiled."""
        obs = np.asarray(observations, dtype=np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.base_size:
            raise ValueError(
                f"observations of shape {obs.shape}; a {self.num_players}-player table has rows of {self.base_size}"
            )
        specs = self.seat_specs(obs)
        extra = np.zeros((obs.shape[0], self.features.size), dtype=np.float32)
        for spec in sorted(set(specs)):  # the rows of each vocabulary, with its solver and memo
            rows = np.asarray([i for i, s in enumerate(specs) if s == spec], dtype=np.int64)
            memo = self._memos.get(spec)
            if memo is None:  # built once: setdefault would build (and drop) megabytes of zeros every call
                memo = self._memos[spec] = new_feature_memo()
            part = obs if len(rows) == obs.shape[0] else obs[rows]
            extra[rows] = self.features.compute_batch(part, self.num_players, self._solver_of(spec), memo)
        return np.concatenate([obs, extra], axis=1)
