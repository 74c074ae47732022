"""Where a result came from, as `results.json` (evaluate.py) and `run.json` (train.py) record it."""

from __future__ import annotations

import platform
from datetime import datetime, timezone
from importlib import metadata
from typing import Any

PACKAGES = (
    "quiddler-env",
    "numpy",
    "numba",
    "gymnasium",
    "pettingzoo",
    "torch",
    "stable-baselines3",
    "sb3-contrib",
    "openskill",
    "matplotlib",
    "pyyaml",
    "ray",
)


def now_iso() -> str:
    """The time now, UTC, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def package_versions() -> dict[str, str | None]:
    """Python's version and the installed versions of the packages a result depends on (None if not installed)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def dictionary_identity(dictionary: str) -> dict[str, Any]:
    """Which word list: its name, the sha256 of its sorted words, and of its file."""
    from quiddler_env.core.dictionary import load_dictionary

    d = load_dictionary(dictionary)
    return {"name": d.name, "identity": d.identity, "source_sha256": d.source_digest}
