"""The exact hand solver: best layouts and going out.

A hand is a multiset of faces. For one hand, the compiled kernels in
`solver_kernel` list every word multiset the hand contains (walking the
dictionary trie along the hand's sub-multisets) and search its layouts
depth-first with a memo: for the go-out mask (can `hand - f` be laid out
completely), for the best layout of the hand, and for the best layout left by
each possible discard, and for the Pareto front of its layouts.

Best = highest score (points used minus points unused), then more words, then the
longer longest word (letters); remaining ties go to the first layout found in the
fixed search order, so results never depend on hashing. Results are memoised on
the hand's multiset.

The front (`layout_front`) is every non-dominated (score, longest word in letters,
number of words) triple of the hand's layouts, one layout each, ordered by score,
then longest, then words, all descending: the order of the laying rule
(`laying.lay_key`). Note the tie order differs from `best_layout`'s: front[0] is
the best score with the *longest* word, `best_layout` the best score with the
*most* words (T H E R E: front[0] is ETHER, `best_layout` EH RET). `best_layout`'s
figures are always on the front: the first entry with the best score and, among
those, the most words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from .cards import FACES, POINTS, hand_counts
from .dictionary import KEY_ORDER, MAX_WORD_CARDS, Dictionary, load_dictionary
from .solver_kernel import (
    MAX_FIELDS,
    PACK_START_BITS,
    PACK_START_SHIFT,
    PACK_WORD_BIT,
    best_layout_hand,
    draw_discard_tables,
    go_out_face_bits,
    layout_front_hand,
)

_MEMO_LIMIT = 200_000
_KEY_ORDER = np.asarray(KEY_ORDER, dtype=np.int64)
_FACE_POINTS = np.asarray(POINTS, dtype=np.int64)
_FACE_BITS = (1 << 31) - 1  # entries per memo before it is cleared (bounds memory in long runs)


@dataclass(frozen=True)
class Layout:
    """The words a hand lays down and what is left over."""

    words: tuple[tuple[str, ...], ...]
    """Each word as its faces in spelling order, e.g. ("QU", "I", "Z")."""
    spelled: tuple[str, ...]
    """Each word as a lowercase string, e.g. "quiz"."""
    unused: tuple[str, ...]
    """Faces not in any word."""
    score: int
    """Points of cards used minus points of cards unused (before bonuses)."""
    card_points: int
    """Points of the cards used in words."""
    unused_points: int
    """Points of the cards left unused."""

    @cached_property  # read many times by the laying rule; a frozen dataclass's __dict__ still takes it
    def n_words(self) -> int:
        return len(self.words)

    @cached_property
    def longest(self) -> int:
        """Letters in the longest word (0 without words)."""
        return max((len(s) for s in self.spelled), default=0)

    @property
    def goes_out(self) -> bool:
        """Every card is in a word."""
        return not self.unused


def solver_trie(dictionary: Dictionary) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The dictionary's trie as the kernels walk it: (edge_start, node_pack, edge_child, node_term).

    `node_pack[node]` holds in one int64 what the walk reads of a node (`solver_kernel.hand_words`), so that a
    step down the trie is one memory read: bit l for each of its edges' labels l (1..31), its first edge
    (`edge_start[node]`) from bit `PACK_START_SHIFT`, and whether it ends a word (`PACK_WORD_BIT`) of at least
    two cards (`PACK_WORD_BIT + 1`)."""
    edge_start, edge_label, edge_child, node_term = dictionary.trie
    bits = np.left_shift(np.int64(1), edge_label.astype(np.int64))
    nodes = edge_start.shape[0] - 1
    if nodes >= 1 << PACK_START_BITS:
        raise ValueError(f"the dictionary's trie has {nodes} nodes: the solver packs at most {1 << PACK_START_BITS}")
    has_edges = np.diff(edge_start) > 0
    node_pack = np.zeros(nodes, dtype=np.int64)
    # A node's edges are contiguous: OR each run (reduceat over the nodes that have edges).
    node_pack[has_edges] = np.bitwise_or.reduceat(bits, edge_start[:-1][has_edges])
    node_pack |= edge_start[:-1].astype(np.int64) << PACK_START_SHIFT
    term = np.asarray(node_term)
    is_word = term >= 0
    cards = np.zeros(nodes, dtype=np.int64)
    cards[is_word] = np.asarray(dictionary.term_cards)[term[is_word]]
    node_pack |= is_word.astype(np.int64) << PACK_WORD_BIT
    node_pack |= (cards >= 2).astype(np.int64) << (PACK_WORD_BIT + 1)
    return edge_start, node_pack, edge_child, node_term


