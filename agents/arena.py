"""Play whole games between agents directly on the rules engine (no RL wrapper: fast)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
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


def rotated_deal(
    bot: Agent,
    opponents: Sequence[Agent],
    deal_seed: int,
    agent_seed: int,
    config: QuiddlerConfig,
    before: Callable[[QuiddlerGame], None] | None = None,
) -> list[tuple[float, float]]:
    """Play one deal with the table `[bot, *opponents]` rotated through every seat; `bot`'s `seat_result` in each.

    Before the game with `bot` in seat s, `bot` is reset with `agent_seed + s` and opponent k with that plus
    104729 (k + 1), so that two bots measured on the same deals meet the same opponents' streams. `before(game)`
    is called with each game before it starts (a measuring device that reads the live game takes it there).
    """
    table = [bot, *opponents]
    n = len(table)
    results = []
    for seat in range(n):
        bot.reset(agent_seed + seat)
        for k, other in enumerate(opponents):
            other.reset(agent_seed + seat + 104729 * (k + 1))
        game = QuiddlerGame(config)
        if before is not None:
            before(game)
        record = play_game([table[(p - seat) % n] for p in range(n)], deal_seed, game=game)
        results.append(record.seat_result(seat))
    return results
