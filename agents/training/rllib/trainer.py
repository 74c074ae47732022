"""The rllib trainer: multi-agent PPO on Ray RLlib (new API stack), locally or on a cluster.

    python train.py --config configs/rllib_selfplay.yaml                  # a local Ray on this machine
    python train.py --config configs/rllib_selfplay.yaml --address auto   # join the cluster of this node
    python train.py --resume runs/rllib_selfplay [rllib.num_env_runners=8]

What only RLlib needs; the run folder, checkpoints, resume, evaluation, the best model
and the summary are the run layer's (`quiddler_agents.training.run`). `make_trainer(session)`
returns an `RLlibTrainer`:

- Ray: `ray.init()` starts a local instance sized to the run, or joins `ray.address`
  (the cluster's nodes need this package installed). The trainer shuts down only a Ray
  it started.
- The algorithm: RLlib's PPO on `QuiddlerMultiAgentEnv` (`env.py`) with the
  action-masking module (`module.py`); every learner seat maps to the one module
  `learner` (self-play shares it across all seats); bot seats are played inside the
  env. The config's translation is `config.py` (`RLlibPlan`). Env runners are seeded
  from (run seed, start step), so a resumed run deals new games.
- `train()`: iteration by iteration (`algo.train()`) to `train.total_timesteps` env steps
  (agent moves); after each iteration a row of RLlib's figures goes to `train.csv` and
  the step goes to `RunSession.boundary` (weights, optimiser and step agree there).
- Checkpoint files (`checkpoints/step_<N>/`): RLlib's own checkpoint (`algorithm/`,
  `Algorithm.save_to_path`: module weights, optimiser, connector and metrics state,
  iteration counter; RLlib pickles inside, written by this run and checked against the
  sha256 in `state.json` before `restore_from_path` reads them) and the exported policy
  (`policy/`, playable without Ray). The backend state is the training iteration.
- Policy bundles (`best/`, `final/`, evaluation): the learner's actor (encoder MLP and
  policy head) as a plain MLP (`quiddler_agents.policies.rllib`), checked to reproduce the
  module's logits before it is written; `evaluate.py --players policy:RUN_DIR` plays it
  without Ray.

What runs where (the same on one machine and on a cluster): the driver (this process)
holds the learner when `rllib.num_learners` is 0, the checkpoints, the exports and the
evaluation; each env runner actor holds its own envs, bots, solver and an inference copy
of the module, samples episodes and ships them to the learner; after each update the
learner's weights go back to every runner.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import ray  # at the top: without Ray, backend_part reports "'rllib' is not available here" cleanly
import torch
from ray.rllib.callbacks.callbacks import RLlibCallback

from quiddler_env.core.actions import num_actions
from quiddler_env.core.observation import observation_layout

from ...policies.rllib import actor_network, write_rllib_export
from ..checks import RunConfigError
from ..config import RunConfig
from ..run import CheckpointError, RunSession, session_seed
from . import env as rllib_env
from .config import RLlibPlan, check_rllib_run

ALGORITHM_DIR = "algorithm"
POLICY_DIR = "policy"
LEARNER = rllib_env.LEARNER
ENV_SECONDS = "quiddler_env_seconds"


# -- Ray and the algorithm ---------------------------------------------------------------------------


def init_ray(cfg: RunConfig, *, quiet: bool = False) -> bool:
    """Start (or join) Ray for the run; True if this call started it (so the run shuts it down).

    Local: a Ray instance with just the CPUs the run's actors reserve (or `ray.num_cpus`)
    and a small object store. With `ray.address`: join that cluster; its nodes must
    have this package installed (the env runners import `quiddler_env` and `agents`).
    """
    if ray.is_initialized():
        return False
    rl, rc = cfg.sections["rllib"], cfg.sections["ray"]
    common = {"include_dashboard": False, "log_to_driver": not quiet}
    if rc["address"]:
        try:
            ray.init(address=rc["address"], **common)
        except (ConnectionError, RuntimeError, ValueError) as exc:  # no cluster there: a config error, one line
            raise RunConfigError(
                f"config key 'ray.address': cannot join {rc['address']!r}: {_first_line(exc)}"
            ) from None
    else:
        asked = rl["num_env_runners"] * rl["num_cpus_per_env_runner"] + rl["num_learners"] * rl["num_cpus_per_learner"]
        ray.init(
            num_cpus=rc["num_cpus"] or max(1, asked),
            object_store_memory=rc["object_store_memory_mb"] * 2**20,
            **common,
        )
    return True


class QuiddlerCallbacks(RLlibCallback):
    """Reports the seconds each env runner spent inside the game (the rest of sampling is RLlib's)."""

    def on_sample_end(self, *, metrics_logger=None, **kwargs: Any) -> None:
        if metrics_logger is not None:
            metrics_logger.log_value(ENV_SECONDS, rllib_env.take_env_seconds(), reduce="sum")  # per iteration


def module_spec(cfg: RunConfig, plan: RLlibPlan):
    """The learner's RLModuleSpec: RLlib's default PPO networks behind the action mask."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from .module import MaskedPPOTorchRLModule

    return RLModuleSpec(
        module_class=MaskedPPOTorchRLModule,
        model_config={
            "fcnet_hiddens": list(plan.fcnet_hiddens),
            "fcnet_activation": plan.fcnet_activation,
            # The logits come straight from the last hidden layer: the exported actor is one plain MLP.
            "head_fcnet_hiddens": [],
            "vf_share_layers": False,
        },
    )


def build_algorithm(cfg: RunConfig, plan: RLlibPlan, seed: int):
    """RLlib's PPO for the run (not yet restored from a checkpoint)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    rl = cfg.sections["rllib"]
    config = (
        PPOConfig()
        # RLlib's env check steps random unmasked actions, which this masked env rejects as illegal.
        .environment(rllib_env.QuiddlerMultiAgentEnv, env_config=plan.env_config, disable_env_checking=True)
        .env_runners(
            num_env_runners=rl["num_env_runners"],
            num_envs_per_env_runner=rl["num_envs_per_env_runner"],
            num_cpus_per_env_runner=rl["num_cpus_per_env_runner"],
            rollout_fragment_length=rl["rollout_fragment_length"],
            sample_timeout_s=float(rl["sample_timeout_s"]),
        )
        .learners(
            num_learners=rl["num_learners"],
            num_cpus_per_learner=rl["num_cpus_per_learner"],
            num_gpus_per_learner=rl["num_gpus_per_learner"],
        )
        .multi_agent(policies={LEARNER}, policy_mapping_fn=rllib_env.policy_mapping_fn, policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={LEARNER: module_spec(cfg, plan)}))
        .training(
            train_batch_size_per_learner=max(1, plan.train_batch_size // max(1, rl["num_learners"])),
            minibatch_size=plan.minibatch_size,
            num_epochs=plan.num_epochs,
            lr=plan.lr,
            gamma=plan.gamma,
            lambda_=plan.lambda_,
            clip_param=plan.clip_param,
            entropy_coeff=plan.entropy_coeff,
            vf_loss_coeff=plan.vf_loss_coeff,
            grad_clip=plan.grad_clip,
            grad_clip_by="global_norm",
        )
        .callbacks(QuiddlerCallbacks)
        .debugging(seed=seed)
    )
    algo = config.build_algo()
    # Outside Tune, RLlib only makes an empty folder in ~/ray_results; the run's logs are in the run folder.
    with contextlib.suppress(OSError):
        os.rmdir(algo.logdir)
    return algo


# -- export ---------------------------------------------------------------------------------------------


def actor_state(weights: Mapping[str, Any], hidden: list[int]) -> dict[str, Any]:
    """The learner module's actor (encoder MLP + policy head) as the state_dict of `actor_network`.

    RLlib names the actor's layers `encoder.actor_encoder.net.mlp.<i>` (linear layers
    at even positions, activations between) and `pi.net.mlp.0` (the logits layer).
    """

    def tensor(key: str):
        if key not in weights:
            raise RuntimeError(f"the RLlib module has no parameter {key!r}; its parameters: {sorted(weights)}")
        return torch.as_tensor(np.asarray(weights[key]), dtype=torch.float32)

    out = {}
    for i in range(len(hidden)):
        for part in ("weight", "bias"):
            out[f"{2 * i}.{part}"] = tensor(f"encoder.actor_encoder.net.mlp.{2 * i}.{part}")
    for part in ("weight", "bias"):
        out[f"{2 * len(hidden)}.{part}"] = tensor(f"pi.net.mlp.0.{part}")
    return out


def build_module(cfg: RunConfig, plan: RLlibPlan):
    """A stand-alone learner module (RLlib's initial weights) for the env's spaces."""
    env = rllib_env.QuiddlerMultiAgentEnv(plan.env_config)
    first = env.possible_agents[0]
    spec = module_spec(cfg, plan)
    spec.observation_space = env.observation_spaces[first]
    spec.action_space = env.action_spaces[first]
    return spec.build()


def check_export_matches_module(
    cfg: RunConfig, plan: RLlibPlan, weights: Mapping[str, Any], state, module: Any = None
) -> None:
    """The exported MLP must give the masked RLlib module's logits (guards against RLlib renaming its layers).

    `module`: one from `build_module` to load `weights` into (else a new one is built).
    """
    from ray.rllib.core.columns import Columns

    module = build_module(cfg, plan) if module is None else module
    module.set_state({k: np.asarray(v) for k, v in weights.items()})
    size = observation_layout(cfg.num_players, cfg.rules.challenges).size
    rng = np.random.default_rng(0)
    obs = torch.as_tensor(rng.uniform(0, 2, size=(4, size)), dtype=torch.float32)
    actions = num_actions(cfg.rules.layout, cfg.rules.challenges)
    mask = torch.ones((4, actions), dtype=torch.float32)
    with torch.no_grad():
        want = module.forward_inference({Columns.OBS: {"observation": obs, "action_mask": mask}})
        net = actor_network(size, plan.fcnet_hiddens, plan.fcnet_activation, actions)
        net.load_state_dict(state)
        got = net(obs)
    if not torch.allclose(want[Columns.ACTION_DIST_INPUTS], got, atol=1e-5):
        raise RuntimeError("the exported actor does not reproduce the RLlib module's logits; the export is not written")


# -- train.csv --------------------------------------------------------------------------------------------


def _lifetime_steps(result: Mapping[str, Any]) -> int:
    value = result.get("num_env_steps_sampled_lifetime")
    if value is None:
        value = result.get("env_runners", {}).get("num_env_steps_sampled_lifetime", 0)
    return int(value)


def _train_row(result: Mapping[str, Any], step: int, seconds: float, sampled: int, runners: int) -> dict[str, Any]:
    """One `train.csv` row from an RLlib result: progress, speed, episode returns, the learner's losses."""
    runner = result.get("env_runners", {})
    timers = result.get("timers", {})
    learner = result.get("learners", {}).get(LEARNER, {})
    env_seconds = float(runner.get(ENV_SECONDS, float("nan")))
    row = {
        "step": step,
        "iteration": int(result.get("training_iteration", 0)),
        "steps_per_second": sampled / seconds if seconds > 0 else float("nan"),
        "iteration_seconds": seconds,
        # RLlib's own timers (smoothed over iterations): sampling, and the learner's update.
        "sampling_timer": float(timers.get("env_runner_sampling_timer", float("nan"))),
        "learner_timer": float(timers.get("learner_update_timer", float("nan"))),
        "env_seconds": env_seconds,
        # The share of the env runners' time spent in the game itself; the rest is RLlib (connectors, inference,
        # episode bookkeeping) and waiting for the learner.
        "env_share": env_seconds / (seconds * max(1, runners)) if seconds > 0 else float("nan"),
        "episodes": runner.get("num_episodes", ""),
        "episode_len_mean": runner.get("episode_len_mean", ""),
        "episode_return_mean": runner.get("episode_return_mean", ""),
        "learner_return_mean": runner.get("module_episode_returns_mean", {}).get(LEARNER, ""),
    }
    for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "vf_explained_var", "curr_lr"):
        if key in learner:
            row[key] = learner[key]
    return row


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


