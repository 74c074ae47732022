"""The exact hand solver: best layouts and going out.

A hand is a multiset of faces. For one hand the solver

1. walks the hand's sub-multisets in the dictionary index's key order, pruning at
   the first prefix no word starts with, to list every word multiset the hand
   contains (each once, whatever its spellings);
2. searches layouts over those words with a memoised recursion on the remaining
   cards: the lowest remaining card is either left unused or starts one of the words
   whose lowest card it is. Remaining cards are packed into one integer, 5 bits per
   distinct face with a guard bit, so "does this word fit" is one subtraction and
   one mask test.

Best = highest score (points used minus points unused), then more words, then the
longer longest word (letters); remaining ties go to the first layout found in the
fixed search order, so results never depend on hashing. Results are memoised on
the hand's multiset.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .cards import FACES, NUM_FACES, POINTS, hand_counts
from .dictionary import KEY_ORDER, KEY_RANK, MAX_WORD_CARDS, Dictionary, load_dictionary

_MEMO_LIMIT = 200_000  # entries per memo before it is cleared (bounds memory in long runs)


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

    @property
    def n_words(self) -> int:
        return len(self.words)

    @property
    def longest(self) -> int:
        """Letters in the longest word (0 without words)."""
        return max((len(s) for s in self.spelled), default=0)

    @property
    def goes_out(self) -> bool:
        """Every card is in a word."""
        return not self.unused


class HandSolver:
    """Best layouts and go-out checks for one dictionary and minimum word size."""

    def __init__(self, dictionary: Dictionary | None = None, min_cards: int = 2):
        if min_cards not in (1, 2):
            raise ValueError(f"min_cards must be 1 or 2, got {min_cards!r}")
        self.dictionary = dictionary or load_dictionary()
        self.dictionary.ensure_index()
        self.min_cards = min_cards
        self._layout_memo: dict[bytes, Layout] = {}
        self._go_out_memo: dict[bytes, int] = {}

    # -- step 1: the words in a hand ---------------------------------------------

    def _words_in(self, counts: Sequence[int]):
        """Fields of the hand and its words as (packed, term, low_field) triples."""
        faces = [f for f in KEY_ORDER if counts[f]]
        field_counts = [counts[f] for f in faces]
        ranks = [KEY_RANK[f] + 1 for f in faces]
        prefix_get = self.dictionary.prefix_map.get
        term_cards = self.dictionary.term_cards
        min_cards = self.min_cards
        m = len(faces)
        found: list[tuple[int, int, int]] = []
        # Explicit stack of (next field, code, packed, low field); faster than recursion.
        stack = [(0, 0, 0, -1)]
        pop, push, emit = stack.pop, stack.append, found.append
        while stack:
            start, code, packed, low = pop()
            for j in range(start, m):
                rank = ranks[j]
                unit = 1 << (5 * j)
                lw = j if low < 0 else low
                c, p = code, packed
                for _ in range(field_counts[j]):
                    c = c * 32 + rank
                    v = prefix_get(c)
                    if v is None:
                        break
                    p += unit
                    if v >= 0 and term_cards[v] >= min_cards:
                        emit((p, v, lw))
                    if j + 1 < m:
                        push((j + 1, c, p, lw))
        return faces, field_counts, found

    @staticmethod
    def _pack(field_counts: Sequence[int]) -> tuple[int, int]:
        state = guard = 0
        for j, c in enumerate(field_counts):
            state |= c << (5 * j)
            guard |= 16 << (5 * j)
        return state | guard, guard

    # -- step 2: layouts ----------------------------------------------------------

    def best_layout(self, hand: Iterable[str | int] | Sequence[int], *, counts: bool = False) -> Layout:
        """The best layout of `hand` (face names, or 31 counts with counts=True)."""
        cnt = list(hand) if counts else hand_counts(hand)
        key = bytes(cnt)
        layout = self._layout_memo.get(key)
        if layout is None:
            if len(self._layout_memo) >= _MEMO_LIMIT:
                self._layout_memo.clear()
            layout = self._layout_memo[key] = self._solve(cnt)
        return layout

    def _solve(self, cnt: Sequence[int]) -> Layout:
        if sum(cnt) > MAX_WORD_CARDS + 1:
            raise ValueError(f"hands of more than {MAX_WORD_CARDS + 1} cards are not supported")
        faces, field_counts, found = self._words_in(cnt)
        term_points = self.dictionary.term_points
        term_letters = self.dictionary.term_letters
        by_low: list[list[tuple[int, int, int, int]]] = [[] for _ in faces]
        for packed, term, low in found:
            by_low[low].append((packed, term_points[term], term_letters[term], term))
        start, guard = self._pack(field_counts)
        field_points = [POINTS[f] for f in faces]
        memo: dict[int, tuple[int, int, int, int, int]] = {}

        # best(S) = (points used, words, longest, choice, next state); choice -1 = skip.
        def best(state: int) -> tuple[int, int, int, int, int]:
            got = memo.get(state)
            if got is not None:
                return got
            rest = state ^ guard
            if not rest:
                return (0, 0, 0, -1, state)
            j = ((rest & -rest).bit_length() - 1) // 5
            nxt = state - (1 << (5 * j))
            used, words, longest, _, _ = best(nxt)
            res = (used, words, longest, -1, nxt)
            for packed, pts, letters, term in by_low[j]:
                r = state - packed
                if r & guard == guard:
                    u, w, lg, _, _ = best(r)
                    cand = (u + pts, w + 1, letters if letters > lg else lg, term, r)
                    if cand[:3] > res[:3]:
                        res = cand
            memo[state] = res
            return res

        # Walk the choices back to words and unused cards.
        words: list[tuple[str, ...]] = []
        spelled: list[str] = []
        unused: list[str] = []
        state = start
        while state != guard:
            _, _, _, term, nxt = best(state)
            if term < 0:
                rest = state ^ guard
                unused.append(FACES[faces[((rest & -rest).bit_length() - 1) // 5]])
            else:
                word, spelling = self.dictionary.spellings_of(term)[0]
                words.append(spelling)
                spelled.append(word)
            state = nxt
        total = sum(p * c for p, c in zip(field_points, field_counts, strict=True))
        used = best(start)[0]
        return Layout(
            words=tuple(words),
            spelled=tuple(spelled),
            unused=tuple(sorted(unused, key=FACES.index)),
            score=2 * used - total,
            card_points=used,
            unused_points=total - used,
        )

    def can_go_out(self, hand: Iterable[str | int] | Sequence[int], *, counts: bool = False) -> bool:
        """Can every card of `hand` be laid in words."""
        cnt = list(hand) if counts else hand_counts(hand)
        if sum(cnt) == 0:
            return False
        faces, field_counts, found = self._words_in(cnt)
        start, guard = self._pack(field_counts)
        return self._coverer(faces, found, guard)(start)

    def go_out_faces(self, counts: Sequence[int]) -> int:
        """For a hand after drawing (31 counts): bit f set iff `hand - f` can be laid out completely.

        This is the engine's per-step question behind the go-out actions.
        """
        key = bytes(counts)
        bits = self._go_out_memo.get(key)
        if bits is not None:
            return bits
        if len(self._go_out_memo) >= _MEMO_LIMIT:
            self._go_out_memo.clear()
        faces, field_counts, found = self._words_in(counts)
        start, guard = self._pack(field_counts)
        cover = self._coverer(faces, found, guard)
        bits = 0
        if sum(field_counts) > 1:
            for j, f in enumerate(faces):
                if cover(start - (1 << (5 * j))):
                    bits |= 1 << f
        self._go_out_memo[key] = bits
        return bits

    def _coverer(self, faces, found, guard):
        by_low: list[list[int]] = [[] for _ in faces]
        for packed, _, low in found:
            by_low[low].append(packed)
        memo: dict[int, bool] = {}

        def cover(state: int) -> bool:
            rest = state ^ guard
            if not rest:
                return True
            got = memo.get(state)
            if got is not None:
                return got
            j = ((rest & -rest).bit_length() - 1) // 5
            ok = False
            for packed in by_low[j]:
                r = state - packed
                if r & guard == guard and cover(r):
                    ok = True
                    break
            memo[state] = ok
            return ok

        return cover


_SOLVERS: dict[tuple[str, int], HandSolver] = {}


def get_solver(dictionary: Dictionary | None = None, min_cards: int = 2) -> HandSolver:
    """The shared solver for a dictionary and minimum word size (one memo per process)."""
    dictionary = dictionary or load_dictionary()
    key = (dictionary.identity, min_cards)
    solver = _SOLVERS.get(key)
    if solver is None:
        solver = _SOLVERS[key] = HandSolver(dictionary, min_cards)
    return solver


assert NUM_FACES <= 32  # face bitmasks fit comfortably in a Python int
