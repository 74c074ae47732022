"""Imitation warm start: the learner's network first copies a teacher bot, then MaskablePPO improves on it.

A network that reads card counts learns which discard keeps words together only
slowly from the game's sparse round scores. So a run may start by behaviour
cloning: the teacher (`pretrain.teacher`, e.g. `greedy`) plays the learner's seat
of the training env against the configured opponents for `pretrain.games` games;
the policy is fitted to the teacher's moves (masked cross-entropy) and the value
head to the discounted returns of those games. PPO then starts from a policy that
plays like the teacher and a value function that knows what a position is worth.

A student that copies a teacher from the teacher's own games never sees the
positions its own mistakes lead to. With `pretrain.dagger_rounds` (DAgger, Ross et
al. 2011) the fitted learner then plays `dagger_games` games itself, the teacher
labels every decision it meets, and the policy is fitted again on all the
decisions gathered so far; the agreement of the learner's moves with the teacher's
on its own games is the figure to watch.

With `pretrain.soft_labels` (a temperature T, in points) a teacher that reports the
values it weighed (`search`'s `last_values`: each candidate's mean rollout result)
labels a decision with softmax(value / T) over those moves rather than with its one
move: the student learns how much better a move is, not just which one won a noisy
comparison (distillation). Decisions it did not weigh keep their one-move label.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...progress import Progress
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
    agreement: float | None = None
    """With a separate actor: how often the actor's move was the teacher's label."""
    targets: np.ndarray | None = None
    """With `soft_labels`: per decision, the distribution over actions the policy is fitted to."""

    @staticmethod
    def concatenate(parts: list[Demonstrations]) -> Demonstrations:
        """All the decisions of `parts`, in order."""
        return Demonstrations(
            observations=np.concatenate([d.observations for d in parts]),
            masks=np.concatenate([d.masks for d in parts]),
            actions=np.concatenate([d.actions for d in parts]),
            returns=np.concatenate([d.returns for d in parts]),
            games=sum(d.games for d in parts),
            seconds=sum(d.seconds for d in parts),
            targets=None if any(d.targets is None for d in parts) else np.concatenate([d.targets for d in parts]),
        )


Actor = Callable[[np.ndarray, np.ndarray], int]
"""Chooses the move played from (observation with features, mask)."""


def collect_demonstrations(
    cfg: RunConfig,
    games: int,
    seed: int,
    actor: Actor | None = None,
    stream: int = 0,
    progress: Callable[[int], None] | None = None,
) -> Demonstrations:
    """Play `games` games in the learner's seat of the training env; every decision labelled by the teacher.

    Without `actor` the teacher plays its own moves; with one, the actor's move is
    played and the teacher's is the label (DAgger). `stream` picks the deals: each
    DAgger round has its own. `progress(1)` is called after each game.
    """
    from ...registry import make

    rules = cfg.rules
    env = make_training_env(
        rules,
        cfg.env_options,
        [(o.spec, o.weight) for o in cfg.opponents],
        features=cfg.algo.observation_features,
        layout_shaping=cfg.backend_env["layout_shaping"],
    )
    teacher = make(cfg.pretrain.teacher, config=rules)
    base = env.observation_space.shape[0] - (env.features.features.size if env.features else 0)
    # Its own stream of the run seed: the demonstration deals differ from the training envs' deals.
    entropy = [seed, _DEMO_STREAM] + ([stream] if stream else [])
    seeds = np.random.SeedSequence(entropy).generate_state(games, dtype=np.uint32)
    obs_list, mask_list, action_list, return_list, target_list = [], [], [], [], []
    temperature = cfg.pretrain.soft_labels
    agreed = 0
    t0 = time.perf_counter()
    for g in range(games):
        teacher.reset(int(seeds[g]) + 1)
        obs, _ = env.reset(seed=int(seeds[g]))
        rewards = []
        done = False
        while not done:
            mask = env.action_masks()
            label = int(teacher.act(obs[:base], mask.astype(np.int8)))
            move = label if actor is None else int(actor(obs, mask))
            agreed += move == label
            obs_list.append(obs)
            mask_list.append(mask)
            action_list.append(label)
            if temperature is not None:
                target_list.append(soft_target(teacher, label, mask.shape[0], temperature))
            obs, reward, terminated, truncated, _ = env.step(move)
            rewards.append(float(reward))
            done = terminated or truncated
        running = 0.0
        episode_returns = []
        for r in reversed(rewards):
            running = r + cfg.algo.gamma * running
            episode_returns.append(running)
        return_list.extend(reversed(episode_returns))
        if progress is not None:
            progress(1)
    env.close()
    return Demonstrations(
        observations=np.asarray(obs_list, dtype=np.float32),
        masks=np.asarray(mask_list, dtype=bool),
        actions=np.asarray(action_list, dtype=np.int64),
        returns=np.asarray(return_list, dtype=np.float32),
        games=games,
        seconds=time.perf_counter() - t0,
        agreement=None if actor is None else agreed / max(1, len(action_list)),
        targets=np.asarray(target_list, dtype=np.float32) if temperature is not None else None,
    )


def soft_target(teacher: Any, label: int, size: int, temperature: float) -> np.ndarray:
    """softmax(value / temperature) over the moves the teacher weighed for its last decision; one-hot on `label`
    when it weighed none (or reports no values)."""
    target = np.zeros(size, dtype=np.float32)
    weighed = getattr(teacher, "last_values", None)
    if weighed is None:
        target[label] = 1.0
        return target
    moves, values = weighed
    z = (np.asarray(values, dtype=np.float64) - np.max(values)) / temperature
    probs = np.exp(z)
    target[np.asarray(moves)] = probs / probs.sum()
    return target


def policy_actor(model: Any) -> Actor:
    """The model's most probable legal move: how the learner plays in evaluation."""

    def act(obs: np.ndarray, mask: np.ndarray) -> int:
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        return int(action)

    return act


