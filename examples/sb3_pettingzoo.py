"""MaskablePPO on the PettingZoo registry id, through the wrapper pattern of PettingZoo's SB3 action-mask tutorial.

    python examples/sb3_pettingzoo.py --timesteps 20000 --eval-games 50 --seed 0 [--features]

As in PettingZoo's "SB3: Action Masked PPO for Connect Four" tutorial, one MaskablePPO
model plays every seat of the AEC env `pettingzoo.make("aec", "quiddler/quiddler-v0")`
(self-play): the wrapper turns the AEC env into a Gymnasium-like env whose observation
is the acting seat's vector and whose `action_mask()` is that seat's legal moves, and
sb3-contrib's `ActionMasker` hands the masks to the policy. The tutorial's caveat holds
here too: the reward of a step is the acting seat's, while the next observation is the
next mover's (in Quiddler a seat acts twice a turn, draw then discard, so most steps
stay with one seat). `--features` appends the solver features that the shipped policies
read (`quiddler_env.wrappers.FeaturesAEC`).

Then the model (deterministic, masked) plays `--eval-games` two-player games against
uniform random moves, seats alternating; the last line is a JSON summary.
"""

from __future__ import annotations

import argparse
import json

import gymnasium
import numpy as np
import pettingzoo
import torch
from pettingzoo.utils import BaseWrapper
from sb3_contrib import MaskablePPO
from sb3_contrib.common.wrappers import ActionMasker

import quiddler_env  # noqa: F401  (registers quiddler/quiddler-v0)
from quiddler_env.wrappers import FeaturesAEC

ENV_ID = "quiddler/quiddler-v0"


class SB3ActionMaskWrapper(BaseWrapper, gymnasium.Env):
    """The tutorial's wrapper: an AEC env as a Gymnasium env for SB3, the mask through `action_mask()`."""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        # SB3 expects one observation and action space: the first seat's (every seat has the same).
        self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
        self.action_space = super().action_space(self.possible_agents[0])
        return self.observe(self.agent_selection), {}

    def step(self, action):
        current = self.agent_selection
        super().step(int(action))
        done = self.terminations[current] or self.truncations[current]
        observation = None if done else self.observe(self.agent_selection)
        if observation is None:  # the game is over: SB3 resets; give it a well-formed observation
            observation = np.zeros(self.observation_space.shape, dtype=np.float32)
        return (
            observation,
            self._cumulative_rewards[current],
            self.terminations[current],
            self.truncations[current],
            self.infos[current],
        )

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_mask(self):
        return super().observe(self.agent_selection)["action_mask"].astype(bool)


def make_env(features: bool):
    env = pettingzoo.make("aec", ENV_ID, num_players=2)
    return FeaturesAEC(env) if features else env


def train(timesteps: int, seed: int, features: bool) -> MaskablePPO:
    env = SB3ActionMaskWrapper(make_env(features))
    env.reset(seed=seed)  # defines the spaces
    env = ActionMasker(env, lambda e: e.action_mask())
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, seed=seed, verbose=0)
    model.learn(total_timesteps=timesteps)
    return model


def evaluate(model: MaskablePPO, games: int, seed: int, features: bool) -> dict:
    """The model against uniform random moves, the model's seat alternating; final totals per game."""
    env = make_env(features)
    rng = np.random.default_rng(seed)
    wins, model_totals, random_totals = 0, [], []
    for g in range(games):
        env.reset(seed=seed + g)
        model_seat = env.possible_agents[g % 2]
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            elif agent == model_seat:
                action = int(model.predict(obs["observation"], action_masks=obs["action_mask"], deterministic=True)[0])
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
        totals = env.unwrapped.game.totals
        mine, other = totals[int(model_seat.split("_")[1])], totals[1 - int(model_seat.split("_")[1])]
        model_totals.append(mine)
        random_totals.append(other)
        wins += mine > other
    env.close()
    return {
        "games": games,
        "model_win_rate": wins / games,
        "model_mean_total": float(np.mean(model_totals)),
        "random_mean_total": float(np.mean(random_totals)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=20_000)
    parser.add_argument("--eval-games", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--features", action="store_true", help="append the solver features (FeaturesAEC)")
    args = parser.parse_args()
    if args.timesteps < 1 or args.eval_games < 1:
        parser.error("--timesteps and --eval-games must be at least 1")
    torch.set_num_threads(1)  # small networks: threads only contend
    model = train(args.timesteps, args.seed, args.features)
    summary = {
        "env": ENV_ID,
        "timesteps": int(model.num_timesteps),
        "features": args.features,
        "observation_size": int(model.observation_space.shape[0]),
    }
    summary |= evaluate(model, args.eval_games, args.seed + 10_000, args.features)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
