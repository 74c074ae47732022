"""Policies that play Quiddler from what their seat sees.

Every agent has `reset(seed)` and `act(observation, action_mask) -> int` (the
observation vector of `quiddler_env.core.observation`, or PettingZoo's dict), owns
its own numpy generator, and never returns a masked action. Build one from a spec:

    import quiddler_agents
    bot = quiddler_agents.make("expert:samples=64", seed=0, num_players=2)

Specs: `random`, `greedy`, `expert[:samples=N][:top=K][:go_out_value=V]`,
`search[:samples=N][:ms=T][:top=K]` (determinized rollouts on the batched engine), `human`,
`policy:PATH[:deterministic=false]` (a bundle of `quiddler_agents.policies`, loaded without
unpickling unless `trusted=True`).
"""

from .arena import GameRecord, play_game
from .base import Agent, BaseAgent, SeatView
from .expert import ExpertAgent
from .human import HumanAgent, HumanQuit
from .registry import REGISTRY, available, make, parse_spec
from .search import SearchAgent
from .simple import GreedyAgent, RandomAgent

__all__ = [
    "REGISTRY",
    "Agent",
    "BaseAgent",
    "ExpertAgent",
    "GameRecord",
    "GreedyAgent",
    "HumanAgent",
    "HumanQuit",
    "RandomAgent",
    "SearchAgent",
    "SeatView",
    "available",
    "make",
    "parse_spec",
    "play_game",
]
