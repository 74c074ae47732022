"""Training from YAML run configs: start a run into a run folder, resume it, dispatch to a backend.

    from agents.training import load_run_config, start_run, resume_run
    cfg = load_run_config("configs/quickstart.yaml", ["train.total_timesteps=50000"])
    summary = start_run(cfg)              # writes runs/quickstart/...
    summary = resume_run("runs/quickstart", ["train.total_timesteps=100000"])

`train.py` is the command line over these. The config schema is in
`agents.training.config`; the files of a run folder in `agents.training.runfiles`;
the SB3 backend (MaskablePPO) in `agents.training.sb3`.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .config import (
    RunConfig,
    RunConfigError,
    apply_overrides,
    dump_yaml,
    load_run_config,
    read_yaml,
)
from .runfiles import now_iso, run_metadata, write_json_atomic, write_text_atomic

RESUME_OVERRIDABLE = ("train.", "ray.", "rllib.num_", "rllib.sample_timeout_s")
"""On resume only these may change: the rest (rules, network, opponents) defines the run. `ray.*` and
`rllib.num_*` (where an RLlib run runs, with how many actors) are errors for an SB3 run anyway."""


class RunFolderError(RuntimeError):
    """A run folder that cannot be started or resumed as asked."""


def _config_text(cfg: RunConfig) -> str:
    return "# The resolved config of this run (train.py --resume reads it back).\n" + dump_yaml(cfg)


def start_run(
    cfg: RunConfig,
    *,
    run_dir: str | os.PathLike | None = None,
    force: bool = False,
    command: Sequence[str] | None = None,
    quiet: bool = False,
) -> dict[str, Any]:
    """Train a new run into `run_dir` (default: the config's `run_dir`, else `runs/<name>`); returns the summary.

    An existing run folder is an error unless `force`, which deletes it first.
    """
    folder = Path(run_dir) if run_dir is not None else cfg.output_dir()
    if folder.exists() and any(folder.iterdir()):
        if not (folder / "config.yaml").is_file():
            raise RunFolderError(f"output folder {folder} exists and is not a run folder; choose another run_dir")
        if not force:
            raise RunFolderError(
                f"run folder {folder} already holds a run; continue it with --resume {folder}, "
                "or start over with --force (deletes it)"
            )
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(folder / "config.yaml", _config_text(cfg))
    meta = run_metadata(list(command if command is not None else sys.argv), cfg.game_config().dictionary)
    meta["backend"] = cfg.backend
    write_json_atomic(folder / "run.json", meta)
    return _dispatch(cfg, folder, resume=False, quiet=quiet)


def resume_run(
    run_dir: str | os.PathLike,
    overrides: Sequence[str] = (),
    *,
    command: Sequence[str] | None = None,
    quiet: bool = False,
) -> dict[str, Any]:
    """Continue the run in `run_dir` from its last checkpoint (to `train.total_timesteps`, which may be raised)."""
    folder = Path(run_dir)
    config_file = folder / "config.yaml"
    if not config_file.is_file():
        raise RunFolderError(f"{folder} is not a run folder (no config.yaml)")
    for text in overrides:
        key = text.partition("=")[0].strip()
        if not key.startswith(RESUME_OVERRIDABLE):
            raise RunConfigError(
                f"override {text!r}: a resumed run may only change {', '.join(p + '*' for p in RESUME_OVERRIDABLE)}; "
                f"{key!r} defines the run (start a new run to change it)"
            )
    data = apply_overrides(read_yaml(config_file), overrides)
    try:
        cfg = RunConfig.from_mapping(data)
    except RunConfigError as exc:
        raise RunConfigError(f"{config_file}: {exc}") from None
    if overrides:
        write_text_atomic(config_file, _config_text(cfg))
    meta_file = folder / "run.json"
    try:
        import json

        meta = json.loads(meta_file.read_text())
    except (OSError, ValueError):
        meta = run_metadata([], cfg.game_config().dictionary)
    meta.setdefault("resumes", []).append(
        {"time": now_iso(), "command": list(command if command is not None else sys.argv), "overrides": list(overrides)}
    )
    write_json_atomic(meta_file, meta)
    return _dispatch(cfg, folder, resume=True, quiet=quiet)


def _dispatch(cfg: RunConfig, run_dir: Path, *, resume: bool, quiet: bool) -> dict[str, Any]:
    """The backend switch: every backend trains `cfg` into `run_dir` and returns the run's summary."""
    if cfg.backend == "sb3":
        from .sb3 import train_sb3

        return train_sb3(cfg, run_dir, resume=resume, quiet=quiet)
    if cfg.backend == "rllib":
        # The RLlib backend lives in agents/training/rllib_backend.py and offers the same call.
        try:
            from .rllib_backend import train_rllib  # type: ignore[import-not-found]
        except ImportError as exc:
            raise RunConfigError(f"config key 'backend': 'rllib' is not available here ({exc})") from None
        return train_rllib(cfg, run_dir, resume=resume, quiet=quiet)
    raise RunConfigError(f"config key 'backend': bad value {cfg.backend!r}")


__all__ = [
    "RunConfig",
    "RunConfigError",
    "RunFolderError",
    "load_run_config",
    "resume_run",
    "start_run",
]
