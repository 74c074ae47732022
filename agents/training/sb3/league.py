"""Self-play league: a bounded pool of frozen copies of the learner, kept as policy bundles on disk.

Every `snapshot_every` steps the learner is saved (weights + JSON, the safe-load
bundle of `quiddler_agents.policies`) as `league/step_<N>/` in the run folder and joins the
pool; the oldest member leaves once the pool holds more than `pool_size`. Training
envs load members with the safe loader (weights only). The pool is a list of folder
names, saved in every checkpoint so a resumed run has the same opponents.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

LEAGUE_DIR = "league"


def member_name(step: int) -> str:
    """The folder name of the copy taken at `step`."""
    return f"step_{step:09d}"


class League:
    """The pool of frozen learner copies under `run_dir/league` (oldest first)."""

    def __init__(self, run_dir: str | os.PathLike, pool_size: int, members: Sequence[str] = ()) -> None:
        if pool_size < 1:
            raise ValueError(f"League: pool_size must be a positive integer, got {pool_size!r}")
        self.folder = Path(run_dir) / LEAGUE_DIR
        self.pool_size = pool_size
        self.members: list[str] = []
        for name in members:
            if not (self.folder / name / "policy.json").is_file():
                raise FileNotFoundError(f"league member {name!r} has no bundle at {self.folder / name}")
            self.members.append(name)
        self.members = self.members[-pool_size:]

    def paths(self) -> list[str]:
        """Absolute bundle folders of the pool members (what the envs load)."""
        return [str((self.folder / name).resolve()) for name in self.members]

    def add(self, model: Any, step: int, description: Mapping[str, Any] | None = None) -> str:
        """Save the learner as a new member (one whole bundle folder, or none) and return its name."""
        from ...policies.sb3 import save_policy_bundle

        name = member_name(step)
        if name in self.members:
            return name
        # A folder of this name can only come from a killed run past its last checkpoint: it is replaced whole.
        save_policy_bundle(model, self.folder / name, {**(description or {}), "league_step": step})
        self.members.append(name)
        del self.members[: -self.pool_size]
        return name

    def state(self) -> list[str]:
        return list(self.members)
