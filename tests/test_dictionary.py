"""Word lists: the shipped ENABLE list, user files, identities and the on-disk index cache."""

from __future__ import annotations

import gzip
import hashlib
import os
import stat
import threading

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


# -- special files never block a load -----------------------------------------------------------


def _finishes(fn, fifo, timeout=60.0):
    """Run `fn` in a thread; (finished, result or exception). A reader stuck on `fifo` is released after the timeout."""
    out: dict[str, object] = {}

    def target():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001  (handed back to the test)
            out["value"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():  # a regression: open a writer so that the blocked reader returns, then fail
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        thread.join(5)
        return False, None
    return True, out.get("value")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_fifo_at_the_cache_path_is_ignored_and_the_index_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("QUIDDLER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(D, "_LOADED", {})
    words = tmp_path / "w.txt"
    words.write_text("quiz\nquit\nzap\n")
    digest = hashlib.sha256(words.read_bytes()).hexdigest()
    cache = D.Dictionary(name="w", identity="", source_digest=digest)._cache_path()
    cache.parent.mkdir(parents=True)
    os.mkfifo(cache)
    done, loaded = _finishes(lambda: load_dictionary(words), cache)
    assert done, "load_dictionary blocked on a FIFO at the cache path"
    assert isinstance(loaded, D.Dictionary) and "quiz" in loaded and loaded.words == ("quit", "quiz", "zap")
    # The rebuilt index replaced the FIFO with a regular cache file, which the next process reads.
    assert cache.is_file() and not stat.S_ISFIFO(cache.stat().st_mode)
    fresh = D.Dictionary(name="w", identity="", source_digest=digest, _source=words)
    assert fresh._load_index(cache) and _same_index(fresh, loaded)
    assert sorted(p.name for p in cache.parent.iterdir()) == [cache.name]  # no temporary left beside it


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_fifo_as_the_word_list_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("QUIDDLER_CACHE_DIR", str(tmp_path / "cache"))
    fifo = tmp_path / "words.fifo"
    os.mkfifo(fifo)
    done, error = _finishes(lambda: load_dictionary(fifo), fifo)
    assert done, "load_dictionary blocked on a FIFO given as the word list"
    assert isinstance(error, DictionaryError) and isinstance(error, ValueError)
    assert str(error) == f"word list is not a regular file: {fifo}"
    with pytest.raises(DictionaryError, match="word list is not a regular file: .*"):
        load_dictionary(tmp_path)  # a folder is not a word list either


def test_a_failed_cache_write_leaves_no_file(tmp_path, monkeypatch):
    monkeypatch.setenv("QUIDDLER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(D, "_LOADED", {})
    words = tmp_path / "w.txt"
    words.write_text("quiz\nzap\n")

    def broken_savez(fh, **arrays):
        fh.write(b"PK half an archive")
        raise OSError("disk full")

    monkeypatch.setattr(D.np, "savez", broken_savez)
    assert "zap" in load_dictionary(words)  # the index is built; only the cache is lost
    assert list((tmp_path / "cache").iterdir()) == []  # neither a half file nor a temporary
