"""Word lists: the shipped ENABLE list, user files, identities and the on-disk index cache."""

from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pytest

from quiddler_env.core import dictionary as D
from quiddler_env.core.cards import FACE_INDEX
from quiddler_env.core.dictionary import DictionaryError, load_dictionary, spellings
from quiddler_env.core.solver import HandSolver

ENABLE_SHA256 = "f32e6fbdc4cf9c8ec1d992193d7ac33e773fc850ba47ebe2c791ab9d61913d49"


def test_enable_is_shipped_whole():
    d = load_dictionary()
    assert len(d.words) == 172_820
    assert d.identity == ENABLE_SHA256
    assert hashlib.sha256(("\n".join(d.words) + "\n").encode()).hexdigest() == ENABLE_SHA256
    assert "quiz" in d and "ox" in d and "steve" not in d and "qi" not in d


def test_spellings_cover_combination_cards():
    ids = {tuple(FACE_INDEX[f] for f in s) for s in (("QU", "I", "Z"), ("Q", "U", "I", "Z"))}
    assert ids == set(spellings("quiz"))
    assert len(spellings("there")) == 4  # T-H-E-R-E, TH-E-R-E, T-H-ER-E, TH-ER-E
    assert len(spellings("cat")) == 1


def test_user_word_list(tmp_path):
    path = tmp_path / "words.txt"
    path.write_bytes(b"Cat\r\ndog\r\nx\r\nhello-world\r\n  \r\nQUIZ\r\n")
    d = load_dictionary(path, use_cache=False)
    assert d.words == ("cat", "dog", "quiz")
    assert d.skipped_lines == 2
    assert d.identity == hashlib.sha256(b"cat\ndog\nquiz\n").hexdigest()
    solver = HandSolver(d)
    assert solver.best_layout(["C", "A", "T", "D", "O", "G"]).spelled in (("cat", "dog"), ("dog", "cat"))
    assert solver.best_layout(["T", "O", "P"]).score == -11  # "top" is not in this list


def test_gzipped_user_word_list(tmp_path):
    path = tmp_path / "words.txt.gz"
    path.write_bytes(gzip.compress(b"ab\nba\n"))
    assert load_dictionary(path, use_cache=False).words == ("ab", "ba")


@pytest.mark.parametrize(
    "content, message",
    [(None, "not found"), (b"", "is empty"), (b"1\n-\nx\n", "no usable words"), (b"\xff\xfe\xfa", "unreadable")],
)
def test_bad_word_lists_are_clear_errors(tmp_path, content, message):
    path = tmp_path / "list.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(DictionaryError, match=message):
        load_dictionary(path, use_cache=False)


def _same_index(a: D.Dictionary, b: D.Dictionary) -> bool:
    return all(np.array_equal(getattr(a, n), getattr(b, n)) for n in D.Dictionary._ARRAYS) and all(
        a.spellings_of(t) == b.spellings_of(t) for t in range(a.n_terms)
    )


def test_index_cache_round_trip_and_corruption(tmp_path, monkeypatch):
    monkeypatch.setenv("QUIDDLER_CACHE_DIR", str(tmp_path / "cache"))
    words = tmp_path / "w.txt"
    words.write_text("quiz\nquit\nzap\nBad-line\n")
    first = load_dictionary(words)
    cache_files = list((tmp_path / "cache").glob("*.npz"))
    assert len(cache_files) == 1

    def fresh() -> D.Dictionary:
        return D.Dictionary(name="w", identity="", source_digest=first.source_digest, _source=words)

    # A fresh load reads the cache and gets the same index, identity and skipped count.
    loaded = fresh()
    assert loaded._load_index(cache_files[0])
    assert _same_index(loaded, first) and loaded.identity == first.identity and loaded.skipped_lines == 1
    assert loaded.words == ("quit", "quiz", "zap")
    # A corrupt file is not trusted: loading fails and ensure_index rebuilds and rewrites it.
    cache_files[0].write_bytes(cache_files[0].read_bytes()[:-100])
    broken = fresh()
    assert not broken._load_index(cache_files[0])
    broken.ensure_index()
    assert _same_index(broken, first)
    assert fresh()._load_index(cache_files[0])
    # A tampered file with a valid npz layout but a wrong checksum is rejected as well.
    with np.load(cache_files[0]) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["node_term"] = arrays["node_term"][::-1].copy()
    np.savez(cache_files[0], **arrays)
    assert not fresh()._load_index(cache_files[0])


def test_lookup_and_prefix_codes_agree():
    d = load_dictionary()
    term = d.lookup([FACE_INDEX[f] for f in ("QU", "I", "Z")])
    assert term >= 0 and ("quiz", ("QU", "I", "Z")) in d.spellings_of(term)
    assert d.term_points[term] == 25 and d.term_letters[term] == 4 and d.term_cards[term] == 3
    code = 0
    for f in sorted((FACE_INDEX[f] for f in ("QU", "I", "Z")), key=D.KEY_RANK.__getitem__):
        code = code * 32 + D.KEY_RANK[f] + 1
    assert d.prefix_map[code] == term
