"""The RLlib backend of train.py: multi-agent PPO on Ray, locally or on a cluster, from the same run configs.

    python train.py --config configs/rllib_selfplay.yaml                  # a local Ray on this machine
    python train.py --config configs/rllib_selfplay.yaml --address auto   # join the cluster of this node
    python train.py --resume runs/rllib_selfplay [rllib.num_env_runners=8]

`train_rllib(cfg, run_dir, resume=...)` is what `agents.training` dispatches to for
`backend: rllib` (the config's `ray`/`rllib` sections and the translation of the
shared sections are in `rllib_config.py`). A run:

- starts Ray (`ray.init()`: a local instance sized to the run, or `ray.address`);
- builds RLlib's PPO (new API stack) on `QuiddlerMultiAgentEnv` (`rllib_env.py`)
  with the action-masking module (`rllib_module.py`); every learner seat maps to
  the one module `learner` (self-play shares it across all seats); bot seats are
  played inside the env;
- trains iteration by iteration to `train.total_timesteps` env steps (agent moves),
  appending RLlib's figures to `train.csv`;
- every `train.checkpoint_every` steps writes `checkpoints/step_<N>/`: RLlib's own
  checkpoint (`algorithm/`, `Algorithm.save_to_path`: module weights, optimiser,
  connector and metrics state, iteration counter), the exported policy (`policy/`)
  and `state.json` last; the folder is written beside and renamed into place, so a
  listed checkpoint is complete. `--resume` rebuilds the algorithm from the config
  and restores the newest one (`restore_from_path`); the step count continues;
- every `eval.every` steps exports the policy and plays `eval.games` games against
  each of `eval.opponents` in the driver (`eval.csv`, `learning_curve.png`, `best/`);
- at the end exports the final policy into the run folder (`policy.pt` +
  `policy.json`, `agents/rllib_policy.py`: `evaluate.py --players policy:RUN_DIR greedy`
  plays it without Ray), and writes `summary.json`.

What runs where (the same on one machine and on a cluster): the driver (this
process) holds the learner when `rllib.num_learners` is 0, the checkpoints, the
exports and the evaluation; each env runner actor holds its own envs, bots,
solver and an inference copy of the module, samples episodes and ships them to
the learner; after each update the learner's weights go back to every runner.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import ray  # at the top: without Ray, agents.training reports "backend rllib is not available" cleanly
import torch
from ray.rllib.callbacks.callbacks import RLlibCallback

from agents.rllib_policy import write_rllib_export
from quiddler_env.core.actions import NUM_ACTIONS
from quiddler_env.envs.observation import observation_layout

from . import rllib_env
from .config import RunConfig
from .rllib_config import RLlibPlan, check_rllib_run
from .runfiles import CsvTable, plot_learning_curve, write_json_atomic

CHECKPOINT_DIR = "checkpoints"
STATE_FILE = "state.json"
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
    rl, rc = cfg.rllib, cfg.ray
    common = {"include_dashboard": False, "log_to_driver": not quiet}
    if rc["address"]:
        ray.init(address=rc["address"], **common)
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
            metrics_logger.log_value(ENV_SECONDS, rllib_env.take_env_seconds(), reduce="sum")


def module_spec(cfg: RunConfig, plan: RLlibPlan):
    """The learner's RLModuleSpec: RLlib's default PPO networks behind the action mask."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from .rllib_module import MaskedPPOTorchRLModule

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

    rl = cfg.rllib
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


def learner_weights(algo) -> dict[str, Any]:
    """The learner module's parameters as numpy arrays (from wherever the learner lives)."""
    weights = algo.learner_group.get_weights(module_ids=[LEARNER])
    return weights.get(LEARNER, weights)


def export_policy(
    algo, cfg: RunConfig, plan: RLlibPlan, folder: Path, step: int, extra: Mapping[str, Any] | None = None
) -> Path:
    """Write the learner's actor as a policy folder `agents.make('policy:FOLDER')` plays (no Ray needed)."""
    size = observation_layout(cfg.num_players).size
    weights = learner_weights(algo)
    state = actor_state(weights, plan.fcnet_hiddens)
    _check_export_matches_module(cfg, plan, weights, state)
    description = {
        "config": cfg.game_config(),
        "run": cfg.name,
        "step": int(step),
        "ray_version": ray.__version__,
        "reward_mode": cfg.env["reward_mode"],
        "self_play": cfg.rllib["self_play"],
        **dict(extra or {}),
    }
    return write_rllib_export(
        folder,
        state,
        observation_size=size,
        hidden_layers=plan.fcnet_hiddens,
        activation=plan.fcnet_activation,
        description=description,
    )


