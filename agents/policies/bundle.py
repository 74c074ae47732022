"""The policy bundle format, framework-neutral: file names, reading and checking `policy.json`, the one writer.

A policy bundle is a folder:

| file | content | written by | read by |
|---|---|---|---|
| `model.zip` | SB3 only: the full `MaskablePPO.save` archive (pickled objects inside) | `sb3.save_policy_bundle` | `sb3.load_policy(..., trusted=True)` only |
| `policy.pt` | the network's `state_dict`: plain tensors | the framework's writer | `load_weights` (`torch.load(..., weights_only=True)`) |
| `policy.json` | the description below, written last | `write_bundle` | `read_description` |

Common `policy.json` fields (checked by `read_description`): `format` (1), `framework`
(`"sb3"`, the default when absent, or `"rllib"`), `observation_size`, `action_size`,
`weights_sha256` (of `policy.pt`, required), `model_sha256` (of `model.zip`, when the
bundle has one), `quiddler_env_version`, `env_version` (`quiddler_env.ENV_VERSION` when written; loading a
bundle made for another env version warns in one line, `warn_env_version`), `config` (the `QuiddlerConfig` as a dict) and
whatever the trainer adds. The network's shape is the framework's part: `sb3.py`
(`net_arch`, `activation`, `policy_class`, ...) and `rllib.py` (`hidden_layers`, ...).

`write_bundle` writes a whole bundle as one unit: the framework's files go into a
staged folder (`quiddler_env.core.files.staged_folder`), the checksums are taken,
`policy.json` is written last and the folder swaps into place. A bundle folder so only
ever holds the files of one save, and a kill leaves the old bundle or the new one.

A path names a bundle as its folder, a file inside it (`runs/x/final/model.zip`), or a
run folder (one holding `config.yaml` and a `final/` bundle), which means its `final/`.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import warnings
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from quiddler_env.core import files
from quiddler_env.core.actions import num_actions
from quiddler_env.core.config import MAX_PLAYERS, MIN_PLAYERS, QuiddlerConfig
from quiddler_env.core.observation import observation_layout
from quiddler_env.envs.versions import ENV_VERSION, EnvVersionWarning, env_version_mismatch

BUNDLE_FORMAT = 1
MODEL_FILE = "model.zip"
WEIGHTS_FILE = "policy.pt"
DESCRIPTION_FILE = "policy.json"
BUNDLE_FILES = (MODEL_FILE, WEIGHTS_FILE, DESCRIPTION_FILE)
RUN_CONFIG_FILE = "config.yaml"
FINAL_DIR = "final"
FRAMEWORKS = ("sb3", "rllib")
DEFAULT_FRAMEWORK = "sb3"
ACTIVATIONS = ("Tanh", "ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Sigmoid")
"""The activations a network may use (looked up in `torch.nn` by this list only, never by arbitrary name)."""

MAX_OBSERVATION_SIZE = 100_000
MAX_ACTION_SIZE = 4096
MAX_LAYERS = 16
MAX_LAYER_SIZE = 8192
MAX_DESCRIPTION_BYTES = 1 << 22

_SHA256 = re.compile(r"[0-9a-f]{64}")


class PolicyLoadError(ValueError):
    """A policy bundle that cannot be used: missing, unreadable, corrupt or not matching the env."""


# -- paths ----------------------------------------------------------------------------------------------


def bundle_dir(path: str | os.PathLike) -> Path:
    """The bundle folder `path` names: the folder, the folder of a file in it, or a run folder's `final/`."""
    p = Path(path)
    if p.name in BUNDLE_FILES or (p.suffix in (".zip", ".pt", ".json") and not p.is_dir()):
        p = p.parent
    if (p / RUN_CONFIG_FILE).is_file() and (p / FINAL_DIR).is_dir():
        p = p / FINAL_DIR
    return p


# -- reading --------------------------------------------------------------------------------------------


