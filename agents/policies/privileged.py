"""A privileged critic: the value network reads the whole game, the policy only its seat's observation.

"Perfect-training, imperfect-execution" (PerfectDou, Yang et al., NeurIPS 2022): in training the
critic sees what no seat may (every hand, the draw pile: the AEC env's `state()`, seat-relative,
`quiddler_env.envs.state`), which makes the value estimates, and so the advantages, less noisy; the
actor that plays never reads it. The training observation is [observation | state] (one Box); the
actor's first layer takes the first `observation_size` entries only, so a trained policy plays from
the plain observation (its bundle records `observation_size` and `state_size`: `sb3.py`).

`PrivilegedCriticPolicy` is a `MaskableActorCriticPolicy` whose `mlp_extractor` is a
`PrivilegedMlpExtractor`: the same layers and parameter names as SB3's `MlpExtractor`, the policy
net cut to the observation, the value net over everything.
"""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor

POLICY_CLASS = "PrivilegedCriticPolicy"


class PrivilegedMlpExtractor(MlpExtractor):
    """`MlpExtractor` whose policy net reads the first `observation_size` features, its value net all of them."""

    def __init__(
        self,
        observation_size: int,
        feature_dim: int,
        net_arch: list[int] | dict[str, list[int]],
        activation_fn: type[torch.nn.Module],
        device: torch.device | str = "auto",
    ) -> None:
        if not 0 < observation_size <= feature_dim:
            raise ValueError(f"observation_size {observation_size} must be in 1..{feature_dim} (the features)")
        super().__init__(observation_size, net_arch, activation_fn, device)  # the actor's layers
        critic = MlpExtractor(feature_dim, net_arch, activation_fn, device)  # the critic's, over everything
        self.value_net = critic.value_net
        self.latent_dim_vf = critic.latent_dim_vf
        self.observation_size = int(observation_size)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features[..., : self.observation_size])


class PrivilegedCriticPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's policy with a privileged critic (see the module docstring); `observation_size`: the actor's
    input, the leading part of each (flat Box) observation. The actor also plays from the observation alone."""

    def __init__(self, *args: Any, observation_size: int, **kwargs: Any) -> None:
        self.observation_size = int(observation_size)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = PrivilegedMlpExtractor(
            self.observation_size,
            self.features_dim,
            net_arch=self.net_arch,
            activation_fn=self.activation_fn,
            device=self.device,
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "observation_size": self.observation_size}
