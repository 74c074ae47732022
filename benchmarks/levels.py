"""Each level's strength against a fixed reference, and how often a round ends on the first turn.

    python benchmarks/levels.py --bot greedy --reference greedy --games 2000
    python benchmarks/levels.py --bot expert --reference expert --games 200

For every level of `quiddler_env.core.levels.LEVELS` this runs `evaluate.py --players BOT:level=N REFERENCE --games G --seed S --save-games`
(duplicate deals: every deal in both seat orders, 2 players, the default rules) and prints one Markdown
row: the level bot's win rate and paired score difference per game (95% intervals, each deal one unit), its
go-out rate, and the fraction of rounds that end on the first mover's first turn when the level bot moves
first and when the reference does (read from the saved games).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from quiddler_env.core import actions as A  # noqa: E402
from quiddler_env.core.levels import LEVELS  # noqa: E402


def first_turn_rounds(game: dict) -> list[tuple[int, bool]]:
    """Per round of a saved game (`layout: auto`, no challenges): (the first mover's seat, whether the round
    ended on its first turn: it went out on its first discard)."""
    n = len(game["seats"])
    cap = game["rules"].get("turn_cap")
    actions = game["actions"]
    out = []
    i = 0
    for record in game["rounds"]:
        first = (record["dealer"] + 1) % n
        out.append((first, actions[i + 1][1] >= A.GO_OUT_BASE))
        if record["went_out"] is None:  # the turn cap: every seat's turns, two actions each
            i += 2 * cap * n
            continue
        while actions[i + 1][1] < A.GO_OUT_BASE:
            i += 2
        i += 2 * n  # the go-out turn, then every other seat's last turn
    assert i == len(actions), "the saved actions do not split into the rounds (a layout or variant not read here)"
    return out


def first_turn_rates(games_file: Path, spec: str) -> tuple[float, float, int]:
    """(fraction of rounds ended on the first turn when `spec` moves first, when the other moves first, rounds)."""
    counts = {True: [0, 0], False: [0, 0]}
    for line in games_file.read_text().splitlines():
        game = json.loads(line)
        for first, ended in first_turn_rounds(game):
            mine = game["seats"][first] == spec
            counts[mine][0] += ended
            counts[mine][1] += 1
    rate = {k: c[0] / c[1] if c[1] else float("nan") for k, c in counts.items()}
    return rate[True], rate[False], counts[True][1] + counts[False][1]


def run(bot: str, reference: str, games: int, seed: int, workers: int, out: Path) -> dict:
    """One tournament through `evaluate.py`; its results.json."""
    command = [
        sys.executable,
        str(ROOT / "evaluate.py"),
        "--players",
        bot,
        reference,
        "--games",
        str(games),
        "--seed",
        str(seed),
        "--workers",
        str(workers),
        "--save-games",
        "--quiet",
        "--out",
        str(out),
    ]
    subprocess.run(command, check=True)
    return json.loads((out / "results.json").read_text())


def row(name: str, spec: str, results: dict, out: Path) -> str:
    summary = results["summary"]
    pair = summary["pairs"][0]
    sign = 1 if pair["a"] == spec else -1
    win = summary["players"][spec]["win_rate"]
    diff = pair["score_difference"]["paired"]
    low, high = sorted((sign * diff["low"], sign * diff["high"]))
    go_out = summary["players"][spec].get("go_out_rate", {}).get("estimate")
    mine, theirs, rounds = first_turn_rates(out / "games.jsonl", spec)
    go = f"{100 * go_out:.1f}%" if go_out is not None else "-"
    return (
        f"| {name} | `{spec}` | {summary['games']} | {100 * win['estimate']:.1f}% [{100 * win['low']:.1f}, "
        f"{100 * win['high']:.1f}] | {sign * diff['estimate']:+.1f} [{low:+.1f}, {high:+.1f}] | {go} | "
        f"{100 * mine:.0f}% | {100 * theirs:.0f}% | {rounds} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bot", default="greedy", help="the bot given each level (greedy, expert, search, ...)")
    parser.add_argument("--reference", default="greedy", help="the fixed opponent, with the whole dictionary")
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/levels"))
    parser.add_argument("--levels", nargs="*", type=int, help="only these levels (default: all)")
    args = parser.parse_args(argv)
    levels = [lv for lv in LEVELS if args.levels is None or lv.number in args.levels]
    print(
        f"{args.bot} of each level against `{args.reference}` (the whole ENABLE list), {args.games} games, "
        f"duplicate deals, seed {args.seed}\n"
    )
    print(
        "| level | bot | games | win rate [95% CI] | score difference / game [95% CI] | go-out rate "
        "| first-turn rounds, bot first | first-turn rounds, reference first | rounds |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for level in levels:
        name, spec = f"{level.number} {level.name} ({level.words:,} words)", f"{args.bot}:level={level.number}"
        out = args.out / spec.replace(":", "_").replace("=", "")
        results = run(spec, args.reference, args.games, args.seed, args.workers, out)
        print(row(name, spec, results, out), flush=True)


if __name__ == "__main__":
    main()
