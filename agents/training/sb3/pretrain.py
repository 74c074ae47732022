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

Expert iteration (Anthony et al. 2017; AlphaZero's loop): with `pretrain.dagger_teacher: guided` the DAgger
rounds are labelled by the `guided` search bot guided by the learner's own network as it stands at that round
(its favourite moves join the candidates and it plays the rollouts), so each round's search is stronger than the
network it trains, and the network trained on it guides the next round's search. `pretrain.eval_each_round`
measures the learner after the first fit and after each round (`eval.opponents`, `eval.games`, in pretrain.json).

The warm start is resumable: after the first fit and after each DAgger round its progress (the network's weights,
every decision gathered, the figures) is written as one folder, `pretrain/` in the run folder, so a run cut during
it (`train.py --resume`) goes on after its last finished stage with the same deals and labels.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from quiddler_env.core import files

from ...progress import Progress
from ..config import RunConfig, guided_by_learner
from ..run import PRETRAIN_DIR
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
    teacher: Any = None,
) -> Demonstrations:
    """Play `games` games in the learner's seat of the training env; every decision labelled by the teacher.

    Without `actor` the teacher plays its own moves; with one, the actor's move is
    played and the teacher's is the label (DAgger). `stream` picks the deals: each
    DAgger round has its own. `progress(1)` is called after each game. `teacher`: the labelling agent (default:
    `pretrain.teacher`'s).
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
    if teacher is None:
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


def make_teacher(spec: str, cfg: RunConfig, model: Any) -> Any:
    """The agent `spec` names, labelling for the run; `guided` without `policy=` is guided by `model`'s network as
    it stands (expert iteration)."""
    from ...guided import GuidedSearchAgent
    from ...registry import make, parse_spec

    if not guided_by_learner(spec):
        return make(spec, config=cfg.rules)
    _, _, params = parse_spec(spec)
    return GuidedSearchAgent(config=cfg.rules, network=learner_network(model, cfg), **params)


def learner_network(model: Any, cfg: RunConfig) -> Callable[[Any], Any]:
    """For `guided`: the rules -> the model's network as a deterministic `PolicyAgent` (its weights live: a later
    fit moves it)."""
    from ...policies.sb3 import PolicyAgent

    def network(rules: Any) -> Any:
        size = int(model.observation_space.shape[0])
        return PolicyAgent(model.policy, size, deterministic=True, config=rules, features=cfg.algo.observation_features)

    return network


@dataclass
class PretrainProgress:
    """What the warm start has finished: `stage` 0 is the teacher's games and the first fit, k the DAgger round k."""

    stage: int
    data: Demonstrations
    """Every decision gathered so far, in order."""
    figures: dict[str, Any] = field(default_factory=dict)


