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
(an ``.npz`` with no pickled objects, checked by a hash before it is trusted,
written atomically by `files.write_atomic`). Only regular files are opened
(`files.open_regular`): a FIFO or a device at the cache path is ignored and the
index rebuilt, and one given as the word list is a `DictionaryError` naming it, so
neither can block a load.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import zlib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from . import files
from .cards import COUNTS, FACE_INDEX, FACES, LETTERS, NUM_FACES, POINTS

MAX_WORD_CARDS = 12
"""Longest word (in cards) the index holds: the largest hand the config allows."""
INDEX_FORMAT = 2  # 2: int32 edge offsets
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
    """A word list with its identity and its card-multiset index.

    The index is a trie over card multisets (faces sorted by `KEY_ORDER`) held in
    flat arrays: `edge_start[node]..edge_start[node+1]` are the node's edges, with
    labels (key rank + 1) in `edge_label` and targets in `edge_child`; `node_term`
    is the word multiset ending at a node (-1 if none). Per word multiset ("term"):
    points, letters, cards and its spellings.
    """

    name: str
    identity: str
    skipped_lines: int = 0
    source_digest: str = ""
    _words: tuple[str, ...] | None = field(default=None, repr=False)
    _source: Path | None = field(default=None, repr=False)
    edge_start: np.ndarray | None = field(default=None, repr=False)
    edge_label: np.ndarray | None = field(default=None, repr=False)
    edge_child: np.ndarray | None = field(default=None, repr=False)
    node_term: np.ndarray | None = field(default=None, repr=False)
    term_points: np.ndarray | None = field(default=None, repr=False)
    term_letters: np.ndarray | None = field(default=None, repr=False)
    term_cards: np.ndarray | None = field(default=None, repr=False)
    _spell_blob: bytes = field(default=b"", repr=False)
    _spell_offsets: np.ndarray | None = field(default=None, repr=False)

    @property
    def words(self) -> tuple[str, ...]:
        """The words, sorted (read from the source on first use: a cached index does not need them)."""
        if self._words is None:
            self._words, _ = _parse_words(_read_text(self._source))
        return self._words

    def __contains__(self, word: str) -> bool:
        return word.lower() in self._word_set

    @property
    def _word_set(self) -> frozenset[str]:
        ws = self.__dict__.get("_ws")
        if ws is None:
            ws = self.__dict__["_ws"] = frozenset(self.words)
        return ws

    @property
    def trie(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(edge_start, edge_label, edge_child, node_term), the arrays the solver kernels walk."""
        return self.edge_start, self.edge_label, self.edge_child, self.node_term

    @property
    def n_terms(self) -> int:
        return len(self.term_points)

    def child(self, node: int, face: int) -> int:
        """The trie node reached from `node` by one card of `face`, or -1."""
        label = KEY_RANK[face] + 1
        lo, hi = int(self.edge_start[node]), int(self.edge_start[node + 1])
        i = lo + int(np.searchsorted(self.edge_label[lo:hi], label))
        return int(self.edge_child[i]) if i < hi and self.edge_label[i] == label else -1

    def lookup(self, cards: list[int]) -> int:
        """Term id of the multiset `cards` (face indices), or -1 if it spells no word."""
        if not cards or len(cards) > MAX_WORD_CARDS:
            return -1
        node = 0
        for f in sorted(cards, key=KEY_RANK.__getitem__):
            node = self.child(node, f)
            if node < 0:
                return -1
        return int(self.node_term[node])

    @property
    def prefix_map(self) -> dict[int, int]:
        """Prefix code -> term id (-1 for a prefix only), a code being the key ranks + 1 in base 32.

        Built on first use from the trie (the solver does not need it).
        """
        pm = self.__dict__.get("_pm")
        if pm is None:
            parents = np.repeat(np.arange(len(self.node_term)), np.diff(self.edge_start))
            codes = np.zeros(len(self.node_term), dtype=np.int64)
            for _ in range(MAX_WORD_CARDS):  # each pass fixes one more level of the trie
                codes[self.edge_child] = codes[parents] * 32 + self.edge_label
            pm = self.__dict__["_pm"] = dict(zip(codes[1:].tolist(), self.node_term[1:].tolist(), strict=True))
        return pm

    def spellings_of(self, term: int) -> list[tuple[str, tuple[str, ...]]]:
        """(word, faces in spelling order) for every spelling of word multiset `term`, sorted."""
        a, b = int(self._spell_offsets[term]), int(self._spell_offsets[term + 1])
        out = []
        for s in self._spell_blob[a:b].decode().split("|"):
            parts = s.split(".")
            out.append(("".join(parts), tuple(p.upper() for p in parts)))
        return out

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
        points, letters, cards, spelled = [], [], [], []
        for tid, key in enumerate(sorted(terms)):
            code = 0
            for f in key[:-1]:
                code = code * 32 + KEY_RANK[f] + 1
                prefix_map.setdefault(code, -1)
            code = code * 32 + KEY_RANK[key[-1]] + 1
            prefix_map[code] = tid
            points.append(sum(POINTS[f] for f in key))
            letters.append(sum(LETTERS[f] for f in key))
            cards.append(len(key))
            spelled.append("|".join(sorted(set(terms[key]))).encode())
        self.edge_start, self.edge_label, self.edge_child, self.node_term = _trie_arrays(prefix_map)
        self.term_points = np.asarray(points, dtype=np.int32)
        self.term_letters = np.asarray(letters, dtype=np.int32)
        self.term_cards = np.asarray(cards, dtype=np.int32)
        self._spell_offsets = np.concatenate([[0], np.cumsum([len(x) for x in spelled])]).astype(np.int32)
        self._spell_blob = b"".join(spelled)

    # -- cache --------------------------------------------------------------------

    _ARRAYS = ("edge_start", "edge_label", "edge_child", "node_term", "term_points", "term_letters", "term_cards")

    def _cache_path(self) -> Path:
        return cache_dir() / f"index-v{INDEX_FORMAT}-{MAX_WORD_CARDS}-{self.source_digest[:32]}.npz"

    def _save_index(self, path: Path) -> None:
        arrays = {name: getattr(self, name) for name in self._ARRAYS}
        arrays["spell_offsets"] = self._spell_offsets
        arrays["spell_blob"] = np.frombuffer(self._spell_blob, dtype=np.uint8)
        arrays["identity"] = np.frombuffer(self.identity.encode(), dtype=np.uint8)
        arrays["skipped_lines"] = np.asarray([self.skipped_lines], dtype=np.int64)
        arrays["checksum"] = np.frombuffer(_checksum(arrays, self.source_digest), dtype=np.uint8)
        # Atomic: readers see the old file or the whole new one (a FIFO there is replaced, never opened).
        files.write_atomic(path, lambda fh: np.savez(fh, **arrays))

    def _load_index(self, path: Path) -> bool:
        try:
            # open_regular: a FIFO or a device at the cache path is refused (OSError), never read or waited on.
            with files.open_regular(path) as fh, np.load(fh, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
            checksum = arrays.pop("checksum").tobytes()
            if checksum != _checksum(arrays, self.source_digest):
                return False
            for name in self._ARRAYS:
                setattr(self, name, arrays[name])
            self._spell_offsets = arrays["spell_offsets"]
            self._spell_blob = arrays["spell_blob"].tobytes()
            self.identity = arrays["identity"].tobytes().decode()
            self.skipped_lines = int(arrays["skipped_lines"][0])
            return len(self._spell_offsets) == len(self.term_points) + 1
        except Exception:  # corrupt, truncated or foreign file: rebuild, never trust it
            return False

    def ensure_index(self, use_cache: bool = True) -> None:
        """Load the index from the disk cache, or build it (and cache it)."""
        if self.node_term is not None:
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


def _trie_arrays(prefix_map: dict[int, int]) -> tuple[np.ndarray, ...]:
    """CSR trie arrays from prefix codes: a code is its parent's code * 32 + its label.

    Node 0 is the root; node i + 1 is the i-th code in ascending order.
    """
    codes = np.fromiter(prefix_map.keys(), dtype=np.int64, count=len(prefix_map))
    values = np.fromiter(prefix_map.values(), dtype=np.int32, count=len(prefix_map))
    order = np.argsort(codes, kind="stable")
    codes, values = codes[order], values[order]
    n_nodes = len(codes) + 1
    parent_codes = codes >> 5
    parents = np.searchsorted(codes, parent_codes) + 1
    parents[parent_codes == 0] = 0
    labels = (codes & 31).astype(np.int32)
    edge_order = np.lexsort((labels, parents))
    edge_label = labels[edge_order]
    edge_child = (edge_order + 1).astype(np.int32)
    counts = np.bincount(parents, minlength=n_nodes)
    edge_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)  # 643k nodes: int32 halves the array
    node_term = np.full(n_nodes, -1, dtype=np.int32)
    node_term[1:] = values
    return edge_start, edge_label, edge_child, node_term


def _checksum(arrays: dict[str, np.ndarray], identity: str) -> bytes:
    h = hashlib.sha256(identity.encode())
    for name in sorted(arrays):
        h.update(name.encode())
        h.update(memoryview(np.ascontiguousarray(arrays[name])).cast("B"))  # no copy
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


def _read_text(source: Path | None) -> str:
    """The text of a word list: the shipped one (source None) or a file, gzip or plain."""
    return _decode(_read_bytes(source), source)


def _read_bytes(source: Path | None) -> bytes:
    if source is None:
        return resources.files("quiddler_env.data").joinpath("enable.txt.gz").read_bytes()
    try:
        with files.open_regular(source) as fh:  # a FIFO or a device is refused, not waited on
            return fh.read()
    except FileNotFoundError:
        raise DictionaryError(f"word list not found: {source}") from None
    except OSError as exc:
        if source.exists() and not source.is_file():
            raise DictionaryError(f"word list is not a regular file: {source}") from None
        raise DictionaryError(f"word list {source} is unreadable: {exc}") from None


def _decode(raw: bytes, source: Path | None) -> str:
    try:
        return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, zlib.error) as exc:  # zlib.error: a corrupt gzip body
        raise DictionaryError(f"word list {source} is unreadable: {exc}") from None


_LOADED: dict[tuple[str, str], Dictionary] = {}


def load_dictionary(source: str | os.PathLike | None = None, *, use_cache: bool = True) -> Dictionary:
    """The shipped ENABLE list (`None` or "enable") or a word-list file, with its index.

    A file has one word per line, any case, LF or CRLF (gzip-compressed or plain);
    lines that are not ``[a-z]{2,}`` after lowercasing are skipped and counted
    (`skipped_lines`). The index is cached on disk keyed by the file's content, so a
    process that finds the cache parses nothing. Loaded dictionaries are shared within
    a process, keyed by content.
    """
    path = None if source in (None, DEFAULT_NAME) else Path(source)
    raw = _read_bytes(path)
    digest = hashlib.sha256(raw).hexdigest()
    key = (str(path.resolve()) if path else DEFAULT_NAME, digest)
    if key in _LOADED:
        return _LOADED[key]
    name = str(path) if path else DEFAULT_NAME
    dictionary = Dictionary(name=name, identity="", source_digest=digest, _source=path)
    if not (use_cache and dictionary._cache_path().exists() and dictionary._load_index(dictionary._cache_path())):
        text = _decode(raw, path)
        if not text.strip():
            raise DictionaryError(f"word list {name} is empty")
        words, skipped = _parse_words(text)
        if not words:
            raise DictionaryError(
                f"word list {name} has no usable words ({skipped} lines skipped; "
                "a word is two or more letters a-z, one per line)"
            )
        dictionary._words = words
        dictionary.identity = word_list_identity(words)
        dictionary.skipped_lines = skipped
        dictionary.ensure_index(use_cache=use_cache)
    _LOADED[key] = dictionary
    return dictionary
