"""What the rllib backend adds to a run config: the `ray` and `rllib` sections, and the translation to RLlib.

The backend's `config` module (`quiddler_agents.training.backends`): `SECTIONS`, `ENV_OPTIONS`
(none), `resolve_sections` and `check_run`. It imports nothing of Ray, so a config
validates where Ray is not installed (`train.py` then says the backend is unavailable).

A config with `backend: rllib` uses the same sections as an SB3 run, read the same
way, plus two of its own:

| key | default | meaning |
|---|---|---|
| `ray.address` | null | null: start a local Ray on this machine; `auto`: join the cluster this node belongs to; `ray://HOST:10001`: connect to a remote cluster (Ray Client); also `train.py --address` |
| `ray.num_cpus` | null | local Ray only: the CPUs it may use (null: what the run asks for) |
| `ray.object_store_memory_mb` | 256 | local Ray only: its shared-memory object store (a run moves only small batches and weights) |
| `rllib.self_play` | true | every seat plays the learner policy (shared, one module); false: one learner seat (`env.learner_seat`) against `opponents`, drawn per episode with their weights |
| `rllib.num_env_runners` | 1 | sampling actors (0: sample in the driver process) |
| `rllib.num_envs_per_env_runner` | 1 | games each env runner steps side by side (one batched forward pass for all) |
| `rllib.num_cpus_per_env_runner` | 1 | CPUs reserved for each env runner |
| `rllib.num_learners` | 0 | learner actors (0: learn in the driver process) |
| `rllib.num_cpus_per_learner` | 1 | CPUs reserved for each learner |
| `rllib.num_gpus_per_learner` | 0 | GPUs for each learner (the learner then trains on the GPU) |
| `rllib.train_batch_size` | null | env steps per training iteration (null: `algo.n_steps` x `train.n_envs`, an SB3 rollout) |
| `rllib.rollout_fragment_length` | auto | env steps an env runner collects per request (`auto`: the batch split over the runners) |
| `rllib.sample_timeout_s` | 600 | how long the driver waits for the env runners' samples |

The other sections mean what they mean for SB3: `env` (rules and reward mode),
`algo` (PPO hyperparameters, translated to RLlib's names below), `train`
(`total_timesteps` counts env steps, i.e. agent moves; `checkpoint_every`,
`keep_checkpoints`, `torch_threads`), `eval` (the exported policy against the
bots, played in the driver), `opponents` (with `rllib.self_play: false`), `seed`.

| `algo` key | RLlib | note |
|---|---|---|
| `n_steps` x `train.n_envs` | `train_batch_size_per_learner` | unless `rllib.train_batch_size` is set |
| `batch_size` | `minibatch_size` | |
| `n_epochs` | `num_epochs` | |
| `learning_rate` | `lr` | a `{start, end}` schedule becomes RLlib's `[[0, start], [total_timesteps, end]]` |
| `gamma`, `gae_lambda` | `gamma`, `lambda_` | |
| `clip_range` | `clip_param` | constant only |
| `ent_coef`, `vf_coef` | `entropy_coeff`, `vf_loss_coeff` | |
| `max_grad_norm` | `grad_clip` (global norm) | |
| `net_arch` | `fcnet_hiddens` | `pi` and `vf` must be equal (RLlib's default module gives both networks the same layers) |
| `activation` | `fcnet_activation` | |

Settings RLlib cannot honour are errors naming the key, never silently dropped:
`algo.target_kl` (SB3's early stop), a `clip_range` schedule,
`normalize_advantage: false` (RLlib always standardises advantages),
`ortho_init: false` (RLlib uses its own initialisation), `algo.device` other than
cpu (use `rllib.num_gpus_per_learner`), `league.enabled` (this backend's self-play
is `rllib.self_play`: every seat the current learner), `algo.observation_features`,
and an option of `Quiddler-v0` that the AEC env does not take (`env.illegal_reward`)
set to anything but its default. The sb3 training env's own options
(`env.layout_shaping`) are not keys of an rllib run at all.

`env_config` of `QuiddlerMultiAgentEnv` (`env.py`) gets the rules (`rules`: the run's
`QuiddlerConfig` object, `RunConfig.rules`), the AEC env's options (`env`: `AEC_OPTIONS`,
from the env's own table) and `env.learner_seat` (checked by the env's
`check_learner_seat`, here through the run config and again in the adapter).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from quiddler_env.envs.common import check_env_options, env_option_names

from ..checks import RunConfigError, bad, boolean, is_int, known, non_negative_int, number, positive_int
from ..config import RUN_ENV_OPTIONS

if TYPE_CHECKING:
    from ..config import RunConfig

SECTIONS = ("ray", "rllib")
ENV_OPTIONS: dict[str, tuple[Any, Any]] = {}
"""The RLlib env is quiddler_v0's: no env option of its own."""

