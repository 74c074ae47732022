"""SB3 MaskablePPO policies in a bundle (`bundle.py` has the format): saving, and loading without running code.

A bundle from `save_policy_bundle` holds `model.zip`, `policy.pt` and `policy.json`; the
description adds to the common fields `framework` ("sb3"), `net_arch` (SB3's
`dict(pi=[...], vf=[...])` or a list), `activation` (one of `bundle.ACTIVATIONS`),
`policy_class` ("MaskableActorCriticPolicy", or "PrivilegedCriticPolicy": see below),
`features_extractor` ("FlattenExtractor"), `share_features_extractor` and, for networks that
read solver features, `observation_features` (an `quiddler_env.features` set).

A network whose head reads each move's solver features (`algo.action_features`, `action_head.py`) says
`policy_class: ActionFeaturePolicy` and `state_size` (0 without a privileged critic); its `observation_features`
is `solver_v1` or `solver_v2`.

A network trained with a privileged critic (`algo.privileged_critic`, `privileged.py`) took
[observation | state] in training; its bundle says `policy_class: PrivilegedCriticPolicy`, and
`state_size` (the state's entries after the observation). `observation_size` is the actor's
input, as for any bundle, so the policy plays from the plain observation; its value head, which
needs the state, is kept in the weights but not used in play.

Unpickling a file can run any code in it. So the default load reads only the JSON and
the weights (`weights_only=True`) into a freshly built `MaskableActorCriticPolicy`;
`model.zip` is opened only with `trusted=True`, for files the user knows. Neither SB3
nor torch is imported until a model is saved or loaded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from quiddler_env.core.config import QuiddlerConfig

from ..base import BaseAgent
from . import bundle
from .bundle import ACTIVATIONS, DESCRIPTION_FILE, MODEL_FILE, WEIGHTS_FILE, PolicyLoadError

FRAMEWORK = "sb3"
POLICY_CLASS = "MaskableActorCriticPolicy"
PRIVILEGED_POLICY_CLASS = "PrivilegedCriticPolicy"
"""`privileged.PrivilegedCriticPolicy` (named here so that reading a description imports no torch)."""
ACTION_FEATURE_POLICY_CLASS = "ActionFeaturePolicy"
"""`action_head.ActionFeaturePolicy`: a head that reads each move's solver features (`algo.action_features`)."""
ACTION_FEATURE_SETS = ("solver_v1", "solver_v2")
"""The `observation_features` an `ActionFeaturePolicy` reads per move (`action_head.ACTION_FEATURE_SETS`)."""
POLICY_CLASSES = (POLICY_CLASS, PRIVILEGED_POLICY_CLASS, ACTION_FEATURE_POLICY_CLASS)
FEATURES_EXTRACTOR = "FlattenExtractor"

SB3_FIELDS = {
    "net_arch": (
        lambda v: (
            bundle.is_layers(v)
            or (isinstance(v, dict) and set(v) <= {"pi", "vf"} and all(map(bundle.is_layers, v.values())))
        ),
        f"{bundle.LAYERS_TEXT}, or {{'pi': [...], 'vf': [...]}} of such lists",
    ),
    "activation": (lambda v: v in ACTIVATIONS, f"one of {', '.join(ACTIVATIONS)}"),
    "policy_class": (lambda v: v in POLICY_CLASSES, " or ".join(map(repr, POLICY_CLASSES))),
    "features_extractor": (lambda v: v == FEATURES_EXTRACTOR, repr(FEATURES_EXTRACTOR)),
    "share_features_extractor": (lambda v: isinstance(v, bool), "true or false"),
}


PRIVILEGED_FIELDS = {
    "state_size": (
        lambda v: bundle.is_count(v, bundle.MAX_OBSERVATION_SIZE),
        f"a positive integer of at most {bundle.MAX_OBSERVATION_SIZE} (the critic's state entries)",
    ),
}
"""The fields a `PrivilegedCriticPolicy` bundle adds."""
ACTION_FEATURE_FIELDS = {
    "state_size": (
        lambda v: v == 0 or bundle.is_count(v, bundle.MAX_OBSERVATION_SIZE),
        f"an integer 0..{bundle.MAX_OBSERVATION_SIZE} (the critic's state entries; 0: none)",
    ),
    "observation_features": (lambda v: v in ACTION_FEATURE_SETS, " or ".join(map(repr, ACTION_FEATURE_SETS))),
}
"""The fields an `ActionFeaturePolicy` bundle adds (its head reads the solver features)."""


