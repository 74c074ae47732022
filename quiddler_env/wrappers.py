"""Wrappers that give an env user's network what the shipped policies see: the observation with a feature set
of `quiddler_env.features` (e.g. `solver_v1`, the hand solver's view of the hand) appended.

One wrapper for each kind of env, each computing the floats that `PolicyAgent` and the
training envs compute (`tests/test_wrappers.py` plays them side by side):

- `FeaturesAEC(quiddler_env.env(...))`: PettingZoo AEC; every `observe(agent)["observation"]`
  gets the features, the `"action_mask"` is untouched.
- `FeaturesGym(gymnasium.make("Quiddler-v0", ...))`: a Gymnasium `ObservationWrapper`;
  `action_masks()` passes through.
- `FeaturesVector(gymnasium.make_vec("Quiddler-v0", num_envs=N, vectorization_mode="vector_entry_point"))`:
  the batched env's observations, computed in one compiled call per step (also `infos["final_obs"]`
  with `autoreset_mode=SAME_STEP`).

The observation spaces grow by the feature set's size, each feature bounded by
`quiddler_env.features.FEATURE_BOUND`.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorWrapper
from pettingzoo.utils.wrappers import BaseWrapper

from .features import ObservationFeatures


def _features(env: Any, features: str) -> ObservationFeatures:
    config = getattr(env.unwrapped, "config", None)
    if config is None:
        raise TypeError(f"{type(env.unwrapped).__name__} is not a Quiddler env (it has no rules `config`)")
    return ObservationFeatures(features, config)


class FeaturesAEC(BaseWrapper):
    """A PettingZoo AEC Quiddler env whose observations carry the feature set `features` after the vector."""

    def __init__(self, env: Any, features: str = "solver_v1") -> None:
        super().__init__(env)
        self.features = _features(env, features)
        self._spaces: dict[str, spaces.Dict] = {}

    def observation_space(self, agent: str) -> spaces.Dict:
        if agent not in self._spaces:
            inner = self.env.observation_space(agent)
            self._spaces[agent] = spaces.Dict(
                {"observation": self.features.space(inner["observation"]), "action_mask": inner["action_mask"]}
            )
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        obs = self.env.observe(agent)
        if obs is None:
            return None
        return {"observation": self.features(obs["observation"]), "action_mask": obs["action_mask"]}

    def __str__(self) -> str:
        return f"{type(self).__name__}<{self.env}>"


class FeaturesGym(gymnasium.ObservationWrapper):
    """`Quiddler-v0` (or `QuiddlerSolitaire-v0`'s table view) with the feature set appended to the observation."""

    def __init__(self, env: gymnasium.Env, features: str = "solver_v1") -> None:
        super().__init__(env)
        self.features = _features(env, features)
        if env.observation_space.shape != (self.features.base_size,):
            raise TypeError(
                f"FeaturesGym needs the table observation of {self.features.base_size} entries, "
                f"got a space of shape {env.observation_space.shape}"
            )
        self.observation_space = self.features.space(env.observation_space)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return self.features(observation)

    def action_masks(self) -> np.ndarray:
        """The wrapped env's legal actions (sb3-contrib's MaskablePPO reads them here)."""
        return self.env.unwrapped.action_masks()


class FeaturesVector(VectorWrapper):
    """The batched `Quiddler-v0` vector env with the feature set appended to every row, computed in one call.

    (A `VectorWrapper` rather than Gymnasium's `VectorObservationWrapper`, which refuses
    SAME_STEP autoreset because it cannot reach `infos["final_obs"]`.)"""

    def __init__(self, env: gymnasium.vector.VectorEnv, features: str = "solver_v1") -> None:
        super().__init__(env)
        self.features = _features(env, features)
        self.single_observation_space = self.features.space(env.single_observation_space)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, env.num_envs)

    def observations(self, observations: np.ndarray) -> np.ndarray:
        return self.features.batch(observations)

    def reset(self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return self.observations(obs), infos

    def step(self, actions):
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        if "final_obs" in infos:  # SAME_STEP autoreset: the ended games' last observations, as objects
            final = infos["final_obs"].copy()
            for i in np.flatnonzero(infos["_final_obs"]):
                final[i] = self.features(final[i])
            infos = {**infos, "final_obs": final}
        return self.observations(obs), rewards, terminations, truncations, infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal moves, bool (num_envs, num_actions)."""
        return self.env.unwrapped.action_masks()
