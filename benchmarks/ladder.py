"""The ladder: every bot and every shipped policy of a table size, round robin over duplicate deals.

    python benchmarks/ladder.py [--games-per-pair 200] [--seed 1] [--workers 2] [--out results/ladder]
                                [--players SPEC ...] [--table-size 2]

Plays one `evaluate.py` tournament (so the same schedule, duplicate deals, intervals and
files as any evaluation): the players are `random`, `greedy`, `expert`, `search`, OpenSpiel's
IS-MCTS (`openspiel-ismcts`, when the openspiel extra is installed) and every `zoo:` entry trained
for the table size (`quiddler_agents.zoo`), or `--players`; with more players
than seats every matchup of `--table-size` players is played, each deal in every seat
rotation. Prints the head-to-head table (win rates with intervals, paired score
differences) and the OpenSkill ratings from the tournament's report (`OUT/report.md`
holds the rest). Asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import evaluate  # noqa: E402
from quiddler_agents import zoo  # noqa: E402
from quiddler_agents.extras import missing  # noqa: E402

BOTS = ("random", "greedy", "expert", "search") + (() if missing("pyspiel") else ("openspiel-ismcts",))


def zoo_players(table_size: int) -> list[str]:
    """The `zoo:` entries trained for a table of `table_size`."""
    out = []
    for name in zoo.entries():
        config = yaml.safe_load((zoo.entry_path(name) / "config.yaml").read_text(encoding="utf-8"))
        if (config.get("env") or {}).get("num_players", 2) == table_size:
            out.append(f"zoo:{name}")
    return out


def sections(report: str, titles: tuple[str, ...]) -> str:
    """The named `## ` sections of a markdown report, in order."""
    out, keep = [], False
    for line in report.splitlines():
        if line.startswith("## "):
            keep = line[3:].strip() in titles
        if keep:
            out.append(line)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", nargs="+", default=None, help="agent specs (default: the bots and the zoo)")
    parser.add_argument("--table-size", type=int, default=2)
    parser.add_argument("--games-per-pair", type=int, default=200, help="games of each matchup (whole deals)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "ladder")
    args = parser.parse_args(argv)
    players = args.players or [*BOTS, *zoo_players(args.table_size)]
    matchups = math.comb(len(players), args.table_size)
    games = matchups * args.games_per_pair
    print(f"ladder: {len(players)} players, {matchups} matchups x {args.games_per_pair} games", flush=True)
    code = evaluate.main(
        [
            "--players", *players, "--table-size", str(args.table_size), "--games", str(games),
            "--seed", str(args.seed), "--workers", str(args.workers), "--out", str(args.out), "--quiet",
        ]
    )  # fmt: skip
    if code:
        return code
    report = (args.out / "report.md").read_text(encoding="utf-8")
    print(sections(report, ("Head to head", "Ratings")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
