"""The trainers a run config's `backend` names: one entry per sub-package of `quiddler_agents.training`.

A backend is a sub-package with two modules:

- `config`: `SECTIONS` (its own top-level config sections, e.g. `ray`, `rllib`),
  `resolve_sections(data) -> dict` (those sections validated, defaults filled in) and
  `check_run(cfg)` (the constraints it puts on the shared sections). Importing it must
  not import the backend's library, so configs validate where it is not installed.
- `trainer`: `make_trainer(session) -> Trainer` (see `quiddler_agents.training.run.Trainer`),
  which may import the library.

Adding a trainer: write `agents/training/<name>/` with those two modules and add
one `Backend` line below. The run layer (`run.py`) does the rest: the run folder,
checkpoints, resume, evaluation, the best model, the summary and the learning curve.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from ..extras import EXTRAS, install_command
from .checks import RunConfigError


@dataclass(frozen=True)
class Backend:
    """One trainer: its name in configs, its sub-package and how to install what it needs."""

    name: str
    package: str
    summary: str
    extra: str
    """The extra of pyproject.toml that installs what it needs (`quiddler_agents.extras`)."""
    needs: str
    """What `require` says needs the extra."""

    @property
    def modules(self) -> tuple[str, ...]:
        return EXTRAS[self.extra]

    @property
    def install(self) -> str:
        return install_command(self.extra)


BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend("sb3", "sb3", "MaskablePPO (sb3-contrib) on Quiddler-v0, bots and a league", "train", "training"),
        Backend(
            "rllib",
            "rllib",
            "multi-agent PPO on Ray RLlib, self-play or bots",
            "rllib",
            "training with backend rllib",
        ),
    )
}


def backend_part(name: str, part: str) -> ModuleType:
    """The `config` or `trainer` module of backend `name` (an unavailable library is a RunConfigError)."""
    backend = BACKENDS.get(name)
    if backend is None:
        raise RunConfigError(f"config key 'backend': bad value {name!r}; allowed: {', '.join(BACKENDS)}")
    try:
        return importlib.import_module(f".{backend.package}.{part}", package=__package__)  # quiddler_agents.training
    except ImportError as exc:
        raise RunConfigError(
            f"config key 'backend': {name!r} is not available here (install it: {backend.install}): {exc}"
        ) from None
