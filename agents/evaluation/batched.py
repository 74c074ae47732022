"""Tournaments on the batched engine: every game of the schedule at once, the bots compiled.

`run_tournament` comes here when every player is `random` or `greedy` (the engine's
compiled bots), and the training evaluations (`play_all`) when the bots are: the
learner, or any other agent, is called once per move for all the games waiting on it
(`act_batch` where it has it). The games are those of the single-engine path: the same
schedule, seats, stacked decks and reshuffle generator (`Tournament.cards`), move for move
(`tests/test_batch_parity.py`); the compiled bots draw their ties from a generator seeded
per game (`agent_seed`), so their tie-breaks, and with them the games, differ from
the Python bots'. Each game's round results (words, unused cards, bonuses) are rebuilt by
replaying its moves in `QuiddlerGame`, whose totals must equal the batch's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from quiddler_env.core.batch import BatchGame
from quiddler_env.core.batch_bots import BOT_CODES, NOT_A_BOT
from quiddler_env.core.game import QuiddlerGame

from .schedule import PlayedGame, Tournament, agent_seed, round_record


def compiled_code(player: Any) -> int:
    """The compiled bot that plays as `player` (an agent spec or an agent object), or NOT_A_BOT."""
    from ..registry import parse_spec
    from ..simple import GreedyAgent, RandomAgent

    if isinstance(player, str):
        try:
            name, path, params = parse_spec(player)
        except ValueError:
            return NOT_A_BOT
        return BOT_CODES.get(name, NOT_A_BOT) if path is None and not params else NOT_A_BOT
    if type(player) in (RandomAgent, GreedyAgent) and getattr(player, "level", None) is None:
        return BOT_CODES[player.name]  # (a level's words are not the compiled bot's: it plays game by game)
    return NOT_A_BOT


def batchable(specs: Sequence[str]) -> bool:
    """Whether every player of a pool is a compiled bot (the whole tournament then runs batched)."""
    return all(compiled_code(s) != NOT_A_BOT for s in specs)


def play_batched(
    tournament: Tournament, players: Sequence[Any], indices: Sequence[int] | None = None
) -> list[PlayedGame]:
    """Every game of the schedule (or those of `indices`), batched; `players[p]` plays pool player p (a spec or
    an agent object). A game comes out the same whichever others are played with it."""
    rules = tournament.rules
    indices = list(range(tournament.total_games)) if indices is None else [int(g) for g in indices]
    total = len(indices)
    codes = [compiled_code(p) for p in players]
    slots = [tournament.slot(g) for g in indices]
    cards = {d: tournament.cards(d)[:2] for d in sorted({s.deal for s in slots})}
    seeds = np.asarray([cards[s.deal][0] for s in slots], dtype=np.uint64)
    decks_of = {d: decks for d, (_, decks) in cards.items()}
    decks = np.asarray([decks_of[s.deal] for s in slots], dtype=np.int8)
    batch = BatchGame(rules, total)
    batch.reset(seeds=seeds, decks=decks)
    # The compiled bots' ties: one generator per game (the deal's generator stays the reshuffles').
    batch.rng[:, 1] = [agent_seed(tournament.seed, g, 0) for g in indices]
    seat_player = np.asarray([s.seats for s in slots], dtype=np.int64)  # (games, seats) -> pool player
    bots = np.asarray([[codes[p] for p in s.seats] for s in slots], dtype=np.int8)
    for p, player in enumerate(players):
        if codes[p] == NOT_A_BOT and callable(getattr(player, "reset", None)):
            player.reset(agent_seed(tournament.seed, 0, p))  # one generator for all its games at once
    moves: list[list[tuple[int, int]]] = [[] for _ in range(total)]
    rows = np.arange(total)
    while True:
        live = rows[~batch.is_over]
        if live.size == 0:
            break
        seat = batch.current_player[live]
        code = bots[live, seat]
        compiled = live[code != NOT_A_BOT]
        actions = np.empty(live.size, dtype=np.int64)
        if compiled.size:
            actions[code != NOT_A_BOT] = batch.bot_actions(compiled, code[code != NOT_A_BOT])
        python = np.flatnonzero(code == NOT_A_BOT)
        if python.size:
            owners = seat_player[live[python], seat[python]]
            for p in np.unique(owners).tolist():
                picked = python[owners == p]
                actions[picked] = _python_moves(players[p], batch, live[picked])
        for g, s, a in zip(live.tolist(), seat.tolist(), actions.tolist(), strict=True):
            moves[g].append((s, a))
        batch.step(actions, live)
    game = QuiddlerGame(rules, solver=batch.solver)
    return [_rebuild(tournament, game, j, slots[j], int(seeds[j]), moves[j], batch) for j in range(total)]


def _python_moves(agent: Any, batch: BatchGame, games: np.ndarray) -> np.ndarray:
    masks = batch.action_masks(games)
    obs = batch.observe(games=games)
    if callable(getattr(agent, "act_batch", None)):
        return np.asarray(agent.act_batch(obs, masks), dtype=np.int64)
    return np.asarray([agent.act(o, m) for o, m in zip(obs, masks, strict=True)], dtype=np.int64)


def _rebuild(tournament: Tournament, game: QuiddlerGame, j: int, slot, seed: int, moves, batch) -> PlayedGame:
    """Batch row j's record: its moves replayed in the single engine for the round results."""
    _, decks, reshuffles = tournament.cards(slot.deal)
    game.reset(rng=reshuffles, decks=decks)
    rounds: list[dict] = []
    for _, action in moves:
        hand_size, dealer = game.hand_size, game.dealer
        results = game.step(action)
        if results is not None:
            rounds.append(round_record(hand_size, dealer, results))
    if not game.is_over or game.totals != batch.totals[j].tolist():
        raise RuntimeError(
            f"game {slot.game}: the single engine's replay ends at {game.totals}, the batch at {batch.totals[j]}"
        )
    return PlayedGame(
        game=slot.game,
        deal=slot.deal,
        rotation=slot.rotation,
        matchup=slot.matchup,
        seats=slot.seats,
        deal_seed=seed,
        totals=list(game.totals),
        actions=list(moves),
        rounds=rounds,
    )