RAY_DEFAULTS: dict[str, Any] = {"address": None, "num_cpus": None, "object_store_memory_mb": 256}
RLLIB_DEFAULTS: dict[str, Any] = {
    "self_play": True,
    "num_env_runners": 1,
    "num_envs_per_env_runner": 1,
    "num_cpus_per_env_runner": 1,
    "num_learners": 0,
    "num_cpus_per_learner": 1,
    "num_gpus_per_learner": 0,
    "train_batch_size": None,
    "rollout_fragment_length": "auto",
    "sample_timeout_s": 600,
}
AEC_OPTIONS = tuple(n for n in RUN_ENV_OPTIONS if n in env_option_names("aec"))
"""The env options the RLlib env passes on to `quiddler_v0.raw_env` (the rules fields go too)."""


def resolve_sections(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The `ray` and `rllib` sections with defaults filled in."""
    return {"ray": resolve_ray_section(data.get("ray") or {}), "rllib": resolve_rllib_section(data.get("rllib") or {})}


def check_run(cfg: RunConfig) -> None:
    """The constraints of RLlib on the shared sections (`check_rllib_run`, its plan unused here)."""
    if cfg.train.vec_env == "batched":
        raise RunConfigError(
            "config key 'train.vec_env': batched is the sb3 backend's vector env; RLlib runs its own env runners"
        )
    check_rllib_run(cfg)


def resolve_ray_section(data: Mapping[str, Any]) -> dict[str, Any]:
    """The `ray` section with defaults filled in; errors name the dotted key."""
    known("ray", data, list(RAY_DEFAULTS))
    out = {**RAY_DEFAULTS, **data}
    address = out["address"]
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise bad("ray.address", address, "null (a local Ray), 'auto', or a cluster address such as ray://head:10001")
    if out["num_cpus"] is not None:
        positive_int("ray.num_cpus", out["num_cpus"])
    mb = out["object_store_memory_mb"]
    if not is_int(mb) or mb < 80:
        raise bad("ray.object_store_memory_mb", mb, "an integer >= 80 (Ray's minimum is 75 MiB)")
    return out


def resolve_rllib_section(data: Mapping[str, Any]) -> dict[str, Any]:
    """The `rllib` section with defaults filled in; errors name the dotted key."""
    s = "rllib"
    known(s, data, list(RLLIB_DEFAULTS))
    out = {**RLLIB_DEFAULTS, **data}
    boolean(f"{s}.self_play", out["self_play"])
    for k in ("num_env_runners", "num_learners", "num_gpus_per_learner"):
        non_negative_int(f"{s}.{k}", out[k])
    for k in ("num_envs_per_env_runner", "num_cpus_per_env_runner", "num_cpus_per_learner"):
        positive_int(f"{s}.{k}", out[k])
    if out["train_batch_size"] is not None:
        positive_int(f"{s}.train_batch_size", out["train_batch_size"])
    fragment = out["rollout_fragment_length"]
    if fragment != "auto":
        positive_int(f"{s}.rollout_fragment_length", fragment)
    number(f"{s}.sample_timeout_s", out["sample_timeout_s"], 0.0, open_low=True)
    return out


@dataclass(frozen=True)
class RLlibPlan:
    """Everything the RLlib backend builds from a run config, in RLlib's own names."""

    env_config: dict[str, Any]
    train_batch_size: int
    minibatch_size: int
    num_epochs: int
    lr: float | list[list[float]]
    gamma: float
    lambda_: float
    clip_param: float
    entropy_coeff: float
    vf_loss_coeff: float
    grad_clip: float
    fcnet_hiddens: list[int]
    fcnet_activation: str


def check_rllib_run(cfg: RunConfig) -> RLlibPlan:
    """Check that `cfg` can run on RLlib and translate it (errors name the config key)."""
    algo = cfg.algo
    if cfg.league.enabled:
        raise bad(
            "league.enabled",
            True,
            "false with backend rllib (its self-play is rllib.self_play: every seat the learner)",
        )
    if algo.target_kl is not None:
        raise bad("algo.target_kl", algo.target_kl, "null with backend rllib (SB3's early stop has no RLlib twin)")
    if not algo.clip_range.constant:
        raise bad("algo.clip_range", algo.clip_range.to_yaml(), "a constant with backend rllib")
    if not algo.normalize_advantage:
        raise bad("algo.normalize_advantage", False, "true with backend rllib (RLlib always standardises advantages)")
    if not algo.ortho_init:
        raise bad("algo.ortho_init", False, "true with backend rllib (RLlib uses its own initialisation)")
    if algo.device not in ("cpu", "auto"):
        raise bad("algo.device", algo.device, "cpu or auto with backend rllib (set rllib.num_gpus_per_learner)")
    if algo.net_arch["pi"] != algo.net_arch["vf"]:
        raise bad(
            "algo.net_arch",
            {k: list(v) for k, v in algo.net_arch.items()},
            "one list of layers, or equal pi and vf, with backend rllib",
        )
    rl = cfg.sections["rllib"]
    batch = rl["train_batch_size"] or algo.n_steps * cfg.train.n_envs
    if algo.batch_size > batch:
        key = "rllib.train_batch_size" if rl["train_batch_size"] else "algo.n_steps x train.n_envs"
        raise RunConfigError(
            f"config key 'algo.batch_size': {algo.batch_size} is more than a training batch holds ({key} = {batch})"
        )
    for key in ("action_features", "init_policy"):
        if getattr(algo, key, None):
            raise bad(f"algo.{key}", getattr(algo, key), "unset with backend rllib (it is the sb3 backend's)")
    if getattr(algo, "privileged_critic", False):
        raise bad("algo.privileged_critic", True, "false with backend rllib (a privileged critic is the sb3 backend's)")
    if getattr(algo, "observation_features", None) is not None:
        raise bad(
            "algo.observation_features",
            algo.observation_features,
            "null with backend rllib (its env runners see the env's own observation)",
        )
    lr = algo.learning_rate
    env = {}
    defaults = check_env_options("gym", {}, cfg.rules)
    for key, value in cfg.env_options.items():
        if key in AEC_OPTIONS:
            env[key] = value
        elif key != "learner_seat" and value != defaults.get(key):  # an option only Quiddler-v0 has, changed
            raise bad(f"env.{key}", value, f"{defaults.get(key)!r} with backend rllib, whose env is quiddler_v0's")
    for key, value in cfg.backend_env.items():  # none today: the rllib backend declares no env option of its own
        env[key] = value
    env_config: dict[str, Any] = {
        "rules": cfg.rules,
        "env": env,
        "self_play": rl["self_play"],
        "learner_seat": cfg.env_options["learner_seat"],
    }
    if not rl["self_play"]:
        env_config["opponents"] = [[o.spec, o.weight] for o in cfg.opponents]
    return RLlibPlan(
        env_config=env_config,
        train_batch_size=batch,
        minibatch_size=algo.batch_size,
        num_epochs=algo.n_epochs,
        lr=lr.start if lr.constant else [[0, lr.start], [cfg.train.total_timesteps, lr.end]],
        gamma=algo.gamma,
        lambda_=algo.gae_lambda,
        clip_param=algo.clip_range.start,
        entropy_coeff=algo.ent_coef,
        vf_loss_coeff=algo.vf_coef,
        grad_clip=algo.max_grad_norm,
        fcnet_hiddens=list(algo.net_arch["pi"]),
        fcnet_activation=algo.activation,
    )
