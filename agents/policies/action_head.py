"""An action head that reads each move's own solver features: the network scores a move by what it does to the hand.

A plain policy head maps the actor's latent vector to 64 logits, so to prefer "discard the card whose loss
keeps the best layout" it must learn, for each of 31 faces, to route that face's solver features (`solver_v1`:
the best layout of the hand without it) to that face's two moves. The zoo champion, trained so, keeps the
solver's best layout in 80% of its last-turn discards, against 88% for the expert (the rest are bonus calls).
DouZero scores each move from the move's own features; this head does the same on top of the plain one:

    logit(a) = plain_logit(a) + GAIN * w_g(a)(latent) . phi(a)

where `phi(a)` are move a's four solver features in the game's units (points, words, letters, and 1 if it goes
out: for a discard or a go-out of face f, the layout of the hand without f; for taking the discard, the layout
after taking it and the best discard; zero for the other moves) and `w_g(latent)` a linear function of the
actor's latent vector, one per kind of move g (take, discard, go out), so the state decides how much each figure
counts (all of the score on a last turn, the chance to go out early in a round). `w` starts at zero: the head
first plays exactly as the plain head it extends, so a trained plain policy can be its start
(`algo.init_policy`). `GAIN` sets how fast it learns: Adam moves each weight by about the learning rate a
step whatever its gradient, so without it a weight of a logit per point, what a last turn's discard needs,
would take ten times as many updates as a run of a few million steps makes.

`ActionFeaturePolicy` is a `PrivilegedCriticPolicy` (with `state_size` 0 when the critic is not privileged: the
same layers and names as SB3's) whose actor also passes its input to the head. The actor reads only the seat's
observation and its features, as every policy's does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from quiddler_env.core import actions as A
from quiddler_env.core.cards import NUM_FACES
from quiddler_env.features import LONGEST_SCALE, SCORE_SCALE, WORDS_SCALE

from .privileged import PrivilegedCriticPolicy, PrivilegedMlpExtractor

PER_MOVE = 4
"""Solver features per move: score, words, longest word, goes out."""
KINDS = 3
"""Kinds of move with their own weights: take the discard, discard, go out."""
UNITS = (SCORE_SCALE, WORDS_SCALE, LONGEST_SCALE, 1.0)
"""`solver_v1`'s scales of a move's four features: times these, they are points, words, letters and a 0/1 flag."""
GAIN = 10.0
"""The head's weights act at this multiple (see the module docstring)."""


def move_feature_index(feature_offset: int, action_size: int) -> tuple[np.ndarray, np.ndarray]:
    """For each action, the input entries of its `PER_MOVE` solver features (or `-1`: none) and its kind
    (0 take, 1 discard, 2 go out; -1 for the others). `feature_offset`: where `solver_v1` starts in the input."""
    index = np.full((action_size, PER_MOVE), -1, dtype=np.int64)
    kind = np.full(action_size, -1, dtype=np.int64)
    index[A.TAKE_DISCARD] = feature_offset + 4 + np.arange(PER_MOVE)
    kind[A.TAKE_DISCARD] = 0
    for f in range(NUM_FACES):
        entries = feature_offset + 8 + PER_MOVE * f + np.arange(PER_MOVE)
        index[A.discard(f)], kind[A.discard(f)] = entries, 1
        index[A.go_out(f)], kind[A.go_out(f)] = entries, 2
    return index, kind


class ActionFeatureHead(nn.Linear):
    """The plain head (`weight`, `bias`: the names and shape of SB3's `action_net`) plus each move's solver features
    weighed by the latent (`feature_weights`, zero at the start). Its input is [latent | the actor's input]."""

    def __init__(self, latent_dim: int, action_size: int, feature_offset: int) -> None:
        super().__init__(latent_dim, action_size)
        self.feature_weights = nn.Linear(latent_dim, KINDS * PER_MOVE)
        nn.init.zeros_(self.feature_weights.weight)
        nn.init.zeros_(self.feature_weights.bias)
        index, kind = move_feature_index(feature_offset, action_size)
        # Entry -1 reads an appended zero; a move of no kind takes the weights of kind 0 against those zeros.
        self.register_buffer("move_index", torch.as_tensor(index), persistent=False)
        self.register_buffer("move_kind", torch.as_tensor(np.maximum(kind, 0)), persistent=False)
        self.register_buffer("units", torch.tensor(UNITS, dtype=torch.float32), persistent=False)
        self.latent_dim = int(latent_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        latent, inputs = x[..., : self.latent_dim], x[..., self.latent_dim :]
        padded = torch.cat([inputs, torch.zeros_like(inputs[..., :1])], dim=-1)
        phi = padded[..., self.move_index] * self.units  # (..., actions, PER_MOVE), in the game's units
        weights = self.feature_weights(latent).reshape(*latent.shape[:-1], KINDS, PER_MOVE)[..., self.move_kind, :]
        return super().forward(latent) + GAIN * (weights * phi).sum(dim=-1)


class ActionFeatureMlpExtractor(PrivilegedMlpExtractor):
    """`PrivilegedMlpExtractor` whose actor output is [latent | its input], for `ActionFeatureHead`."""

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        inputs = features[..., : self.observation_size]
        return torch.cat([self.policy_net(inputs), inputs], dim=-1)


class ActionFeaturePolicy(PrivilegedCriticPolicy):
    """MaskablePPO's policy with `ActionFeatureHead` (see the module docstring). `observation_size`: the actor's
    input (the observation and its features), the leading part of each observation; `feature_offset`: where
    `solver_v1` starts in it. Entries after `observation_size` (a privileged critic's state) reach the critic only."""

    def __init__(self, *args: Any, observation_size: int, feature_offset: int, **kwargs: Any) -> None:
        self.feature_offset = int(feature_offset)
        super().__init__(*args, observation_size=observation_size, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = ActionFeatureMlpExtractor(
            self.observation_size,
            self.features_dim,
            net_arch=self.net_arch,
            activation_fn=self.activation_fn,
            device=self.device,
        )

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        plain = self.action_net
        head = ActionFeatureHead(plain.in_features, plain.out_features, self.feature_offset)
        head.weight.data.copy_(plain.weight.data)  # SB3's initialization of the plain head, kept
        head.bias.data.copy_(plain.bias.data)
        self.action_net = head.to(self.device)
        # The optimizer SB3 built holds the replaced head's parameters: build it again over the new ones.
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "feature_offset": self.feature_offset}
