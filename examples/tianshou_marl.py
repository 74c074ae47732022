"""Tianshou's multi-agent setup on the AEC env: a DQN learner against a random seat, as in Tianshou's tic-tac-toe.

    python examples/tianshou_marl.py --epochs 5 --epoch-steps 2000 --seed 0

`tianshou.env.PettingZooEnv` wraps `pettingzoo.make("aec", "quiddler/quiddler-v0")`: each
observation carries the acting seat (`agent_id`), its vector (`obs`) and its legal moves
(`mask`). `MultiAgentOffPolicyAlgorithm` (Tianshou 2's successor of the multi-agent policy
manager) hands each step to the algorithm of the seat that acts: here a DQN learner in one
seat and Tianshou's masked random algorithm in the other; DQN's Q-learning policy only
picks legal moves (the mask reaches it through the observation batch). Training runs
through Tianshou's off-policy trainer with collectors over `DummyVectorEnv`s.

Tianshou stacks each step's infos across its envs into arrays; the env's default
`round_result` infos (ragged lists of words) cannot be stacked, so the env is made with
`infos="flat"`: every info the same keys, numbers and fixed-length arrays (`round`,
`round_scores`, `totals`, ...; `quiddler_v0.FLAT_INFO_KEYS`), which the buffers keep.

Then the learner (greedy Q, masked) plays `--eval-games` games against uniform random
moves; the last line is a JSON summary.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pettingzoo
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import quiddler_env  # noqa: F401  (registers quiddler/quiddler-v0)

ENV_ID = "quiddler/quiddler-v0"
LEARNER_SEAT = 0


def get_env() -> PettingZooEnv:
    return PettingZooEnv(pettingzoo.make("aec", ENV_ID, num_players=2, infos="flat"))


def build(env: PettingZooEnv, args: argparse.Namespace) -> tuple[MultiAgentOffPolicyAlgorithm, DQN]:
    observations = env.observation_space["observation"]
    net = Net(state_shape=observations.shape, action_shape=int(env.action_space.n), hidden_sizes=[256, 256])
    learner = DQN(
        policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.0),
        optim=AdamOptimizerFactory(lr=args.learning_rate),
        n_step_return_horizon=3,
        gamma=0.99,
        target_update_freq=320,
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    seats = [learner, opponent] if LEARNER_SEAT == 0 else [opponent, learner]
    return MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env), learner


def evaluate(learner: DQN, games: int, seed: int) -> dict:
    """The learner's greedy masked Q move in seat 0 against uniform random moves in seat 1."""
    env = pettingzoo.make("aec", ENV_ID, num_players=2)
    rng = np.random.default_rng(seed)
    model = learner.policy.model
    wins, totals = 0, []
    for g in range(games):
        env.reset(seed=seed + g)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            elif agent == env.possible_agents[LEARNER_SEAT]:
                with torch.no_grad():
                    q, _ = model(obs["observation"][None])
                q = q[0].numpy()
                action = int(np.flatnonzero(obs["action_mask"])[np.argmax(q[obs["action_mask"] > 0])])
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
        final = env.unwrapped.game.totals
        totals.append(final[LEARNER_SEAT])
        wins += final[LEARNER_SEAT] > final[1 - LEARNER_SEAT]
    return {"eval_games": games, "win_rate_vs_random": wins / games, "mean_total": float(np.mean(totals))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--epoch-steps", type=int, default=2000)
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--eval-games", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if min(args.epochs, args.epoch_steps, args.envs, args.eval_games) < 1:
        parser.error("--epochs, --epoch-steps, --envs and --eval-games must be at least 1")
    np.random.seed(args.seed)  # Tianshou's buffers sample from numpy's global generator
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks: threads only contend
    training_envs = DummyVectorEnv([get_env for _ in range(args.envs)])
    test_envs = DummyVectorEnv([get_env for _ in range(2)])
    training_envs.seed(args.seed)
    test_envs.seed(args.seed + 1)
    algorithm, learner = build(get_env(), args)
    training = Collector[CollectStats](
        algorithm, training_envs, VectorReplayBuffer(20_000, len(training_envs)), exploration_noise=True
    )
    testing = Collector[CollectStats](algorithm, test_envs, exploration_noise=True)
    training.reset()
    training.collect(n_step=64 * args.envs)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=training,
            test_collector=testing,
            max_epochs=args.epochs,
            epoch_num_steps=args.epoch_steps,
            collection_step_num_env_steps=10,
            test_step_num_episodes=2,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.1,
            test_in_training=False,
            multi_agent_return_reduction=lambda rewards: rewards[:, LEARNER_SEAT],
        )
    )
    summary = {
        "env": ENV_ID,
        "epochs": args.epochs,
        "env_steps": int(result.train_step),
        "episodes": int(result.train_episode),
        "gradient_steps": int(result.update_step),
        "learner_seat": LEARNER_SEAT,
    }
    summary |= evaluate(learner, args.eval_games, args.seed + 10_000)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
