"""Tournaments: many games between a pool of players, seats rotated, deals duplicated, in parallel.

A `Tournament` names the players (agent specs), the table size, the number of games,
the rules and a seed. Game `g` is a pure function of (tournament, g):

- its matchup (which players sit down, when the pool is larger than the table) and
  its seat rotation come from `Tournament.slot(g)`;
- its deal (the card order of every round, and the generator that reshuffles the
  discard pile) comes from `deal_seed(seed, deal)`, via `numpy.random.SeedSequence` (`deal_cards`);
- each player's generator is re-seeded from (seed, g, player) before the game.

With duplicate deals (the default) the games of a deal are the table-size cyclic
rotations of one matchup over the same stacked decks, so every player is dealt
every seat's cards once; the cards' luck cancels out of comparisons. Since no game
depends on another, the results are the same for any number of worker processes.
"""

from __future__ import annotations

import ctypes
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import get_context

import numpy as np

from quiddler_env.core.config import MAX_PLAYERS, MIN_PLAYERS
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.observation import encode_observation

from ..arena import seat_solver_of
from .schedule import (  # the schedule, re-exported: tournament.Tournament etc. stay where they were
    MAX_POOL,
    PlayedGame,
    Slot,
    Tournament,
    TournamentError,
    agent_seed,
    deal_cards,
    deal_seed,
    player_labels,
    round_record,
)

__all__ = [
    "MAX_POOL",
    "PlayedGame",
    "Slot",
    "Tournament",
    "TournamentError",
    "agent_seed",
    "deal_cards",
    "deal_seed",
    "play_all",
    "player_labels",
    "run_tournament",
    "seat_figures",
]


def check_specs(specs: Sequence[str]) -> None:
    """Reject specs that cannot play a tournament (unknown names, a person at the terminal)."""
    from ..registry import parse_spec

    for spec in specs:
        name, _, _ = parse_spec(spec)
        if name == "human":
            raise TournamentError(
                f"agent spec {spec!r}: a person at the terminal cannot play a tournament of many games in worker processes"
            )


def policy_table_size(specs: Sequence[str]) -> int | None:
    """The table size the `policy:` specs were trained for, when their bundles agree on one.

    Read from each bundle's policy.json (its observation size); None when there is no
    policy, a description cannot be read (loading the agent will then say why), or
    the policies disagree.
    """
    from quiddler_env.core.observation import observation_layout

    from ..policies import read_description
    from ..registry import bundle_path

    sizes = {observation_layout(n).size: n for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}
    tables = set()
    for spec in specs:
        try:
            path = bundle_path(spec)
            if path is None:
                continue
            desc = read_description(path)
            # The rules the bundle was trained under name its table; the observation size is the fallback
            # (it is larger than the env's when the policy appends observation features).
            trained = desc.get("config") if isinstance(desc.get("config"), dict) else {}
            n = trained.get("num_players")
            tables.add(n if isinstance(n, int) and not isinstance(n, bool) else sizes.get(desc["observation_size"]))
        except ValueError:
            return None
    return tables.pop() if len(tables) == 1 and None not in tables else None


def policy_identities(tournament: Tournament) -> dict[str, dict]:
    """Each `policy:` or `zoo:` player's bundle: its folder (resolved), framework and checksums, verified against the files.

    Keyed by player label. `weights_sha256` is the one in `policy.json`, checked against
    `policy.pt` (and `model_sha256` against `model.zip` where the description has it); a
    trusted `model.zip` without a `policy.json` is named by the sha256 of its file. A
    mismatch is a `PolicyLoadError` (a ValueError) naming the file.
    """
    from ..policies import bundle_identity
    from ..registry import bundle_path

    out = {}
    for label, spec in zip(tournament.labels, tournament.specs, strict=True):
        path = bundle_path(spec)
        if path is not None:
            identity = bundle_identity(path, trusted=tournament.trusted)
            out[label] = {"spec": spec, "bundle": identity.pop("path"), **identity}
    return out


