"""A run's strength along its clock: each checkpoint it kept, over duplicate deals against one opponent.

    python benchmarks/strength_curve.py RUN [--opponent expert] [--games 2000] [--seed 4242] [--workers 1]
                                            [--checkpoints FOLDER]

A run's own evaluations (`eval.games`: 200 in the shipped configs) are quick and noisy, about 7 points
either side of 50%, so the first of them past 55% (`summary.json`'s `time_to_strength`) tends to come early
by chance. This plays each checkpoint's policy bundle (`RUN/checkpoints/step_<N>/policy`) against
`--opponent` over `--games` duplicate-deal games through evaluate.py, and prints per checkpoint the step,
the run's clock there (the checkpoint's `run_seconds`, else that of `eval.csv`'s evaluation at the same
step), the win rate with its interval and the paired points a game; then the first checkpoint at 50% and at
55% (`time_to_strength`'s levels). A run keeps its last `train.keep_checkpoints`: train with it high (e.g.
`train.keep_checkpoints=100`) for the whole curve, or name copies of the `step_<N>/` folders (each with
its `policy/`, or the bundle itself) with `--checkpoints`. Asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import evaluate  # noqa: E402
from quiddler_agents.training.run import CHECKPOINT_DIR, STATE_FILE, checkpoint_step  # noqa: E402
from quiddler_agents.training.runfiles import time_to_strength  # noqa: E402
from quiddler_agents.training.sb3.trainer import POLICY_DIR  # noqa: E402
from quiddler_env.core import files  # noqa: E402


def checkpoint_bundles(folder: Path) -> list[tuple[int, Path, Path]]:
    """(step, policy bundle, step folder) of each checkpoint folder in `folder`, by step; the bundle is
    `policy/` inside it, or the folder itself when it is the bundle."""
    out = []
    for entry in folder.iterdir() if folder.is_dir() else []:
        step = checkpoint_step(entry.name)
        if step is None or not entry.is_dir():
            continue
        bundle = entry / POLICY_DIR if (entry / POLICY_DIR / "policy.json").is_file() else entry
        if (bundle / "policy.json").is_file():
            out.append((step, bundle, entry))
    return sorted(out)


def evaluated_clock(run: Path) -> dict[int, float]:
    """The run's clock (seconds) at each step eval.csv has an evaluation of (read only: a run may be live)."""
    table = run / "eval.csv"
    if not table.is_file():
        return {}
    with table.open(newline="", encoding="utf-8") as fh:
        return {int(float(r["step"])): float(r["run_seconds"]) for r in csv.DictReader(fh) if r.get("run_seconds")}


def run_clock(step_folder: Path, evaluated: dict[int, float], step: int) -> float | None:
    """The run's clock (seconds) at `step`: its checkpoint's `run_seconds`, else eval.csv's at that step."""
    state = step_folder / STATE_FILE
    if state.is_file():
        seconds = files.read_json(state).get("run_seconds")
        if seconds is not None:
            return float(seconds)
    return evaluated.get(step)


def strength_curve(
    run: Path, opponent: str, games: int, seed: int, workers: int, checkpoints: Path | None = None
) -> list[dict[str, Any]]:
    """One row per checkpoint: step, run_seconds, win_rate (estimate, low, high), paired points a game."""
    found = checkpoint_bundles(checkpoints if checkpoints is not None else run / CHECKPOINT_DIR)
    if not found:
        raise SystemExit(f"strength_curve.py: no checkpoint with a policy bundle in {checkpoints or run}")
    evaluated = evaluated_clock(run)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for step, bundle, folder in found:
            out = Path(tmp) / f"step_{step}"
            argv = ["--players", f"policy:{bundle}", opponent, "--games", str(games), "--seed", str(seed)]
            argv += ["--workers", str(workers), "--out", str(out), "--quiet"]
            if evaluate.main(argv) != 0:
                raise SystemExit(f"strength_curve.py: evaluating {bundle} failed")
            pair = files.read_json(out / "results.json")["summary"]["pairs"][0]
            rows.append(
                {
                    "step": step,
                    "run_seconds": run_clock(folder, evaluated, step),
                    "opponent": opponent,
                    "win_rate": pair["a_win_rate"]["estimate"],
                    "low": pair["a_win_rate"]["low"],
                    "high": pair["a_win_rate"]["high"],
                    "paired": pair["score_difference"]["paired"],
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="the run folder (its eval.csv gives the clock where needed)")
    parser.add_argument("--opponent", default="expert", help="the agent spec every checkpoint plays")
    parser.add_argument("--games", type=int, default=2000, help="games per checkpoint (whole deals)")
    parser.add_argument("--seed", type=int, default=4242, help="evaluate.py's seed: the deals")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--checkpoints", type=Path, default=None, help="a folder of step_<N>/ copies")
    args = parser.parse_args(argv)
    rows = strength_curve(args.run, args.opponent, args.games, args.seed, args.workers, args.checkpoints)
    print(f"{args.run}: {args.games} games a checkpoint against {args.opponent} (--seed {args.seed})")
    print("| step | minutes | win rate [95% CI] | paired points a game [95% CI] |")
    print("|---|---|---|---|")
    for row in rows:
        minutes = "" if row["run_seconds"] is None else f"{row['run_seconds'] / 60:.1f}"
        paired = row["paired"]
        print(
            f"| {row['step']:,} | {minutes} | {100 * row['win_rate']:.1f}% [{100 * row['low']:.1f}, "
            f"{100 * row['high']:.1f}] | {paired['estimate']:+.1f} [{paired['low']:+.1f}, {paired['high']:+.1f}] |"
        )
    for level, hit in time_to_strength(rows)[args.opponent].items():
        reached = "not reached" if hit is None else f"{hit['run_seconds'] / 60:.1f} min (step {hit['step']:,})"
        print(f"{float(level):.0%} against {args.opponent}: {reached}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
