"""The sb3 trainer: MaskablePPO (sb3-contrib) on `Quiddler-v0` with bot opponents and a self-play league.

What only SB3 needs; the run folder, checkpoints, evaluation and the best model are the
run layer's (`quiddler_agents.training.run`). The pieces:

- Imitation warm start (`pretrain`): before the first step of a new run, the network
  copies a teacher bot.
- Vector env: `n_envs` `TrainingEnv`s (opponents drawn per episode from the configured
  mixture and the league pool) in a `DummyVecEnv` or `SubprocVecEnv`, under `VecMonitor`
  and a timer of the time the learner waits on the envs. Masks reach the policy through
  `action_masks()`, served from the step infos.
- Privileged critic (`algo.privileged_critic`): the envs append the game's state, seat-relative
  to the learner, to each observation, and the policy is a `PrivilegedCriticPolicy` whose actor
  reads the observation only (`quiddler_agents.policies.privileged`).
- `RunCallback`: at the start of each rollout (after the previous update, so weights,
  optimiser and step count agree) it adds a league snapshot when due and hands the step
  to `RunSession.boundary`; it drives the progress bar and logs training win rates.
- Checkpoint files: the policy bundle (`policy/`), `optimizer.pt`, `rng.pt` (torch's
  generator); the backend state in `state.json` holds the update and episode counters,
  the league pool and numpy's and Python's global generators (SB3 draws minibatches from
  them). Resume reads only tensors (`weights_only=True`) and JSON: nothing is unpickled.
  Games in progress at a checkpoint are not saved: a resumed run starts new games,
  seeded from (seed, step).
"""

from __future__ import annotations

import random
import time
from collections import deque
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter, Logger
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnvWrapper, VecMonitor

from quiddler_env.core import files

from ...policies.bundle import WEIGHTS_FILE, PolicyLoadError, load_weights
from ...policies.sb3 import save_policy_bundle
from ..checks import RunConfigError
from ..config import RunConfig
from ..opponents import LEAGUE
from ..run import CheckpointError, RunSession, next_multiple, session_seed
from .league import League
from .opponents import make_training_env

POLICY_DIR = "policy"
OPTIMIZER_FILE = "optimizer.pt"
RNG_FILE = "rng.pt"
WIN_WINDOW = 200
"""Episodes in the sliding window of the training win rates."""


def _outcome(info: dict[str, Any]) -> str:
    """'win' (sole top total), 'tie' (shared top) or 'loss' for the learner, from a final step's info."""
    winners = info.get("winners")
    seat = info.get("seat")
    if winners is None or seat not in winners:
        return "loss"
    return "win" if len(winners) == 1 else "tie"


# -- vector env ------------------------------------------------------------------------------------


def build_vec_env(cfg: RunConfig, league_paths: list[str], n_envs: int | None = None):
    """The training vector env: SubprocVecEnv (or DummyVecEnv) of TrainingEnvs, or the batched engine's
    `BatchedVecEnv`, under VecMonitor and a timer."""
    n = n_envs or cfg.train.n_envs
    # What every training game is made from: rules, env options, opponents, league, features.
    common = (
        cfg.rules,
        cfg.env_options,
        [(o.spec, o.weight) for o in cfg.opponents],
        cfg.league.weight if cfg.league.enabled else 0.0,
        list(league_paths),
        cfg.league.deterministic,
        cfg.algo.observation_features,
    )
    privileged = cfg.algo.privileged_critic
    kind = cfg.train.vec_env
    if kind == "batched":
        from .batched import BatchedVecEnv

        return TimedVecEnv(VecMonitor(BatchedVecEnv(n, *common, privileged=privileged)))
    factory = partial(make_training_env, *common, cfg.backend_env["layout_shaping"], privileged)
    if kind == "auto":
        kind = "subproc" if n > 1 else "dummy"
    venv = SubprocVecEnv([factory] * n) if kind == "subproc" else DummyVecEnv([factory] * n)
    return TimedVecEnv(VecMonitor(venv))


