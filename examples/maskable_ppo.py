"""Train sb3-contrib's MaskablePPO on `Quiddler-v0` (one learner, random opponents inside the env).

    python examples/maskable_ppo.py --timesteps 4096 --n-envs 2 --players 2 --eval-games 20 --seed 0 \
        [--vec subproc] [--save runs/ppo_quiddler.zip]

The vector env comes from `make_vec_env("quiddler_env:Quiddler-v0", ...)`; the
masks reach the policy through `env.action_masks()`, which works through
`SubprocVecEnv`. After training, the model (deterministic, masked) and a uniform
random learner each play `--eval-games` games against the same random opponents;
the summary line gives both mean final totals.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from quiddler_env.core import files
from quiddler_env.envs.gym_env import QuiddlerEnv, UniformRandomPolicy


def evaluate(policy, games: int, players: int, seed: int) -> float:
    """Mean final total of the learner seat over `games` seeded games (policy(obs, mask) -> action)."""
    env = QuiddlerEnv(num_players=players, learner_seat="random")
    totals = []
    for game in range(games):
        obs, info = env.reset(seed=seed + game)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(policy(obs, env.action_masks()))
            done = terminated or truncated
        totals.append(env.game.totals[env.seat])
    return float(np.mean(totals))


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=4096)
    parser.add_argument("--n-envs", type=int, default=2)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--eval-games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vec", choices=("subproc", "dummy"), default="subproc")
    parser.add_argument("--save", type=Path, help="where to write the trained model (.zip)")
    args = parser.parse_args(argv)
    for name in ("timesteps", "n_envs", "eval_games"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")

    venv = make_vec_env(
        "quiddler_env:Quiddler-v0",
        n_envs=args.n_envs,
        seed=args.seed,
        vec_env_cls=SubprocVecEnv if args.vec == "subproc" else DummyVecEnv,
        env_kwargs={"num_players": args.players, "learner_seat": "random", "render_mode": None},
    )
    n_steps = max(64, min(512, args.timesteps // args.n_envs))
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=n_steps, batch_size=64, n_epochs=4, seed=args.seed, device="cpu", verbose=0
    )
    model.learn(total_timesteps=args.timesteps)
    venv.close()

    def trained(obs, mask):
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        return int(action)

    rng = UniformRandomPolicy(args.seed)
    summary = {
        "timesteps": int(model.num_timesteps),
        "players": args.players,
        "model_mean_total": evaluate(trained, args.eval_games, args.players, 10_000 + args.seed),
        "random_mean_total": evaluate(rng.act, args.eval_games, args.players, 10_000 + args.seed),
    }
    if args.save is not None:
        path = args.save if args.save.suffix == ".zip" else args.save.with_suffix(".zip")
        files.write_atomic(path, model.save)  # whole or not at all: a reader never sees half a model
        summary["saved"] = str(path)
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
