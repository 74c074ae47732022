"""Policies exported from RLlib training: a plain actor MLP that plays without Ray, loaded without unpickling.

`quiddler_agents.training` exports the learner's actor network (RLlib's actor encoder and
policy head: linear layers with one activation between them) as a bundle
(`bundle.py` has the format) of `policy.pt` (the `torch.nn.Sequential` state_dict:
`0.weight`, `0.bias`, `2.weight`, ...) and `policy.json`. The description adds to the
common fields `framework` ("rllib"), `policy_class` ("MaskedActorMLP"),
`hidden_layers` (sizes), `activation` (one of `bundle.ACTIVATIONS`), `ray_version` and
training details.

There is no pickle anywhere, and Ray is never imported here: `quiddler_agents.make("policy:PATH")`
plays an export like an SB3 bundle. The action is the masked argmax of the logits (or
a sample from the masked softmax with the agent's own generator), which is what
RLlib's masked module computes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from quiddler_env.core import files
from quiddler_env.core.actions import NUM_ACTIONS
from quiddler_env.core.config import QuiddlerConfig

from ..base import BaseAgent
from . import bundle
from .bundle import ACTIVATIONS, DESCRIPTION_FILE, WEIGHTS_FILE, PolicyLoadError

FRAMEWORK = "rllib"
POLICY_CLASS = "MaskedActorMLP"

RLLIB_FIELDS = {
    "framework": (lambda v: v == FRAMEWORK, repr(FRAMEWORK)),
    "policy_class": (lambda v: v == POLICY_CLASS, repr(POLICY_CLASS)),
    "hidden_layers": (bundle.is_layers, bundle.LAYERS_TEXT),
    "activation": (lambda v: v in ACTIVATIONS, f"one of {', '.join(ACTIVATIONS)}"),
}


def is_rllib_export(path: str | os.PathLike) -> bool:
    """Whether the policy folder at `path` (or a file in it) holds an RLlib export (its JSON says so)."""
    file = bundle.bundle_dir(path) / DESCRIPTION_FILE
    try:
        desc = files.read_json(file)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False  # the loader reports what is wrong with it
    return isinstance(desc, dict) and desc.get("framework") == FRAMEWORK


def check_description(desc: dict[str, Any], file: Path) -> dict[str, Any]:
    """The RLlib fields of a description whose common fields `bundle.read_description` checked."""
    bundle.check_fields(desc, file, RLLIB_FIELDS)
    return desc


def read_rllib_description(path: str | os.PathLike) -> dict[str, Any]:
    """Read and check an export's `policy.json` (errors name the file and the field)."""
    return check_description(bundle.read_description(path), bundle.bundle_dir(path) / DESCRIPTION_FILE)


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
    action_size: int = NUM_ACTIONS,
) -> Path:
    """Write `policy.pt` (`state`, the `actor_network` state_dict) and `policy.json` as one unit at `path`.

    The state must fit `actor_network(observation_size, hidden_layers, activation, action_size)`
    exactly (checked here, before anything is written); `action_size` is the env's (64 + K under
    `layout: choose`).
    """
    import torch

    desc = bundle.new_description(
        description,
        framework=FRAMEWORK,
        policy_class=POLICY_CLASS,
        observation_size=int(observation_size),
        action_size=int(action_size),
        hidden_layers=[int(w) for w in hidden_layers],
        activation=activation,
    )
    where = Path(path) / DESCRIPTION_FILE
    sizes = {"observation_size": bundle.COMMON_FIELDS["observation_size"], **RLLIB_FIELDS}
    try:
        bundle.check_fields(desc, where, sizes)  # before actor_network allocates the layers
    except PolicyLoadError as exc:
        raise ValueError(str(exc)) from None
    net = actor_network(observation_size, hidden_layers, activation, action_size)
    clean = {k: v.detach().cpu().clone() for k, v in state.items()}
    try:
        net.load_state_dict(clean, strict=True)
    except RuntimeError as exc:
        raise ValueError(f"actor weights do not fit the described network: {exc}") from None

    def write_files(tmp: Path) -> None:
        with open(tmp / WEIGHTS_FILE, "wb") as fh:
            torch.save(clean, fh)

    return bundle.write_bundle(path, write_files, desc)


def load_rllib_policy(
    path: str | os.PathLike,
    *,
    deterministic: bool = True,
    observation_size: int | None = None,
    seed: int | None = None,
    config: QuiddlerConfig | None = None,
    description: dict[str, Any] | None = None,
) -> RLlibPolicyAgent:
    """An `RLlibPolicyAgent` for the export at `path`: JSON + `weights_only` tensors, nothing unpickled.

    The export's observation size must equal the env's (`observation_size`, or the
    size of `config`'s table), and its action size 64; the weights must
    match the sha256 in the JSON. `description`: `policy.json` already read by
    `bundle.read_description`.
    """
    directory = bundle.bundle_dir(path)
    if not directory.exists():
        raise PolicyLoadError(f"policy folder {directory} does not exist")
    file = directory / DESCRIPTION_FILE
    desc = check_description(bundle.read_description(directory) if description is None else description, file)
    observation_size, note = bundle.env_observation_size(observation_size, config)
    actions = bundle.env_action_size(config, desc)
    bundle.check_sizes(file, desc["observation_size"], desc["action_size"], observation_size, note, actions)
    bundle.verify_weights(directory, desc)
    weights = directory / WEIGHTS_FILE
    state = bundle.load_weights(weights)
    net = actor_network(desc["observation_size"], desc["hidden_layers"], desc["activation"], desc["action_size"])
    try:
        net.load_state_dict(state, strict=True)
    except (RuntimeError, TypeError) as exc:
        raise PolicyLoadError(f"policy weights {weights} do not fit the network in {file}: {exc}") from None
    bundle.warn_env_version(desc, directory)
    obs_size = desc["observation_size"]
    return RLlibPolicyAgent(
        net,
        obs_size,
        deterministic=deterministic,
        seed=seed,
        config=config,
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
        config: QuiddlerConfig | None = None,
    ):
        self.network = network.eval()
        self.observation_size = int(observation_size)
        self.deterministic = bool(deterministic)
        super().__init__(seed, config)
        if config is None:  # the table the network was trained at (its variant is read from the first observation)
            self.num_players = bundle.players_for(self.observation_size)

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
