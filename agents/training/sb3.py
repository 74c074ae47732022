"""The `sb3` backend: MaskablePPO (sb3-contrib) on `Quiddler-v0` with bot opponents and a self-play league.

`train_sb3(cfg, run_dir, resume=..., quiet=...)` runs one training run into a run
folder (its files: `agents.training.runfiles`). The pieces:

- Imitation warm start (`pretrain`, `agents.training.pretrain`): before the first
  step of a new run, the network copies a teacher bot.
- Vector env: `n_envs` `TrainingEnv`s (opponents drawn per episode from the
  configured mixture and the league pool) in a `SubprocVecEnv` (or `DummyVecEnv`
  for one env), under `VecMonitor` and a timer that measures the time the learner
  waits on the envs. Masks reach the policy through `action_masks()`.
- `RunCallback`: at the start of each rollout (after the previous update, so the
  weights, optimiser and step count agree) it adds league snapshots, evaluates, and
  writes checkpoints when their step has come; it also drives the progress bar and
  logs training win rates and the env time share.
- Evaluation: sb3-contrib's maskable `evaluate_policy` against each configured bot,
  on the same seeded deals every time.
- Checkpoints: `checkpoints/step_<N>/` with the policy bundle (`model.zip`,
  `policy.pt`, `policy.json`), `optimizer.pt`, `rng.pt` (torch's generator) and
  `state.json` (step count, update count, league pool, next event steps, numpy's and
  Python's global generator states that SB3 draws minibatches from). Each is written
  into a temporary folder renamed into place, so a checkpoint folder is complete or
  absent. Resume reads only tensors (`weights_only=True`) and JSON; nothing is
  unpickled. Games in progress at a checkpoint are not saved: a resumed run starts
  new games, seeded from (seed, step).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import time
from collections import deque
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.evaluation import evaluate_policy
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter, Logger, TensorBoardOutputFormat
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnvWrapper, VecMonitor

from agents.policy import WEIGHTS_FILE, save_policy_bundle
from agents.registry import make

from .config import RunConfig
from .league import League
from .opponents import LEAGUE, TrainingEnv, make_training_env
from .runfiles import CsvTable, plot_learning_curve, write_json_atomic

CHECKPOINT_DIR = "checkpoints"
BEST_DIR = "best"
STATE_FILE = "state.json"
OPTIMIZER_FILE = "optimizer.pt"
RNG_FILE = "rng.pt"
STATE_FORMAT = 1
WIN_WINDOW = 200
"""Episodes in the sliding window of the training win rates."""


def session_seed(seed: int, step: int) -> int:
    """The env seed of a (re)start at `step`: fixed by the run seed, different for every restart point."""
    return int(np.random.SeedSequence([seed, step]).generate_state(1, dtype=np.uint32)[0])


def _next_multiple(step: int, every: int) -> int:
    return (step // every + 1) * every


def _outcome(info: dict[str, Any]) -> str:
    """'win' (sole top total), 'tie' (shared top) or 'loss' for the learner, from a final step's info."""
    winners = info.get("winners")
    seat = info.get("seat")
    if winners is None or seat not in winners:
        return "loss"
    return "win" if len(winners) == 1 else "tie"


# -- vector env ------------------------------------------------------------------------------------


def build_vec_env(cfg: RunConfig, league_paths: list[str], n_envs: int | None = None):
    """The training vector env: SubprocVecEnv (or DummyVecEnv) of TrainingEnvs, under VecMonitor and a timer."""
    n = n_envs or cfg.train.n_envs
    factory = partial(
        make_training_env,
        cfg.game_config().to_dict(),
        cfg.env_options(),
        [(o.spec, o.weight) for o in cfg.opponents],
        cfg.league.weight if cfg.league.enabled else 0.0,
        list(league_paths),
        cfg.league.deterministic,
        cfg.algo.observation_features,
        cfg.env["layout_shaping"],
    )
    kind = cfg.train.vec_env
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


# -- evaluation ------------------------------------------------------------------------------------


