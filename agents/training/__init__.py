"""Training from YAML run configs: one run layer, thin backends.

    from quiddler_agents.training import load_run_config, start_run, resume_run
    cfg = load_run_config("configs/quickstart.yaml", ["train.total_timesteps=50000"])
    summary = start_run(cfg)              # writes runs/quickstart/...
    summary = resume_run("runs/quickstart", ["train.total_timesteps=100000"])

| module | holds |
|---|---|
| `config` | the run config: YAML in, validated frozen dataclasses out (`checks`: the value checks) |
| `run` | the run layer: the run folder's life, checkpoints, resume, evaluation, the best model, the summary |
| `evaluation` | the periodic evaluation (`evaluate.py`'s game loop) and the best-model rule |
| `runfiles` | run metadata, the metric CSVs, the learning curve |
| `backends` | the registry of trainers: one entry and one sub-package each |
| `sb3/`, `rllib/` | the backends: only what their library needs |

`train.py` is the command line over these.
"""

from __future__ import annotations

from .backends import BACKENDS
from .checks import RunConfigError
from .config import RunConfig, load_run_config
from .run import CheckpointError, RunFolderError, RunWriteError, resume_run, start_run

__all__ = [
    "BACKENDS",
    "CheckpointError",
    "RunConfig",
    "RunConfigError",
    "RunFolderError",
    "RunWriteError",
    "load_run_config",
    "resume_run",
    "start_run",
]
