"""Trained MaskablePPO policies: the saved bundle, and loading it without running its code.

A policy bundle is a folder written by `save_policy_bundle` (train.py uses it):

| file | content | read by |
|---|---|---|
| `model.zip` | the full SB3 `MaskablePPO.save` archive (pickled objects inside) | `load_policy(..., trusted=True)` only |
| `policy.pt` | the policy network's `state_dict`: plain tensors | `torch.load(..., weights_only=True)` |
| `policy.json` | the description below | `json.load` |

`policy.json` fields: `format` (1), `observation_size`, `action_size`, `net_arch`
(SB3's `dict(pi=[...], vf=[...])`), `activation` (a `torch.nn` class name),
`policy_class` ("MaskableActorCriticPolicy"), `features_extractor`
("FlattenExtractor"), `share_features_extractor`, `weights_sha256` (of
`policy.pt`), `quiddler_env_version`, `config` (the `QuiddlerConfig` as a dict), and
whatever else the caller adds (training settings).

Unpickling a file can run any code in it. So the default load reads only the JSON
and the weights (`weights_only=True` refuses anything but tensors and plain
containers) into a freshly built `MaskableActorCriticPolicy`; `model.zip` is opened
only with `trusted=True`, for files the user knows.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from quiddler_env.core.actions import NUM_ACTIONS
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.envs.observation import observation_layout

from .base import BaseAgent

BUNDLE_FORMAT = 1
MODEL_FILE = "model.zip"
WEIGHTS_FILE = "policy.pt"
DESCRIPTION_FILE = "policy.json"
POLICY_CLASS = "MaskableActorCriticPolicy"
FEATURES_EXTRACTOR = "FlattenExtractor"
# Activations a description may name (looked up in torch.nn by this list only, never by arbitrary name).
ACTIVATIONS = ("Tanh", "ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Sigmoid")


class PolicyLoadError(ValueError):
    """A policy bundle that cannot be used: missing, unreadable, corrupt or not matching the env."""


def _bundle_dir(path: str | os.PathLike) -> Path:
    """The bundle folder for a folder, or for the path of a file inside it."""
    p = Path(path)
    if p.name in (MODEL_FILE, WEIGHTS_FILE, DESCRIPTION_FILE) or p.suffix in (".zip", ".pt", ".json"):
        return p.parent
    return p


def _atomic_write(path: Path, write) -> None:
    """Write through a temporary file in the same folder, then move it into place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def describe_model(model: Any, description: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON description of an SB3 MaskablePPO model (sizes and network shape read from it)."""
    import torch

    import quiddler_env

    policy = model.policy
    if type(policy).__name__ != POLICY_CLASS:
        raise ValueError(f"save_policy_bundle needs a {POLICY_CLASS}, got {type(policy).__name__}")
    if type(policy.features_extractor).__name__ != FEATURES_EXTRACTOR:
        raise ValueError(
            f"save_policy_bundle supports the {FEATURES_EXTRACTOR} features extractor, "
            f"got {type(policy.features_extractor).__name__}"
        )
    activation = policy.activation_fn.__name__
    if activation not in ACTIVATIONS or getattr(torch.nn, activation) is not policy.activation_fn:
        raise ValueError(f"activation {activation!r} is not one of {', '.join(ACTIVATIONS)}")
    obs_shape = model.observation_space.shape
    if obs_shape is None or len(obs_shape) != 1:
        raise ValueError(f"save_policy_bundle needs a flat Box observation space, got {model.observation_space}")
    net_arch = policy.net_arch
    net_arch = {k: [int(x) for x in v] for k, v in net_arch.items()} if isinstance(net_arch, dict) else list(net_arch)
    out: dict[str, Any] = dict(description or {})
    config = out.get("config")
    if isinstance(config, QuiddlerConfig):
        out["config"] = config.to_dict()
    out.update(
        format=BUNDLE_FORMAT,
        observation_size=int(obs_shape[0]),
        action_size=int(model.action_space.n),
        net_arch=net_arch,
        activation=activation,
        policy_class=POLICY_CLASS,
        features_extractor=FEATURES_EXTRACTOR,
        share_features_extractor=bool(policy.share_features_extractor),
        quiddler_env_version=quiddler_env.__version__,
    )
    out.setdefault("config", None)
    return out


def save_policy_bundle(model: Any, path: str | os.PathLike, description: Mapping[str, Any] | None = None) -> Path:
    """Write `model.zip`, `policy.pt` and `policy.json` into the folder `path`; returns the folder.

    `description` adds fields to the JSON (at least `config`: the `QuiddlerConfig` or
    its dict). Each file is written atomically; the JSON last, so a complete JSON
    means a complete bundle.
    """
    import torch

    directory = _bundle_dir(path)
    directory.mkdir(parents=True, exist_ok=True)
    desc = describe_model(model, description)
    _atomic_write(directory / MODEL_FILE, model.save)
    state = {k: v.detach().cpu().clone() for k, v in model.policy.state_dict().items()}
    _atomic_write(directory / WEIGHTS_FILE, lambda fh: torch.save(state, fh))
    desc["weights_sha256"] = _sha256(directory / WEIGHTS_FILE)
    text = json.dumps(desc, indent=2, sort_keys=True) + "\n"
    _atomic_write(directory / DESCRIPTION_FILE, lambda fh: fh.write(text.encode()))
    return directory


def read_description(path: str | os.PathLike) -> dict[str, Any]:
    """Read and check a bundle's `policy.json` (errors name the file).

    An RLlib export's description (`"framework": "rllib"`) is checked by `agents.rllib_policy`
    instead; it has `observation_size`, `action_size` and `config` too, but no SB3 fields.
    """
    from .rllib_policy import is_rllib_export, read_rllib_description

    if is_rllib_export(path):
        return read_rllib_description(path)
    file = _bundle_dir(path) / DESCRIPTION_FILE
    try:
        desc = json.loads(file.read_text())
    except FileNotFoundError:
        raise PolicyLoadError(
            f"policy description {file} is missing (a bundle holds {MODEL_FILE}, {WEIGHTS_FILE} and "
            f"{DESCRIPTION_FILE}, written by save_policy_bundle)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyLoadError(f"cannot read policy description {file}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise PolicyLoadError(f"policy description {file} is not valid JSON: {exc}") from None
    if not isinstance(desc, dict):
        raise PolicyLoadError(f"policy description {file} must hold a JSON object")

    def need(key: str, ok, what: str):
        value = desc.get(key)
        if not ok(value):
            raise PolicyLoadError(f"policy description {file}: field {key!r} must be {what}, got {value!r}")
        return value

    def is_int(v) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v > 0

    def is_layers(v) -> bool:
        return isinstance(v, list) and all(is_int(x) for x in v)

    need("format", lambda v: v == BUNDLE_FORMAT, f"{BUNDLE_FORMAT}")
    need("observation_size", is_int, "a positive integer")
    need("action_size", is_int, "a positive integer")
    need(
        "net_arch",
        lambda v: is_layers(v) or (isinstance(v, dict) and set(v) <= {"pi", "vf"} and all(map(is_layers, v.values()))),
        "a list of layer sizes or {'pi': [...], 'vf': [...]}",
    )
    need("activation", lambda v: v in ACTIVATIONS, f"one of {', '.join(ACTIVATIONS)}")
    need("policy_class", lambda v: v == POLICY_CLASS, repr(POLICY_CLASS))
    need("features_extractor", lambda v: v == FEATURES_EXTRACTOR, repr(FEATURES_EXTRACTOR))
    need("share_features_extractor", lambda v: isinstance(v, bool), "true or false")
    return desc


def _check_sizes(where: Path, observation_size: int, action_size: int, expected_obs: int | None, table: str) -> None:
    if expected_obs is not None and observation_size != expected_obs:
        raise PolicyLoadError(
            f"policy {where} takes observations of size {observation_size}, but the env's observation "
            f"size is {expected_obs}{table}"
        )
    if action_size != NUM_ACTIONS:
        raise PolicyLoadError(f"policy {where} has {action_size} actions, but the env's action size is {NUM_ACTIONS}")


def _build_policy(desc: dict[str, Any]):
    """A fresh MaskableActorCriticPolicy shaped as `desc` says (no weights yet)."""
    import torch
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    obs_space = spaces.Box(-np.inf, np.inf, shape=(desc["observation_size"],), dtype=np.float32)
    return MaskableActorCriticPolicy(
        obs_space,
        spaces.Discrete(desc["action_size"]),
        lambda _: 0.0,
        net_arch=desc["net_arch"],
        activation_fn=getattr(torch.nn, desc["activation"]),
        share_features_extractor=desc["share_features_extractor"],
    )


def _load_weights(file: Path):
    import torch

    try:
        return torch.load(file, map_location="cpu", weights_only=True)
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


def load_policy(
    path: str | os.PathLike,
    *,
    trusted: bool = False,
    deterministic: bool = True,
    num_players: int | None = None,
    observation_size: int | None = None,
    seed: int | None = None,
    config: QuiddlerConfig | None = None,
) -> PolicyAgent:
    """A `PolicyAgent` for the bundle at `path` (its folder, or a file in it).

    Default: rebuilds the network from `policy.json` and fills it from `policy.pt`
    read with `weights_only=True`; nothing is unpickled. `trusted=True` instead runs
    `MaskablePPO.load` on `model.zip`, which unpickles it: only for files you trust.
    The model's observation size must equal the env's (`observation_size`, or the
    size for `num_players` or `config`), and its action size 64. A folder exported
    by the RLlib backend (`"framework": "rllib"` in its JSON) loads through
    `agents.rllib_policy` (weights only, whatever `trusted` says).
    """
    directory = _bundle_dir(path)
    if not directory.exists():
        raise PolicyLoadError(f"policy bundle {directory} does not exist")
    from .rllib_policy import is_rllib_export, load_rllib_policy

    if is_rllib_export(directory):  # exported by the RLlib backend: plain actor weights, nothing to unpickle
        return load_rllib_policy(
            directory,
            deterministic=deterministic,
            num_players=num_players,
            observation_size=observation_size,
            seed=seed,
            config=config,
        )
    if num_players is None and config is not None:
        num_players = config.num_players
    table = ""
    if observation_size is None and num_players is not None:
        observation_size = observation_layout(num_players).size
        table = f" ({num_players} players)"
    # Observation features (agents.features) the network reads after the observation vector.
    features = _features_of(directory)
    extra = 0 if features is None else features.size
    if trusted:
        policy, obs_size, action_size = _load_trusted(directory)
        _check_sizes(directory / MODEL_FILE, obs_size - extra, action_size, observation_size, table)
    else:
        desc = read_description(directory)
        _check_sizes(
            directory / DESCRIPTION_FILE, desc["observation_size"] - extra, desc["action_size"], observation_size, table
        )
        weights = directory / WEIGHTS_FILE
        expected = desc.get("weights_sha256")
        if isinstance(expected, str) and weights.exists() and _sha256(weights) != expected:
            raise PolicyLoadError(f"policy weights {weights} do not match the sha256 in {directory / DESCRIPTION_FILE}")
        state = _load_weights(weights)
        if not isinstance(state, dict):
            raise PolicyLoadError(f"policy weights {weights} must hold a state_dict, got {type(state).__name__}")
        policy = _build_policy(desc)
        try:
            policy.load_state_dict(state, strict=True)
        except (RuntimeError, TypeError) as exc:
            raise PolicyLoadError(
                f"policy weights {weights} do not fit the network in {directory / DESCRIPTION_FILE}: {exc}"
            ) from None
        obs_size = desc["observation_size"]
    n = None
    if obs_size is not None:
        n = next((k for k in range(2, 9) if observation_layout(k).size == obs_size - extra), None)
    return PolicyAgent(
        policy,
        obs_size,
        deterministic=deterministic,
        seed=seed,
        num_players=num_players or n,
        config=config,
        features=None if features is None else features.name,
    )


def _features_of(directory: Path):
    """The `agents.features` set named by the bundle's `observation_features` (None when absent)."""
    file = directory / DESCRIPTION_FILE
    if not file.is_file():
        return None
    try:
        name = json.loads(file.read_text()).get("observation_features")
    except (OSError, ValueError, AttributeError):
        return None  # read_description reports a broken description
    if name is None:
        return None
    from .features import feature_set

    try:
        return feature_set(name)
    except ValueError as exc:
        raise PolicyLoadError(f"policy description {file}: {exc}") from None


def _load_trusted(directory: Path):
    from sb3_contrib import MaskablePPO

    file = directory / MODEL_FILE
    if not file.exists():
        raise PolicyLoadError(f"model file {file} is missing")
    try:
        model = MaskablePPO.load(file, device="cpu")
    except Exception as exc:  # SB3 raises many kinds on a bad archive; name the file whatever it was
        raise PolicyLoadError(f"cannot load model file {file}: {type(exc).__name__}: {exc}") from None
    shape = model.observation_space.shape
    if shape is None or len(shape) != 1:
        raise PolicyLoadError(f"model file {file} has a {model.observation_space} observation space, not a flat Box")
    return model.policy, int(shape[0]), int(model.action_space.n)


class PolicyAgent(BaseAgent):
    """A trained policy acting on the observation, always within the action mask.

    Deterministic: the most probable legal action. Otherwise: sampled from the
    masked distribution with the agent's own generator (not torch's global one).
    """

    name = "policy"

    def __init__(
        self,
        policy,
        observation_size: int,
        *,
        deterministic: bool = True,
        seed: int | None = None,
        num_players: int | None = None,
        config: QuiddlerConfig | None = None,
        features: str | None = None,
    ):
        self.policy = policy
        self.policy.set_training_mode(False)
        self.features = features
        self._features = None
        self.observation_size = int(observation_size)
        self.deterministic = bool(deterministic)
        super().__init__(seed, num_players, config)

    def probabilities(self, observation, action_mask=None) -> np.ndarray:
        """The policy's masked action probabilities (64 floats, zero off the mask)."""
        import torch

        obs, mask = self._prepare(observation, action_mask)
        if self.features is not None:
            if self._features is None:
                from .features import ObservationFeatures

                self._features = ObservationFeatures(self.features, self.config)
            obs = self._features(obs)
        if obs.shape[0] != self.observation_size:
            raise ValueError(f"policy takes observations of size {self.observation_size}, got {obs.shape[0]}")
        with torch.no_grad():
            obs_t = torch.as_tensor(obs, dtype=torch.float32).reshape(1, -1)
            dist = self.policy.get_distribution(obs_t, action_masks=mask.reshape(1, -1).astype(bool))
            probs = dist.distribution.probs[0].cpu().numpy().astype(np.float64)
        probs = np.where(mask > 0, probs, 0.0)
        total = probs.sum()
        if not np.isfinite(total) or total <= 0:  # a degenerate network output: fall back to uniform legal
            probs = (mask > 0).astype(np.float64)
            total = probs.sum()
        return probs / total

    def act(self, observation, action_mask=None) -> int:
        probs = self.probabilities(observation, action_mask)
        if self.deterministic:
            return int(np.argmax(probs))
        return int(self.rng.choice(probs.size, p=probs))