@dataclass
class EvalResult:
    """The learner against one bot over `games` seeded games."""

    step: int
    opponent: str
    games: int
    wins: int
    ties: int
    mean_score: float
    mean_opponent_score: float
    mean_margin: float
    mean_reward: float
    seconds: float

    @property
    def win_rate(self) -> float:
        return self.wins / self.games

    @property
    def tie_rate(self) -> float:
        return self.ties / self.games

    def row(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "opponent": self.opponent,
            "games": self.games,
            "win_rate": self.win_rate,
            "tie_rate": self.tie_rate,
            "loss_rate": 1 - self.win_rate - self.tie_rate,
            "mean_score": self.mean_score,
            "mean_opponent_score": self.mean_opponent_score,
            "mean_margin": self.mean_margin,
            "mean_reward": self.mean_reward,
            "seconds": self.seconds,
        }


def evaluate_against(model: Any, cfg: RunConfig, spec: str, step: int) -> EvalResult:
    """Play `eval.games` games against `spec` (every opponent seat) with sb3-contrib's maskable evaluation.

    Deals, seats and the bot's moves come from `eval.seed`, so every evaluation of a
    run plays the same games. Scores are final totals; the margin is the learner's
    total minus the best opponent total.
    """
    rules = cfg.game_config()
    bot = make(spec, config=rules)
    features = cfg.algo.observation_features
    venv = DummyVecEnv([lambda: TrainingEnv(rules, opponents=bot, features=features, **cfg.env_options())])
    venv.seed(cfg.eval.seed)
    outcomes: list[str] = []
    scores: list[float] = []
    others: list[float] = []
    margins: list[float] = []

    def on_step(local: dict[str, Any], _globals: dict[str, Any]) -> None:
        if not local["done"]:
            return
        info = local["info"]
        outcomes.append(_outcome(info))
        results = info.get("round_result")
        if results:
            totals = [r["total"] for r in results]
            seat = info["seat"]
            rest = [t for p, t in enumerate(totals) if p != seat]
            scores.append(totals[seat])
            others.append(float(np.mean(rest)))
            margins.append(totals[seat] - max(rest))

    t0 = time.perf_counter()
    rewards, _ = evaluate_policy(
        model,
        venv,
        n_eval_episodes=cfg.eval.games,
        deterministic=cfg.eval.deterministic,
        callback=on_step,
        return_episode_rewards=True,
        warn=False,
    )
    venv.close()

    def mean(xs: list[float]) -> float:
        return float(np.mean(xs)) if xs else float("nan")

    return EvalResult(
        step=step,
        opponent=spec,
        games=len(outcomes),
        wins=outcomes.count("win"),
        ties=outcomes.count("tie"),
        mean_score=mean(scores),
        mean_opponent_score=mean(others),
        mean_margin=mean(margins),
        mean_reward=mean([float(r) for r in rewards]),
        seconds=time.perf_counter() - t0,
    )


# -- model, checkpoints ----------------------------------------------------------------------------


def _schedule(s):
    # SB3's own schedule classes, so model.zip loads without this package.
    return s.start if s.constant else LinearSchedule(s.start, s.end, 1.0)


def build_model(cfg: RunConfig, venv: Any):
    """A fresh MaskablePPO for the config (seeded with the run seed)."""
    a = cfg.algo
    return MaskablePPO(
        "MlpPolicy",
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
        },
        seed=cfg.seed,
        device=a.device,
        verbose=0,
    )


def bundle_description(cfg: RunConfig, step: int, **extra: Any) -> dict[str, Any]:
    """What policy.json records besides the network: the rules, env options and training settings."""
    return {
        "config": cfg.game_config().to_dict(),
        "env_options": cfg.env_options(),
        "run": cfg.name,
        "algorithm": "MaskablePPO",
        "observation_features": cfg.algo.observation_features,
        "num_timesteps": step,
        "opponents": [{"spec": o.spec, "weight": o.weight} for o in cfg.opponents],
        **extra,
    }


def _save_bundle_dir(model: Any, final: Path, description: dict[str, Any]) -> None:
    """A policy bundle as a whole folder: written beside, then renamed into place."""
    tmp = final.parent / f".{final.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    save_policy_bundle(model, tmp, description)
    _replace_dir(tmp, final)


def _replace_dir(tmp: Path, final: Path) -> None:
    old = final.parent / f".{final.name}.old-{os.getpid()}"
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)


def checkpoint_dirs(run_dir: Path) -> list[tuple[int, Path]]:
    """Complete checkpoints of a run, oldest first."""
    out = []
    folder = run_dir / CHECKPOINT_DIR
    if folder.is_dir():
        for p in folder.iterdir():
            if p.name.startswith("step_") and p.name[5:].isdigit() and (p / STATE_FILE).is_file():
                out.append((int(p.name[5:]), p))
    return sorted(out)