def build_players(tournament: Tournament) -> list:
    """One agent per player, for the tournament's table and rules (loads policies: errors name the file)."""
    from ..registry import make

    check_specs(tournament.specs)
    return [make(spec, seed=0, config=tournament.rules, trusted=tournament.trusted) for spec in tournament.specs]


def play_scheduled_game(tournament: Tournament, players: Sequence, game: QuiddlerGame, index: int) -> PlayedGame:
    """Play game `index` of the schedule with the given agents (one per pool player) on `game`."""
    slot = tournament.slot(index)
    seed, decks, rng = tournament.cards(slot.deal)
    for p in set(slot.seats):
        players[p].reset(agent_seed(tournament.seed, index, p))
    seats = [players[p] for p in slot.seats]
    if not game.seat_words:  # a bot's level: the engine lays only its words (rules without vocabularies)
        game.set_seat_solvers([seat_solver_of(agent) for agent in seats])
    game.reset(rng=rng, decks=decks)
    actions: list[tuple[int, int]] = []
    rounds: list[dict] = []
    while not game.is_over:
        seat = game.current_player
        hand_size, dealer = game.hand_size, game.dealer
        action = int(seats[seat].act(encode_observation(game, seat), game.legal_action_mask()))
        actions.append((seat, action))
        results = game.step(action)
        if results is not None:
            rounds.append(round_record(hand_size, dealer, results))
    return PlayedGame(
        game=index,
        deal=slot.deal,
        rotation=slot.rotation,
        matchup=slot.matchup,
        seats=slot.seats,
        deal_seed=seed,
        totals=list(game.totals),
        actions=actions,
        rounds=rounds,
    )


# -- running -------------------------------------------------------------------------------------


ENGINES = ("auto", "batched", "single")
"""Which engine plays a tournament: batched (every game at once, compiled bots), single (game by game, the
Python bots), auto (batched when every player is a compiled bot, or, in `play_all`, a compiled bot or a
policy with `act_batch`; the challenge variant too)."""


def _check_engine(engine: str) -> str:
    if engine not in ENGINES:
        raise TournamentError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    return engine


def play_all(tournament: Tournament, players: Sequence, engine: str = "auto") -> list[PlayedGame]:
    """Every game of the schedule in this process, with these agent objects (one per pool player)."""
    from .batched import NOT_A_BOT, compiled_code, play_batched

    if _check_engine(engine) == "auto":
        fits = all(compiled_code(p) != NOT_A_BOT or callable(getattr(p, "act_batch", None)) for p in players)
        engine = "batched" if fits else "single"
    if engine == "batched":
        return play_batched(tournament, players)
    game = QuiddlerGame(tournament.rules)
    return [play_scheduled_game(tournament, players, game, g) for g in range(tournament.total_games)]


def seat_figures(played: Sequence[PlayedGame], player: int) -> dict[str, float]:
    """Pool player `player` over the games it played: games, wins (sole top total), ties (shared top), and
    the means of its final total, of the other seats' totals, and of its margin over the best other total; and
    (the challenge variant) the challenges it made and won."""
    wins = ties = made = won = 0
    totals, others, margins = [], [], []
    for g in played:
        if player not in g.seats:
            continue
        seat = g.seats.index(player)
        for rnd in g.rounds:
            score = rnd["results"][seat].get("challenge")
            if score is not None:
                made += score["made"]
                won += score["won"]
        if seat in g.winners:
            wins += len(g.winners) == 1
            ties += len(g.winners) > 1
        rest = [t for s, t in enumerate(g.totals) if s != seat]
        totals.append(g.totals[seat])
        others.append(float(np.mean(rest)))
        margins.append(g.totals[seat] - max(rest))
    return {
        "games": len(totals),
        "wins": wins,
        "ties": ties,
        "mean_total": float(np.mean(totals)),
        "mean_others": float(np.mean(others)),
        "mean_margin": float(np.mean(margins)),
        "challenges_made": made,
        "challenges_won": won,
    }