def _silent(label: str, total: int, unit: str) -> Progress:
    return Progress(label, total, unit, enabled=False)


def imitate(
    model: Any,
    cfg: RunConfig,
    seed: int,
    say: Callable[[str], None] = print,
    progress: Callable[[str, int, str], Progress] = _silent,
) -> dict[str, Any]:
    """The whole warm start: the teacher's games, the fit, then the DAgger rounds; returns the figures.

    `say` gets a line as each part starts and ends; `progress(label, total, unit)` shows each part's progress
    (`RunSession.progress`: a bar on a terminal, else a line every tenth).
    """
    p = cfg.pretrain
    against = ", ".join(o.spec for o in cfg.opponents)
    say(f"imitation: playing {p.games} games of {p.teacher} against {against}")
    with progress("imitation", p.games, "game") as bar:
        parts = [collect_demonstrations(cfg, p.games, seed, progress=bar.update)]
    say(
        f"imitation: {p.games} games played in {parts[0].seconds:.1f} s; fitting the network to their "
        f"{len(parts[0].actions)} decisions ({p.epochs} epochs)"
    )
    with progress("imitation fit", p.epochs, "epoch") as bar:
        figures = behaviour_clone(model, parts[0], cfg, seed, progress=bar.update)
    say(
        f"imitation of {p.teacher}: {figures['decisions']} decisions, held-out accuracy "
        f"{figures['held_out_accuracy']:.3f} (fit in {figures['fit_seconds']:.1f} s)"
    )
    rounds = []
    for k in range(1, p.dagger_rounds + 1):
        say(f"DAgger round {k}: the learner plays {p.dagger_games} games, {p.teacher} labels its decisions")
        with progress(f"DAgger round {k}", p.dagger_games, "game") as bar:
            played = collect_demonstrations(
                cfg, p.dagger_games, seed, actor=policy_actor(model), stream=k, progress=bar.update
            )
        parts.append(played)
        with progress(f"DAgger round {k} fit", p.epochs, "epoch") as bar:
            fit = behaviour_clone(model, Demonstrations.concatenate(parts), cfg, seed + k, progress=bar.update)
        rounds.append({"round": k, "agreement": played.agreement, **fit})
        say(
            f"DAgger round {k}: the learner agreed with {p.teacher} on {played.agreement:.3f} of its own "
            f"decisions; refit on {fit['decisions']} decisions, held-out accuracy {fit['held_out_accuracy']:.3f}"
        )
    if rounds:
        figures["dagger"] = rounds
    return figures


def behaviour_clone(
    model: Any, data: Demonstrations, cfg: RunConfig, seed: int, progress: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Fit the policy to the teacher's actions and the value head to the returns; returns the figures.

    A tenth of the decisions is held out to report how often the policy's most
    probable move is the teacher's. `progress(1)` is called after each epoch.
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

    def policy_loss(dist, actions, idx):
        if data.targets is None:
            return -dist.log_prob(actions).mean()
        # Cross-entropy with the soft targets; masked moves have target 0 (and a large finite negative logit).
        targets = torch.as_tensor(data.targets[idx], device=model.device)
        log_probs = torch.log_softmax(dist.distribution.logits, dim=1)
        return -(targets * log_probs).sum(dim=1).mean()

    optimizer = torch.optim.Adam(policy.parameters(), lr=p.learning_rate)
    policy.set_training_mode(True)
    t0 = time.perf_counter()
    losses = []
    for _ in range(p.epochs):
        rng.shuffle(train)
        for start in range(0, len(train), p.batch_size):
            batch = train[start : start + p.batch_size]
            obs, masks, actions, returns = tensors(batch)
            dist = policy.get_distribution(obs, action_masks=masks)
            values = policy.predict_values(obs).flatten()
            loss = policy_loss(dist, actions, batch) + p.value_coef * torch.nn.functional.mse_loss(values, returns)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.algo.max_grad_norm)
            optimizer.step()
            losses.append(loss.item())
        if progress is not None:
            progress(1)
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
        "soft_labels": p.soft_labels,
        "held_out_value_rmse": value_error,
    }