def save_checkpoint(model: Any, cfg: RunConfig, run_dir: Path, state: dict[str, Any]) -> Path:
    """Write `checkpoints/step_<N>/` as one complete folder; keep the newest `train.keep_checkpoints`."""
    step = int(model.num_timesteps)
    folder = run_dir / CHECKPOINT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"step_{step:09d}"
    tmp = folder / f".{final.name}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    save_policy_bundle(model, tmp, bundle_description(cfg, step))
    torch.save(model.policy.optimizer.state_dict(), tmp / OPTIMIZER_FILE)
    torch.save({"torch": torch.get_rng_state()}, tmp / RNG_FILE)
    np_state = np.random.get_state()
    full_state = {
        "format": STATE_FORMAT,
        "num_timesteps": step,
        "n_updates": int(model._n_updates),
        "episode_num": int(model._episode_num),
        "numpy_global_rng": [np_state[0], np_state[1].tolist(), int(np_state[2]), int(np_state[3]), float(np_state[4])],
        "python_random": _py_random_state(),
        **state,
    }
    write_json_atomic(tmp / STATE_FILE, full_state)
    _replace_dir(tmp, final)
    for _, old in checkpoint_dirs(run_dir)[: -cfg.train.keep_checkpoints]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def _py_random_state() -> list[Any]:
    version, internal, gauss = random.getstate()
    return [version, list(internal), gauss]


