"""Throughput of the RLlib backend: env steps per second and CPU seconds per 1000 env steps.

    python benchmarks/bench_rllib.py                                   # 1 and 2 env runners, 1 and 8 games each
    python benchmarks/bench_rllib.py --runners 2 --envs 8 --iterations 5
    python benchmarks/bench_rllib.py --runners 1 --envs 8 rllib.self_play=false "opponents=[greedy]"

Each setting builds the algorithm of `configs/rllib_selfplay.yaml` (plus the given
dotted overrides) on a fresh local Ray, runs one warm-up iteration, then times
`--iterations` training iterations (sampling + PPO update, as in a real run). Reports
the median iteration's env steps per second (an env step is one agent move), and the
CPU seconds that every process of the run (driver, Ray, env runners) used per 1000 env
steps, and how much of that the game itself took. It drives the algorithm of
`quiddler_agents.training.rllib.trainer` directly (no run folder, no evaluation, no checkpoints).
Needs the extra: `pip install -e .[rllib]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU seconds of `root` and all its descendants (read from /proc)."""
    procs: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                text = fh.read()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        procs[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK)
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        total += procs.get(pid, (0, 0.0))[1]
        stack += children.get(pid, [])
    return total


def measure(runners: int, envs: int, iterations: int, overrides: list[str]) -> str:
    import ray
    import torch

    from quiddler_agents.training.config import load_run_config
    from quiddler_agents.training.rllib import trainer as rb
    from quiddler_agents.training.rllib.config import check_rllib_run

    cfg = load_run_config(
        ROOT / "configs" / "rllib_selfplay.yaml",
        [f"rllib.num_env_runners={runners}", f"rllib.num_envs_per_env_runner={envs}", *overrides],
    )
    torch.set_num_threads(cfg.train.torch_threads)
    plan = check_rllib_run(cfg)
    rb.init_ray(cfg, quiet=True)
    algo = rb.build_algorithm(cfg, plan, cfg.seed)
    try:
        algo.train()  # warm-up: solver caches, the first episodes
        rates, loads, steps, game_seconds = [], [], 0, 0.0
        cpu0, t0 = tree_cpu_seconds(os.getpid()), time.perf_counter()
        for _ in range(iterations):
            start = time.perf_counter()
            result = algo.train()
            seconds = time.perf_counter() - start
            sampled = result["env_runners"]["num_env_steps_sampled"]
            steps += sampled
            game_seconds += result["env_runners"].get(rb.ENV_SECONDS, 0.0)
            rates.append(sampled / seconds)
            loads.append(os.getloadavg()[0])
        wall, cpu = time.perf_counter() - t0, tree_cpu_seconds(os.getpid()) - cpu0
    finally:
        algo.stop()
        ray.shutdown()
    return (
        f"runners={runners} envs/runner={envs} batch={plan.train_batch_size}: median {statistics.median(rates):.0f} "
        f"env steps/s (iterations {min(rates):.0f}-{max(rates):.0f}; overall {steps / wall:.0f}/s), "
        f"{1000 * cpu / steps:.2f} CPU s per 1000 steps (the game itself {1000 * game_seconds / steps:.2f}), "
        f"load average {min(loads):.1f}-{max(loads):.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2], help="rllib.num_env_runners values")
    parser.add_argument("--envs", type=int, nargs="+", default=[1, 8], help="rllib.num_envs_per_env_runner values")
    parser.add_argument("--iterations", type=int, default=5, help="timed training iterations per setting")
    parser.add_argument("overrides", nargs="*", help="dotted-key overrides of configs/rllib_selfplay.yaml")
    args = parser.parse_args()
    for envs in args.envs:
        for runners in args.runners:
            print(measure(runners, envs, args.iterations, args.overrides), flush=True)


if __name__ == "__main__":
    main()