def is_count(value: Any, limit: int) -> bool:
    """A positive int (not a bool) of at most `limit`."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= limit


def is_layers(value: Any) -> bool:
    """A list of at most `MAX_LAYERS` hidden-layer sizes, each 1..`MAX_LAYER_SIZE`."""
    return isinstance(value, list) and len(value) <= MAX_LAYERS and all(is_count(x, MAX_LAYER_SIZE) for x in value)


def is_sha256(value: Any) -> bool:
    return isinstance(value, str) and _SHA256.fullmatch(value) is not None


LAYERS_TEXT = f"a list of at most {MAX_LAYERS} layer sizes, each 1..{MAX_LAYER_SIZE}"
COMMON_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "format": (lambda v: v == BUNDLE_FORMAT and not isinstance(v, bool), str(BUNDLE_FORMAT)),
    "observation_size": (
        lambda v: is_count(v, MAX_OBSERVATION_SIZE),
        f"a positive integer of at most {MAX_OBSERVATION_SIZE}",
    ),
    "action_size": (lambda v: is_count(v, MAX_ACTION_SIZE), f"a positive integer of at most {MAX_ACTION_SIZE}"),
    "weights_sha256": (is_sha256, f"the sha256 of {WEIGHTS_FILE} (64 lowercase hex digits)"),
}


def check_fields(desc: Mapping[str, Any], file: Path, checks: Mapping[str, tuple[Callable[[Any], bool], str]]) -> None:
    """Each field of `checks` passes its test, else a `PolicyLoadError` naming the file and the field."""
    for key, (ok, what) in checks.items():
        value = desc.get(key)
        if not ok(value):
            shown = repr(value) if key in desc else "nothing (the field is missing)"
            if len(shown) > 80:
                shown = shown[:77] + "..."
            raise PolicyLoadError(f"policy description {file}: field {key!r} must be {what}, got {shown}")


def check_description(desc: Any, file: Path) -> dict[str, Any]:
    """The common fields of a description (see the module docstring); returns it."""
    if not isinstance(desc, dict):
        raise PolicyLoadError(f"policy description {file} must hold a JSON object")
    check_fields(desc, file, COMMON_FIELDS)
    framework = desc.get("framework", DEFAULT_FRAMEWORK)
    if framework not in FRAMEWORKS:
        raise PolicyLoadError(
            f"policy description {file}: field 'framework' must be one of {', '.join(FRAMEWORKS)}, got {framework!r}"
        )
    if "model_sha256" in desc and not is_sha256(desc["model_sha256"]):
        raise PolicyLoadError(
            f"policy description {file}: field 'model_sha256' must be the sha256 of {MODEL_FILE}, "
            f"got {desc['model_sha256']!r}"
        )
    return desc


def framework_of(desc: Mapping[str, Any]) -> str:
    return desc.get("framework", DEFAULT_FRAMEWORK)


def read_description(path: str | os.PathLike) -> dict[str, Any]:
    """Read the bundle's `policy.json` once and check its common fields (errors name the file and field)."""
    folder = bundle_dir(path)
    file = folder / DESCRIPTION_FILE
    try:
        if file.stat().st_size > MAX_DESCRIPTION_BYTES:
            raise PolicyLoadError(f"policy description {file} is larger than {MAX_DESCRIPTION_BYTES} bytes")
        desc = files.read_json(file)
    except FileNotFoundError:
        if (folder / RUN_CONFIG_FILE).is_file():
            raise PolicyLoadError(
                f"{folder} is a run folder without a {FINAL_DIR}/ bundle (the run has not finished): "
                f"name one of its checkpoint folders"
            ) from None
        raise PolicyLoadError(
            f"policy description {file} is missing (a bundle holds {WEIGHTS_FILE} and {DESCRIPTION_FILE}, "
            f"and {MODEL_FILE} for SB3)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyLoadError(f"cannot read policy description {file}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise PolicyLoadError(f"policy description {file} is not valid JSON: {exc}") from None
    return check_description(desc, file)


_ENV_VERSION_WARNED: dict = {}
_ENV_VERSION_WARNED_BUNDLES: set[str] = set()


def warn_env_version(description: Mapping[str, Any], name: str | os.PathLike) -> str | None:
    """Warn in one line (`EnvVersionWarning`) when the bundle was made for another env version; returns the line.

    Not a refusal: the sizes are checked apart, and a policy of an older version may still play. Shown once per
    bundle and process, as one line on stderr: the warning's place is the bundle's `policy.json` at line 0, so
    Python prints no source line under it."""
    message = env_version_mismatch(dict(description), str(name))
    place = str(bundle_dir(name).resolve())
    if message is not None and place not in _ENV_VERSION_WARNED_BUNDLES:  # once a process, whatever the filters
        _ENV_VERSION_WARNED_BUNDLES.add(place)
        warnings.warn_explicit(
            message,
            EnvVersionWarning,
            filename=str(bundle_dir(name) / DESCRIPTION_FILE),
            lineno=0,
            module=__name__,
            registry=_ENV_VERSION_WARNED,
        )
    return message


def verify_weights(folder: str | os.PathLike, description: Mapping[str, Any]) -> None:
    """`policy.pt` matches its `weights_sha256`, and `model.zip`, where there is one, its `model_sha256`.

    (The weights-only load never reads `model.zip`, yet a mismatch there still means a bundle
    mixing two saves, and is refused.)
    """
    folder = Path(folder)
    pairs = [(WEIGHTS_FILE, "weights_sha256")]
    if "model_sha256" in description and (folder / MODEL_FILE).exists():
        pairs.append((MODEL_FILE, "model_sha256"))
    for name, key in pairs:
        file = folder / name
        what = f"policy weights {file} are" if name == WEIGHTS_FILE else f"model file {file} is"
        try:
            digest = files.sha256_file(file)
        except FileNotFoundError:
            raise PolicyLoadError(f"{what} missing") from None
        except OSError as exc:
            raise PolicyLoadError(f"cannot read {file}: {exc}") from None
        if digest != description[key]:
            raise PolicyLoadError(
                f"{what} not the file of the description: {file} does not match the sha256 in "
                f"{folder / DESCRIPTION_FILE} (the bundle's files come from different saves, or were changed)"
            )


# -- sizes ----------------------------------------------------------------------------------------------


def env_observation_size(
    observation_size: int | None = None, config: QuiddlerConfig | None = None
) -> tuple[int | None, str]:
    """The env's observation size (given, or the size of `config`'s table) and a note for errors."""
    note = ""
    if observation_size is None and config is not None:
        observation_size = observation_layout(config.num_players, config.challenges).size
        note = f" ({config.num_players} players{', challenges' if config.challenges else ''})"
    return observation_size, note


def players_for(observation_size: int) -> int | None:
    """The table size whose observation vector has `observation_size` entries (None if none)."""
    return next(
        (
            n
            for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
            for challenges in (False, True)
            if observation_layout(n, challenges).size == observation_size
        ),
        None,
    )


def env_action_size(config: Any, description: Mapping[str, Any] | None) -> int:
    """The env's action count: 64, or 64 + K under `layout: choose`, from the env's rules (else the bundle's)."""
    if config is not None:
        return num_actions(config.layout, config.challenges)
    trained = (description or {}).get("config")
    if not isinstance(trained, Mapping):
        return num_actions("auto")
    return num_actions(trained.get("layout", "auto"), bool(trained.get("challenges", False)))


def check_sizes(
    where: str | os.PathLike,
    observation_size: int,
    action_size: int,
    expected_observation: int | None,
    note: str = "",
    expected_actions: int | None = None,
) -> None:
    """A policy's sizes fit the env: its observation size (when known) and the env's action count
    (`expected_actions`, default 64); errors name both sizes."""
    if expected_observation is not None and observation_size != expected_observation:
        raise PolicyLoadError(
            f"policy {where} takes observations of size {observation_size}, but the env's observation "
            f"size is {expected_observation}{note}"
        )
    expected = num_actions("auto") if expected_actions is None else expected_actions
    if action_size != expected:
        raise PolicyLoadError(f"policy {where} has {action_size} actions, but the env's action size is {expected}")


# -- weights --------------------------------------------------------------------------------------------


def load_weights(file: str | os.PathLike) -> dict[str, Any]:
    """A `state_dict` read with `torch.load(weights_only=True)`: plain tensors only, never unpickling code."""
    import torch

    file = Path(file)
    try:
        with files.open_regular(file) as fh:
            state = torch.load(fh, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise PolicyLoadError(f"policy weights {file} are missing") from None
    except pickle.UnpicklingError as exc:
        # weights_only refuses anything that is not tensors and plain containers: never run it.
        raise PolicyLoadError(
            f"policy weights {file} hold more than plain tensors; refusing to unpickle them "
            f"(load with trusted=True only if you trust this file): {str(exc).splitlines()[0]}"
        ) from None
    except (OSError, RuntimeError, EOFError, ValueError, zipfile.BadZipFile) as exc:
        raise PolicyLoadError(f"policy weights {file} are unreadable or corrupt: {exc}") from None
    if not isinstance(state, dict):
        raise PolicyLoadError(f"policy weights {file} must hold a state_dict, got {type(state).__name__}")
    return state


# -- writing --------------------------------------------------------------------------------------------


def new_description(extra: Mapping[str, Any] | None, **fields: Any) -> dict[str, Any]:
    """A description: the caller's `extra` fields (a `QuiddlerConfig` becomes its dict), then `fields`."""
    import quiddler_env

    out = dict(extra or {})
    if isinstance(out.get("config"), QuiddlerConfig):
        out["config"] = out["config"].to_dict()
    out.setdefault("config", None)
    out.update(fields)
    out.update(format=BUNDLE_FORMAT, quiddler_env_version=quiddler_env.__version__, env_version=ENV_VERSION)
    return out


def _check_replaceable(folder: Path) -> None:
    """Refuse to replace a folder that is not a bundle (a run folder, say): the swap would delete it."""
    if not folder.exists():
        return
    if not folder.is_dir():
        raise ValueError(f"policy bundle {folder}: a file is in the way")
    names = {p.name for p in folder.iterdir()}
    if RUN_CONFIG_FILE in names:
        raise ValueError(f"policy bundle {folder}: refusing to replace a run folder (it holds {RUN_CONFIG_FILE})")
    if names and DESCRIPTION_FILE not in names and not all(n in BUNDLE_FILES or files.is_temporary(n) for n in names):
        raise ValueError(f"policy bundle {folder}: refusing to replace a folder that is not a policy bundle")


def _fsync_files(folder: Path) -> None:
    for entry in folder.rglob("*"):
        if entry.is_file() and not entry.is_symlink():
            fd = os.open(entry, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def write_bundle(folder: str | os.PathLike, write_files: Callable[[Path], Any], description: Mapping[str, Any]) -> Path:
    """Write a whole bundle at `folder` as one unit; returns the folder.

    `write_files(tmp)` writes the framework's files (`policy.pt`, `model.zip` if any, and
    whatever else belongs to the same save, e.g. a checkpoint's optimizer state) into the
    empty staged folder `tmp`. Then the checksums go into the description, `policy.json`
    is written last, and the folder replaces `folder` whole. An error or a kill on the
    way leaves `folder` as it was.
    """
    folder = Path(folder)
    _check_replaceable(folder)
    desc = dict(description)
    desc.pop("weights_sha256", None)
    desc.pop("model_sha256", None)
    with files.staged_folder(folder) as tmp:
        write_files(tmp)
        if (tmp / DESCRIPTION_FILE).exists():
            raise ValueError(f"policy bundle {folder}: the files writer must leave {DESCRIPTION_FILE} to write_bundle")
        if not (tmp / WEIGHTS_FILE).is_file():
            raise ValueError(f"policy bundle {folder}: the files writer wrote no {WEIGHTS_FILE}")
        desc["weights_sha256"] = files.sha256_file(tmp / WEIGHTS_FILE)
        if (tmp / MODEL_FILE).is_file():
            desc["model_sha256"] = files.sha256_file(tmp / MODEL_FILE)
        check_description(desc, folder / DESCRIPTION_FILE)  # never write a bundle read_description refuses
        _fsync_files(tmp)
        files.write_json(tmp / DESCRIPTION_FILE, desc)
    return folder
