"""Word lists and the card-multiset index the solver walks.

A `Dictionary` holds a word list (the shipped ENABLE list or a user file), its
identity (sha256 of the sorted, newline-joined words with a final newline) and an
index from *card multisets* to the words they spell. A word may be spelled by
several multisets (QUIZ = QU-I-Z or Q-U-I-Z) and one multiset may spell several
words (anagrams); the index keeps every spelling.

The index is a prefix map over card multisets written as face sequences sorted by
`KEY_ORDER`: each prefix is packed into one integer (5 bits per card) and maps to
-1 (a prefix of some word) or to a terminal id (a complete word multiset). The
solver walks a hand's sub-multisets in the same order and prunes at the first
prefix that is not in the map. It is built once per dictionary and cached on disk
(an ``.npz`` with no pickled objects, checked by a hash before it is trusted).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from .cards import COUNTS, FACE_INDEX, FACES, LETTERS, NUM_FACES, POINTS

MAX_WORD_CARDS = 12
"""Longest word (in cards) the index holds: the largest hand the config allows."""
INDEX_FORMAT = 1
_WORD_RE = re.compile(r"[a-z]{2,}")
_COMBOS = {face.lower(): FACE_INDEX[face] for face in FACES if len(face) == 2}

# Order of faces inside an index key. Rare letters first: a prefix made of rare
# letters is shared by few words, so walking a hand's sub-multisets prunes early.
KEY_ORDER: tuple[int, ...] = tuple(sorted(range(NUM_FACES), key=lambda f: (COUNTS[f], -POINTS[f], f)))
KEY_RANK: tuple[int, ...] = tuple(KEY_ORDER.index(f) for f in range(NUM_FACES))

DEFAULT_NAME = "enable"


class DictionaryError(ValueError):
    """A word list that cannot be used: missing, unreadable, empty or without words."""


def spellings(word: str) -> list[tuple[int, ...]]:
    """Every way to spell `word` with card faces (combination cards or single letters)."""
    out: list[tuple[int, ...]] = []

    def walk(pos: int, acc: list[int]) -> None:
        if pos == len(word):
            out.append(tuple(acc))
            return
        acc.append(FACE_INDEX[word[pos].upper()])
        walk(pos + 1, acc)
        acc.pop()
        combo = _COMBOS.get(word[pos : pos + 2])
        if combo is not None:
            acc.append(combo)
            walk(pos + 2, acc)
            acc.pop()

    walk(0, [])
    return out


def _encode(key: tuple[int, ...]) -> int:
    code = 0
    for f in key:
        code = code * 32 + KEY_RANK[f] + 1
    return code


@dataclass
class Dictionary:
    """A word list with its identity and its card-multiset index."""

    name: str
    words: tuple[str, ...]
    identity: str
    skipped_lines: int = 0
    # Index (filled by `_build_index` or loaded from the cache).
    prefix_map: dict[int, int] = field(default_factory=dict, repr=False)
    term_points: list[int] = field(default_factory=list, repr=False)
    term_letters: list[int] = field(default_factory=list, repr=False)
    term_cards: list[int] = field(default_factory=list, repr=False)
    term_spellings: list[str] = field(default_factory=list, repr=False)

    def __contains__(self, word: str) -> bool:
        return word.lower() in self._word_set

    @property
    def _word_set(self) -> frozenset[str]:
        ws = self.__dict__.get("_ws")
        if ws is None:
            ws = self.__dict__["_ws"] = frozenset(self.words)
        return ws

    def spellings_of(self, term: int) -> list[tuple[str, tuple[str, ...]]]:
        """(word, faces in spelling order) for every spelling of terminal `term`, sorted."""
        out = []
        for s in self.term_spellings[term].split("|"):
            parts = s.split(".")
            out.append(("".join(parts), tuple(p.upper() for p in parts)))
        return out

    def lookup(self, cards: list[int]) -> int:
        """Terminal id of the multiset `cards` (face indices), or -1 if it spells no word."""
        if not cards or len(cards) > MAX_WORD_CARDS:
            return -1
        code = _encode(tuple(sorted(cards, key=KEY_RANK.__getitem__)))
        return self.prefix_map.get(code, -1)

    # -- building ---------------------------------------------------------------

    def _build_index(self) -> None:
        terms: dict[tuple[int, ...], list[str]] = {}
        deck = COUNTS
        for word in self.words:
            for spelling in spellings(word):
                if len(spelling) > MAX_WORD_CARDS:
                    continue
                counts: dict[int, int] = {}
                for f in spelling:
                    counts[f] = counts.get(f, 0) + 1
                if any(c > deck[f] for f, c in counts.items()):
                    continue  # e.g. a word needing three Z cards
                key = tuple(sorted(spelling, key=KEY_RANK.__getitem__))
                terms.setdefault(key, []).append(".".join(FACES[f].lower() for f in spelling))
        prefix_map: dict[int, int] = {}
        self.term_points, self.term_letters, self.term_cards, self.term_spellings = [], [], [], []
        for tid, key in enumerate(sorted(terms)):
            code = 0
            for f in key[:-1]:
                code = code * 32 + KEY_RANK[f] + 1
                prefix_map.setdefault(code, -1)
            code = code * 32 + KEY_RANK[key[-1]] + 1
            prefix_map[code] = tid
            self.term_points.append(sum(POINTS[f] for f in key))
            self.term_letters.append(sum(LETTERS[f] for f in key))
            self.term_cards.append(len(key))
            self.term_spellings.append("|".join(sorted(set(terms[key]))))
        self.prefix_map = prefix_map

    # -- cache --------------------------------------------------------------------

    def _cache_path(self) -> Path:
        return cache_dir() / f"index-v{INDEX_FORMAT}-{MAX_WORD_CARDS}-{self.identity[:32]}.npz"

    def _save_index(self, path: Path) -> None:
        codes = np.fromiter(self.prefix_map.keys(), dtype=np.int64, count=len(self.prefix_map))
        values = np.fromiter(self.prefix_map.values(), dtype=np.int32, count=len(self.prefix_map))
        arrays = {
            "codes": codes,
            "values": values,
            "points": np.asarray(self.term_points, dtype=np.int32),
            "letters": np.asarray(self.term_letters, dtype=np.int32),
            "cards": np.asarray(self.term_cards, dtype=np.int32),
            "spellings": np.frombuffer("\n".join(self.term_spellings).encode(), dtype=np.uint8),
        }
        arrays["checksum"] = np.frombuffer(_checksum(arrays, self.identity), dtype=np.uint8)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, **arrays)
            os.replace(tmp, path)  # atomic: readers see the old file or the whole new one
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def _load_index(self, path: Path) -> bool:
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
            checksum = arrays.pop("checksum").tobytes()
            if checksum != _checksum(arrays, self.identity):
                return False
            self.prefix_map = dict(zip(arrays["codes"].tolist(), arrays["values"].tolist(), strict=True))
            self.term_points = arrays["points"].tolist()
            self.term_letters = arrays["letters"].tolist()
            self.term_cards = arrays["cards"].tolist()
            self.term_spellings = arrays["spellings"].tobytes().decode().split("\n")
            return len(self.term_spellings) == len(self.term_points)
        except Exception:  # corrupt, truncated or foreign file: rebuild, never trust it
            return False

    def ensure_index(self, use_cache: bool = True) -> None:
        """Load the index from the disk cache, or build it (and cache it)."""
        if self.prefix_map:
            return
        path = self._cache_path()
        if use_cache and path.exists() and self._load_index(path):
            return
        self._build_index()
        if use_cache:
            try:
                self._save_index(path)
            except OSError:
                pass  # a read-only cache folder only costs the next process a rebuild


def _checksum(arrays: dict[str, np.ndarray], identity: str) -> bytes:
    h = hashlib.sha256(identity.encode())
    for name in sorted(arrays):
        h.update(name.encode())
        h.update(np.ascontiguousarray(arrays[name]).tobytes())
    return h.digest()


def cache_dir() -> Path:
    """Where compiled indexes live: $QUIDDLER_CACHE_DIR, else $XDG_CACHE_HOME/quiddler_env."""
    env = os.environ.get("QUIDDLER_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "quiddler_env"


def word_list_identity(words: tuple[str, ...]) -> str:
    """sha256 of the sorted, newline-joined words with a final newline."""
    return hashlib.sha256(("\n".join(words) + "\n").encode()).hexdigest()


def _parse_words(text: str) -> tuple[tuple[str, ...], int]:
    kept: set[str] = set()
    skipped = 0
    for line in io.StringIO(text):
        word = line.strip().lower()
        if not word:
            continue
        if _WORD_RE.fullmatch(word):
            kept.add(word)
        else:
            skipped += 1
    return tuple(sorted(kept)), skipped


_LOADED: dict[str, Dictionary] = {}


def load_dictionary(source: str | os.PathLike | None = None, *, use_cache: bool = True) -> Dictionary:
    """The shipped ENABLE list (`None` or "enable") or a word-list file, with its index.

    A file has one word per line, any case, LF or CRLF; lines that are not
    ``[a-z]{2,}`` after lowercasing are skipped and counted (`skipped_lines`).
    Loaded dictionaries are shared within a process, keyed by path.
    """
    key = DEFAULT_NAME if source in (None, DEFAULT_NAME) else str(Path(source).resolve())
    if key in _LOADED:
        return _LOADED[key]
    if key == DEFAULT_NAME:
        raw = resources.files("quiddler_env.data").joinpath("enable.txt.gz").read_bytes()
        text = gzip.decompress(raw).decode()
        name = DEFAULT_NAME
    else:
        path = Path(source)
        if not path.exists():
            raise DictionaryError(f"word list not found: {path}")
        if not path.is_file():
            raise DictionaryError(f"word list is not a file: {path}")
        try:
            raw = path.read_bytes()
            text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
        except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile) as exc:
            raise DictionaryError(f"word list {path} is unreadable: {exc}") from None
        if not text.strip():
            raise DictionaryError(f"word list {path} is empty")
        name = str(path)
    words, skipped = _parse_words(text)
    if not words:
        raise DictionaryError(
            f"word list {name} has no usable words ({skipped} lines skipped; "
            "a word is two or more letters a-z, one per line)"
        )
    dictionary = Dictionary(name=name, words=words, identity=word_list_identity(words), skipped_lines=skipped)
    dictionary.ensure_index(use_cache=use_cache)
    _LOADED[key] = dictionary
    return dictionary
