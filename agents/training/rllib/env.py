"""`QuiddlerMultiAgentEnv`: the AEC env as an RLlib `MultiAgentEnv` (turn-based, masked, bots inside).

RLlib's own `PettingZooEnv` wrapper works on `quiddler_v0.env()`, but it hands an
agent its round rewards only at that agent's next move and cannot seat scripted
bots. This adapter drives `quiddler_v0.raw_env` directly:

- Learner seats are RLlib agents (`player_k`); every learner agent maps to the one
  shared RL module (self-play: every seat is a learner). Bot seats (agent specs
  such as `greedy`, drawn per episode from the configured weights) are played
  inside the env, so RLlib never sees them.
- Each env step is one move of the learner agent to act; the bots' moves up to the
  next learner move happen inside that step.
- Observations are the AEC env's dict, `{"observation": float32 vector,
  "action_mask": int8[64]}`; the masking RL module (`module.py`) keeps the
  sampled actions legal.
- Rewards (the env's `reward_mode`) go to every learner agent as soon as a round is
  scored, whoever made the move; RLlib adds a reward for an agent that is not to
  move to that agent's next transition.
- The episode is the whole game: at its end every learner agent gets its final
  observation and `terminateds["__all__"]`; `max_cycles` truncates the same way.

All chance comes from seeded generators: the deals from the AEC env's (seeded by
`reset(seed=...)`), the learner seat and the bots' draws from this adapter's own,
which `reset(seed=...)` seeds as well.

Each option is checked by its owner: the rules and the AEC env's options by
`quiddler_v0.raw_env` (declared once in `quiddler_env.envs.common.ENV_OPTIONS`), the
learner seat by `common.check_learner_seat` (the check of `Quiddler-v0`), the bot specs
by the agent registry. This module runs in every env runner actor (and in the driver
for the export check); the run config that builds `env_config` is `config.py`'s
`check_rllib_run`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.envs import common, quiddler_v0

from ..opponents import OpponentMixture

LEARNER = "learner"
"""Module id of the shared policy every learner agent maps to."""

_env_seconds = 0.0
"""Seconds this process spent inside `reset`/`step` of these envs since the last `take_env_seconds()`."""


def take_env_seconds() -> float:
    """The seconds spent in the game since the last call (per process: one env runner's envs)."""
    global _env_seconds
    spent, _env_seconds = _env_seconds, 0.0
    return spent


def policy_mapping_fn(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """RLlib's agent -> module mapping: every agent the env exposes is a learner seat."""
    return LEARNER


class QuiddlerMultiAgentEnv(MultiAgentEnv):
    """Quiddler for RLlib. `config` (RLlib's `env_config`) keys:

    - `rules`: a `QuiddlerConfig` (a run passes its own, `RunConfig.rules`), or absent.
    - `env`: the AEC env's options (`common.env_option_names("aec")`: `reward_mode`, `reward_scale`,
      `max_cycles`, ...) and, without `rules`, the rules as `QuiddlerConfig` fields (with `rules`, a rule
      field here overrides it).
    - `self_play` (default True): every seat is a learner agent.
    - `learner_seat`: with `self_play` false, the learner's seat, or `"random"` (drawn per episode).
    - `opponents`: with `self_play` false, `[[spec, weight], ...]`: each bot seat draws
      its agent spec per episode with these weights.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        unknown = sorted(set(config) - {"rules", "env", "self_play", "learner_seat", "opponents"})
        if unknown:
            raise ValueError(
                f"QuiddlerMultiAgentEnv: unknown env_config key(s) {unknown}; known: rules, env, self_play, "
                "learner_seat, opponents"
            )
        rules = config.get("rules")
        if rules is not None and not isinstance(rules, QuiddlerConfig):
            raise ValueError(f"QuiddlerMultiAgentEnv: env_config 'rules' must be a QuiddlerConfig, got {rules!r}")
        env_options = config.get("env") or {}
        if not isinstance(env_options, Mapping):
            raise ValueError(f"QuiddlerMultiAgentEnv: env_config 'env' must be a mapping, got {env_options!r}")
        try:
            # The rules and the AEC options, checked by the env itself (common.ENV_OPTIONS).
            if rules is None:
                self.raw = quiddler_v0.raw_env(dict(env_options))
            else:
                self.raw = quiddler_v0.raw_env(rules, **env_options)
        except ValueError as exc:
            raise ValueError(f"QuiddlerMultiAgentEnv: env_config 'env': {exc}") from None
        self.num_players = self.raw.num_players
        self_play = config.get("self_play", True)
        if not isinstance(self_play, bool):
            raise ValueError(f"QuiddlerMultiAgentEnv: self_play must be true or false, got {self_play!r}")
        self.self_play = self_play
        try:
            self.learner_seat = common.check_learner_seat(config.get("learner_seat", "random"), self.num_players)
        except ValueError as exc:
            raise ValueError(f"QuiddlerMultiAgentEnv: {exc}") from None
        # One opponent mixture per seat (the training layer's own; a seat may face any spec, drawn per episode).
        entries = self._check_opponents(config.get("opponents"))
        try:  # the mixture checks the weights
            self._mixtures = (
                [OpponentMixture(entries, self.raw.config) for _ in range(self.num_players)] if entries else []
            )
        except ValueError as exc:
            raise ValueError(f"QuiddlerMultiAgentEnv: {exc}") from None

        self.possible_agents = list(self.raw.possible_agents)
        self.agents = list(self.possible_agents) if self.self_play else []
        # One space object per agent (the AEC env's own), as RLlib's connectors expect.
        self.observation_spaces = {a: self.raw.observation_space(a) for a in self.possible_agents}
        self.action_spaces = {a: self.raw.action_space(a) for a in self.possible_agents}
        self._rng: np.random.Generator | None = None
        self._bots: dict[str, Any] = {}

    def _check_opponents(self, opponents: Any) -> list[tuple[str, float]]:
        """The `[spec, weight]` pairs (their weights are checked by `OpponentMixture`)."""
        if self.self_play:
            return []
        if not isinstance(opponents, Sequence) or isinstance(opponents, str) or not opponents:
            raise ValueError(
                f"QuiddlerMultiAgentEnv: self_play is false, so 'opponents' must be a non-empty list of "
                f"[spec, weight] pairs, got {opponents!r}"
            )
        for item in opponents:
            if (
                not isinstance(item, Sequence)
                or isinstance(item, str)
                or len(item) != 2
                or not isinstance(item[0], str)
            ):
                raise ValueError(f"QuiddlerMultiAgentEnv: opponent entry {item!r} is not a [spec, weight] pair")
        return [(item[0], item[1]) for item in opponents]

    # -- episode -----------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal a new game; returns the observation of the first learner agent to move."""
        global _env_seconds
        t0 = time.perf_counter()
        try:
            return self._reset(seed, options)
        finally:
            _env_seconds += time.perf_counter() - t0

    def _reset(self, seed: int | None, options: dict[str, Any] | None):
        if seed is not None or self._rng is None:
            # Separate streams for the deals (AEC env) and for seats/bots (this adapter).
            self._rng = np.random.default_rng(None if seed is None else [seed, 1])
        self.raw.reset(seed=seed, options=options)
        if self.self_play:
            self.agents = list(self.possible_agents)
            self._bots = {}
        else:
            self._draw_table()
        self._pending = dict.fromkeys(self.agents, 0.0)
        done = self._play_bots()
        if done:  # a game the bots finished alone (only with a learner seat that never gets to move)
            raise RuntimeError("QuiddlerMultiAgentEnv: the game ended before any learner move")
        agent = self.raw.agent_selection
        return {agent: self.raw.observe(agent)}, {}

    def _draw_table(self) -> None:
        """Pick the learner's seat and each other seat's bot for this episode."""
        n = self.num_players
        seat = int(self._rng.integers(n)) if self.learner_seat == "random" else int(self.learner_seat)
        self.agents = [self.possible_agents[seat]]
        self._bots = {}
        for p in range(n):
            if p != seat:
                mixture = self._mixtures[p]
                mixture.reset(int(self._rng.integers(2**63)))  # draws this episode's spec, then seeds it
                self._bots[self.possible_agents[p]] = mixture

    def _collect_rewards(self) -> None:
        # raw_env.rewards holds exactly the rewards of its last step (cleared at the next one).
        for agent in self.agents:
            r = self.raw.rewards[agent]
            if r:
                self._pending[agent] += float(r)

    def _play_bots(self) -> bool:
        """Let bots move until a learner agent is to act; True if the game ended (or was truncated)."""
        raw = self.raw
        while not self._finished():
            agent = raw.agent_selection
            bot = self._bots.get(agent)
            if bot is None:
                return False
            obs = raw.observe(agent)
            raw.step(int(bot.act(obs["observation"], obs["action_mask"])))
            self._collect_rewards()
        return True

    def _finished(self) -> bool:
        raw = self.raw
        return any(raw.terminations.values()) or any(raw.truncations.values())

    def step(self, action_dict: Mapping[str, Any]):
        """Play the learner agent's move, then the bots' moves up to the next learner move (or the game end)."""
        global _env_seconds
        t0 = time.perf_counter()
        try:
            return self._step(action_dict)
        finally:
            _env_seconds += time.perf_counter() - t0

    def _step(self, action_dict: Mapping[str, Any]):
        raw = self.raw
        agent = raw.agent_selection
        if agent not in action_dict:
            raise ValueError(f"QuiddlerMultiAgentEnv.step: no action for {agent}, the agent to move; got {action_dict}")
        raw.step(int(action_dict[agent]))
        self._collect_rewards()
        finished = self._finished() or self._play_bots()
        rewards = {a: r for a, r in self._pending.items() if r}
        self._pending = dict.fromkeys(self.agents, 0.0)
        if finished:
            terminated = any(raw.terminations.values())
            obs = {a: raw.observe(a) for a in self.agents}
            rewards = {a: rewards.get(a, 0.0) for a in self.agents}
            flags = {a: True for a in self.agents}
            terminateds = {**(flags if terminated else {}), "__all__": terminated}
            truncateds = {**({} if terminated else flags), "__all__": not terminated}
            return obs, rewards, terminateds, truncateds, {}
        nxt = raw.agent_selection
        # RLlib wants a reward (0 if none) with every observation; others' rewards wait for their next one.
        rewards.setdefault(nxt, 0.0)
        return {nxt: raw.observe(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {}

    def render(self) -> str | None:
        return self.raw.render()

    def close(self) -> None:
        self.raw.close()