def _largest_draw(counts: Sequence[int], drawn: Sequence[int]) -> list[int]:
    """Of the hands `counts` plus one face of `drawn` (-1: none), one with the most cards and faces (to check)."""
    worst = list(counts)
    added = [int(d) for d in drawn if d >= 0]
    if added:
        new = [d for d in added if not counts[d]]
        worst[(new or added)[0]] += 1
    return worst


def _check_hand(counts: Sequence[int]) -> int:
    """A hand the kernels can pack (at most 12 cards in at most `MAX_FIELDS` faces); returns its card count."""
    n_cards = sum(counts)
    if n_cards > MAX_WORD_CARDS + 1 or sum(1 for c in counts if c) > MAX_FIELDS:
        raise ValueError(f"hands of more than {MAX_WORD_CARDS + 1} cards are not supported")
    return n_cards


class Figures(NamedTuple):
    """A layout's three figures, what the laying rule weighs (and what the observation shows of a layout)."""

    score: int
    """Card points: used minus unused."""
    longest: int
    n_words: int


class HandSolver:
    """Best layouts and go-out checks for one dictionary and minimum word size."""

    def __init__(self, dictionary: Dictionary | None = None, min_cards: int = 2):
        if min_cards not in (1, 2):
            raise ValueError(f"min_cards must be 1 or 2, got {min_cards!r}")
        self.dictionary = dictionary or load_dictionary()
        self.dictionary.ensure_index()
        self.min_cards = min_cards
        d = self.dictionary
        self._trie = solver_trie(d)
        self._term_points, self._term_letters, self._term_cards = d.term_points, d.term_letters, d.term_cards
        self._layout_memo: dict[bytes, Layout] = {}
        self._spelling_memo: dict[int, tuple[str, tuple[str, ...]]] = {}
        self._go_out_memo: dict[bytes, int] = {}
        self._discard_memo: dict[bytes, DiscardFigures] = {}
        self._options_memo: dict[bytes, tuple[DiscardOption, ...]] = {}
        self._front_memo: dict[tuple[bytes, bool], tuple[Layout, ...]] = {}
        self._front_raw_memo: dict[tuple[bytes, bool], tuple[tuple[Figures, ...], list, int]] = {}

    def _go_out_bits(self, counts: Sequence[int]) -> int:
        """Bit f: `hand - f` can be laid out; bit 31: the whole hand can."""
        bits = int(
            go_out_face_bits(
                np.asarray(counts, dtype=np.int64), _KEY_ORDER, self.min_cards, *self._trie, self._term_cards, True
            )
        )
        if bits < 0 or sum(counts) > MAX_WORD_CARDS + 1:
            raise ValueError(f"hands of more than {MAX_WORD_CARDS + 1} cards are not supported")
        return bits

    def best_layout(self, hand: Iterable[str | int] | Sequence[int], *, counts: bool = False) -> Layout:
        """The best layout of `hand` (face names, or 31 counts with counts=True)."""
        cnt = list(hand) if counts else hand_counts(hand)
        key = bytes(cnt)
        layout = self._layout_memo.get(key)
        if layout is None:
            if len(self._layout_memo) >= _MEMO_LIMIT:
                self._layout_memo.clear()
            _check_hand(cnt)
            used, terms, unused = best_layout_hand(
                np.asarray(cnt, dtype=np.int64),
                _KEY_ORDER,
                self.min_cards,
                *self._trie,
                self._term_points,
                self._term_letters,
                self._term_cards,
            )
            total = sum(POINTS[f] * c for f, c in enumerate(cnt))
            layout = self._layout_memo[key] = self._layout(int(used), terms.tolist(), unused.tolist(), total)
        return layout

    def recorded_layout(self, used: int, terms: list[int], unused: list[int], total: int) -> Layout:
        """A `Layout` from a kernel's record of it: points used, word terms, unused faces, the hand's points."""
        return self._layout(used, terms, unused, total)

    def _layout(self, used: int, terms: list[int], unused: list[int], total: int) -> Layout:
        """A `Layout` from the kernel's answer: points used, word terms, unused faces."""
        words, spelled = [], []
        for term in terms:
            word, spelling = self._spelling(term)
            words.append(spelling)
            spelled.append(word)
        return Layout(
            words=tuple(words),
            spelled=tuple(spelled),
            unused=tuple(FACES[f] for f in sorted(unused)),
            score=2 * used - total,
            card_points=used,
            unused_points=total - used,
        )

    def layout_front(self, counts: Sequence[int], *, full_only: bool = False) -> tuple[Layout, ...]:
        """The Pareto-best layouts of a hand (31 counts) over (score, longest word, number of words).

        Exactly the non-dominated triples, one layout each (the first found in the search
        order), ordered by score, then longest, then words, all descending. A hand without
        words has one layout, laying nothing. `full_only`: only layouts that lay every card
        (the player who goes out); empty when there is none, and for an empty hand (which
        cannot go out, as in `can_go_out`).
        """
        key = (bytes(counts), bool(full_only))
        front = self._front_memo.get(key)
        if front is None:
            if len(self._front_memo) >= _MEMO_LIMIT:
                self._front_memo.clear()
            n = len(self.front_figures(counts, full_only=full_only))
            front = self._front_memo[key] = tuple(self.front_layout(counts, i, full_only=full_only) for i in range(n))
        return front

    def front_figures(self, counts: Sequence[int], *, full_only: bool = False) -> tuple[Figures, ...]:
        """The figures of `layout_front`'s layouts, in its order, without building any layout (cheaper)."""
        return self._front_raw(counts, full_only)[0]

    def front_layout(self, counts: Sequence[int], index: int, *, full_only: bool = False) -> Layout:
        """Layout `index` of `layout_front` (built from the kernel's answer; the front's memo holds built ones)."""
        built = self._front_memo.get((bytes(counts), bool(full_only)))
        if built is not None:
            return built[index]
        _, parts, total = self._front_raw(counts, full_only)
        used, terms, unused = parts[index]
        return self._layout(used, terms, unused, total)

    def _front_raw(self, counts: Sequence[int], full_only: bool) -> tuple[tuple[Figures, ...], list, int]:
        key = (bytes(counts), bool(full_only))
        raw = self._front_raw_memo.get(key)
        if raw is None:
            if len(self._front_raw_memo) >= _MEMO_LIMIT:
                self._front_raw_memo.clear()
            n_cards = _check_hand(counts)
            total = sum(POINTS[f] * c for f, c in enumerate(counts))
            if full_only and n_cards == 0:
                raw = ((), [], total)
            else:
                used, longest, words, term_off, terms, unused_off, unused = layout_front_hand(
                    np.asarray(counts, dtype=np.int64),
                    _KEY_ORDER,
                    self.min_cards,
                    bool(full_only),
                    *self._trie,
                    self._term_points,
                    self._term_letters,
                    self._term_cards,
                    _FACE_POINTS,
                    -1,  # the whole front: players choose from it, and the Python engine's rule reads it
                    False,
                )
                terms, unused, term_off, unused_off = (
                    terms.tolist(),
                    unused.tolist(),
                    term_off.tolist(),
                    unused_off.tolist(),
                )
                used, longest, words = used.tolist(), longest.tolist(), words.tolist()
                figures = tuple(Figures(2 * u - total, longest[i], words[i]) for i, u in enumerate(used))
                parts = [
                    (u, terms[term_off[i] : term_off[i + 1]], unused[unused_off[i] : unused_off[i + 1]])
                    for i, u in enumerate(used)
                ]
                raw = (figures, parts, total)
            self._front_raw_memo[key] = raw
        return raw

    def _spelling(self, term: int) -> tuple[str, tuple[str, ...]]:
        """The word and faces shown for a word multiset: its first spelling in sorted order."""
        got = self._spelling_memo.get(term)
        if got is None:
            got = self._spelling_memo[term] = self.dictionary.spellings_of(term)[0]
        return got

    def can_go_out(self, hand: Iterable[str | int] | Sequence[int], *, counts: bool = False) -> bool:
        """Can every card of `hand` be laid in words."""
        cnt = list(hand) if counts else hand_counts(hand)
        if sum(cnt) == 0:
            return False
        return bool(self._go_out_bits(cnt) >> 31 & 1)

    def go_out_faces(self, counts: Sequence[int]) -> int:
        """For a hand after drawing (31 counts): bit f set iff `hand - f` can be laid out completely.

        This is the engine's per-step question behind the go-out actions.
        """
        key = bytes(counts)
        bits = self._go_out_memo.get(key)
        if bits is None:
            if len(self._go_out_memo) >= _MEMO_LIMIT:
                self._go_out_memo.clear()
            bits = self._go_out_bits(counts) & _FACE_BITS if sum(counts) > 1 else 0
            self._go_out_memo[key] = bits
        return bits

    def discard_figures(self, counts: Sequence[int]) -> DiscardFigures:
        """For a hand after drawing: for each face f in it, the best layout of `hand - f`, as arrays.

        One search with a shared memo answers all of them (what a bot weighs when it picks a discard);
        `discard_options` is the same as one object per face. The arrays are shared: do not write to them.
        """
        key = bytes(counts)
        figures = self._discard_memo.get(key)
        if figures is None:
            if len(self._discard_memo) >= _MEMO_LIMIT:
                self._discard_memo.clear()
            table = self.draw_discard_figures(counts, [-1])
            width = int(np.count_nonzero(table.faces[0] >= 0))
            figures = DiscardFigures(*(array[0, :width] for array in table))
            for array in figures:
                array.flags.writeable = False
            self._discard_memo[key] = figures
        return figures

    def draw_discard_figures(self, counts: Sequence[int], drawn: Sequence[int]) -> DiscardFigures:
        """`discard_figures` of `counts` plus one card of each face in `drawn` (-1: none), one row each.

        What a bot weighs for each card a draw may give, in one call. Each row lists the faces of its
        hand ascending, padded with face -1 (whose other figures mean nothing) to `MAX_FIELDS` columns.
        """
        _check_hand(_largest_draw(counts, drawn))
        return DiscardFigures(
            *draw_discard_tables(
                np.asarray(counts, dtype=np.int64),
                np.asarray(drawn, dtype=np.int64).reshape(-1),
                _KEY_ORDER,
                self.min_cards,
                *self._trie,
                self._term_points,
                self._term_letters,
                self._term_cards,
                _FACE_POINTS,
            )
        )

    def discard_options(self, counts: Sequence[int]) -> tuple[DiscardOption, ...]:
        """`discard_figures` as one `DiscardOption` per face in the hand, by face (memoised too: the Python bots
        and the observation features ask for them at every step)."""
        key = bytes(counts)
        options = self._options_memo.get(key)
        if options is None:
            if len(self._options_memo) >= _MEMO_LIMIT:
                self._options_memo.clear()
            columns = (array.tolist() for array in self.discard_figures(counts))
            options = self._options_memo[key] = tuple(DiscardOption(*row) for row in zip(*columns, strict=True))
        return options


class DiscardFigures(NamedTuple):
    """The best layout left after each discard (see `discard_figures`): one entry per face in the hand, by face."""

    faces: np.ndarray
    score: np.ndarray
    """Card points of the best layout of `hand - face`: used minus unused."""
    n_words: np.ndarray
    longest: np.ndarray
    goes_out: np.ndarray


@dataclass(frozen=True)
class DiscardOption:
    """The best layout left after discarding one card of `face` (see `discard_options`)."""

    face: int
    score: int
    n_words: int
    longest: int
    goes_out: bool


_SOLVERS: dict[tuple[str, int], HandSolver] = {}


def get_solver(dictionary: Dictionary | None = None, min_cards: int = 2) -> HandSolver:
    """The shared solver for a dictionary and minimum word size (one memo per process)."""
    dictionary = dictionary or load_dictionary()
    key = (dictionary.identity, min_cards)
    solver = _SOLVERS.get(key)
    if solver is None:
        solver = _SOLVERS[key] = HandSolver(dictionary, min_cards)
    return solver
