"""Play whole games between agents directly on the rules engine (no RL wrapper: fast)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.observation import encode_observation

from .base import Agent


@dataclass
class GameRecord:
    """Final totals of one game, its winners, and (optionally) each seat's decision times."""

    totals: list[int]
    winners: list[int]
    decisions: int
    seconds: list[list[float]] = field(default_factory=list)

    def seat_result(self, seat: int) -> tuple[float, float]:
        """The seat's share of the win (1/k on a k-way tie for the top, else 0 or 1) and its total minus the mean
        of the other seats' totals."""
        won = 1.0 / len(self.winners) if seat in self.winners else 0.0
        others = [t for p, t in enumerate(self.totals) if p != seat]
        return won, self.totals[seat] - sum(others) / len(others)


def seat_solver_of(agent: Agent):
    """The agent's seat words (`BaseAgent.seat_solver`: a bot's level), None for the referee's."""
    seat_solver = getattr(agent, "seat_solver", None)
    return seat_solver() if callable(seat_solver) else None


def play_game(
    agents: Sequence[Agent],
    seed: int,
    config: QuiddlerConfig | None = None,
    *,
    game: QuiddlerGame | None = None,
    time_decisions: bool = False,
) -> GameRecord:
    """Play one game, seat i played by `agents[i]`; the deal comes from `seed`.

    Agents are not reset here: the caller seeds them. An illegal action raises the
    engine's `IllegalActionError`.
    """
    if game is None:
        game = QuiddlerGame(config or QuiddlerConfig(num_players=len(agents)))
    if game.num_players != len(agents):
        raise ValueError(f"{len(agents)} agents for a {game.num_players}-player game")
    if not game.seat_words:  # a bot's level: the engine lays only its words (rules without vocabularies)
        game.set_seat_solvers([seat_solver_of(agent) for agent in agents])
    game.reset(seed)
    seconds: list[list[float]] = [[] for _ in agents]
    decisions = 0
    while not game.is_over:
        p = game.current_player
        obs = encode_observation(game, p)
        mask = game.legal_action_mask()
        if time_decisions:
            t0 = time.perf_counter()
            action = agents[p].act(obs, mask)
            seconds[p].append(time.perf_counter() - t0)
        else:
            action = agents[p].act(obs, mask)
        game.step(action)
        decisions += 1
    return GameRecord(list(game.totals), game.winners(), decisions, seconds)