class PretrainStore:
    """The warm start's progress in the run folder: `pretrain/` (weights, decisions, figures), replaced whole.

    With a `clock` (the `RunSession`) the progress records the run's clock, and loading it carries that time
    over to the session going on with it: the run's clock counts the stages kept, not the cut one.
    """

    _ARRAYS = ("observations", "masks", "actions", "returns")

    def __init__(self, run_folder: str | Path, model: Any, clock: Any = None) -> None:
        self.folder = Path(run_folder) / PRETRAIN_DIR
        self.model = model
        self.clock = clock

    def save(self, progress: PretrainProgress) -> None:
        """Write the progress and the model's weights as one unit (the older progress or this one, never a mix)."""
        import torch

        data = progress.data
        arrays = {k: getattr(data, k) for k in self._ARRAYS}
        if data.targets is not None:
            arrays["targets"] = data.targets
        weights = self.model.policy.state_dict()
        with files.staged_folder(self.folder) as stage:
            files.write_atomic(stage / "policy.pt", lambda fh: torch.save(weights, fh))
            files.write_atomic(stage / "decisions.npz", lambda fh: np.savez_compressed(fh, **arrays))
            files.write_json(
                stage / "progress.json",
                {
                    "stage": progress.stage,
                    "games": data.games,
                    "seconds": data.seconds,
                    "figures": progress.figures,
                    "run_seconds": self.clock.run_seconds() if self.clock is not None else None,
                },
            )

    def load(self) -> PretrainProgress | None:
        """The progress saved, with the model's weights restored; None if there is none."""
        from ...policies.bundle import load_weights

        files.recover_folder(self.folder)
        if not (self.folder / "progress.json").is_file():
            return None
        meta = files.read_json(self.folder / "progress.json")
        with np.load(self.folder / "decisions.npz") as npz:
            arrays = {k: npz[k] for k in npz.files}
        self.model.policy.load_state_dict(load_weights(self.folder / "policy.pt"), strict=True)
        if self.clock is not None and meta.get("run_seconds") is not None:
            self.clock.carry_over(float(meta["run_seconds"]))
        data = Demonstrations(
            **{k: arrays[k] for k in self._ARRAYS},
            games=int(meta["games"]),
            seconds=float(meta["seconds"]),
            targets=arrays.get("targets"),
        )
        return PretrainProgress(int(meta["stage"]), data, dict(meta["figures"]))


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
    store: PretrainStore | None = None,
    measure: Callable[[str], list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The whole warm start: the teacher's games, the fit, then the DAgger rounds; returns the figures.

    `say` gets a line as each part starts and ends; `progress(label, total, unit)` shows each part's progress
    (`RunSession.progress`: a bar on a terminal, else a line every tenth). With a `store` the progress is saved
    after each stage and a saved one is taken up where it stopped. `measure(label)`, with
    `pretrain.eval_each_round`, evaluates the learner after each stage (its rows go into the figures).
    """
    p = cfg.pretrain
    done = store.load() if store is not None else None
    if done is None:
        against = ", ".join(o.spec for o in cfg.opponents)
        say(f"imitation: playing {p.games} games of {p.teacher} against {against}")
        with progress("imitation", p.games, "game") as bar:
            data = collect_demonstrations(
                cfg, p.games, seed, progress=bar.update, teacher=make_teacher(p.teacher, cfg, model)
            )
        say(
            f"imitation: {p.games} games played in {data.seconds:.1f} s; fitting the network to their "
            f"{len(data.actions)} decisions ({p.epochs} epochs)"
        )
        with progress("imitation fit", p.epochs, "epoch") as bar:
            figures = behaviour_clone(model, data, cfg, seed, progress=bar.update)
        say(
            f"imitation of {p.teacher}: {figures['decisions']} decisions, held-out accuracy "
            f"{figures['held_out_accuracy']:.3f} (fit in {figures['fit_seconds']:.1f} s)"
        )
        if measure is not None and p.eval_each_round:
            figures["eval"] = measure("after the imitation")
        done = PretrainProgress(0, data, figures)
        if store is not None:
            store.save(done)
    else:
        say(f"imitation: resuming after {'the first fit' if done.stage == 0 else f'DAgger round {done.stage}'}")
    data, figures = done.data, done.figures
    rounds = list(figures.get("dagger", []))
    labeller = p.dagger_teacher or p.teacher
    teacher = make_teacher(labeller, cfg, model) if p.dagger_rounds > done.stage else None
    for k in range(done.stage + 1, p.dagger_rounds + 1):
        say(f"DAgger round {k}: the learner plays {p.dagger_games} games, {labeller} labels its decisions")
        with progress(f"DAgger round {k}", p.dagger_games, "game") as bar:
            played = collect_demonstrations(
                cfg,
                p.dagger_games,
                seed,
                actor=policy_actor(model),
                stream=k,
                progress=bar.update,
                teacher=teacher,
            )
        data = Demonstrations.concatenate([data, played])
        with progress(f"DAgger round {k} fit", p.epochs, "epoch") as bar:
            fit = behaviour_clone(model, data, cfg, seed + k, progress=bar.update)
        row = {"round": k, **fit, "teacher": labeller, "agreement": played.agreement}
        say(
            f"DAgger round {k}: the learner agreed with {labeller} on {played.agreement:.3f} of its own "
            f"decisions; refit on {fit['decisions']} decisions, held-out accuracy {fit['held_out_accuracy']:.3f}"
        )
        if measure is not None and p.eval_each_round:
            row["eval"] = measure(f"after DAgger round {k}")
        rounds.append(row)
        figures = {**figures, "dagger": rounds}
        if store is not None:
            store.save(PretrainProgress(k, data, figures))
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
