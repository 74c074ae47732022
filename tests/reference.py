"""Slow, obvious reference implementations the fast code is checked against.

Nothing here uses the dictionary index or the compiled solver: words are found by
trying every sub-multiset of the hand against a table built directly from the word
list with its own spelling routine, and layouts by exhaustive search.
"""

from __future__ import annotations

import itertools
from collections import Counter
from functools import lru_cache

from quiddler_env.core.cards import COUNTS, FACE_INDEX, FACES, LETTERS, POINTS
from quiddler_env.core.dictionary import load_dictionary

COMBOS = ("er", "cl", "in", "th", "qu")


def _segmentations(word: str):
    if not word:
        yield ()
        return
    for rest in _segmentations(word[1:]):
        yield (word[0].upper(),) + rest
    if word[:2] in COMBOS:
        for rest in _segmentations(word[2:]):
            yield (word[:2].upper(),) + rest


@lru_cache(maxsize=2)
def word_table(max_cards: int = 12) -> dict[tuple[str, ...], str]:
    """Sorted face tuple -> one word it spells (the alphabetically first)."""
    table: dict[tuple[str, ...], str] = {}
    for word in load_dictionary().words:
        for faces in _segmentations(word):
            if len(faces) > max_cards:
                continue
            c = Counter(faces)
            if any(n > COUNTS[FACE_INDEX[f]] for f, n in c.items()):
                continue
            key = tuple(sorted(faces))
            if key not in table or word < table[key]:
                table[key] = word
    return table


def words_in_hand(hand: list[str], min_cards: int = 2) -> list[tuple[str, ...]]:
    """Every distinct sub-multiset of `hand` that spells a word."""
    table = word_table()
    hand = sorted(hand)
    found = set()
    for r in range(max(1, min_cards), len(hand) + 1):
        for combo in itertools.combinations(hand, r):
            if combo in table:
                found.add(combo)
    return sorted(found)


def brute_best(hand: list[str], min_cards: int = 2) -> tuple[int, int, int, bool]:
    """(score, words, longest letters, can go out) by exhaustive search over packings."""
    words = words_in_hand(hand, min_cards)
    pts = {w: sum(POINTS[FACE_INDEX[f]] for f in w) for w in words}
    letters = {w: sum(LETTERS[FACE_INDEX[f]] for f in w) for w in words}
    total = sum(POINTS[FACE_INDEX[f]] for f in hand)
    best = (-(10**9), 0, 0)
    covers = False

    def rec(rest: Counter, start: int, used: int, n: int, longest: int) -> None:
        nonlocal best, covers
        cand = (2 * used - total, n, longest)
        if cand > best:
            best = cand
        if sum(rest.values()) == 0:
            covers = True
        for i in range(start, len(words)):
            w = Counter(words[i])
            if all(rest[f] >= k for f, k in w.items()):
                rec(rest - w, i, used + pts[words[i]], n + 1, max(longest, letters[words[i]]))

    rec(Counter(hand), 0, 0, 0, 0)
    return best[0], best[1], best[2], covers


def faces_of(counts) -> list[str]:
    return [FACES[f] for f, c in enumerate(counts) for _ in range(c)]


def all_layouts(hand: list[str], min_cards: int = 2) -> list[tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]]:
    """Every layout of `hand`: (words as sorted face tuples, unused faces sorted), each once.

    Layouts are multisets of the hand's words that fit in it, built in word order (a word
    may repeat); each search node passes on only the words that still fit.
    """
    words = words_in_hand(hand, min_cards)
    faces = sorted(set(hand))
    need = [tuple(w.count(f) for f in faces) for w in words]
    out = []

    def rec(rest: tuple[int, ...], fits: list[int], laid: tuple) -> None:
        out.append((laid, tuple(f for f, n in zip(faces, rest, strict=True) for _ in range(n))))
        for k, i in enumerate(fits):
            left = tuple(a - b for a, b in zip(rest, need[i], strict=True))
            rec(
                left,
                [j for j in fits[k:] if all(a >= b for a, b in zip(left, need[j], strict=True))],
                laid + (words[i],),
            )

    rec(tuple(hand.count(f) for f in faces), list(range(len(words))), ())
    return out


def layout_figures(words, unused) -> tuple[int, int, int]:
    """(score = points used - points unused, letters of the longest word, number of words)."""
    used = sum(POINTS[FACE_INDEX[f]] for w in words for f in w)
    left = sum(POINTS[FACE_INDEX[f]] for f in unused)
    longest = max((sum(LETTERS[FACE_INDEX[f]] for f in w) for w in words), default=0)
    return used - left, longest, len(words)


def pareto(triples) -> set[tuple[int, int, int]]:
    """The triples no other triple is at least as good as in every figure (and better in one)."""
    triples = set(triples)
    return {t for t in triples if not any(o != t and all(a >= b for a, b in zip(o, t, strict=True)) for o in triples)}


def table_bonus(
    figures: tuple[int, int, int],
    laid: list[tuple[int, int, int]],
    two_player_bonus: str,
    num_players: int,
    value: int,
) -> int:
    """Bonus points a layout of `figures` (score, longest, words) wins against `laid` figures (rule book section 6)."""
    if num_players == 2:
        rules = {"longest_word": ["longest"], "most_words": ["words"], "both": ["longest", "words"]}[two_player_bonus]
    else:
        rules = ["longest", "words"]
    got = 0
    for rule in rules:
        k = 1 if rule == "longest" else 2
        if value != 0 and figures[k] > 0 and all(figures[k] > o[k] for o in laid):
            got += value
    return got
