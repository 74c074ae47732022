"""Trained policies saved as bundles, and the one loader that plays any of them.

- `bundle.py`: the format (its table of files), `PolicyLoadError`, `ACTIVATIONS`,
  `read_description`, checksums, size checks, `write_bundle` (a bundle written as one unit).
- `sb3.py`: SB3 MaskablePPO bundles (`save_policy_bundle`, `PolicyAgent`).
- `privileged.py`: the privileged critic's policy (`PrivilegedCriticPolicy`: the critic reads the game's
  state, the actor the observation), which `sb3.py` saves and loads.
- `rllib.py`: RLlib actor exports (`write_rllib_export`, `RLlibPolicyAgent`); Ray is not needed to play one.

`load_policy(path, ...)` reads `policy.json` once and hands it to the loader its
`framework` field names; `sb3.py` and `rllib.py` never import each other. Neither SB3,
torch nor Ray is imported until a policy is saved or loaded.
"""

from __future__ import annotations

import os
from typing import Any

from quiddler_env.core import files
from quiddler_env.core.config import QuiddlerConfig

from ..base import table_rules
from ..extras import require
from . import bundle, rllib, sb3
from .bundle import (
    ACTIVATIONS,
    BUNDLE_FORMAT,
    DESCRIPTION_FILE,
    MODEL_FILE,
    WEIGHTS_FILE,
    PolicyLoadError,
    bundle_dir,
    verify_weights,
    write_bundle,
)
from .rllib import RLlibPolicyAgent, load_rllib_policy, write_rllib_export
from .sb3 import PolicyAgent, describe_model, save_policy_bundle

__all__ = [
    "ACTIVATIONS",
    "BUNDLE_FORMAT",
    "DESCRIPTION_FILE",
    "MODEL_FILE",
    "WEIGHTS_FILE",
    "PolicyAgent",
    "PolicyLoadError",
    "RLlibPolicyAgent",
    "bundle_dir",
    "bundle_identity",
    "describe_model",
    "load_policy",
    "load_rllib_policy",
    "read_description",
    "save_policy_bundle",
    "verify_weights",
    "write_bundle",
    "write_rllib_export",
]

_CHECKS = {sb3.FRAMEWORK: sb3.check_description, rllib.FRAMEWORK: rllib.check_description}


def read_description(path: str | os.PathLike) -> dict[str, Any]:
    """A bundle's `policy.json`, read once and checked: the common fields and its framework's (errors name both)."""
    desc = bundle.read_description(path)
    return _CHECKS[bundle.framework_of(desc)](desc, bundle.bundle_dir(path) / DESCRIPTION_FILE)


def load_policy(
    path: str | os.PathLike,
    *,
    trusted: bool = False,
    deterministic: bool = True,
    num_players: int | None = None,
    observation_size: int | None = None,
    seed: int | None = None,
    config: QuiddlerConfig | None = None,
) -> PolicyAgent | RLlibPolicyAgent:
    """The agent for the bundle at `path` (its folder, a file in it, or a run folder: its `final/`).

    An SB3 bundle loads through `sb3.load_policy` (weights only unless `trusted=True`,
    which unpickles `model.zip`), an RLlib export through `rllib.load_rllib_policy`
    (always weights only). The policy's observation size must equal the env's
    (`observation_size`, or the size of `config`'s table), its action size 64,
    and its files their checksums in `policy.json`. `num_players` alone is short for
    `config=QuiddlerConfig(num_players=...)` (the default rules at that table); beside a config it must
    name the config's table.
    """
    config = table_rules(num_players, config)
    directory = bundle_dir(path)
    if not directory.exists():
        raise PolicyLoadError(f"policy bundle {directory} does not exist")
    desc = None
    if not (trusted and not (directory / DESCRIPTION_FILE).exists()):  # a trusted model.zip may stand alone
        desc = bundle.read_description(directory)
    common = dict(deterministic=deterministic, observation_size=observation_size, seed=seed)
    if desc is not None and bundle.framework_of(desc) == rllib.FRAMEWORK:
        require("train", "torch", what="playing a trained policy")
        return load_rllib_policy(directory, config=config, description=desc, **common)
    require("train", "torch", "sb3_contrib", what="playing a trained policy")
    return sb3.load_policy(directory, trusted=trusted, config=config, description=desc, **common)


def bundle_identity(path: str | os.PathLike, *, trusted: bool = False) -> dict[str, Any]:
    """What identifies the bundle at `path` in a results file, checked against its files.

    `{"path": <resolved bundle folder>, "framework": ..., "weights_sha256": ...}`, plus
    `model_sha256` where the bundle has a `model.zip`; a file not matching its checksum
    is a `PolicyLoadError` naming it. With `trusted`, a bare `model.zip` (no policy.json)
    is named by its file's sha256.
    """
    directory = bundle_dir(path).resolve()
    if trusted and not (directory / DESCRIPTION_FILE).exists():
        return {
            "path": str(directory),
            "framework": "sb3",
            "weights_sha256": None,
            "model_sha256": files.sha256_file(directory / MODEL_FILE),
        }
    desc = bundle.read_description(directory)
    verify_weights(directory, desc)
    out = {"path": str(directory), "framework": bundle.framework_of(desc), "weights_sha256": desc["weights_sha256"]}
    if "model_sha256" in desc and (directory / MODEL_FILE).exists():
        out["model_sha256"] = desc["model_sha256"]
    return out