def check_description(desc: dict[str, Any], file: Path) -> dict[str, Any]:
    """The SB3 fields of a description whose common fields `bundle.read_description` checked."""
    if bundle.framework_of(desc) != FRAMEWORK:
        raise PolicyLoadError(
            f"policy description {file} is a {bundle.framework_of(desc)} export, not an SB3 bundle "
            f"(quiddler_agents.policies.load_policy loads both)"
        )
    bundle.check_fields(desc, file, SB3_FIELDS)
    if is_privileged(desc):
        bundle.check_fields(desc, file, PRIVILEGED_FIELDS)
    if desc.get("policy_class") == ACTION_FEATURE_POLICY_CLASS:
        bundle.check_fields(desc, file, ACTION_FEATURE_FIELDS)
    return desc


def is_privileged(desc: Mapping[str, Any]) -> bool:
    """Whether the description is of a network trained with a privileged critic."""
    return desc.get("policy_class") == PRIVILEGED_POLICY_CLASS


def read_sb3_description(path: str | os.PathLike) -> dict[str, Any]:
    """Read and check an SB3 bundle's `policy.json` (errors name the file and the field)."""
    return check_description(bundle.read_description(path), bundle.bundle_dir(path) / DESCRIPTION_FILE)


def describe_model(model: Any, description: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON description of an SB3 MaskablePPO model (sizes and network shape read from it)."""
    import torch

    policy = model.policy
    policy_class = type(policy).__name__
    if policy_class not in POLICY_CLASSES:
        raise ValueError(f"save_policy_bundle needs one of {', '.join(POLICY_CLASSES)}, got {policy_class}")
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
    observation_size = int(obs_shape[0])
    privileged = {}
    if policy_class != POLICY_CLASS:  # the actor reads the leading observation, the critic the state too (or 0)
        privileged = {"state_size": observation_size - int(policy.observation_size)}
        observation_size = int(policy.observation_size)
    return bundle.new_description(
        description,
        framework=FRAMEWORK,
        observation_size=observation_size,
        action_size=int(model.action_space.n),
        net_arch=net_arch,
        activation=activation,
        policy_class=policy_class,
        features_extractor=FEATURES_EXTRACTOR,
        share_features_extractor=bool(policy.share_features_extractor),
        **privileged,
    )


def save_policy_bundle(model: Any, folder: str | os.PathLike, description: Mapping[str, Any] | None = None) -> Path:
    """Write `model.zip`, `policy.pt` and `policy.json` as one unit into the folder `folder`; returns it.

    `description` adds fields to the JSON (at least `config`: the `QuiddlerConfig` or its
    dict). A path ending in a bundle file name (`.../model.zip`) means its folder.
    """
    import torch

    folder = Path(folder)
    if folder.name in bundle.BUNDLE_FILES:
        folder = folder.parent
    desc = describe_model(model, description)
    state = {k: v.detach().cpu().clone() for k, v in model.policy.state_dict().items()}

    def write_files(tmp: Path) -> None:
        with open(tmp / MODEL_FILE, "wb") as fh:
            model.save(fh)
        with open(tmp / WEIGHTS_FILE, "wb") as fh:
            torch.save(state, fh)

    return bundle.write_bundle(folder, write_files, desc)


def _build_policy(desc: dict[str, Any]):
    """A fresh MaskableActorCriticPolicy (or PrivilegedCriticPolicy) shaped as `desc` says (no weights yet)."""
    import torch
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    size, extra = desc["observation_size"], {}
    policy_class = MaskableActorCriticPolicy
    if is_privileged(desc):
        from .privileged import PrivilegedCriticPolicy

        policy_class, extra = PrivilegedCriticPolicy, {"observation_size": size}
        size += desc["state_size"]
    elif desc.get("policy_class") == ACTION_FEATURE_POLICY_CLASS:
        from quiddler_env.features import feature_set

        from .action_head import ActionFeaturePolicy

        offset = size - feature_set(desc["observation_features"]).size
        policy_class, extra = ActionFeaturePolicy, {"observation_size": size, "feature_offset": offset}
        size += desc["state_size"]
    obs_space = spaces.Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)
    return policy_class(
        obs_space,
        spaces.Discrete(desc["action_size"]),
        lambda _: 0.0,
        net_arch=desc["net_arch"],
        activation_fn=getattr(torch.nn, desc["activation"]),
        share_features_extractor=desc["share_features_extractor"],
        **extra,
    )


def _features_of(desc: Mapping[str, Any] | None, file: Path):
    """The `quiddler_env.features` set named by the description's `observation_features` (None when absent)."""
    name = None if desc is None else desc.get("observation_features")
    if name is None:
        return None
    from quiddler_env.features import feature_set

    try:
        return feature_set(name)
    except (TypeError, ValueError) as exc:
        raise PolicyLoadError(f"policy description {file}: {exc}") from None


def load_policy(
    path: str | os.PathLike,
    *,
    trusted: bool = False,
    deterministic: bool = True,
    observation_size: int | None = None,
    seed: int | None = None,
    config: QuiddlerConfig | None = None,
    description: dict[str, Any] | None = None,
) -> PolicyAgent:
    """A `PolicyAgent` for the SB3 bundle at `path` (its folder, a file in it, or a run folder).

    Default: rebuilds the network from `policy.json` and fills it from `policy.pt` read
    with `weights_only=True`; nothing is unpickled. `trusted=True` instead runs
    `MaskablePPO.load` on `model.zip`, which unpickles it: only for files you trust
    (a `policy.json` beside it is still checked, checksums included). The model's
    observation size must equal the env's (`observation_size`, or the size of `config`'s
    table), and its action size the env's (64, or 64 + K under `layout: choose`). `description`: the bundle's
    `policy.json` already read by `bundle.read_description` (it is not read again).
    """
    directory = bundle.bundle_dir(path)
    if not directory.exists():
        raise PolicyLoadError(f"policy bundle {directory} does not exist")
    file = directory / DESCRIPTION_FILE
    desc = description
    if desc is None and not (trusted and not file.exists()):  # a trusted model.zip may stand alone
        desc = bundle.read_description(directory)
    if desc is not None:
        check_description(desc, file)
        bundle.verify_weights(directory, desc)
    observation_size, note = bundle.env_observation_size(observation_size, config)
    # Observation features (quiddler_env.features) the network reads after the observation vector.
    features = _features_of(desc, file)
    extra = 0 if features is None else features.size
    if trusted:
        policy, obs_size, action_size = _load_trusted(directory, desc)
        actions = bundle.env_action_size(config, desc)
        bundle.check_sizes(directory / MODEL_FILE, obs_size - extra, action_size, observation_size, note, actions)
    else:
        assert desc is not None
        obs_size = desc["observation_size"]
        actions = bundle.env_action_size(config, desc)
        bundle.check_sizes(file, obs_size - extra, desc["action_size"], observation_size, note, actions)
        weights = directory / WEIGHTS_FILE
        state = bundle.load_weights(weights)
        policy = _build_policy(desc)
        try:
            policy.load_state_dict(state, strict=True)
        except (RuntimeError, TypeError) as exc:
            raise PolicyLoadError(f"policy weights {weights} do not fit the network in {file}: {exc}") from None
    if desc is not None:
        bundle.warn_env_version(desc, directory)
    return PolicyAgent(
        policy,
        obs_size,
        deterministic=deterministic,
        seed=seed,
        config=config,
        features=None if features is None else features.name,
    )


def _load_trusted(directory: Path, desc: Mapping[str, Any] | None = None):
    from sb3_contrib import MaskablePPO

    file = directory / MODEL_FILE
    if not file.exists():
        raise PolicyLoadError(f"model file {file} is missing")
    custom = {}
    if desc is not None and is_privileged(desc):  # this package's class, whatever name it was saved under
        from .privileged import PrivilegedCriticPolicy

        custom = {"policy_class": PrivilegedCriticPolicy}
    try:
        model = MaskablePPO.load(file, device="cpu", custom_objects=custom)
    except Exception as exc:  # SB3 raises many kinds on a bad archive; name the file whatever it was
        raise PolicyLoadError(f"cannot load model file {file}: {type(exc).__name__}: {exc}") from None
    shape = model.observation_space.shape
    if shape is None or len(shape) != 1:
        raise PolicyLoadError(f"model file {file} has a {model.observation_space} observation space, not a flat Box")
    actor_size = getattr(model.policy, "observation_size", None)  # a privileged critic's policy: the actor's input
    return model.policy, int(actor_size or shape[0]), int(model.action_space.n)


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
        config: QuiddlerConfig | None = None,
        features: str | None = None,
    ):
        self.policy = policy
        self.policy.set_training_mode(False)
        self.features = features
        self._features = None
        self.observation_size = int(observation_size)
        self.deterministic = bool(deterministic)
        super().__init__(seed, config)
        if config is None:  # the table the network was trained at (its variant is read from the first observation)
            from quiddler_env.features import feature_set

            extra = 0 if features is None else feature_set(features).size
            self.num_players = bundle.players_for(self.observation_size - extra)

    def probabilities(self, observation, action_mask=None) -> np.ndarray:
        """The policy's masked action probabilities (64 floats, zero off the mask)."""
        import torch

        obs, mask = self._prepare(observation, action_mask)
        if self.features is not None:
            if self._features is None:
                from quiddler_env.features import ObservationFeatures

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

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """`act` for a batch of observations (B, size) and masks (B, actions), in one forward pass.

        The batched engine's envs and tournaments call this once per step. The network's
        arithmetic on a batch may round differently in the last bit from one row at a time."""
        import torch

        obs = np.asarray(observations, dtype=np.float32)
        masks = np.asarray(masks)
        if self.features is not None:
            if self._features is None:
                from quiddler_env.features import ObservationFeatures

                self._features = ObservationFeatures(self.features, self.config)
            obs = self._features.batch(obs)
        if obs.ndim != 2 or obs.shape[1] != self.observation_size:
            raise ValueError(f"policy takes observations of size {self.observation_size}, got shape {obs.shape}")
        if self.deterministic:
            return self._argmax_batch(obs, masks)
        with torch.no_grad():
            dist = self.policy.get_distribution(torch.as_tensor(obs), action_masks=masks.astype(bool))
            probs = dist.distribution.probs.cpu().numpy().astype(np.float64)
        probs = np.where(masks > 0, probs, 0.0)
        totals = probs.sum(axis=1, keepdims=True)
        bad = ~np.isfinite(totals[:, 0]) | (totals[:, 0] <= 0)
        probs[bad] = masks[bad] > 0  # a degenerate network output: uniform legal, as in `probabilities`
        probs /= probs.sum(axis=1, keepdims=True)
        return np.asarray([self.rng.choice(row.size, p=row) for row in probs], dtype=np.int64)

    def _argmax_batch(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The most probable legal move of each row, from the actor's logits (no distribution is built: the
        search bots' rollouts call this every step). A row whose logits are not all finite plays its first legal
        move, as `probabilities`' uniform fallback would."""
        import torch

        policy = self.policy
        with torch.no_grad():
            features = policy.extract_features(torch.as_tensor(obs), policy.pi_features_extractor)
            logits = policy.action_net(policy.mlp_extractor.forward_actor(features)).cpu().numpy()
        legal = masks > 0
        bad = ~np.isfinite(logits).all(axis=1)
        choice = np.argmax(np.where(legal, logits, -np.inf), axis=1)
        if bad.any():
            choice[bad] = np.argmax(legal[bad], axis=1)
        return choice.astype(np.int64)
