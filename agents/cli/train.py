"""Train a Quiddler agent (MaskablePPO) from a YAML run config.

    python train.py --config configs/quickstart.yaml
    quiddler-train --config quickstart                  # a shipped config by name (the installed package)
    python train.py --config configs/quickstart.yaml train.total_timesteps=50000 env.num_players=3
    python train.py --resume runs/quickstart [train.total_timesteps=400000]
    python train.py --config configs/selfplay.yaml --print-config
    python train.py --config configs/rllib_selfplay.yaml [--address auto]   (backend rllib: pip install -e .[rllib])

Overrides are `dotted.key=value` (the value is read as YAML). A run writes its
folder (default `runs/<name>`): the resolved config, run metadata, train/eval CSVs,
TensorBoard logs, checkpoints, the best model, the final model (`model.zip` with
the safe-load `policy.pt` + `policy.json` beside it, in `final/`) and a learning-curve
PNG. A killed run continues from its newest intact checkpoint with `--resume RUN_DIR`;
`evaluate.py --players policy:RUN_DIR` plays its final policy.

Exit status: 0 done; 1 the run folder could not be written (a full disk: the error names
the file, and the checkpoints written before stay whole); 2 bad input (one line, nothing
written); 130 interrupted by Ctrl-C (SIGINT) and 143 by SIGTERM, both after one line
naming the run folder to --resume (the folder holds whole files only: a write the signal
cut short is removed, and a run stopped before its first checkpoint leaves no folder).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..extras import MissingExtra
from ..training import (
    CheckpointError,
    RunConfigError,
    RunFolderError,
    RunWriteError,
    load_run_config,
    resume_run,
    start_run,
)
from ..training.config import dump_yaml, shipped_configs
from ..training.run import checkpoints
from . import EXIT_INTERRUPTED, exit_with, interrupted_status, program, stop_signals

PROG = program("train")
"""The command's name in its messages: `quiddler-train` when run as the console script, else `train.py`."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__.splitlines()[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawTextHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--config", help="run config: a YAML file, or the name of a shipped one (" + ", ".join(shipped_configs()) + ")"
    )
    source.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its last checkpoint")
    parser.add_argument("--run-dir", help="output folder (default: the config's run_dir, else runs/<name>)")
    parser.add_argument("--force", action="store_true", help="delete an existing run folder and start over")
    parser.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress lines or bars (compiling the kernels, imitation, training, evaluation)",
    )
    parser.add_argument(
        "--address", help="backend rllib: join this Ray cluster ('auto', ray://HOST:10001); sets ray.address"
    )
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="dotted-key overrides, e.g. train.n_envs=2")
    args = parser.parse_args(argv)
    command = [sys.executable, *sys.argv] if argv is None else [PROG, *argv]
    if args.address:
        args.overrides.append(f"ray.address={args.address}")
    if args.resume and (args.run_dir or args.force or args.print_config):
        parser.error("--resume takes no --run-dir, --force or --print-config")
    folder: Path | None = Path(args.resume) if args.resume else None  # the run folder, once it is known
    with stop_signals():  # SIGTERM ends the run as Ctrl-C does
        try:
            if args.resume:
                summary = resume_run(args.resume, args.overrides, command=command, quiet=args.quiet)
            else:
                cfg = load_run_config(args.config, args.overrides)
                if args.print_config:
                    print(dump_yaml(cfg), end="")
                    return 0
                folder = Path(args.run_dir) if args.run_dir else cfg.output_dir()
                summary = start_run(cfg, run_dir=args.run_dir, force=args.force, command=command, quiet=args.quiet)
        except (RunConfigError, RunFolderError, CheckpointError, MissingExtra) as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        except RunWriteError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt as exc:
            status = interrupted_status(exc)
            newline = "\n" if status == EXIT_INTERRUPTED else ""  # after the terminal's ^C
            print(f"{newline}{PROG}: {_interrupted(folder)}", file=sys.stderr)
            return status
    _report(summary)
    return 0


def _interrupted(folder: Path | None) -> str:
    """What an interrupted run leaves: a folder to resume, or nothing (stopped before its first checkpoint)."""
    if folder is not None and checkpoints(folder):
        return f"interrupted; continue from the last checkpoint with: {PROG} --resume {folder}"
    return "interrupted before the run's first checkpoint; nothing is kept"


def _report(summary: dict) -> None:
    session = summary["session"]
    print(
        f"{summary['name']}: {summary['num_timesteps']} steps "
        f"({session['steps_per_second']:.0f} steps/s this session, {100 * session['env_share']:.0f}% of it in the env)"
    )
    for row in summary["final_eval"]:
        print(
            f"  vs {row['opponent']}: win {float(row['win_rate']):.3f}, tie {float(row['tie_rate']):.3f}, "
            f"mean total {float(row['mean_score']):.1f} vs {float(row['mean_opponent_score']):.1f} "
            f"({row['games']} games)"
        )
    for opponent, levels in summary.get("time_to_strength", {}).items():
        reached = [
            f"{float(level):.0%} at {hit['run_seconds'] / 60:.1f} min (step {hit['step']})"
            for level, hit in levels.items()
            if hit is not None
        ]
        if reached:
            print(f"  time to strength vs {opponent}: {', '.join(reached)}")
    print(f"model: {summary['model']}")


def console() -> None:
    """The `quiddler-train` console script."""
    exit_with(main)


if __name__ == "__main__":
    exit_with(main)
