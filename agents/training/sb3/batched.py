"""`BatchedVecEnv`: an SB3 `VecEnv` over the batched engine (`train.vec_env: batched`).

All `n_envs` games live in one `QuiddlerVectorEnv` (SameStep autoreset, as SB3 expects:
the final observation in `infos[i]["terminal_observation"]`), so a step of every env is a
few compiled calls instead of `n_envs` Python envs. The opponents are the run's mixture:
`random` and `greedy` are the engine's compiled bots; every other spec (`expert`,
`policy:PATH`) and the league pool's frozen learners are agents called from Python, once
per step for all the games that wait on them where the agent has `act_batch`. The
observation features (`algo.observation_features`) are computed batched too. The infos
carry what `TrainingEnv`'s do: `action_mask`, `seat`, and at an episode's end `winners`
and `opponent_policies`. With `privileged` (`algo.privileged_critic`) each observation is followed
by its game's state from the learner's seat (`QuiddlerVectorEnv.states()`, numpy over all games;
the final states of ended games from the step's infos).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.envs.vector_env import COMPILED, OpponentMix, QuiddlerVectorEnv
from quiddler_env.features import ObservationFeatures

from ..opponents import LEAGUE
from .opponents import check_rules, privileged_space


class BatchedVecEnv(VecEnv):
    """`n_envs` training games in one batched vector env (see the module docstring)."""

    def __init__(
        self,
        num_envs: int,
        rules: QuiddlerConfig,
        env_options: dict[str, Any],
        entries: Sequence[tuple[str, float]],
        league_weight: float = 0.0,
        league_members: Sequence[str] = (),
        league_deterministic: bool = False,
        features: str | None = None,
        privileged: bool = False,
    ) -> None:
        self.config = check_rules(rules)  # the run's own object: no re-parse
        self.entries = [(str(spec), float(weight)) for spec, weight in entries]
        self.league_weight = float(league_weight)
        self.league_deterministic = bool(league_deterministic)
        self._agents: dict[str, Any] = {}
        self._names: dict[int, str] = {}
        self.env = QuiddlerVectorEnv(
            num_envs, self.config, opponents=self._mix(list(league_members)), autoreset_mode="SameStep", **env_options
        )
        self.features = ObservationFeatures(features, self.config) if features else None
        box = self.env.single_observation_space
        if self.features is not None:
            box = self.features.space(box)
        self.privileged = bool(privileged)
        if self.privileged:
            box = privileged_space(box, self.config)
            self.env.final_states = True
        self.render_mode = None
        super().__init__(num_envs, box, self.env.single_action_space)
        self._actions: np.ndarray | None = None
        self._seed: int | None = None
        self._episode_names: list[list[str]] = [[] for _ in range(num_envs)]

    # -- opponents ------------------------------------------------------------------------------

    def _agent(self, name: str) -> Any:
        agent = self._agents.get(name)
        if agent is None:
            if name.startswith(f"{LEAGUE}:"):
                from ...policies import load_policy

                agent = load_policy(
                    name[len(LEAGUE) + 1 :], deterministic=self.league_deterministic, config=self.config
                )
            else:
                from ...registry import make

                agent = make(name, config=self.config)
            self._agents[name] = agent
            self._names[id(agent)] = name
        return agent

    def _mix(self, members: list[str]) -> OpponentMix:
        """The run's mixture: compiled bots by name, other specs and league members as agents."""
        weighted: list[tuple[Any, float]] = [
            (spec if spec in COMPILED else self._agent(spec), weight) for spec, weight in self.entries
        ]
        if members and self.league_weight > 0:
            share = self.league_weight / len(members)
            weighted += [(self._agent(f"{LEAGUE}:{m}"), share) for m in members]
        for key in [k for k in self._agents if k.startswith(f"{LEAGUE}:") and k[len(LEAGUE) + 1 :] not in members]:
            self._names.pop(id(self._agents.pop(key)), None)
        return OpponentMix(weighted)

    def set_league(self, members: Sequence[str]) -> None:
        """The new pool (bundle folders, oldest first), drawn from at the next episodes."""
        mix = self._mix([str(m) for m in members])
        self.env.set_opponents([mix] * (self.config.num_players - 1))

    def _opponent_names(self, i: int) -> list[str]:
        seat, n = int(self.env.seats[i]), self.config.num_players
        out = []
        for k in range(1, n):
            entry = self.env.policies[i][(seat + k) % n]
            out.append(entry if isinstance(entry, str) else self._names.get(id(entry), type(entry).__name__))
        return out

    # -- the VecEnv protocol ----------------------------------------------------------------------

    def _observations(self, obs: np.ndarray, states: np.ndarray | None = None) -> np.ndarray:
        """The training observations: with their features, then (privileged) the games' states (`states`, or every
        game's now)."""
        if self.features is not None:
            obs = self.features.batch(obs)
        if self.privileged:
            obs = np.concatenate([obs, self.env.states() if states is None else states], axis=1, dtype=np.float32)
        return obs

    def seed(self, seed: int | None = None) -> list[int | None]:
        """The seed of the next reset (sub-env i's episodes then follow `game_seed(seed, i, k)`)."""
        self._seed = seed
        return [seed] * self.num_envs

    def reset(self) -> np.ndarray:
        obs, infos = self.env.reset(seed=self._seed)
        self._seed = None
        self.reset_infos = [
            {"action_mask": infos["action_mask"][i], "seat": int(infos["seat"][i])} for i in range(self.num_envs)
        ]
        self._episode_names = [self._opponent_names(i) for i in range(self.num_envs)]
        return self._observations(obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).astype(np.int64).reshape(self.num_envs)

    def step_wait(self):
        obs, rewards, terminated, truncated, infos = self.env.step(self._actions)
        dones = terminated | truncated
        masks = infos["action_mask"]
        seats = infos["seat"]
        out = [{"action_mask": masks[i], "seat": int(seats[i])} for i in range(self.num_envs)]
        ended = np.flatnonzero(dones)
        if ended.size:
            final = infos["final_info"]
            finals = np.stack([infos["final_obs"][i] for i in ended])
            terminal = self._observations(finals, infos["final_state"][ended] if self.privileged else None)
            totals = final.get("totals")
            for j, i in enumerate(ended.tolist()):
                info = out[i]
                info["terminal_observation"] = terminal[j]
                info["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                if totals is not None and final["_totals"][i]:
                    best = totals[i].max()
                    info["winners"] = [int(p) for p in np.flatnonzero(totals[i] == best)]
                if "illegal_action" in final and final["illegal_action"][i]:
                    info["illegal_action"] = True
                # The ended episode's seat and opponents; the new episode's mask and seat are in reset_infos.
                info["seat"] = int(final["seat"][i])
                info["opponent_policies"] = self._episode_names[i]
                self.reset_infos[i] = {"action_mask": masks[i], "seat": int(seats[i])}
                self._episode_names[i] = self._opponent_names(i)
        return self._observations(obs), rewards.astype(np.float32), dones, out

    def action_masks(self) -> list[np.ndarray]:
        return list(self.env.action_masks())

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        value = getattr(self, attr_name)
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        if method_name == "action_masks":
            masks = self.env.action_masks()
            return [masks[i] for i in self._indices(indices)]
        if method_name == "set_league":
            self.set_league(*method_args, **method_kwargs)
            return [None] * len(self._indices(indices))
        raise AttributeError(f"BatchedVecEnv has no per-env method {method_name!r} (it has action_masks, set_league)")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)
