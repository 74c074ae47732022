"""Write a benchmark's deal file (run once per benchmark version; its sha256 goes in the protocol).

    python benchmarks/make_deals.py --out agents/evaluation/deals/v1.json.gz --seed 20261205 --deals 2=200 4=100

Each deal is a reshuffle seed and one shuffled deck per round (MAX_ROUNDS of them), from
`numpy.random.SeedSequence(seed)`; the gzip carries no time stamp, so the same command writes
the same bytes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's `agents`, from any folder

from quiddler_agents.evaluation.benchmark import deal_file_bytes  # noqa: E402
from quiddler_env.core.files import sha256_file, write_atomic  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="the deal file to write (.json.gz)")
    p.add_argument("--seed", type=int, required=True, help="seed of every deal")
    p.add_argument("--deals", nargs="+", required=True, metavar="TABLE=N", help="deals per table size, e.g. 2=200")
    args = p.parse_args(argv)
    try:
        counts = {int(t): int(n) for t, n in (item.split("=", 1) for item in args.deals)}
    except ValueError:
        p.error(f"--deals takes TABLE=N items, got {' '.join(args.deals)}")
    path = write_atomic(args.out, deal_file_bytes(args.seed, counts))
    print(f"{path}: sha256 {sha256_file(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