def load_checkpoint(model: Any, folder: Path) -> dict[str, Any]:
    """Restore weights, optimiser, counters and global generators from a checkpoint; returns its state."""
    try:
        state = json.loads((folder / STATE_FILE).read_text())
        weights = torch.load(folder / WEIGHTS_FILE, map_location=model.device, weights_only=True)
        optimizer = torch.load(folder / OPTIMIZER_FILE, map_location=model.device, weights_only=True)
        rng = torch.load(folder / RNG_FILE, weights_only=True)
    except (OSError, ValueError, RuntimeError) as exc:
        raise RuntimeError(f"checkpoint {folder} is unreadable: {exc}") from None
    if state.get("format") != STATE_FORMAT:
        raise RuntimeError(f"checkpoint {folder}: unknown state format {state.get('format')!r}")
    try:
        model.policy.load_state_dict(weights, strict=True)
        model.policy.optimizer.load_state_dict(optimizer)
    except (RuntimeError, ValueError, KeyError) as exc:
        raise RuntimeError(f"checkpoint {folder} does not fit the network of this config: {exc}") from None
    model.num_timesteps = int(state["num_timesteps"])
    model._n_updates = int(state["n_updates"])
    model._episode_num = int(state["episode_num"])
    torch.set_rng_state(rng["torch"])
    name, keys, pos, has_gauss, cached = state["numpy_global_rng"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    version, internal, gauss = state["python_random"]
    random.setstate((version, tuple(internal), gauss))
    return state


# -- the callback ----------------------------------------------------------------------------------


class CsvFormat(KVWriter):
    """SB3 logger output writing each dump as a row of train.csv."""

    def __init__(self, table: CsvTable) -> None:
        self.table = table

    def write(self, key_values, key_excluded, step=0):
        row = {"step": step}
        for key, value in key_values.items():
            excluded = key_excluded.get(key)
            if excluded is not None and "csv" in excluded:
                continue
            if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                row[key] = value
        self.table.append(row)

    def close(self):
        pass


class RunCallback(BaseCallback):
    """League snapshots, evaluations and checkpoints at rollout starts; progress bar; training statistics."""

    def __init__(self, cfg, run_dir, league, eval_table, tb, state, start_step, quiet):
        super().__init__(verbose=0)
        self.cfg = cfg
        self.run_dir = run_dir
        self.league = league
        self.eval_table = eval_table
        self.tb = tb
        self.quiet = quiet
        self.next_checkpoint = state.get("next_checkpoint", _next_multiple(start_step, cfg.train.checkpoint_every))
        self.next_eval = state.get("next_eval", 0 if cfg.eval.at_start else cfg.eval.every)
        self.next_snapshot = state.get(
            "next_snapshot", _next_multiple(start_step, cfg.league.snapshot_every) if cfg.league.enabled else None
        )
        self.best_score = state.get("best_score")
        self.best_step = state.get("best_step")
        self.last_checkpoint = start_step if state else None
        self.last_eval_step = state.get("last_eval_step")
        self.latest_eval: dict[str, EvalResult] = {}
        self.outcomes: deque[tuple[str, tuple[str, ...]]] = deque(maxlen=WIN_WINDOW)
        self.start_step = start_step
        self.eval_seconds = 0.0
        self.checkpoint_seconds = 0.0
        self.t_start = time.perf_counter()
        self.bar = None

    # -- events at rollout boundaries --------------------------------------------------------

    def _on_training_start(self) -> None:
        # t_start stays at construction, just before learn(): the envs' first reset is env time too.
        if self.cfg.train.progress_bar and not self.quiet:
            from tqdm import tqdm

            # Training stops at the first whole rollout past total_timesteps.
            rollout = self.cfg.algo.n_steps * self.training_env.num_envs
            self.bar = tqdm(
                total=-(-self.cfg.train.total_timesteps // rollout) * rollout,
                initial=self.model.num_timesteps,
                unit="step",
                unit_scale=True,
                dynamic_ncols=True,
                desc=self.cfg.name,
                smoothing=0.1,
                file=sys.stderr,
            )

    def _on_rollout_start(self) -> None:
        self.boundary(self.model.num_timesteps)

    def boundary(self, step: int, *, final: bool = False) -> None:
        """What is due at `step` (a rollout start, or the end of training)."""
        cfg = self.cfg
        t0 = time.perf_counter()
        if cfg.league.enabled and self.next_snapshot is not None and step >= self.next_snapshot:
            self.league.add(self.model, step, bundle_description(cfg, step))
            self.training_env.env_method("set_league", self.league.paths())
            self.next_snapshot = _next_multiple(step, cfg.league.snapshot_every)
        self.checkpoint_seconds += time.perf_counter() - t0
        if step >= self.next_eval or (final and self.last_eval_step != step):
            self.evaluate(step)
            self.next_eval = _next_multiple(step, cfg.eval.every)
        if step >= self.next_checkpoint or (final and self.last_checkpoint != step) or self.last_checkpoint is None:
            self.checkpoint(step)

    def checkpoint(self, step: int) -> None:
        t0 = time.perf_counter()
        if step >= self.next_checkpoint:
            self.next_checkpoint = _next_multiple(step, self.cfg.train.checkpoint_every)
        save_checkpoint(
            self.model,
            self.cfg,
            self.run_dir,
            {
                "league": self.league.state() if self.league else [],
                "next_checkpoint": self.next_checkpoint,
                "next_eval": self.next_eval,
                "next_snapshot": self.next_snapshot,
                "best_score": self.best_score,
                "best_step": self.best_step,
                "last_eval_step": self.last_eval_step,
            },
        )
        self.last_checkpoint = step
        self.checkpoint_seconds += time.perf_counter() - t0

    def evaluate(self, step: int) -> None:
        t0 = time.perf_counter()
        results = [evaluate_against(self.model, self.cfg, spec, step) for spec in self.cfg.eval.opponents]
        self.last_eval_step = step
        for r in results:
            self.eval_table.append(r.row())
            self.latest_eval[r.opponent] = r
            if self.tb is not None:
                values = {
                    f"eval/{r.opponent}/win_rate": r.win_rate,
                    f"eval/{r.opponent}/mean_score": r.mean_score,
                    f"eval/{r.opponent}/mean_margin": r.mean_margin,
                }
                self.tb.write(values, dict.fromkeys(values), step)
        score = (float(np.mean([r.win_rate for r in results])), float(np.mean([r.mean_margin for r in results])))
        if self.best_score is None or score > tuple(self.best_score):
            self.best_score = list(score)
            self.best_step = step
            _save_bundle_dir(
                self.model,
                self.run_dir / BEST_DIR,
                bundle_description(self.cfg, step, eval={r.opponent: r.row() for r in results}),
            )
        plot_learning_curve(self.eval_table.read(), self.run_dir / "learning_curve.png", f"{self.cfg.name}")
        self.eval_seconds += time.perf_counter() - t0
        if self.bar is not None:
            self.bar.set_postfix_str(" ".join(f"{r.opponent} {r.win_rate:.2f}" for r in results), refresh=True)
        elif not self.quiet:
            figures = ", ".join(f"{r.opponent}: win {r.win_rate:.2f} score {r.mean_score:.0f}" for r in results)
            print(f"[{self.cfg.name}] step {step}: eval {figures}", file=sys.stderr, flush=True)

    # -- every step -----------------------------------------------------------------------------

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
        stats = self.timing()
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

    def timing(self) -> dict[str, float]:
        """Steps/s and env time share of this session, both without evaluation and checkpoint time."""
        wall = time.perf_counter() - self.t_start
        busy = max(wall - self.eval_seconds - self.checkpoint_seconds, 1e-9)
        env_seconds = getattr(self.training_env, "env_seconds", 0.0)
        steps = self.model.num_timesteps - self.start_step
        return {
            "wall_seconds": wall,
            "train_seconds": busy,
            "eval_seconds": self.eval_seconds,
            "checkpoint_seconds": self.checkpoint_seconds,
            "env_seconds": env_seconds,
            "env_share": env_seconds / busy,
            "steps": steps,
            "steps_per_second": steps / busy,
        }

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


# -- the run ---------------------------------------------------------------------------------------


def train_sb3(cfg: RunConfig, run_dir: Path, *, resume: bool, quiet: bool = False) -> dict[str, Any]:
    """Train (or resume) the run in `run_dir`, whose config.yaml and run.json the caller wrote; returns the summary."""
    torch.set_num_threads(cfg.train.torch_threads)
    state: dict[str, Any] = {}
    checkpoint = None
    if resume:
        found = checkpoint_dirs(run_dir)
        if not found:
            raise RuntimeError(f"run folder {run_dir} has no complete checkpoint to resume from")
        checkpoint = found[-1][1]
        state = json.loads((checkpoint / STATE_FILE).read_text())
    start_step = int(state.get("num_timesteps", 0))

    league = League(run_dir, cfg.league.pool_size, state.get("league", [])) if cfg.league.enabled else None
    venv = build_vec_env(cfg, league.paths() if league else [])
    try:
        model = build_model(cfg, venv)
        if checkpoint is not None:
            state = load_checkpoint(model, checkpoint)
        elif cfg.pretrain.teacher:
            from .pretrain import behaviour_clone, collect_demonstrations

            data = collect_demonstrations(cfg, cfg.pretrain.games, cfg.seed)
            figures = behaviour_clone(model, data, cfg, cfg.seed)
            write_json_atomic(run_dir / "pretrain.json", figures)
            if not quiet:
                print(
                    f"[{cfg.name}] imitation of {figures['teacher']}: {figures['decisions']} decisions, held-out "
                    f"accuracy {figures['held_out_accuracy']:.3f}",
                    file=sys.stderr,
                    flush=True,
                )
        venv.seed(session_seed(cfg.seed, start_step))

        train_table = CsvTable(run_dir / "train.csv", keep_until=start_step if resume else None)
        eval_table = CsvTable(run_dir / "eval.csv", keep_until=start_step if resume else None)
        tb = TensorBoardOutputFormat(str(run_dir / "tensorboard"))
        model.set_logger(Logger(str(run_dir), [tb, CsvFormat(train_table)]))
        callback = RunCallback(
            cfg=cfg,
            run_dir=run_dir,
            league=league,
            eval_table=eval_table,
            tb=tb,
            state=state,
            start_step=start_step,
            quiet=quiet,
        )
        remaining = cfg.train.total_timesteps - start_step
        if remaining > 0:
            model.learn(
                remaining,
                callback=callback,
                log_interval=cfg.train.log_interval,
                reset_num_timesteps=not resume,
                progress_bar=False,
            )
        else:
            callback.init_callback(model)
        final_step = int(model.num_timesteps)
        callback.boundary(final_step, final=True)
        timing = callback.timing()
        save_policy_bundle(
            model,
            run_dir,
            bundle_description(
                cfg,
                final_step,
                eval={k: r.row() for k, r in callback.latest_eval.items()},
                best_step=callback.best_step,
            ),
        )
        latest = [r.row() for r in callback.latest_eval.values()] or [
            r for r in eval_table.read() if int(r["step"]) == callback.last_eval_step
        ]
        summary = {
            "name": cfg.name,
            "num_timesteps": final_step,
            "total_timesteps": cfg.train.total_timesteps,
            "resumed_from": start_step if resume else None,
            "n_envs": cfg.train.n_envs,
            "session": timing,
            "best_step": callback.best_step,
            "best_score": callback.best_score,
            "final_eval": latest,
            "model": str(run_dir / "model.zip"),
        }
        write_json_atomic(run_dir / "summary.json", summary)
        tb.close()
        return summary
    finally:
        venv.close()
