"""Random agents through the PettingZoo AEC env `quiddler_v0`: the plain agent_iter loop.

    python examples/random_aec.py --games 5 --players 3 --seed 0 [--render]

Each agent picks uniformly among its legal actions (from `obs["action_mask"]`) with
its own seeded generator. Prints every game's totals and winners, then a summary
line (games, mean total, agent steps, seconds).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import quiddler_env
from quiddler_env.envs.common import REWARD_MODES


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reward-mode", default="round_score", choices=REWARD_MODES)
    parser.add_argument("--render", action="store_true", help="print the table after every move of the first game")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")

    env = quiddler_env.env(num_players=args.players, reward_mode=args.reward_mode, render_mode="ansi")
    policies = {agent: np.random.default_rng([args.seed, i]) for i, agent in enumerate(env.possible_agents)}
    totals, steps = [], 0
    start = time.perf_counter()
    for game in range(args.games):
        env.reset(seed=args.seed + game)
        returns = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            returns[agent] += reward
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(policies[agent].choice(legal))
                steps += 1
            env.step(action)
            if args.render and game == 0 and action is not None:
                print(env.render(), end="\n\n")
        final = list(env.unwrapped.game.totals)
        winners = [env.possible_agents[p] for p in env.unwrapped.game.winners()]
        rounded = {agent: round(value, 4) for agent, value in returns.items()}
        print(f"game {game}: totals {final}, winner(s) {', '.join(winners)}, returns {rounded}")
        totals.extend(final)
    elapsed = time.perf_counter() - start
    summary = {
        "games": args.games,
        "players": args.players,
        "mean_total": float(np.mean(totals)),
        "agent_steps": steps,
        "seconds": round(elapsed, 3),  # includes the first game's one-off dictionary and solver loading
    }
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
