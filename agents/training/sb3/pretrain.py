"""Imitation warm start: the learner's network first copies a teacher bot, then MaskablePPO improves on it.

A network that reads card counts learns which discard keeps words together only
slowly from the game's sparse round scores. So a run may start by behaviour
cloning: the teacher (`pretrain.teacher`, e.g. `greedy`) plays the learner's seat
of the training env against the configured opponents for `pretrain.games` games;
the policy is fitted to the teacher's moves (masked cross-entropy) and the value
head to the discounted returns of those games. PPO then starts from a policy that
plays like the teacher and a value function that knows what a position is worth.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import RunConfig
from .opponents import make_training_env

_DEMO_STREAM = 0x44454D4F  # "DEMO"


@dataclass
class Demonstrations:
    """The teacher's decisions: observations (with features), masks, actions and discounted returns."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    games: int
    seconds: float


def collect_demonstrations(cfg: RunConfig, games: int, seed: int) -> Demonstrations:
    """Play `games` games with the teacher in the learner's seat of the training env (seeded by `seed`)."""
    from agents.registry import make

    rules = cfg.game_config()
    env = make_training_env(
        rules.to_dict(),
        cfg.env_options(),
        [(o.spec, o.weight) for o in cfg.opponents],
        features=cfg.algo.observation_features,
        layout_shaping=cfg.env["layout_shaping"],
    )
    teacher = make(cfg.pretrain.teacher, config=rules)
    base = env.observation_space.shape[0] - (env.features.features.size if env.features else 0)
    # Its own stream of the run seed: the demonstration deals differ from the training envs' deals.
    seeds = np.random.SeedSequence([seed, _DEMO_STREAM]).generate_state(games, dtype=np.uint32)
    obs_list, mask_list, action_list, return_list = [], [], [], []
    t0 = time.perf_counter()
    for g in range(games):
        teacher.reset(int(seeds[g]) + 1)
        obs, _ = env.reset(seed=int(seeds[g]))
        rewards = []
        done = False
        while not done:
            mask = env.action_masks()
            action = int(teacher.act(obs[:base], mask.astype(np.int8)))
            obs_list.append(obs)
            mask_list.append(mask)
            action_list.append(action)
            obs, reward, terminated, truncated, _ = env.step(action)
            rewards.append(float(reward))
            done = terminated or truncated
        running = 0.0
        episode_returns = []
        for r in reversed(rewards):
            running = r + cfg.algo.gamma * running
            episode_returns.append(running)
        return_list.extend(reversed(episode_returns))
    env.close()
    return Demonstrations(
        observations=np.asarray(obs_list, dtype=np.float32),
        masks=np.asarray(mask_list, dtype=bool),
        actions=np.asarray(action_list, dtype=np.int64),
        returns=np.asarray(return_list, dtype=np.float32),
        games=games,
        seconds=time.perf_counter() - t0,
    )


def behaviour_clone(model: Any, data: Demonstrations, cfg: RunConfig, seed: int) -> dict[str, Any]:
    """Fit the policy to the teacher's actions and the value head to the returns; returns the figures.

    A tenth of the decisions is held out to report how often the policy's most
    probable move is the teacher's.
    """
    import torch

    p = cfg.pretrain
    policy = model.policy
    rng = np.random.default_rng(seed)
    n = len(data.actions)
    order = rng.permutation(n)
    held = order[: max(1, n // 10)]
    train = order[max(1, n // 10) :]

    def tensors(idx):
        return (
            torch.as_tensor(data.observations[idx], device=model.device),
            data.masks[idx],
            torch.as_tensor(data.actions[idx], device=model.device),
            torch.as_tensor(data.returns[idx], device=model.device),
        )

    optimizer = torch.optim.Adam(policy.parameters(), lr=p.learning_rate)
    policy.set_training_mode(True)
    t0 = time.perf_counter()
    losses = []
    for _ in range(p.epochs):
        rng.shuffle(train)
        for start in range(0, len(train), p.batch_size):
            obs, masks, actions, returns = tensors(train[start : start + p.batch_size])
            dist = policy.get_distribution(obs, action_masks=masks)
            values = policy.predict_values(obs).flatten()
            loss = -dist.log_prob(actions).mean() + p.value_coef * torch.nn.functional.mse_loss(values, returns)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.algo.max_grad_norm)
            optimizer.step()
            losses.append(loss.item())
    policy.set_training_mode(False)
    with torch.no_grad():
        obs, masks, actions, returns = tensors(held)
        dist = policy.get_distribution(obs, action_masks=masks)
        chosen = dist.distribution.probs.argmax(dim=1)
        accuracy = float((chosen == actions).float().mean())
        value_error = float(torch.sqrt(torch.nn.functional.mse_loss(policy.predict_values(obs).flatten(), returns)))
    return {
        "teacher": p.teacher,
        "games": data.games,
        "decisions": int(n),
        "collect_seconds": data.seconds,
        "fit_seconds": time.perf_counter() - t0,
        "epochs": p.epochs,
        "final_loss": float(np.mean(losses[-20:])) if losses else None,
        "held_out_accuracy": accuracy,
        "held_out_value_rmse": value_error,
    }