class TimedVecEnv(VecEnvWrapper):
    """Adds up the wall time the learner spends waiting on the envs, and serves the action masks from the infos.

    MaskablePPO asks for the masks with `env_method("action_masks")` before every
    step: with `SubprocVecEnv` one more round trip to every worker. The env already
    returns the same mask in every info (`info["action_mask"]`; after an automatic
    reset, in the reset info), so the masks are kept from the last step instead.
    """

    def __init__(self, venv):
        super().__init__(venv)
        self.env_seconds = 0.0
        self._masks: list[np.ndarray] | None = None

    def _keep_masks(self, infos, dones=None) -> None:
        reset_infos = self.unwrapped.reset_infos
        try:
            self._masks = [
                np.asarray((reset_infos[i] if dones is not None and dones[i] else infos[i])["action_mask"], dtype=bool)
                for i in range(self.num_envs)
            ]
        except (KeyError, IndexError, TypeError):
            self._masks = None  # an env without masks in its infos: ask the envs

    def reset(self):
        t0 = time.perf_counter()
        try:
            obs = self.venv.reset()
            self._keep_masks(self.unwrapped.reset_infos)
            return obs
        finally:
            self.env_seconds += time.perf_counter() - t0

    def step_async(self, actions):
        t0 = time.perf_counter()
        self._masks = None
        self.venv.step_async(actions)
        self.env_seconds += time.perf_counter() - t0

    def step_wait(self):
        t0 = time.perf_counter()
        try:
            obs, rewards, dones, infos = self.venv.step_wait()
            self._keep_masks(infos, dones)
            return obs, rewards, dones, infos
        finally:
            self.env_seconds += time.perf_counter() - t0

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks" and indices is None and not method_args and self._masks is not None:
            return [m.copy() for m in self._masks]
        t0 = time.perf_counter()
        try:
            return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)
        finally:
            self.env_seconds += time.perf_counter() - t0


def _schedule(s):
    # SB3's own schedule classes, so model.zip loads without this package.
    return s.start if s.constant else LinearSchedule(s.start, s.end, 1.0)


def build_model(cfg: RunConfig, venv: Any):
    """A fresh MaskablePPO for the config (seeded with the run seed); with `algo.privileged_critic` its policy is a
    `PrivilegedCriticPolicy` whose actor reads the observation, the leading part of the env's [observation | state];
    with `algo.action_features` an `ActionFeaturePolicy` (its head reads each move's solver features)."""
    a = cfg.algo
    policy: Any = "MlpPolicy"
    privileged = {}
    state_size = 0
    if a.privileged_critic:
        from quiddler_env.envs.state import state_layout

        from ...policies.privileged import PrivilegedCriticPolicy

        state_size = state_layout(cfg.rules.num_players, cfg.rules.challenges).size
        policy, privileged = PrivilegedCriticPolicy, {"observation_size": venv.observation_space.shape[0] - state_size}
    if a.action_features:
        from quiddler_env.features import feature_set

        from ...policies.action_head import ActionFeaturePolicy

        actor = venv.observation_space.shape[0] - state_size
        offset = actor - feature_set(a.observation_features).size
        policy, privileged = ActionFeaturePolicy, {"observation_size": actor, "feature_offset": offset}
    return MaskablePPO(
        policy,
        venv,
        learning_rate=_schedule(a.learning_rate),
        n_steps=a.n_steps,
        batch_size=a.batch_size,
        n_epochs=a.n_epochs,
        gamma=a.gamma,
        gae_lambda=a.gae_lambda,
        clip_range=_schedule(a.clip_range),
        ent_coef=a.ent_coef,
        vf_coef=a.vf_coef,
        max_grad_norm=a.max_grad_norm,
        target_kl=a.target_kl,
        normalize_advantage=a.normalize_advantage,
        policy_kwargs={
            "net_arch": {k: list(v) for k, v in a.net_arch.items()},
            "activation_fn": getattr(torch.nn, a.activation),
            "ortho_init": a.ortho_init,
            **privileged,
        },
        seed=cfg.seed,
        device=a.device,
        verbose=0,
    )


NEW_HEAD_WEIGHTS = ("action_net.feature_weights.",)
"""Weights a plain bundle lacks that `init_weights` leaves at their start (`action_head`'s, zero)."""
CRITIC_INPUT = "mlp_extractor.value_net.0.weight"
"""The critic's first layer: a privileged critic's reads [observation | state], a plain bundle's the observation."""


