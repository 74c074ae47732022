"""What needs more than the base install, and the one line that says which extra brings it.

The base install (`pip install quiddler-env`) holds the rules, the envs and the bots, and
`evaluate.py` with bots. The extras (pyproject.toml) add the rest:

| extra | for | brings |
|---|---|---|
| `eval` | evaluate.py's plots, ratings and progress bar (without it: skipped, with a line) | matplotlib, openskill, tqdm |
| `train` | train.py (backend sb3) and playing trained policies (`policy:`, `zoo:`); the eval extra too | torch, stable-baselines3, sb3-contrib, tensorboard |
| `rllib` | train.py with `backend: rllib`; the train extra too | ray[rllib] |
| `openspiel` | the OpenSpiel game `python_quiddler` and the `openspiel-ismcts` agent | open_spiel |

A command that meets a missing extra stops with `require`'s one line, e.g.
`train.py: error: training needs the train extra: pip install "quiddler-env[train]" (missing: torch)`
(from a checkout: `pip install -e ".[train]"`). Whether a module is there is asked of the import system
(`importlib.util.find_spec`) without importing it.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

DISTRIBUTION = "quiddler-env"
EXTRAS: dict[str, tuple[str, ...]] = {
    "eval": ("matplotlib", "openskill", "tqdm"),
    "train": ("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "tqdm", "matplotlib"),
    "rllib": ("ray", "torch", "tensorboard", "tqdm", "matplotlib"),
    "openspiel": ("open_spiel",),
}
"""The top-level modules each extra's features import (what `require(extra)` checks by default)."""
_CHECKOUT = Path(__file__).resolve().parent.parent
"""The repository's root when this package runs from a checkout (an editable install included)."""


class MissingExtra(ImportError):
    """A feature whose extra is not installed; the message is one line ending in the pip command."""

    def __init__(self, what: str, extra: str, module: str) -> None:
        self.what, self.extra, self.module = what, extra, module
        super().__init__(f"{what} needs the {extra} extra: {install_command(extra)} (missing: {module})", name=module)


def install_command(extra: str) -> str:
    """The pip command that adds `extra`: the checkout's editable install from a checkout, else the package's."""
    if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "quiddler_env").is_dir():
        try:
            here = Path.cwd().resolve() == _CHECKOUT
        except OSError:
            here = False
        return f'pip install -e "{"." if here else os.fspath(_CHECKOUT)}[{extra}]"'
    return f'pip install "{DISTRIBUTION}[{extra}]"'


def missing(*modules: str) -> str | None:
    """The first of `modules` (top-level names) that cannot be imported here, or None when all can."""
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None  # None also for a module set to None in sys.modules
        except ValueError:  # imported already, without a spec
            found = True
        except ImportError:
            found = False
        if not found:
            return name
    return None


def require(extra: str, *modules: str, what: str) -> None:
    """Raise `MissingExtra` (naming `extra`) if one of `modules` (default: the extra's, `EXTRAS`) is missing."""
    module = missing(*(modules or EXTRAS[extra]))
    if module is not None:
        raise MissingExtra(what, extra, module)


def skipped(what: str, extra: str, *modules: str) -> str | None:
    """For an optional output: None if `modules` are here, else the line saying it is skipped and why."""
    module = missing(*modules)
    if module is None:
        return None
    return f"no {what}: they need the {extra} extra: {install_command(extra)} (missing: {module})"
