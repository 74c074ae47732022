"""Training speed: the quickstart config on today's vector envs against `train.vec_env: batched`, side by side.

    python benchmarks/bench_train.py [--steps 20480] [--repeats 2] [--before COMMIT]
                                     [--config configs/quickstart.yaml] [--variants NAME ...]

Each variant trains the config (`configs/quickstart.yaml` unless `--config`) for `--steps` steps through `train.py` (in this
process, one after the other, the variants interleaved over the repeats), without the
imitation warm start and the periodic evaluations, so the figures are PPO's own: steps/s and
the share of wall time spent in the env (`summary.json`'s session timing, which leaves out
evaluation and checkpoint time). Variants:

- `dummy x8`: the quickstart as shipped before the batched engine (8 `TrainingEnv`s in a DummyVecEnv);
- `batched x8`: the same rollout shape on the batched engine;
- `batched x64`: 64 games of 32 steps per rollout (the same 2,048 steps per update).

With `--before COMMIT` the config also trains as that commit of this repository had it (a git
worktree, run in a subprocess with its own code, the config file of the same name and the same venv):
"today's" speed before a change, measured in the same run; `--variants` picks which of the variants
above run beside it, e.g. `--config configs/champion_4p.yaml --variants "batched x64" --before COMMIT`
(the 4-player champion's own rollout shape). The median over the repeats is printed, with each
variant's ratio to the first variant.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # train.py imports the checkout's `agents`, from any folder
VARIANTS = {
    "dummy x8": ["train.vec_env=dummy", "train.n_envs=8", "algo.n_steps=256"],
    "batched x8": ["train.vec_env=batched", "train.n_envs=8", "algo.n_steps=256"],
    "batched x64": ["train.vec_env=batched", "train.n_envs=64", "algo.n_steps=32"],
}


def _train_module():
    spec = importlib.util.spec_from_file_location("train_script", ROOT / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _common(args, run: Path, steps: int) -> list[str]:
    return [
        "--config", args.config, "--run-dir", str(run), "--quiet",
        f"train.total_timesteps={steps}", "pretrain.teacher=null", "eval.at_start=false",
        f"eval.every={10 * args.steps}", f"train.checkpoint_every={10 * args.steps}",
        "train.progress_bar=false", "eval.games=2",
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20480)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--config", default=str(ROOT / "configs" / "quickstart.yaml"))
    p.add_argument("--before", help="a commit: also train the config as it was there (its code, its config)")
    p.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=list(VARIANTS))
    args = p.parse_args(argv)
    config = Path(args.config).resolve()
    if args.before and not config.is_relative_to(ROOT):
        p.error(f"--before needs a config inside the checkout ({ROOT}), got {args.config}")
    train = _train_module()
    variants = {name: VARIANTS[name] for name in args.variants}
    if args.before:
        variants = {f"{args.before[:7]} as shipped": None, **variants}
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "before"
        if args.before:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), args.before], check=True)
        try:
            for repeat in range(-1, args.repeats):  # repeat -1 warms up (compiles, caches): not counted
                for name, overrides in variants.items():
                    run = Path(tmp) / f"{name.replace(' ', '_')}_{repeat}"
                    steps = 4096 if repeat < 0 else args.steps
                    if overrides is None:  # the earlier commit's own code and its config of the same name
                        command = [sys.executable, "train.py", *_common(args, run, steps)]
                        command[command.index(args.config)] = str(tree / config.relative_to(ROOT))
                        env = {**os.environ, "PYTHONPATH": str(tree)}
                        rc = subprocess.run(command, cwd=tree, env=env, capture_output=True).returncode
                    else:
                        rc = train.main([*_common(args, run, steps), *overrides])
                    if rc != 0:
                        print(f"{name}: train.py exited {rc}", file=sys.stderr)
                        return 1
                    session = json.loads((run / "summary.json").read_text())["session"]
                    if repeat < 0:
                        continue
                    figures[name].append((session["steps_per_second"], session["env_share"]))
                    print(
                        f"  {name} repeat {repeat}: {session['steps_per_second']:,.0f} steps/s, "
                        f"env {session['env_share']:.0%}"
                    )
        finally:
            if args.before:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    first = next(iter(figures))
    base = statistics.median(s for s, _ in figures[first])
    print(f"training steps/s of {Path(args.config).name}, {args.steps} steps, median of {args.repeats}")
    print(f"{'variant':<22} {'steps/s':>9} {'x first':>8} {'env share':>10}")
    for name, runs in figures.items():
        speed = statistics.median(s for s, _ in runs)
        share = statistics.median(e for _, e in runs)
        print(f"{name:<22} {speed:>9,.0f} {speed / base:>8.2f} {share:>10.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