def _check_export_matches_module(cfg: RunConfig, plan: RLlibPlan, weights: Mapping[str, Any], state) -> None:
    """The exported MLP must give the masked RLlib module's logits (guards against RLlib renaming its layers)."""
    from ray.rllib.core.columns import Columns

    from agents.rllib_policy import actor_network

    env = rllib_env.QuiddlerMultiAgentEnv(plan.env_config)
    first = env.possible_agents[0]
    spec = module_spec(cfg, plan)
    spec.observation_space = env.observation_spaces[first]
    spec.action_space = env.action_spaces[first]
    module = spec.build()
    module.set_state({k: np.asarray(v) for k, v in weights.items()})
    size = observation_layout(cfg.num_players).size
    rng = np.random.default_rng(0)
    obs = torch.as_tensor(rng.uniform(0, 2, size=(4, size)), dtype=torch.float32)
    mask = torch.ones((4, NUM_ACTIONS), dtype=torch.float32)
    with torch.no_grad():
        want = module.forward_inference({Columns.OBS: {"observation": obs, "action_mask": mask}})
        net = actor_network(size, plan.fcnet_hiddens, plan.fcnet_activation)
        net.load_state_dict(state)
        got = net(obs)
    if not torch.allclose(want[Columns.ACTION_DIST_INPUTS], got, atol=1e-5):
        raise RuntimeError("the exported actor does not reproduce the RLlib module's logits; the export is not written")


# -- evaluation -----------------------------------------------------------------------------------------


def evaluate_policy(cfg: RunConfig, policy_dir: Path, step: int) -> list[dict[str, Any]]:
    """Play the exported policy against each `eval.opponents` bot (every other seat), `eval.games` games each.

    Game g deals from `eval.seed + g` with the learner at seat g mod n, so every
    evaluation of a run plays the same deals. The margin is the learner's total
    minus the best other total.
    """
    import agents
    from agents.arena import play_game
    from agents.rllib_policy import load_rllib_policy

    rules = cfg.game_config()
    n = rules.num_players
    learner = load_rllib_policy(policy_dir, config=rules, deterministic=cfg.eval.deterministic)
    rows = []
    for spec in cfg.eval.opponents:
        t0 = time.perf_counter()
        bots = [agents.make(spec, config=rules) for _ in range(n - 1)]
        wins = ties = 0
        scores, others, margins = [], [], []
        for g in range(cfg.eval.games):
            seat = g % n
            seed = cfg.eval.seed + g
            seeds = np.random.SeedSequence([cfg.eval.seed, g]).generate_state(n)
            learner.reset(int(seeds[0]))
            for i, bot in enumerate(bots):
                bot.reset(int(seeds[i + 1]))
            table = bots[:seat] + [learner] + bots[seat:]
            record = play_game(table, seed=seed, config=rules)
            if seat in record.winners:
                if len(record.winners) == 1:
                    wins += 1
                else:
                    ties += 1
            rest = [t for p, t in enumerate(record.totals) if p != seat]
            scores.append(record.totals[seat])
            others.append(float(np.mean(rest)))
            margins.append(record.totals[seat] - max(rest))
        games = cfg.eval.games
        rows.append(
            {
                "step": int(step),
                "opponent": spec,
                "games": games,
                "win_rate": wins / games,
                "tie_rate": ties / games,
                "loss_rate": 1 - (wins + ties) / games,
                "mean_score": float(np.mean(scores)),
                "mean_opponent_score": float(np.mean(others)),
                "mean_margin": float(np.mean(margins)),
                "seconds": time.perf_counter() - t0,
            }
        )
    return rows


# -- checkpoints ----------------------------------------------------------------------------------------


