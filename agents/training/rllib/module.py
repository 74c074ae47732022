"""`MaskedPPOTorchRLModule`: RLlib's default PPO module, with the env's action mask applied to its logits.

The pattern of RLlib's `examples/rl_modules/classes/action_masking_rlm.py` (new API
stack), for the observation dict of the Quiddler envs: `{"observation": vector,
"action_mask": 0/1 x 64}`. The networks (actor and critic MLPs from
`fcnet_hiddens` / `fcnet_activation`) see only the vector; the mask adds a huge
negative number to every illegal action's logit, so exploration, inference and the
PPO loss all use the masked distribution and an illegal action is never sampled.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.utils.torch_utils import FLOAT_MIN

OBS_KEY = "observation"
MASK_KEY = "action_mask"


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """PPO actor-critic over the `observation` entry of a dict space, masked by its `action_mask` entry."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space.spaces) != {OBS_KEY, MASK_KEY}:
            raise ValueError(
                f"MaskedPPOTorchRLModule needs a Dict observation space with keys {OBS_KEY!r} and {MASK_KEY!r}, "
                f"got {observation_space}"
            )
        self.observation_space_with_mask = observation_space
        # The default module builds its networks for the vector alone.
        super().__init__(observation_space=observation_space[OBS_KEY], **kwargs)

    def setup(self) -> None:
        super().setup()
        # Report the env's dict space (RLlib checks module spaces against the env's).
        self.observation_space = self.observation_space_with_mask

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._masked(super()._forward_inference(batch, **kwargs), mask)

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._masked(super()._forward_exploration(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        # The learner asks for values on the raw batch (GAE) and, in the loss, on the split one.
        if isinstance(batch[Columns.OBS], dict):
            _, batch = self._split(batch)
        return super().compute_values(batch, embeddings)

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The mask, and a shallow copy of the batch whose OBS is the vector alone."""
        obs = batch[Columns.OBS]
        if not isinstance(obs, dict):
            raise ValueError(
                f"MaskedPPOTorchRLModule: the batch's observations must be a dict with {OBS_KEY!r} and {MASK_KEY!r}"
            )
        out = dict(batch)
        out[Columns.OBS] = obs[OBS_KEY]
        return obs[MASK_KEY], out

    @staticmethod
    def _masked(outs: dict[str, Any], mask: Any) -> dict[str, Any]:
        logits = outs[Columns.ACTION_DIST_INPUTS]
        # log(1) = 0 keeps a legal logit; log(0) = -inf, clamped to the most negative float, drops an illegal one.
        outs[Columns.ACTION_DIST_INPUTS] = logits + torch.clamp(torch.log(mask.to(logits.dtype)), min=FLOAT_MIN)
        return outs