class _Table:
    """A process's players and game engine for one tournament (built once, reused for every game)."""

    def __init__(self, tournament: Tournament):
        from ..registry import one_torch_thread

        self.tournament = tournament
        one_torch_thread(tournament.specs)  # the same arithmetic (so the same argmax) in every worker
        self.players = build_players(tournament)
        self.game = QuiddlerGame(tournament.rules)

    def play(self, indices: Iterable[int]) -> list[PlayedGame]:
        return [play_scheduled_game(self.tournament, self.players, self.game, g) for g in indices]


_WORKER_TABLE: _Table | None = None
PR_SET_PDEATHSIG = 1
PARENT_POLL_SECONDS = 0.5


def die_with_parent(parent: int) -> None:
    """End this worker process when its parent `parent` ends, even by kill -9.

    Linux: `prctl(PR_SET_PDEATHSIG, SIGKILL)`, then a check that the parent is still the one
    (it may have died before the call). Elsewhere: a daemon thread polling `os.getppid()`.
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            done = libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            done = False
        if done:
            if os.getppid() != parent:
                os._exit(1)
            return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


def _init_worker(tournament: Tournament, parent: int | None = None) -> None:
    global _WORKER_TABLE
    if parent is not None:
        die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and cancels the pool
    _WORKER_TABLE = _Table(tournament)


def _play_chunk(indices: list[int]) -> list[PlayedGame]:
    assert _WORKER_TABLE is not None, "worker not initialised"
    return _WORKER_TABLE.play(indices)


def default_workers() -> int:
    """All the cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def chunks(tournament: Tournament, workers: int) -> list[list[int]]:
    """Game indices split into work units: whole deals, about four units per worker, at most 64 games each.

    The split only affects speed: every game is a pure function of its index.
    """
    total = tournament.total_games
    unit = tournament.table_size if tournament.duplicate else 1
    units = math.ceil(total / unit)
    per_chunk = max(1, min(math.ceil(units / (4 * max(workers, 1))), max(1, 64 // unit)))
    step = per_chunk * unit
    return [list(range(start, min(start + step, total))) for start in range(0, total, step)]


def run_tournament(
    tournament: Tournament,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    engine: str = "auto",
) -> list[PlayedGame]:
    """Play every game of the tournament; returns them in game order.

    `engine` (`ENGINES`): "auto" plays a pool of compiled bots (random, greedy) on the batched engine,
    in this process, and everything else game by game. `workers` > 1 plays chunks of games in that many processes (spawned, so torch and
    numba start clean; each ends with this process, even when it is killed); the result
    is identical for any `workers`. `progress(n)` is
    called as games finish.
    """
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise TournamentError(f"workers must be a positive integer, got {workers!r}")
    from .batched import batchable, play_batched

    if _check_engine(engine) == "auto":
        engine = "batched" if batchable(tournament.specs) else "single"
    if engine == "batched":
        # Every game at once in this process (the compiled bots need no workers); the same for any `workers`.
        check_specs(tournament.specs)
        players = [
            spec if batchable([spec]) else player
            for spec, player in zip(tournament.specs, build_players(tournament), strict=True)
        ]
        played = play_batched(tournament, players)
        if progress:
            progress(len(played))
        return played
    work = chunks(tournament, workers)
    played: list[PlayedGame] = []
    if workers == 1 or len(work) == 1:
        table = _Table(tournament)
        for indices in work:
            games = table.play(indices)
            played.extend(games)
            if progress:
                progress(len(games))
    else:
        with ProcessPoolExecutor(
            max_workers=min(workers, len(work)),
            mp_context=get_context("spawn"),
            initializer=_init_worker,
            initargs=(tournament, os.getpid()),
        ) as pool:
            pending = set()
            try:  # the submits too: a Ctrl-C or SIGTERM among them must not leave the pool to play every chunk
                pending = {pool.submit(_play_chunk, indices) for indices in work}
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        games = future.result()
                        played.extend(games)
                        if progress:
                            progress(len(games))
            except BaseException:
                for future in pending:
                    future.cancel()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    played.sort(key=lambda g: g.game)
    return played
