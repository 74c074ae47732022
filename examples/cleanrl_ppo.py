"""A CleanRL-style single-file PPO (plain PyTorch) with invalid-action masking, on the batched vector env.

    python examples/cleanrl_ppo.py --total-timesteps 200000 --num-envs 64 --opponents greedy --seed 1

Everything is in this file, as in CleanRL's `ppo.py`: the agent (an MLP actor and
critic), the rollout, generalised advantage estimation and the clipped PPO update.
Two things differ from CleanRL's Atari/classic-control script, both for Quiddler:

- the env is `gymnasium.make_vec("Quiddler-v0", vectorization_mode="vector_entry_point")`,
  the batched engine with the opponents inside, with `autoreset_mode=SAME_STEP` so each
  step's observation already starts the next game where one ended (CleanRL's convention);
- the policy's logits are masked with `envs.action_masks()` (illegal moves get -1e8), as
  in CleanRL's invalid-action-masking variants; the masks are stored with the rollout so
  the update evaluates the same masked distribution.

The last line is a JSON summary: the games finished during training, and the learner's win
rate and mean final total in the first and last quarter of them.
"""

from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import quiddler_env  # noqa: F401  (registers Quiddler-v0)


def layer(inputs: int, outputs: int, std: float = np.sqrt(2)) -> nn.Linear:
    linear = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.constant_(linear.bias, 0.0)
    return linear


class Agent(nn.Module):
    def __init__(self, observation_size: int, actions: int, hidden: int = 256) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            layer(observation_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(), layer(hidden, 1, 1.0)
        )
        self.actor = nn.Sequential(
            layer(observation_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(), layer(hidden, actions, 0.01)
        )

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def action_and_value(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        logits = torch.where(mask, self.actor(x), torch.tensor(-1e8))
        dist = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--total-timesteps", type=int, default=200_000)
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--num-steps", type=int, default=64, help="steps per env per rollout")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--opponents", default="random", help="random or greedy (compiled, inside the env)")
    p.add_argument("--learning-rate", type=float, default=2.5e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    if args.total_timesteps < args.num_envs * args.num_steps:
        p.error("--total-timesteps must hold at least one rollout (num-envs x num-steps)")
    return args


def main() -> None:
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    envs = gym.make_vec(
        "Quiddler-v0",
        num_envs=args.num_envs,
        vectorization_mode="vector_entry_point",
        num_players=args.players,
        opponents=args.opponents,
        reward_mode="relative",
        learner_seat="random",
        autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
    )
    obs_size = envs.single_observation_space.shape[0]
    n_actions = envs.single_action_space.n
    agent = Agent(obs_size, n_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    T, N = args.num_steps, args.num_envs
    batch_size = T * N
    minibatch = batch_size // args.num_minibatches
    obs = torch.zeros((T, N, obs_size))
    masks = torch.zeros((T, N, n_actions), dtype=torch.bool)
    actions = torch.zeros((T, N), dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros((T, N)) for _ in range(4))

    next_obs_np, _ = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(next_obs_np)
    next_mask = torch.as_tensor(envs.action_masks())
    next_done = torch.zeros(N)
    finished: list[tuple[bool, int]] = []  # (learner won alone, learner's final total) per finished game
    updates = args.total_timesteps // batch_size
    start = time.perf_counter()
    for update in range(updates):
        for group in optimizer.param_groups:  # CleanRL's linear learning-rate annealing
            group["lr"] = (1.0 - update / updates) * args.learning_rate
        for t in range(T):
            obs[t], masks[t], dones[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.action_and_value(next_obs, next_mask)
            actions[t], logprobs[t], values[t] = action, logprob, value.flatten()
            next_obs_np, reward, terminated, truncated, infos = envs.step(action.numpy())
            rewards[t] = torch.as_tensor(reward, dtype=torch.float32)
            next_done = torch.as_tensor(terminated | truncated, dtype=torch.float32)
            next_obs = torch.as_tensor(next_obs_np)
            next_mask = torch.as_tensor(envs.action_masks())
            final = infos.get("final_info", {})
            for i in np.flatnonzero(final.get("_totals", [])):
                totals, seat = final["totals"][i], final["seat"][i]
                finished.append(
                    (bool(totals[seat] == totals.max() and final["winner_count"][i] == 1), int(totals[seat]))
                )

        with torch.no_grad():  # generalised advantage estimation, bootstrapped from the value of the next state
            next_value = agent.value(next_obs).flatten()
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(N)
            for t in reversed(range(T)):
                not_done = 1.0 - (next_done if t == T - 1 else dones[t + 1])
                following = next_value if t == T - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * following * not_done - values[t]
                last = delta + args.gamma * args.gae_lambda * not_done * last
                advantages[t] = last
            returns = advantages + values

        b_obs, b_masks = obs.reshape(batch_size, obs_size), masks.reshape(batch_size, n_actions)
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_advantages, b_returns = advantages.reshape(-1), returns.reshape(-1)
        order = np.arange(batch_size)
        for _ in range(args.update_epochs):
            np.random.default_rng(args.seed + update).shuffle(order)
            for lo in range(0, batch_size, minibatch):
                idx = torch.as_tensor(order[lo : lo + minibatch])
                _, new_logprob, entropy, new_value = agent.action_and_value(b_obs[idx], b_masks[idx], b_actions[idx])
                ratio = (new_logprob - b_logprobs[idx]).exp()
                adv = b_advantages[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                value_loss = 0.5 * ((new_value.flatten() - b_returns[idx]) ** 2).mean()
                loss = policy_loss - args.ent_coef * entropy.mean() + args.vf_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
    envs.close()

    quarter = max(1, len(finished) // 4)
    first, last = finished[:quarter], finished[-quarter:]
    print(
        json.dumps(
            {
                "env": "Quiddler-v0 (vector)",
                "opponents": args.opponents,
                "steps": updates * batch_size,
                "updates": updates,
                "steps_per_second": round(updates * batch_size / (time.perf_counter() - start)),
                "games": len(finished),
                "first_quarter": {
                    "win_rate": float(np.mean([w for w, _ in first] or [0])),
                    "mean_total": float(np.mean([s for _, s in first] or [0])),
                },
                "last_quarter": {
                    "win_rate": float(np.mean([w for w, _ in last] or [0])),
                    "mean_total": float(np.mean([s for _, s in last] or [0])),
                },
            }
        )
    )


if __name__ == "__main__":
    main()