def checkpoint_dirs(run_dir: Path) -> list[tuple[int, Path]]:
    """Complete checkpoints of a run (their `state.json` is written last), oldest first."""
    out = []
    folder = run_dir / CHECKPOINT_DIR
    if folder.is_dir():
        for p in folder.iterdir():
            if p.name.startswith("step_") and p.name[5:].isdigit() and (p / STATE_FILE).is_file():
                out.append((int(p.name[5:]), p))
    return sorted(out)


def _replace_dir(tmp: Path, final: Path) -> None:
    """Move the finished folder `tmp` to `final` (an older `final` is moved aside first, then deleted)."""
    old = final.parent / f".{final.name}.old-{os.getpid()}"
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)


def save_checkpoint(algo, cfg: RunConfig, plan: RLlibPlan, run_dir: Path, state: dict[str, Any]) -> Path:
    """`checkpoints/step_<N>/`: RLlib's checkpoint, the exported policy, then `state.json`; renamed into place."""
    step = int(state["num_timesteps"])
    folder = run_dir / CHECKPOINT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"step_{step}"
    tmp = folder / f".step_{step}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    algo.save_to_path(str((tmp / ALGORITHM_DIR).resolve()))
    export_policy(algo, cfg, plan, tmp / POLICY_DIR, step)
    write_json_atomic(tmp / STATE_FILE, state)
    _replace_dir(tmp, final)
    for _, old in checkpoint_dirs(run_dir)[: -cfg.train.keep_checkpoints]:
        shutil.rmtree(old, ignore_errors=True)
    return final


# -- the run ----------------------------------------------------------------------------------------------


def session_seed(seed: int, step: int) -> int:
    """The seed of a (re)start at `step`: fixed by the run seed, different for every restart point."""
    return int(np.random.SeedSequence([seed, step]).generate_state(1, dtype=np.uint32)[0])


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