def init_weights(model: Any, source: str) -> list[str]:
    """Fill `model`'s network from the bundle `source` (a folder, a run folder or `zoo:NAME`; weights only, nothing
    unpickled); returns the names it left at their initial values (`NEW_HEAD_WEIGHTS`, and a privileged critic's
    state columns: `_widen_critic`). A bundle of another network shape or another feature set is a `RunConfigError`
    naming the first difference."""
    from ...policies import bundle
    from ...policies.sb3 import read_sb3_description
    from ...zoo import entries, entry_path

    key = "algo.init_policy"
    name = source[len("zoo:") :] if source.startswith("zoo:") else None
    if name is not None and name not in entries():
        raise RunConfigError(f"config key {key!r}: no zoo entry {name!r} (the zoo has {', '.join(entries())})")
    path = entry_path(name) if name is not None else source
    try:
        folder = bundle.bundle_dir(path)
        desc = read_sb3_description(folder)
        bundle.verify_weights(folder, desc)
        state = load_weights(folder / WEIGHTS_FILE)
    except (PolicyLoadError, OSError) as exc:
        raise RunConfigError(f"config key {key!r}: {exc}") from None
    own = model.policy.state_dict()
    widened = _widen_critic(model.policy, state, own)
    for k, v in state.items():
        if k not in own:
            raise RunConfigError(f"config key {key!r}: {source} has weights {k!r} this run's network lacks")
        if tuple(v.shape) != tuple(own[k].shape):
            raise RunConfigError(
                f"config key {key!r}: {source}'s {k} is {tuple(v.shape)}, this run's {tuple(own[k].shape)} "
                "(another net_arch, observation_features or table)"
            )
    new = [k for k in own if k not in state]
    if any(not k.startswith(NEW_HEAD_WEIGHTS) for k in new):
        raise RunConfigError(f"config key {key!r}: {source} lacks this run's weights {new[0]!r}")
    model.policy.load_state_dict(state, strict=False)
    return new + widened


def _widen_critic(policy: Any, state: dict[str, torch.Tensor], own: dict[str, torch.Tensor]) -> list[str]:
    """A plain bundle into a privileged critic (`algo.privileged_critic`): the critic's first layer takes the
    bundle's weights on the observation's columns and zeros on the state's, so the new critic values every position
    as the bundle's did and learns from there what the state adds. Returns the names it widened (as
    `"<name>'s state columns (zero)"`); a bundle that already reads the state, or a plain run, is left as it is."""
    size = getattr(policy, "observation_size", None)
    plain = state.get(CRITIC_INPUT)
    target = own.get(CRITIC_INPUT)
    if size is None or plain is None or target is None or tuple(plain.shape) == tuple(target.shape):
        return []
    if plain.shape[0] != target.shape[0] or plain.shape[1] != size:
        return []  # another shape: the caller's shape check names it
    wide = torch.zeros_like(target)
    wide[:, :size] = plain
    state[CRITIC_INPUT] = wide
    return [f"{CRITIC_INPUT}'s state columns (zero)"]


# -- the trainer -----------------------------------------------------------------------------------