# -- the trainer --------------------------------------------------------------------------------------------


class RLlibTrainer:
    """The `Trainer` of the run layer for RLlib's PPO. Ray and the algorithm start at the first need."""

    def __init__(self, session: RunSession) -> None:
        self.cfg = session.cfg
        self.session = session
        self.plan = check_rllib_run(self.cfg)
        self.runners = self.cfg.sections["rllib"]["num_env_runners"]
        torch.set_num_threads(self.cfg.train.torch_threads)
        self.algo = None
        self.started_ray = False
        self.step = 0
        self.iteration = 0
        self._env_seconds = 0.0
        self._module = None  # for the export check

    def _build(self, step: int) -> None:
        """A fresh algorithm whose env runners deal from (run seed, `step`); an earlier one is stopped."""
        if not self.started_ray:
            self.started_ray = init_ray(self.cfg, quiet=self.session.quiet)
        if self.algo is not None:
            self.algo.stop()
            self.algo = None
        self.algo = build_algorithm(self.cfg, self.plan, session_seed(self.cfg.seed, step))
        self.step = self.iteration = 0

    # -- the run layer's calls -----------------------------------------------------------------

    def num_timesteps(self) -> int:
        return self.step

    def export_policy(self, folder: Path, description: dict[str, Any]) -> None:
        weights = self.algo.learner_group.get_weights(module_ids=[LEARNER])
        weights = weights.get(LEARNER, weights)
        state = actor_state(weights, self.plan.fcnet_hiddens)
        if self._module is None:
            self._module = build_module(self.cfg, self.plan)
        check_export_matches_module(self.cfg, self.plan, weights, state, self._module)
        write_rllib_export(
            folder,
            state,
            observation_size=observation_layout(self.cfg.num_players, self.cfg.rules.challenges).size,
            hidden_layers=self.plan.fcnet_hiddens,
            activation=self.plan.fcnet_activation,
            action_size=num_actions(self.cfg.rules.layout, self.cfg.rules.challenges),
            description={
                **description,
                "algorithm": "PPO",
                "ray_version": ray.__version__,
                "self_play": self.cfg.sections["rllib"]["self_play"],
            },
        )

    def save_state(self, folder: Path) -> dict[str, Any]:
        self.algo.save_to_path(str((folder / ALGORITHM_DIR).resolve()))
        self.export_policy(folder / POLICY_DIR, self.session.description(self.step))
        return {"iteration": self.iteration}

    def load_state(self, folder: Path, state: dict[str, Any]) -> None:
        algorithm = folder / ALGORITHM_DIR
        if not algorithm.is_dir():
            raise CheckpointError(f"checkpoint {folder}: no {ALGORITHM_DIR}/ folder (RLlib's checkpoint)")
        try:
            step = int(state["num_timesteps"])
            iteration = int((state.get("backend_state") or {}).get("iteration", 0))
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"checkpoint {folder}: bad state: {_first_line(exc)}") from None
        self._build(step)
        try:
            self.algo.restore_from_path(str(algorithm.resolve()))
        except Exception as exc:  # RLlib raises what its pickles and files give: OSError, KeyError, pickle errors, ...
            raise CheckpointError(f"checkpoint {folder} cannot be restored by RLlib: {_first_line(exc)}") from None
        self.step, self.iteration = step, iteration

    def env_seconds(self) -> float:
        """Game seconds of this session per env runner (they sample side by side)."""
        return self._env_seconds / max(1, self.runners)

    def summary(self) -> dict[str, Any]:
        rl = self.cfg.sections["rllib"]
        return {
            "ray_address": self.cfg.sections["ray"]["address"],
            "ray_version": ray.__version__,
            "num_env_runners": rl["num_env_runners"],
            "num_envs_per_env_runner": rl["num_envs_per_env_runner"],
            "num_learners": rl["num_learners"],
            "iterations": self.iteration,
        }

    def close(self) -> None:
        try:
            if self.algo is not None:
                self.algo.stop()
                self.algo = None
        finally:
            if self.started_ray:
                ray.shutdown()
                self.started_ray = False

    # -- training ------------------------------------------------------------------------------

    def train(self, session: RunSession) -> None:
        cfg = self.cfg
        if self.algo is None:  # a new run (a resumed one was built by load_state)
            self._build(session.start_step)
        session.t_start = time.perf_counter()
        session.boundary(self, session.start_step)  # the evaluation at the start and a first checkpoint
        while self.step < cfg.train.total_timesteps:
            t0 = time.perf_counter()
            result = self.algo.train()
            seconds = time.perf_counter() - t0
            lifetime = _lifetime_steps(result)
            sampled = lifetime - self.step
            if sampled <= 0:  # a lifetime counter that did not survive a restore: count this iteration's steps
                sampled = int(result.get("env_runners", {}).get("num_env_steps_sampled", 0))
                if sampled <= 0:
                    raise RuntimeError(f"RLlib iteration {result.get('training_iteration')} sampled no env steps")
            self.step += sampled
            self.iteration = int(result.get("training_iteration", self.iteration + 1))
            row = _train_row(result, self.step, seconds, sampled, self.runners)
            if np.isfinite(row["env_seconds"]):
                self._env_seconds += row["env_seconds"]
            session.log_train(row)
            # In self-play the shared module's return is zero-sum; the entropy tells more.
            extra = (
                f"policy entropy {float(row.get('entropy', float('nan'))):.3f}"
                if cfg.sections["rllib"]["self_play"]
                else f"learner return {float(row['learner_return_mean'] or 0.0):.3f}"
            )
            session.say(
                f"step {self.step}/{cfg.train.total_timesteps} iteration {self.iteration}: "
                f"{row['steps_per_second']:.0f} steps/s, {extra}"
            )
            session.boundary(self, self.step)


def make_trainer(session: RunSession) -> RLlibTrainer:
    return RLlibTrainer(session)
