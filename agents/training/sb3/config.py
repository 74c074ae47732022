"""What the sb3 backend adds to a run config: no section of its own, the training env's `layout_shaping`.

Imports nothing of SB3, so a config validates without it (see `quiddler_agents.training.backends`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..checks import RunConfigError
from .opponents import check_layout_shaping

if TYPE_CHECKING:
    from ..config import RunConfig

SECTIONS: tuple[str, ...] = ()
ENV_OPTIONS: dict[str, tuple[Any, Any]] = {"layout_shaping": (0.0, check_layout_shaping)}
"""Options of the sb3 training env (`TrainingEnv`), as (default, its own check)."""


def resolve_sections(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {}


def check_run(cfg: RunConfig) -> None:
    """A minibatch must fit in a rollout (`algo.n_steps` x `train.n_envs` steps); the batched engine has no
        layout shaping; a privileged critic has no imitation warm start; a head reading each move's solver features
    needs them."""
    if cfg.train.vec_env == "batched" and cfg.backend_env["layout_shaping"]:
        raise RunConfigError(
            "config key 'env.layout_shaping': layout shaping is not available with train.vec_env: batched "
            "(set it to 0, or use vec_env dummy or subproc)"
        )
    if cfg.algo.privileged_critic and cfg.pretrain.teacher:
        raise RunConfigError(
            "config key 'pretrain.teacher': the imitation warm start fits on plain observations, which a privileged "
            "critic cannot value (set pretrain.teacher: null, or algo.privileged_critic: false)"
        )
    if cfg.algo.action_features:
        from ...policies.sb3 import ACTION_FEATURE_SETS

        if cfg.algo.observation_features not in ACTION_FEATURE_SETS:
            raise RunConfigError(
                f"config key 'algo.action_features': the head reads each move's solver features, so "
                f"algo.observation_features must be {' or '.join(ACTION_FEATURE_SETS)}, "
                f"got {cfg.algo.observation_features}"
            )
    rollout = cfg.algo.n_steps * cfg.train.n_envs
    if cfg.algo.batch_size > rollout:
        raise RunConfigError(
            f"config key 'algo.batch_size': {cfg.algo.batch_size} is more than a rollout holds "
            f"(algo.n_steps x train.n_envs = {rollout})"
        )
