"""Seat vocabularies (the rules' `vocabularies`): the words one player knows.

The referee's word list is the config's `dictionary`; each seat's vocabulary is
named by a spec in `vocabularies`:

| spec | words |
|---|---|
| `referee` | the referee's list itself |
| `enable` | the shipped ENABLE list |
| a path | a word-list file (as `dictionary` reads one) |
| `level-N` | a shipped level's words within the referee's list (`levels.LEVELS`: `level-2`, `level-casual`) |
| `SOURCE:P:SEED` | a seeded subset of SOURCE (one of the above): each word of it kept with probability P (0 < P <= 1), drawn with `numpy.random.default_rng(SEED)` over the sorted words |

A subset is the same for the same spec on every machine. Its index is built (and
cached on disk, keyed by its words) like any dictionary's.

In the challenge variant a seat lays any word of its vocabulary (`load_vocabulary`). Outside it a seat knows
only the words of its vocabulary that the referee's list also has (`load_seat_vocabulary`, `within_referee`),
so every word it lays is valid.
"""

from __future__ import annotations

import numpy as np

from .dictionary import DEFAULT_NAME, Dictionary, load_dictionary, word_list_identity
from .levels import VOCABULARY_PREFIX, get_level, level_dictionary

REFEREE = "referee"


def parse_vocabulary_spec(spec: str) -> tuple[str, float | None, int | None]:
    """(source, probability, seed) of a spec; probability and seed are None without a subset.

    A ValueError names what is wrong.
    """
    parts = str(spec).rsplit(":", 2)
    if len(parts) == 3:
        source, p_text, seed_text = parts
        try:
            p = float(p_text)
            seed = int(seed_text)
        except ValueError:
            raise ValueError(f"{spec!r} is not SOURCE:P:SEED (P a probability, SEED an integer)") from None
        if not 0.0 < p <= 1.0:
            raise ValueError(f"{spec!r}: the probability {p_text} is not in (0, 1]")
        if seed < 0:
            raise ValueError(f"{spec!r}: the seed {seed_text} is negative")
        if not source:
            raise ValueError(f"{spec!r}: no SOURCE before :P:SEED")
        return source, p, seed
    if not str(spec):
        raise ValueError("an empty vocabulary spec")
    if str(spec).startswith(VOCABULARY_PREFIX):
        get_level(str(spec)[len(VOCABULARY_PREFIX) :])  # a ValueError names the levels
    return str(spec), None, None


def check_vocabulary_spec(spec: str) -> str | None:
    """What is wrong with a spec's form (files are not opened here), or None."""
    try:
        parse_vocabulary_spec(spec)
    except ValueError as exc:
        return f"a vocabulary spec (referee, enable, level-N, a path, or SOURCE:P:SEED): {exc}"
    return None


_SUBSETS: dict[tuple[str, str, float, int], Dictionary] = {}


def load_vocabulary(spec: str, referee: str = DEFAULT_NAME) -> Dictionary:
    """The dictionary a vocabulary spec names, `referee` being the referee's word list (`dictionary`)."""
    source, p, seed = parse_vocabulary_spec(spec)
    if source.startswith(VOCABULARY_PREFIX):
        base = level_dictionary(source[len(VOCABULARY_PREFIX) :], referee)
    else:
        base = load_dictionary(referee if source == REFEREE else source)
    if p is None or p == 1.0:
        return base
    key = (base.identity, source, p, seed)
    subset = _SUBSETS.get(key)
    if subset is None:
        words = base.words
        keep = np.random.default_rng(seed).random(len(words)) < p
        kept = tuple(w for w, k in zip(words, keep.tolist(), strict=True) if k)
        if not kept:
            raise ValueError(f"vocabulary {spec!r} keeps no word of {base.name}")
        identity = word_list_identity(kept)
        subset = Dictionary(name=spec, identity=identity, source_digest=identity, _words=kept)
        subset.ensure_index()
        _SUBSETS[key] = subset
    return subset


def coverage(vocabulary: Dictionary, referee: Dictionary) -> float:
    """The vocabulary's size against the referee's (at most 1): what a seat knows of its own knowledge."""
    return min(1.0, len(vocabulary.words) / len(referee.words))


_WITHIN: dict[tuple[str, str], Dictionary | None] = {}
"""`within_referee`'s answers by (vocabulary, referee) identity: the words kept, or None where it keeps them all."""


def within_referee(vocabulary: Dictionary, referee: str = DEFAULT_NAME) -> Dictionary:
    """The words of `vocabulary` that the referee's list (`referee`, a `dictionary` setting) also has, indexed:
    `vocabulary` itself when it holds no other word. A one-line ValueError when they share none."""
    base = load_dictionary(referee)
    key = (vocabulary.identity, base.identity)
    if key not in _WITHIN:
        kept = (
            vocabulary.words
            if vocabulary.identity == base.identity
            else tuple(w for w in vocabulary.words if w in base)
        )
        if not kept:
            raise ValueError(f"vocabulary {vocabulary.name!r} has no word of the referee's list {referee!r}")
        found = None
        if len(kept) < len(vocabulary.words):
            identity = word_list_identity(kept)
            found = Dictionary(
                name=f"{vocabulary.name} within {referee}", identity=identity, source_digest=identity, _words=kept
            )
            found.ensure_index()
        _WITHIN[key] = found
    return _WITHIN[key] or vocabulary


def load_seat_vocabulary(spec: str, referee: str = DEFAULT_NAME, challenges: bool = False) -> Dictionary:
    """A seat's vocabulary under the rules: in the challenge variant the spec's words (`load_vocabulary`),
    outside it those of them the referee's list also has (`within_referee`)."""
    vocabulary = load_vocabulary(spec, referee)
    return vocabulary if challenges else within_referee(vocabulary, referee)