class SB3Trainer:
    """The `Trainer` of the run layer for MaskablePPO."""

    def __init__(self, session: RunSession) -> None:
        cfg = session.cfg
        self.cfg = cfg
        self.session = session
        torch.set_num_threads(cfg.train.torch_threads)
        self.league = League(session.folder, cfg.league.pool_size) if cfg.league.enabled else None
        self.next_snapshot = next_multiple(0, cfg.league.snapshot_every) if cfg.league.enabled else None
        self.venv = build_vec_env(cfg, [])
        self.model = build_model(cfg, self.venv)

    # -- the run layer's calls -----------------------------------------------------------------

    def num_timesteps(self) -> int:
        return int(self.model.num_timesteps)

    def export_policy(self, folder: Path, description: dict[str, Any]) -> None:
        save_policy_bundle(self.model, folder, {**description, "algorithm": "MaskablePPO"})

    def save_state(self, folder: Path) -> dict[str, Any]:
        step = self.num_timesteps()
        self.export_policy(folder / POLICY_DIR, self.session.description(step))
        optimizer = self.model.policy.optimizer.state_dict()
        files.write_atomic(folder / OPTIMIZER_FILE, lambda fh: torch.save(optimizer, fh))
        rng = {"torch": torch.get_rng_state()}
        files.write_atomic(folder / RNG_FILE, lambda fh: torch.save(rng, fh))
        np_state = np.random.get_state()
        version, internal, gauss = random.getstate()
        return {
            "n_updates": int(self.model._n_updates),
            "episode_num": int(self.model._episode_num),
            "numpy_global_rng": [
                np_state[0],
                np_state[1].tolist(),
                int(np_state[2]),
                int(np_state[3]),
                float(np_state[4]),
            ],
            "python_random": [version, list(internal), gauss],
            "league": self.league.state() if self.league else [],
            "next_snapshot": self.next_snapshot,
        }

    def load_state(self, folder: Path, state: dict[str, Any]) -> None:
        model = self.model
        try:
            backend = state["backend_state"]
            weights = load_weights(folder / POLICY_DIR / "policy.pt")
            optimizer = load_weights(folder / OPTIMIZER_FILE)
            rng = load_weights(folder / RNG_FILE)
            model.policy.load_state_dict(weights, strict=True)
            model.policy.optimizer.load_state_dict(optimizer)
            league = (
                League(self.session.folder, self.cfg.league.pool_size, backend.get("league", []))
                if self.cfg.league.enabled
                else None
            )
            model.num_timesteps = int(state["num_timesteps"])
            model._n_updates = int(backend["n_updates"])
            model._episode_num = int(backend["episode_num"])
            torch.set_rng_state(rng["torch"])
            name, keys, pos, has_gauss, cached = backend["numpy_global_rng"]
            version, internal, gauss = backend["python_random"]
        except (PolicyLoadError, OSError, KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise CheckpointError(f"checkpoint {folder} cannot be restored: {exc}") from None
        np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
        random.setstate((version, tuple(internal), gauss))
        self.league = league
        self.next_snapshot = backend.get("next_snapshot", self.next_snapshot)
        if league is not None:
            self.venv.env_method("set_league", league.paths())

    def env_seconds(self) -> float:
        return self.venv.env_seconds

    def summary(self) -> dict[str, Any]:
        return {"n_envs": self.cfg.train.n_envs, "vec_env": self.cfg.train.vec_env}

    def close(self) -> None:
        self.venv.close()

    # -- training ------------------------------------------------------------------------------

    def say_init(self, new: list[str]) -> None:
        extra = f"; new, at their initial values: {', '.join(new)}" if new else ""
        self.session.say(f"weights from {self.cfg.algo.init_policy}{extra}")

    def pretrain(self) -> None:
        """The imitation warm start of a new run (`pretrain.teacher`), figures in pretrain.json."""
        from .pretrain import PretrainStore, imitate

        session = self.session
        figures = imitate(
            self.model,
            self.cfg,
            self.cfg.seed,
            say=session.say,
            progress=session.progress,
            store=PretrainStore(session.folder, self.model, clock=session),
            measure=lambda label: [{**r.as_dict(), "stage": label} for r in session.evaluate_now(self, label)],
        )
        files.write_json(session.folder / "pretrain.json", figures)
        # The warm start's evaluations (a resumed one's included) count for the time to strength.
        session.warm_start_evals = [
            *figures.get("eval", []),
            *(r for d in figures.get("dagger", []) for r in d.get("eval", [])),
        ]

    def snapshot(self, step: int) -> None:
        """A frozen copy of the learner joins the league pool when its step has come."""
        if self.league is None or self.next_snapshot is None or step < self.next_snapshot:
            return
        self.league.add(self.model, step, self.session.description(step))
        self.venv.env_method("set_league", self.league.paths())
        self.next_snapshot = next_multiple(step, self.cfg.league.snapshot_every)

    def train(self, session: RunSession) -> None:
        cfg = self.cfg
        resumed = session.resumed_from is not None
        if not resumed and cfg.algo.init_policy:
            self.say_init(init_weights(self.model, cfg.algo.init_policy))
        if not resumed and cfg.pretrain.teacher:
            self.pretrain()
        self.venv.seed(session_seed(cfg.seed, session.start_step))
        self.model.set_logger(Logger(str(session.folder), [SessionFormat(session)]))
        callback = RunCallback(self, session)
        session.t_start = time.perf_counter()
        remaining = cfg.train.total_timesteps - session.start_step
        if remaining > 0:
            self.model.learn(
                remaining,
                callback=callback,
                log_interval=cfg.train.log_interval,
                reset_num_timesteps=not resumed,
                progress_bar=False,
            )
        self.snapshot(self.num_timesteps())  # the pool at the end, as the final checkpoint records it


def make_trainer(session: RunSession) -> SB3Trainer:
    return SB3Trainer(session)


class SessionFormat(KVWriter):
    """SB3 logger output: each dump becomes a row of train.csv (and TensorBoard) through the run session."""

    def __init__(self, session: RunSession) -> None:
        self.session = session

    def write(self, key_values, key_excluded, step=0):
        row: dict[str, Any] = {"step": step}
        for key, value in key_values.items():
            excluded = key_excluded.get(key)
            if excluded is not None and "csv" in excluded:
                continue
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                row[key] = value
        self.session.log_train(row)

    def close(self):
        pass


class RunCallback(BaseCallback):
    """League snapshots and the run layer's boundary at rollout starts; progress bar; training statistics."""

    def __init__(self, trainer: SB3Trainer, session: RunSession) -> None:
        super().__init__(verbose=0)
        self.trainer = trainer
        self.session = session
        self.outcomes: deque[tuple[str, tuple[str, ...]]] = deque(maxlen=WIN_WINDOW)
        self.bar = None

    def _on_training_start(self) -> None:
        cfg = self.session.cfg
        # Training stops at the first whole rollout past total_timesteps.
        rollout = cfg.algo.n_steps * self.training_env.num_envs
        total = -(-cfg.train.total_timesteps // rollout) * rollout
        start = int(self.model.num_timesteps)
        against = ", ".join(o.spec for o in cfg.opponents) + (" and the league" if cfg.league.enabled else "")
        self.session.say(
            f"training: MaskablePPO for {total - start} steps against {against}"
            + (f" (from step {start})" if start else "")
        )
        self.bar = self.session.progress(
            "training", total, "step", show=cfg.train.progress_bar, initial=start, unit_scale=True, smoothing=0.1
        )

        def show(rows) -> None:
            self.bar.postfix(" ".join(f"{r.opponent} {r.win_rate:.2f}" for r in rows))

        self.session.on_eval = show

    def _on_rollout_start(self) -> None:
        step = int(self.model.num_timesteps)
        t0 = time.perf_counter()
        self.trainer.snapshot(step)
        self.session.checkpoint_seconds += time.perf_counter() - t0
        self.session.boundary(self.trainer, step)

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.training_env.num_envs)
        dones = self.locals.get("dones")
        if dones is not None and dones.any():
            for done, info in zip(dones, self.locals["infos"], strict=True):
                if done:
                    kinds = tuple(
                        LEAGUE if n.startswith(f"{LEAGUE}:") else n for n in info.get("opponent_policies", ())
                    )
                    self.outcomes.append((_outcome(info), kinds))
        return True

    def _on_rollout_end(self) -> None:
        stats = self.session.timing(self.trainer)
        self.logger.record("time/env_share", stats["env_share"])
        self.logger.record("time/steps_per_second", stats["steps_per_second"])
        if self.outcomes:
            self.logger.record("rollout/win_rate", float(np.mean([o == "win" for o, _ in self.outcomes])))
            by_kind: dict[str, list[bool]] = {}
            for outcome, kinds in self.outcomes:
                for kind in set(kinds):
                    by_kind.setdefault(kind, []).append(outcome == "win")
            for kind, wins in by_kind.items():
                if not kind.startswith("policy:"):  # paths make poor column names
                    self.logger.record(f"rollout/win_rate_vs_{kind}", float(np.mean(wins)))

    def _on_training_end(self) -> None:
        if self.bar is not None:
            steps = self.bar.done - self.bar.initial
            seconds = self.bar.close()
            self.bar = None
            self.session.on_eval = None
            self.session.say(f"training: {steps} steps in {seconds:.1f} s ({steps / max(seconds, 1e-9):.0f} steps/s)")
