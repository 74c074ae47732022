"""Many games at once: `Quiddler-v0`'s native vector env, a random learner against compiled opponents.

    python examples/vector_env.py --num-envs 256 --games 512 --opponents greedy --seed 0

Steps every sub-env with a uniformly random legal action (from `infos["action_mask"]`) until
`--games` episodes have finished, with Gymnasium's next-step autoreset. The summary line (JSON)
gives the episodes, learner steps, the learner's mean final total, its win rate against the
opponents and the learner steps per second.
"""

from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np

import quiddler_env  # noqa: F401  (registers Quiddler-v0 and its vector entry point)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--games", type=int, default=512)
    parser.add_argument("--opponents", choices=("random", "greedy"), default="greedy")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for name in ("num_envs", "games"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")

    envs = gym.make_vec(
        "Quiddler-v0",
        num_envs=args.num_envs,
        vectorization_mode="vector_entry_point",
        num_players=args.players,
        opponents=args.opponents,
        learner_seat="random",
    )
    rng = np.random.default_rng(args.seed)
    _, infos = envs.reset(seed=args.seed)
    totals, wins, steps = [], 0, 0
    resetting = np.zeros(args.num_envs, dtype=bool)  # the games whose episode ended in the last step
    start = time.perf_counter()
    while len(totals) < args.games:
        masks = infos["action_mask"]  # a game that just ended allows only RESET_ACTION: its action is ignored
        actions = np.argmax((1 + rng.random(masks.shape)) * masks, axis=1)  # a uniform legal move of each game
        _, _, terminated, truncated, infos = envs.step(actions)
        steps += int((~resetting).sum())  # learner moves: the resetting games made none
        resetting = terminated | truncated
        for i in np.flatnonzero(terminated & infos.get("_totals", np.zeros(args.num_envs, dtype=bool))):
            mine = infos["totals"][i][infos["seat"][i]]
            totals.append(int(mine))
            wins += int(mine == infos["totals"][i].max() and infos["winner_count"][i] == 1)
    seconds = time.perf_counter() - start
    summary = {
        "episodes": len(totals),
        "learner_steps": steps,
        "mean_total": float(np.mean(totals)),
        "win_rate": wins / len(totals),
        "steps_per_second": round(steps / seconds),
    }
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