def train_rllib(cfg: RunConfig, run_dir: Path, *, resume: bool, quiet: bool = False) -> dict[str, Any]:
    """Train (or resume) the RLlib run in `run_dir`, whose config.yaml and run.json the caller wrote; returns the summary."""
    from . import RunFolderError

    plan = check_rllib_run(cfg)
    torch.set_num_threads(cfg.train.torch_threads)
    run_dir = Path(run_dir)
    state: dict[str, Any] = {}
    checkpoint = None
    if resume:
        found = checkpoint_dirs(run_dir)
        if not found:
            raise RunFolderError(f"run folder {run_dir} has no complete checkpoint to resume from")
        checkpoint = found[-1][1]
        state = json.loads((checkpoint / STATE_FILE).read_text())
    start_step = int(state.get("num_timesteps", 0))
    best = {"step": state.get("best_step"), "score": state.get("best_score")}
    if resume and _export_step(run_dir / "best") != best["step"]:
        # best/ came from an evaluation after the checkpoint, which this session replays: forget it.
        shutil.rmtree(run_dir / "best", ignore_errors=True)
        best = {"step": None, "score": None}

    started = init_ray(cfg, quiet=quiet)
    algo = None
    try:
        algo = build_algorithm(cfg, plan, session_seed(cfg.seed, start_step))
        if checkpoint is not None:
            algo.restore_from_path(str((checkpoint / ALGORITHM_DIR).resolve()))
        from torch.utils.tensorboard import SummaryWriter

        tb = SummaryWriter(str(run_dir / "tensorboard"))
        train_table = CsvTable(run_dir / "train.csv", keep_until=start_step if resume else None)
        eval_table = CsvTable(run_dir / "eval.csv", keep_until=start_step if resume else None)
        latest_eval: list[dict[str, Any]] = []

        def evaluate(step: int) -> None:
            nonlocal latest_eval
            folder = run_dir / f".eval_policy-{os.getpid()}"
            shutil.rmtree(folder, ignore_errors=True)
            export_policy(algo, cfg, plan, folder, step)
            latest_eval = evaluate_policy(cfg, folder, step)
            for row in latest_eval:
                eval_table.append(row)
                for key in ("win_rate", "tie_rate", "mean_score", "mean_margin"):
                    tb.add_scalar(f"eval/{row['opponent']}/{key}", row[key], step)
            score = float(np.mean([r["win_rate"] + 0.5 * r["tie_rate"] for r in latest_eval]))
            if best["score"] is None or score > best["score"]:
                best.update(step=step, score=score)
                _replace_dir(folder, run_dir / "best")
            else:
                shutil.rmtree(folder, ignore_errors=True)
            plot_learning_curve(eval_table.read(), run_dir / "learning_curve.png", f"{cfg.name} (rllib)")
            if not quiet:
                text = ", ".join(f"{r['opponent']} {r['win_rate']:.2f}" for r in latest_eval)
                print(f"[eval] step {step}: win rate vs {text}", flush=True)

        step = start_step
        if cfg.eval.at_start and step == 0:
            evaluate(0)
        t_start, steps_this_session = time.perf_counter(), 0
        train_seconds = env_share_weighted = 0.0
        last_checkpoint = step
        runners = cfg.rllib["num_env_runners"]
        result = None
        while step < cfg.train.total_timesteps:
            t0 = time.perf_counter()
            result = algo.train()
            seconds = time.perf_counter() - t0
            new_step = _lifetime_steps(result)
            sampled, step = new_step - step, new_step
            steps_this_session += sampled
            train_seconds += seconds
            row = _train_row(result, step, seconds, sampled, runners)
            if np.isfinite(row["env_share"]):
                env_share_weighted += row["env_share"] * seconds
            train_table.append(row)
            for key, value in row.items():
                if key != "step" and isinstance(value, (int, float)) and np.isfinite(value):
                    tb.add_scalar(f"train/{key}", value, step)
            if not quiet:
                # In self-play the shared module's return is zero-sum; the entropy tells more.
                extra = (
                    f"policy entropy {float(row.get('entropy', float('nan'))):.3f}"
                    if cfg.rllib["self_play"]
                    else f"learner return {float(row['learner_return_mean'] or 0.0):.3f}"
                )
                print(
                    f"[train] step {step}/{cfg.train.total_timesteps} iteration {row['iteration']}: "
                    f"{row['steps_per_second']:.0f} steps/s, {extra}",
                    flush=True,
                )
            crossed = step // cfg.eval.every > (step - sampled) // cfg.eval.every
            if crossed and step < cfg.train.total_timesteps:
                evaluate(step)
            if step - last_checkpoint >= cfg.train.checkpoint_every and step < cfg.train.total_timesteps:
                save_checkpoint(algo, cfg, plan, run_dir, _state(step, result, best))
                last_checkpoint = step
        if not latest_eval or int(latest_eval[0]["step"]) != step:
            evaluate(step)
        final_state = _state(step, result, best)
        if not checkpoint_dirs(run_dir) or checkpoint_dirs(run_dir)[-1][0] != step:
            save_checkpoint(algo, cfg, plan, run_dir, final_state)
        export_policy(algo, cfg, plan, run_dir, step, {"eval": latest_eval, "best_step": best["step"]})
        wall = time.perf_counter() - t_start
        summary = {
            "name": cfg.name,
            "backend": "rllib",
            "num_timesteps": step,
            "total_timesteps": cfg.train.total_timesteps,
            "resumed_from": start_step if resume else None,
            "num_env_runners": runners,
            "num_envs_per_env_runner": cfg.rllib["num_envs_per_env_runner"],
            "ray_address": cfg.ray["address"],
            "ray_version": ray.__version__,
            "session": {
                "steps": steps_this_session,
                "seconds": wall,
                "train_seconds": train_seconds,
                "steps_per_second": steps_this_session / train_seconds if train_seconds > 0 else 0.0,
                "env_share": env_share_weighted / train_seconds if train_seconds > 0 else 0.0,
            },
            "best_step": best["step"],
            "best_score": best["score"],
            "final_eval": latest_eval,
            "model": str(run_dir),
        }
        write_json_atomic(run_dir / "summary.json", summary)
        tb.close()
        return summary
    finally:
        if algo is not None:
            algo.stop()
        if started:
            ray.shutdown()


def _export_step(folder: Path) -> int | None:
    """The training step an exported policy folder was written at (None if there is none)."""
    try:
        return int(json.loads((folder / "policy.json").read_text())["step"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _state(step: int, result: Mapping[str, Any] | None, best: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "num_timesteps": int(step),
        "iteration": int(result.get("training_iteration", 0)) if result else None,
        "best_step": best["step"],
        "best_score": best["score"],
        "time": time.time(),
    }
