"""TorchRL on the turn-based AEC env: `PettingZooWrapper` with masks, a masked policy, and a policy-gradient update.

    python examples/torchrl_aec.py --games 200 --seed 0

`torchrl.envs.PettingZooWrapper(pettingzoo.make("aec", "quiddler/quiddler-v0"), use_mask=True)`
puts every seat in one group ("agents"): each step's tensordict holds both seats'
observations, legal moves (`("agents", "action_mask")`) and a `("agents", "mask")` saying
which seat acts (in an AEC env only one does; TorchRL requires `use_mask=True` for AEC envs).
One network plays both seats through `ProbabilisticActor` with a `MaskedCategorical`
over the legal moves; `env.rollout` plays whole games. The update is REINFORCE with a
mean baseline: each seat's discounted return from each of its own moves, its log-probability
counted only where that seat acted.

Then the network (most probable legal move) plays `--eval-games` games against uniform
random moves, seats alternating; the last line is a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import pettingzoo
import torch
from tensordict.nn import TensorDictModule
from torchrl.envs import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor

import quiddler_env  # noqa: F401  (registers quiddler/quiddler-v0)

ENV_ID = "quiddler/quiddler-v0"
OBS = ("agents", "observation", "observation")


def make_env(seed: int) -> PettingZooWrapper:
    with warnings.catch_warnings():  # TorchRL names the PettingZoo version it was tested with
        warnings.simplefilter("ignore", UserWarning)
        return PettingZooWrapper(
            env=pettingzoo.make("aec", ENV_ID, num_players=2),
            use_mask=True,
            categorical_actions=True,
            group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
            seed=seed,
        )


def discounted(rewards: torch.Tensor, gamma: float) -> torch.Tensor:
    """Returns-to-go along the first dimension (T, seats)."""
    out = torch.zeros_like(rewards)
    running = torch.zeros(rewards.shape[1:])
    for t in reversed(range(rewards.shape[0])):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def evaluate(network: torch.nn.Module, games: int, seed: int) -> dict:
    env = pettingzoo.make("aec", ENV_ID, num_players=2)
    rng = np.random.default_rng(seed)
    wins, totals = 0, []
    for g in range(games):
        env.reset(seed=seed + g)
        mine = env.possible_agents[g % 2]
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            elif agent == mine:
                with torch.no_grad():
                    logits = network(torch.as_tensor(obs["observation"]))
                action = int(torch.where(torch.as_tensor(obs["action_mask"] > 0), logits, -1e8).argmax())
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
        final = env.unwrapped.game.totals
        seat = int(mine.split("_")[1])
        totals.append(final[seat])
        wins += final[seat] > final[1 - seat]
    return {"eval_games": games, "win_rate_vs_random": wins / games, "mean_total": float(np.mean(totals))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="training games (one rollout each)")
    parser.add_argument("--eval-games", type=int, default=50)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.games < 1 or args.eval_games < 1:
        parser.error("--games and --eval-games must be at least 1")
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks: threads only contend
    env = make_env(args.seed)
    size = env.observation_spec[OBS].shape[-1]
    network = MLP(in_features=size, out_features=env.full_action_spec["agents", "action"].space.n, num_cells=[128, 128])
    actor = ProbabilisticActor(
        TensorDictModule(network, in_keys=[OBS], out_keys=[("agents", "logits")]),
        in_keys={"logits": ("agents", "logits"), "mask": ("agents", "action_mask")},
        out_keys=[("agents", "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=("agents", "log_prob"),
    )
    optimizer = torch.optim.Adam(network.parameters(), lr=args.learning_rate)
    steps, returns = 0, []
    for _ in range(args.games):
        rollout = env.rollout(10_000, actor, break_when_any_done=True)  # one whole game
        acted = rollout["agents", "mask"]  # (T, seats): who moved at each step
        rewards = rollout["next", "agents", "reward"].squeeze(-1)
        to_go = discounted(rewards, args.gamma)
        advantage = to_go - to_go[acted].mean()
        loss = -(rollout["agents", "log_prob"] * advantage * acted).sum() / acted.sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += rollout.shape[0]
        returns.append(rewards.sum(0).tolist())
    summary = {"env": ENV_ID, "games": args.games, "agent_steps": steps, "mean_return": np.mean(returns, 0).tolist()}
    summary |= evaluate(network, args.eval_games, args.seed + 10_000)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
