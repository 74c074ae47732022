"""Policies exported from RLlib training: a plain actor MLP that plays without Ray, loaded without unpickling.

`agents.training.rllib_backend` exports the learner's actor network (RLlib's actor
encoder and policy head: linear layers with one activation between them) into a
folder, as agents/policy.py does for SB3:

| file | content | read by |
|---|---|---|
| `policy.pt` | the actor's `state_dict` as a `torch.nn.Sequential` (`0.weight`, `0.bias`, `2.weight`, ...): plain tensors | `torch.load(..., weights_only=True)` |
| `policy.json` | the description below | `json.load` |

`policy.json` fields: `format` (1), `framework` ("rllib": how `load_policy` tells
it from an SB3 bundle), `policy_class` ("MaskedActorMLP"), `observation_size`,
`action_size`, `hidden_layers` (sizes), `activation` (a `torch.nn` class name),
`weights_sha256` (of `policy.pt`), `quiddler_env_version`, `config` (the
`QuiddlerConfig` as a dict), `ray_version` and training details.

There is no pickle anywhere: `agents.make("policy:PATH")` and `evaluate.py --players
policy:PATH` load it like an SB3 bundle (`load_policy` hands it here), and neither
Ray nor RLlib is needed to play it. The action is the masked argmax of the logits
(or a sample from the masked softmax with the agent's own generator), which is
what RLlib's masked module computes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from quiddler_env.core.actions import NUM_ACTIONS
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.envs.observation import observation_layout

from .base import BaseAgent
from .policy import (
    ACTIVATIONS,
    DESCRIPTION_FILE,
    WEIGHTS_FILE,
    PolicyLoadError,
    _atomic_write,
    _bundle_dir,
    _check_sizes,
    _load_weights,
    _sha256,
)

EXPORT_FORMAT = 1
FRAMEWORK = "rllib"
POLICY_CLASS = "MaskedActorMLP"


def is_rllib_export(path: str | os.PathLike) -> bool:
    """Whether the policy folder at `path` (or a file in it) holds an RLlib export (its JSON says so)."""
    file = _bundle_dir(path) / DESCRIPTION_FILE
    try:
        desc = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False  # the SB3 loader reports what is wrong with it
    return isinstance(desc, dict) and desc.get("framework") == FRAMEWORK


def actor_network(observation_size: int, hidden_layers: Sequence[int], activation: str, action_size: int = NUM_ACTIONS):
    """The exported actor: Linear, activation, ..., Linear to the action logits (a `torch.nn.Sequential`)."""
    import torch

    if activation not in ACTIVATIONS:
        raise ValueError(f"activation {activation!r} is not one of {', '.join(ACTIVATIONS)}")
    layers: list[Any] = []
    size = int(observation_size)
    for width in hidden_layers:
        layers += [torch.nn.Linear(size, int(width)), getattr(torch.nn, activation)()]
        size = int(width)
    layers.append(torch.nn.Linear(size, int(action_size)))
    return torch.nn.Sequential(*layers)


def write_rllib_export(
    path: str | os.PathLike,
    state: Mapping[str, Any],
    *,
    observation_size: int,
    hidden_layers: Sequence[int],
    activation: str,
    description: Mapping[str, Any] | None = None,
) -> Path:
    """Write `policy.pt` (`state`, the `actor_network` state_dict) and `policy.json` into the folder `path`.

    The state must fit `actor_network(observation_size, hidden_layers, activation)`
    exactly (checked here). Each file is written atomically, the JSON last.
    """
    import torch

    import quiddler_env

    net = actor_network(observation_size, hidden_layers, activation)
    clean = {k: v.detach().cpu().clone() for k, v in state.items()}
    try:
        net.load_state_dict(clean, strict=True)
    except RuntimeError as exc:
        raise ValueError(f"actor weights do not fit the described network: {exc}") from None
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    desc: dict[str, Any] = dict(description or {})
    config = desc.get("config")
    if isinstance(config, QuiddlerConfig):
        desc["config"] = config.to_dict()
    desc.setdefault("config", None)
    desc.update(
        format=EXPORT_FORMAT,
        framework=FRAMEWORK,
        policy_class=POLICY_CLASS,
        observation_size=int(observation_size),
        action_size=NUM_ACTIONS,
        hidden_layers=[int(w) for w in hidden_layers],
        activation=activation,
        quiddler_env_version=quiddler_env.__version__,
    )
    _atomic_write(directory / WEIGHTS_FILE, lambda fh: torch.save(clean, fh))
    desc["weights_sha256"] = _sha256(directory / WEIGHTS_FILE)
    text = json.dumps(desc, indent=2, sort_keys=True) + "\n"
    _atomic_write(directory / DESCRIPTION_FILE, lambda fh: fh.write(text.encode()))
    return directory


def read_rllib_description(path: str | os.PathLike) -> dict[str, Any]:
    """Read and check an export's `policy.json` (errors name the file and the field)."""
    file = _bundle_dir(path) / DESCRIPTION_FILE
    try:
        desc = json.loads(file.read_text())
    except FileNotFoundError:
        raise PolicyLoadError(f"policy description {file} is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyLoadError(f"cannot read policy description {file}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise PolicyLoadError(f"policy description {file} is not valid JSON: {exc}") from None
    if not isinstance(desc, dict):
        raise PolicyLoadError(f"policy description {file} must hold a JSON object")

    def positive(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v > 0

    checks = {
        "format": (lambda v: v == EXPORT_FORMAT, str(EXPORT_FORMAT)),
        "framework": (lambda v: v == FRAMEWORK, repr(FRAMEWORK)),
        "policy_class": (lambda v: v == POLICY_CLASS, repr(POLICY_CLASS)),
        "observation_size": (positive, "a positive integer"),
        "action_size": (positive, "a positive integer"),
        "hidden_layers": (lambda v: isinstance(v, list) and all(map(positive, v)), "a list of layer sizes"),
        "activation": (lambda v: v in ACTIVATIONS, f"one of {', '.join(ACTIVATIONS)}"),
        "weights_sha256": (lambda v: isinstance(v, str) and len(v) == 64, "the sha256 of policy.pt"),
    }
    for key, (ok, what) in checks.items():
        if not ok(desc.get(key)):
            raise PolicyLoadError(f"policy description {file}: field {key!r} must be {what}, got {desc.get(key)!r}")
    return desc


def load_rllib_policy(
    path: str | os.PathLike,
    *,
    deterministic: bool = True,
    num_players: int | None = None,
    observation_size: int | None = None,
    seed: int | None = None,
    config: QuiddlerConfig | None = None,
) -> RLlibPolicyAgent:
    """An `RLlibPolicyAgent` for the export at `path`: JSON + `weights_only` tensors, nothing unpickled.

    The export's observation size must equal the env's (`observation_size`, or the
    size for `num_players` or `config`), and its action size 64; the weights must
    match the sha256 in the JSON.
    """
    directory = _bundle_dir(path)
    if not directory.exists():
        raise PolicyLoadError(f"policy folder {directory} does not exist")
    if num_players is None and config is not None:
        num_players = config.num_players
    table = ""
    if observation_size is None and num_players is not None:
        observation_size = observation_layout(num_players).size
        table = f" ({num_players} players)"
    desc = read_rllib_description(directory)
    _check_sizes(directory / DESCRIPTION_FILE, desc["observation_size"], desc["action_size"], observation_size, table)
    weights = directory / WEIGHTS_FILE
    if not weights.exists():
        raise PolicyLoadError(f"policy weights {weights} are missing")
    if _sha256(weights) != desc["weights_sha256"]:
        raise PolicyLoadError(f"policy weights {weights} do not match the sha256 in {directory / DESCRIPTION_FILE}")
    state = _load_weights(weights)
    if not isinstance(state, dict):
        raise PolicyLoadError(f"policy weights {weights} must hold a state_dict, got {type(state).__name__}")
    net = actor_network(desc["observation_size"], desc["hidden_layers"], desc["activation"], desc["action_size"])
    try:
        net.load_state_dict(state, strict=True)
    except (RuntimeError, TypeError) as exc:
        raise PolicyLoadError(
            f"policy weights {weights} do not fit the network in {directory / DESCRIPTION_FILE}: {exc}"
        ) from None
    obs_size = desc["observation_size"]
    inferred = next((k for k in range(2, 9) if observation_layout(k).size == obs_size), None)
    return RLlibPolicyAgent(
        net, obs_size, deterministic=deterministic, seed=seed, num_players=num_players or inferred, config=config
    )


class RLlibPolicyAgent(BaseAgent):
    """An exported RLlib actor acting on the observation, always within the action mask.

    Deterministic: the legal action with the highest logit. Otherwise: sampled from
    the masked softmax with the agent's own generator (not torch's global one).
    """

    name = "policy"

    def __init__(
        self,
        network,
        observation_size: int,
        *,
        deterministic: bool = True,
        seed: int | None = None,
        num_players: int | None = None,
        config: QuiddlerConfig | None = None,
    ):
        self.network = network.eval()
        self.observation_size = int(observation_size)
        self.deterministic = bool(deterministic)
        super().__init__(seed, num_players, config)

    def _forward(self, obs: np.ndarray) -> np.ndarray:
        import torch

        if obs.shape[0] != self.observation_size:
            raise ValueError(f"policy takes observations of size {self.observation_size}, got {obs.shape[0]}")
        with torch.no_grad():
            out = self.network(torch.as_tensor(obs, dtype=torch.float32).reshape(1, -1))
        return out[0].numpy().astype(np.float64)

    def logits(self, observation, action_mask=None) -> np.ndarray:
        """The actor's raw logits (64 floats) for one observation."""
        obs, _ = self._prepare(observation, action_mask)
        return self._forward(obs)

    def _probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        logits = self._forward(obs)
        legal = mask > 0
        z = np.where(legal, logits, -np.inf)
        z = np.exp(z - z[legal].max())
        total = z.sum()
        if not np.isfinite(total) or total <= 0:  # a degenerate network output: uniform over the legal moves
            z = legal.astype(np.float64)
            total = z.sum()
        return z / total

    def probabilities(self, observation, action_mask=None) -> np.ndarray:
        """The masked action probabilities (64 floats, zero off the mask)."""
        return self._probabilities(*self._prepare(observation, action_mask))

    def act(self, observation, action_mask=None) -> int:
        obs, mask = self._prepare(observation, action_mask)
        if self.deterministic:
            legal = np.flatnonzero(mask > 0)
            return int(legal[np.argmax(self._forward(obs)[legal])])
        probs = self._probabilities(obs, mask)
        return int(self.rng.choice(probs.size, p=probs))
