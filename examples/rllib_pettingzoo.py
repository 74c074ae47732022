"""RLlib's own `PettingZooEnv` on the registry id: self-play PPO with one shared, masked RL module.

    python examples/rllib_pettingzoo.py --iterations 5 --seed 0        # needs the rllib extra: pip install -e .[rllib]

`ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv` turns the AEC env
`pettingzoo.make("aec", "quiddler/quiddler-v0")` into an RLlib `MultiAgentEnv`: each step
the acting seat gets its observation, the dict `{"observation", "action_mask"}`. Every
seat maps to one RL module, the project's `MaskedPPOTorchRLModule` (RLlib's default PPO
module with the action mask applied to the logits, after RLlib's action-masking example),
so sampled moves are always legal. RLlib's wrapper hands a seat the rewards of moves by
others only at that seat's next move; `train.py` with `backend: rllib` uses its own adapter
(`agents/training/rllib/env.py`) that pays every seat at the round's end and seats bots.

The last line is a JSON summary: iterations, env steps and the mean episode return.
"""

from __future__ import annotations

import argparse
import json

import pettingzoo
import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env

import quiddler_env  # noqa: F401  (registers quiddler/quiddler-v0)
from quiddler_agents.training.rllib.module import MaskedPPOTorchRLModule

ENV_ID = "quiddler/quiddler-v0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--batch", type=int, default=2000, help="env steps per training iteration")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.iterations < 1 or args.batch < 64:
        parser.error("--iterations must be at least 1 and --batch at least 64")
    register_env("quiddler_aec", lambda cfg: PettingZooEnv(pettingzoo.make("aec", ENV_ID, **cfg)))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    config = (
        PPOConfig()
        # RLlib's env check steps random (unmasked) actions, which the env refuses as illegal moves.
        .environment("quiddler_aec", env_config={"num_players": args.players}, disable_env_checking=True)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=MaskedPPOTorchRLModule, model_config={"fcnet_hiddens": [128, 128]}
                    )
                }
            )
        )
        .env_runners(num_env_runners=0)
        .training(train_batch_size_per_learner=args.batch, minibatch_size=min(256, args.batch), num_epochs=2)
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    returns, steps = [], 0
    for _ in range(args.iterations):
        result = algo.train()
        runners = result["env_runners"]
        steps = int(runners["num_env_steps_sampled_lifetime"])
        returns.append(float(runners.get("episode_return_mean", float("nan"))))
    algo.stop()
    ray.shutdown()
    print(
        json.dumps({"env": ENV_ID, "iterations": args.iterations, "env_steps": steps, "episode_return_mean": returns})
    )


if __name__ == "__main__":
    main()
