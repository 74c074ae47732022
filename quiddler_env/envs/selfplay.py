"""`SelfPlayEnv`: one policy plays every seat of the AEC env, as a Gymnasium env for SB3.

The pattern of PettingZoo's SB3 action-mask tutorial (its `SB3ActionMaskWrapper`):
each `step` is one agent step of `quiddler_v0.env()` by whichever agent is to move,
and the next observation is that of the agent to move next, so a single
MaskablePPO model learns from every seat at once.

```python
from sb3_contrib import MaskablePPO
from quiddler_env.envs.selfplay import SelfPlayEnv

model = MaskablePPO("MlpPolicy", SelfPlayEnv(num_players=3), n_steps=256, batch_size=64)
model.learn(1024)
```

- Observation: the `'observation'` vector of the agent to move; `action_masks()` and
  `info["action_mask"]` its legal actions; `info["agent"]` its name.
- Reward: the rewards the acting agent received since its previous move (round ends
  often happen on another agent's move) plus those of this move, so no reward is
  lost; the credit arrives one of its moves late, which is what a shared trajectory
  over all seats allows.
- The episode ends when the game ends (`terminated`) or the AEC env truncates. The
  wrapped env is `quiddler_v0.env()` with its standard wrappers, so an illegal action
  ends the game with reward -1 for the mover; `step` before `reset` or after the
  episode ended raises a `RuntimeError` (from the AEC env or its order check).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from . import common, quiddler_v0


class SelfPlayEnv(gym.Env):
    """The AEC env seen by one policy that plays every seat (options as for `quiddler_v0.env`)."""

    metadata = {
        "render_modes": list(quiddler_v0.raw_env.metadata["render_modes"]),
        "render_fps": 1,
        "env_version": quiddler_v0.raw_env.metadata["env_version"],
    }

    def __init__(self, config: Any = None, **options: Any) -> None:
        self.aec = quiddler_v0.env(config, **options)
        self.render_mode = self.aec.unwrapped.render_mode
        first = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(first)["observation"]
        self.action_space = self.aec.action_space(first)
        self._mask = np.zeros(self.action_space.n, dtype=np.int8)
        self._done: bool | None = None  # None: no game yet

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        seed = common.check_seed(seed)
        super().reset(seed=seed)
        # The AEC env keeps its own stream: seeded here on a seeded reset, continued otherwise.
        self.aec.reset(seed=seed, options=options)
        self._credited: dict[str, float] = {}
        self._done = False
        return self._next_observation({})

    def step(self, action: Any):
        if self._done is not False:
            if self._done is None:
                raise common.not_started_error("step()")
            raise RuntimeError("step() after the episode ended; call reset() to deal a new game")
        aec = self.aec
        agent = aec.agent_selection
        # _cumulative_rewards[agent] holds what the agent got since its last step began; part of it was
        # already returned by that step.
        pending = aec._cumulative_rewards[agent] - self._credited.get(agent, 0.0)
        aec.step(action)
        after = aec._cumulative_rewards[agent]
        self._credited[agent] = after
        reward = float(pending + after)
        terminated = any(aec.terminations.values())
        truncated = not terminated and any(aec.truncations.values())
        info = dict(aec.infos[agent])
        if terminated or truncated:
            self._done = True
            self._mask = np.zeros_like(self._mask)
            obs = aec.observe(agent)["observation"]
            info["action_mask"] = self._mask.copy()
            info["agent"] = agent
            return obs, reward, terminated, truncated, info
        obs, info = self._next_observation(info)
        return obs, reward, False, False, info

    def _next_observation(self, info: dict[str, Any]):
        obs, _, _, _, _ = self.aec.last()
        self._mask = obs["action_mask"]
        info["action_mask"] = self._mask.copy()
        info["agent"] = self.aec.agent_selection
        return obs["observation"], info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the agent to move (bool, 64)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()
