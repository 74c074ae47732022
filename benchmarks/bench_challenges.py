"""The challenge variant, measured: the expert against greedy when every seat knows a share of ENABLE.

For each share P (each seat keeps its own seeded subset, `enable:P:SEED`, seat k with seed k + 1; P = 1 is
the whole list for everyone) plays a duplicate-deal tournament through `evaluate.py`'s own engine and prints
a markdown table: the expert's win rate with its interval, the paired score difference, and how often each
bot challenges, how often a laid word is challenged, and how often a challenged word fails.

    python benchmarks/bench_challenges.py --games 2000 --seed 1
    python benchmarks/bench_challenges.py --games 2000 --seed 1 --players expert random --layout choose
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quiddler_agents.evaluation.schedule import Tournament  # noqa: E402
from quiddler_agents.evaluation.summary import summarize  # noqa: E402
from quiddler_agents.evaluation.tournament import default_workers, run_tournament  # noqa: E402
from quiddler_env.core.config import QuiddlerConfig  # noqa: E402


def vocabularies(share: float, seats: int) -> list[str]:
    """Each seat's vocabulary spec at `share` of ENABLE (its own seeded subset)."""
    return ["enable"] if share >= 1.0 else [f"enable:{share}:{k + 1}" for k in range(seats)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", nargs=2, default=["expert", "greedy"], metavar="SPEC")
    p.add_argument("--shares", nargs="+", type=float, default=[0.25, 0.5, 1.0])
    p.add_argument("--games", type=int, default=2000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--layout", choices=("auto", "choose"), default="auto")
    p.add_argument("--workers", type=int, default=default_workers())
    args = p.parse_args(argv)
    a, b = args.players
    print(f"`{a}` against `{b}`, 2 players, challenges on, layout {args.layout}, {args.games} duplicate-deal games")
    print()
    print(
        f"| vocabulary | {a} wins [95% CI] | paired points a game | challenges a game: {a} / {b} | "
        f"won by {a} / {b} | words challenged | challenged words that fail |"
    )
    print("|---|---|---|---|---|---|---|")
    for share in args.shares:
        rules = QuiddlerConfig(challenges=True, layout=args.layout, vocabularies=vocabularies(share, 2))
        tournament = Tournament((a, b), games=args.games, seed=args.seed, rules=rules)
        t0 = time.perf_counter()
        played = run_tournament(tournament, workers=args.workers)
        s = summarize(tournament, played)
        pa, pb = s["players"][a], s["players"][b]
        ca, cb = pa["challenges"], pb["challenges"]
        wr = pa["win_rate"]
        paired = s["pairs"][0]["score_difference"]["paired"]
        laid = ca["words_laid"] + cb["words_laid"]
        challenged = ca["challenged"] + cb["challenged"]
        failed = ca["failed"] + cb["failed"]
        games = pa["games"]

        def rate(won: int, made: int) -> str:
            return f"{won}/{made}" if made else "-"

        print(
            f"| {100 * share:.0f}% of ENABLE | {100 * wr['estimate']:.1f}% [{100 * wr['low']:.1f}, "
            f"{100 * wr['high']:.1f}] | {paired['estimate']:+.1f} [{paired['low']:+.1f}, {paired['high']:+.1f}] | "
            f"{ca['made'] / games:.2f} / {cb['made'] / games:.2f} | {rate(ca['won'], ca['made'])} / "
            f"{rate(cb['won'], cb['made'])} | {challenged} of {laid} ({100 * challenged / max(laid, 1):.2f}%) | "
            f"{failed} of {challenged} |"
        )
        print(f"<!-- {share}: {time.perf_counter() - t0:.0f} s -->", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
