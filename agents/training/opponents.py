"""Opponents for training: a weighted mixture of agent specs and a league pool, drawn per episode, for any backend.

An env resets every opponent object at each episode with a seed drawn from its own
generator; `OpponentMixture.reset(seed)` uses that seed to draw which policy plays
this seat for the whole game, then seeds that policy. So one env seed fixes the deal,
the opponents' identities and their moves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from quiddler_env.core.config import QuiddlerConfig

LEAGUE = "league"
"""The mixture entry that stands for the whole pool of frozen learner copies."""

_SEED_BOUND = 2**63 - 1


class OpponentMixture:
    """One opponent seat: at each episode it plays a policy drawn from weighted specs and the league pool.

    `entries` are `(spec, weight)` pairs (agent specs of `quiddler_agents.make`). With a
    non-empty pool (`set_league`), the pool is one more entry of weight
    `league_weight`, its members drawn uniformly. Agents are built once and cached;
    pool members are loaded with the safe loader (weights only, nothing unpickled).
    """

    def __init__(
        self,
        entries: Sequence[tuple[str, float]],
        config: QuiddlerConfig,
        *,
        league_weight: float = 0.0,
        league_members: Sequence[str] = (),
        league_deterministic: bool = False,
        seed: int | None = None,
    ) -> None:
        if not entries and league_weight <= 0:
            raise ValueError("OpponentMixture needs at least one (spec, weight) entry or a league weight")
        for spec, weight in entries:
            number = isinstance(weight, (int, float)) and not isinstance(weight, bool)
            if not (number and np.isfinite(weight) and weight > 0):
                raise ValueError(f"OpponentMixture: weight of {spec!r} must be a positive number, got {weight!r}")
        self.entries = [(str(spec), float(weight)) for spec, weight in entries]
        self.config = config
        self.league_weight = float(league_weight)
        self.league_deterministic = bool(league_deterministic)
        self.league_members: list[str] = []
        self._agents: dict[str, Any] = {}
        self.set_league(league_members)
        self.current_name = ""
        self.current: Any = None
        if seed is not None:
            self.reset(seed)

    def set_league(self, members: Sequence[str]) -> None:
        """Replace the pool with these bundle folders (oldest first); dropped members are forgotten."""
        members = [str(m) for m in members]
        for key in [k for k in self._agents if k.startswith(f"{LEAGUE}:") and k[len(LEAGUE) + 1 :] not in members]:
            del self._agents[key]
        self.league_members = members

    def probabilities(self) -> dict[str, float]:
        """The chance of each spec (and of each pool member, as `league:PATH`) at the next episode."""
        weights = {spec: w for spec, w in self.entries}
        if self.league_members and self.league_weight > 0:
            share = self.league_weight / len(self.league_members)
            for m in self.league_members:
                weights[f"{LEAGUE}:{m}"] = share
        total = sum(weights.values())
        return {k: w / total for k, w in weights.items()}

    def _agent(self, name: str) -> Any:
        agent = self._agents.get(name)
        if agent is None:
            if name.startswith(f"{LEAGUE}:"):
                from ..policies import load_policy

                agent = load_policy(
                    name[len(LEAGUE) + 1 :],
                    deterministic=self.league_deterministic,
                    config=self.config,
                )
            else:
                from ..registry import make

                agent = make(name, config=self.config)
            self._agents[name] = agent
        return agent

    def reset(self, seed: int | None = None) -> None:
        """Draw this episode's policy (from `seed`) and seed it."""
        rng = np.random.default_rng(seed)
        probs = self.probabilities()
        names = list(probs)
        index = int(rng.choice(len(names), p=np.fromiter(probs.values(), dtype=np.float64)))
        self.current_name = names[index]
        self.current = self._agent(self.current_name)
        if callable(getattr(self.current, "reset", None)):
            self.current.reset(int(rng.integers(_SEED_BOUND)))

    @property
    def uses_observation(self) -> bool:
        # The env skips encoding the observation for policies that do not read it (random).
        return bool(getattr(self.current, "uses_observation", True))

    def act(self, observation: Any, action_mask: np.ndarray) -> int:
        """The move of this episode's policy."""
        if self.current is None:
            raise RuntimeError("OpponentMixture.act() before reset(): no policy drawn for this episode yet")
        return self.current.act(observation, action_mask)

    def __repr__(self) -> str:
        return (
            f"OpponentMixture(current={self.current_name!r}, entries={self.entries}, league={len(self.league_members)})"
        )
