"""Self-play through the AEC env: one MaskablePPO model learns from, and then plays, every seat.

    python examples/selfplay_aec.py --timesteps 2048 --players 3 --games 3 --seed 0

Training uses `SelfPlayEnv` (PettingZoo's SB3 action-mask tutorial pattern: each
step is one move of whichever agent is to move). Then the model plays whole games
through the plain `quiddler_env.env()` agent_iter loop, choosing for every seat from
that seat's own observation and mask. Prints each game's totals and a summary line.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from sb3_contrib import MaskablePPO

import quiddler_env
from quiddler_env.envs.common import REWARD_MODES
from quiddler_env.envs.selfplay import SelfPlayEnv


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=2048)
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reward-mode", default="relative", choices=REWARD_MODES)
    args = parser.parse_args(argv)
    for name in ("timesteps", "games"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")

    options = {"num_players": args.players, "reward_mode": args.reward_mode}
    train_env = SelfPlayEnv(**options)
    train_env.reset(seed=args.seed)
    model = MaskablePPO(
        "MlpPolicy", train_env, n_steps=min(512, max(64, args.timesteps)), batch_size=64, seed=args.seed, device="cpu"
    )
    model.learn(total_timesteps=args.timesteps)

    env = quiddler_env.env(**options)
    all_totals = []
    for game in range(args.games):
        env.reset(seed=10_000 + args.seed + game)
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                action = None
            else:
                action, _ = model.predict(obs["observation"], action_masks=obs["action_mask"], deterministic=True)
                action = int(action)
            env.step(action)
        totals = list(env.unwrapped.game.totals)
        print(f"game {game}: totals {totals}")
        all_totals.extend(totals)
    summary = {
        "timesteps": int(model.num_timesteps),
        "players": args.players,
        "games": args.games,
        "mean_total": float(np.mean(all_totals)),
    }
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
