"""The sb3 training env: `Quiddler-v0` with an `OpponentMixture` in every other seat, league updates, observation
features, layout shaping and the privileged critic's state."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.game import Phase
from quiddler_env.core.solver import get_solver
from quiddler_env.envs.gym_env import QuiddlerEnv
from quiddler_env.envs.state import state_box
from quiddler_env.features import ObservationFeatures

from ..opponents import OpponentMixture


def check_rules(rules: Any) -> QuiddlerConfig:
    """The rules a training env is made for: a `QuiddlerConfig`, the run's own object (not a mapping to parse)."""
    if not isinstance(rules, QuiddlerConfig):
        raise TypeError(f"rules must be a QuiddlerConfig (RunConfig.rules), got {type(rules).__name__}: {rules!r}")
    return rules


def check_layout_shaping(value: Any) -> float:
    """`layout_shaping`: the weight of the shaping reward on the learner's best keepable layout (0: none)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value) and value >= 0
    if not ok:
        raise ValueError(f"option 'layout_shaping': bad value {value!r}; allowed: a number >= 0")
    return float(value)


def privileged_space(box: spaces.Box, rules: QuiddlerConfig) -> spaces.Box:
    """The training observation of a privileged critic (`algo.privileged_critic`): [observation | state], the
    state seat-relative to the learner (`quiddler_env.envs.state`)."""
    state = state_box(rules)
    return spaces.Box(
        low=np.concatenate([box.low, state.low]).astype(np.float32),
        high=np.concatenate([box.high, state.high]).astype(np.float32),
        dtype=np.float32,
    )


class TrainingEnv(QuiddlerEnv):
    """`QuiddlerEnv` for training: league updates through `env_method`, optional observation features.

    `features` names a feature set of `quiddler_env.features` appended to every
    observation (the policy bundle records it, so `PolicyAgent` appends the same).
    `layout_shaping` > 0 adds potential-based shaping on the learner's best keepable
    layout (`layout_potential`), cashed out at every round end. At the end of an episode `info["opponent_policies"]` names the policy that
    played each opponent seat (relative seat order), for per-opponent statistics. `privileged`: each observation
    is followed by the game's state from the learner's seat (`privileged_space`; for the critic only).
    """

    def __init__(
        self,
        config: Any = None,
        *,
        opponents: Any = None,
        features: str | None = None,
        layout_shaping: float = 0.0,
        privileged: bool = False,
        **options: Any,
    ):
        super().__init__(config, opponents=opponents, **options)
        self.privileged = bool(privileged)
        self.layout_shaping = check_layout_shaping(layout_shaping)
        self._potential = 0.0
        self._solver = None
        self.features = ObservationFeatures(features, self.config) if features else None
        if self.features is not None:
            self.observation_space = self.features.space(self.observation_space)
        if self.privileged:
            self.observation_space = privileged_space(self.observation_space, self.config)

    def _training_observation(self, obs: np.ndarray) -> np.ndarray:
        """The observation (with its features), then the state where the critic is privileged."""
        if self.features is not None:
            obs = self.features(obs)
        return np.concatenate([obs, self.state()]) if self.privileged else obs

    def set_league(self, members: Sequence[str]) -> None:
        """Give every opponent seat the new pool (bundle folders, oldest first)."""
        for opponent in self.opponents:
            if hasattr(opponent, "set_league"):
                opponent.set_league(members)

    def layout_potential(self) -> float:
        """Points of the best hand the learner can keep now: its best layout (draw phase), or the best
        layout left after its best discard (discard phase); 0 once the game is over."""
        if self.engine.is_over:
            return 0.0
        if self._solver is None:
            self._solver = get_solver(load_dictionary(self.config.dictionary), self.config.min_word_cards)
        hand = self.engine.hand(self.seat)
        if self.engine.phase == Phase.DRAW:
            return float(self._solver.best_layout(hand, counts=True).score)
        return float(max(o.score for o in self._solver.discard_options(hand)))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = super().reset(seed=seed, options=options)
        if self.layout_shaping:
            self._potential = self.layout_potential()
        return self._training_observation(obs), info

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = super().step(action)
        if self.layout_shaping and not info.get("illegal_action"):
            # Potential-based shaping on the learner's best keepable layout. At a round end the potential
            # is cashed out (counted as 0): the round's score takes over, and every round's shaping sums to
            # minus the potential of its first decision, which no action changes.
            potential = self.layout_potential()
            after = 0.0 if "round_result" in info else potential
            reward += self.layout_shaping * self.reward_scale * (after - self._potential)
            self._potential = potential
        obs = self._training_observation(obs)
        if terminated or truncated:
            info["opponent_policies"] = [
                getattr(o, "current_name", None) or getattr(o, "name", type(o).__name__) for o in self.opponents
            ]
        return obs, reward, terminated, truncated, info


def make_training_env(
    rules: QuiddlerConfig,
    env_options: dict[str, Any],
    entries: Sequence[tuple[str, float]],
    league_weight: float = 0.0,
    league_members: Sequence[str] = (),
    league_deterministic: bool = False,
    features: str | None = None,
    layout_shaping: float = 0.0,
    privileged: bool = False,
) -> TrainingEnv:
    """A training env with one `OpponentMixture` per opponent seat (a picklable factory for SubprocVecEnv).

    `rules` is the run's `QuiddlerConfig` (`RunConfig.rules`), passed on as it is; `env_options` the options of
    `Quiddler-v0` (`RunConfig.env_options`)."""
    config = check_rules(rules)
    if league_weight > 0:
        import torch

        # Each worker runs its pool members on one thread: the cores are shared with the learner.
        torch.set_num_threads(1)
    opponents = [
        OpponentMixture(
            entries,
            config,
            league_weight=league_weight,
            league_members=league_members,
            league_deterministic=league_deterministic,
        )
        for _ in range(config.num_players - 1)
    ]
    return TrainingEnv(
        config,
        opponents=opponents,
        features=features,
        layout_shaping=layout_shaping,
        privileged=privileged,
        **env_options,
    )
