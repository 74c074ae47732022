"""Tournaments: many games between a pool of players, seats rotated, deals duplicated, in parallel.

A `Tournament` names the players (agent specs), the table size, the number of games,
the rules and a seed. Game `g` is a pure function of (tournament, g):

- its matchup (which players sit down, when the pool is larger than the table) and
  its seat rotation come from `Tournament.slot(g)`;
- its deal (the card order of every round, and the generator that reshuffles the
  discard pile) comes from `deal_seed(seed, deal)`, via `numpy.random.SeedSequence`;
- each player's generator is re-seeded from (seed, g, player) before the game.

With duplicate deals (the default) the games of a deal are the table-size cyclic
rotations of one matchup over the same stacked decks, so every player is dealt
every seat's cards once; the cards' luck cancels out of comparisons. Since no game
depends on another, the results are the same for any number of worker processes.
"""

from __future__ import annotations

import ctypes
import itertools
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context

import numpy as np

from quiddler_env.core.cards import new_deck
from quiddler_env.core.config import MAX_PLAYERS, MIN_PLAYERS, QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.envs.observation import encode_observation

MAX_POOL = 16
"""Most players in one tournament (C(16, 8) = 12,870 matchups at most)."""

_DECK = np.asarray(new_deck(), dtype=np.int64)


class TournamentError(ValueError):
    """A tournament that cannot be played as asked: the message names the bad input."""


def player_labels(specs: Sequence[str]) -> list[str]:
    """Unique display names: the spec itself, `#2`, `#3`, ... added to repeats (greedy, greedy#2)."""
    seen: dict[str, int] = {}
    labels = []
    for spec in specs:
        seen[spec] = seen.get(spec, 0) + 1
        labels.append(spec if seen[spec] == 1 else f"{spec}#{seen[spec]}")
    return labels


def deal_seed(seed: int, deal: int) -> int:
    """The 64-bit seed of one deal (its stacked decks and its reshuffle generator)."""
    return int(np.random.SeedSequence(seed, spawn_key=(0, deal)).generate_state(1, np.uint64)[0])


def agent_seed(seed: int, game: int, player: int) -> int:
    """The seed a player's generator is reset to before game `game`."""
    return int(np.random.SeedSequence(seed, spawn_key=(1, game, player)).generate_state(1, np.uint64)[0])


def deal_cards(seed: int, num_rounds: int) -> tuple[list[list[int]], np.random.Generator]:
    """Stacked decks (faces, top first) for every round, and the generator left for reshuffles.

    Both come from one generator seeded with `seed` (a `deal_seed`): the decks are
    drawn first, so replaying a saved game only needs the seed.
    """
    rng = np.random.default_rng(seed)
    decks = [rng.permutation(_DECK).tolist() for _ in range(num_rounds)]
    return decks, rng


@dataclass(frozen=True)
class Slot:
    """Where game `game` sits in the schedule."""

    game: int
    deal: int
    rotation: int
    matchup: int
    seats: tuple[int, ...]
    """Player index at each seat."""


@dataclass(frozen=True)
class Tournament:
    """Who plays, how many games, under which rules, from which seed (validated on creation)."""

    specs: tuple[str, ...]
    games: int
    seed: int = 0
    table_size: int | None = None
    duplicate: bool = True
    rules: QuiddlerConfig = field(default_factory=QuiddlerConfig)
    """Rule options; its `num_players` is replaced by the table size."""
    trusted: bool = False
    """Let `policy:` specs unpickle `model.zip` (only for files you trust)."""

    def __post_init__(self) -> None:
        specs = tuple(self.specs)
        object.__setattr__(self, "specs", specs)
        if len(specs) < 2:
            raise TournamentError(
                f"a tournament needs at least 2 players, got {len(specs)} ({', '.join(specs) or 'none'}); "
                "repeat a spec to play it against itself, e.g. greedy greedy"
            )
        if len(specs) > MAX_POOL:
            raise TournamentError(f"at most {MAX_POOL} players in one tournament, got {len(specs)}")
        table = self.table_size
        if table is None:
            if len(specs) > MAX_PLAYERS:
                raise TournamentError(
                    f"{len(specs)} players cannot sit at one table ({MIN_PLAYERS}..{MAX_PLAYERS} seats); "
                    "set the table size"
                )
            table = len(specs)
        if not isinstance(table, int) or isinstance(table, bool) or not MIN_PLAYERS <= table <= MAX_PLAYERS:
            raise TournamentError(f"table size must be an integer {MIN_PLAYERS}..{MAX_PLAYERS}, got {table!r}")
        if table > len(specs):
            raise TournamentError(
                f"table size {table} cannot be filled by {len(specs)} players ({', '.join(specs)}); "
                f"name at least {table} players (a spec may be repeated)"
            )
        object.__setattr__(self, "table_size", table)
        if not isinstance(self.games, int) or isinstance(self.games, bool) or self.games < 1:
            raise TournamentError(f"games must be a positive integer, got {self.games!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise TournamentError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not isinstance(self.rules, QuiddlerConfig):
            raise TournamentError(f"rules must be a QuiddlerConfig, got {type(self.rules).__name__}")
        if self.rules.num_players != table:
            # The table size is the tournament's; rebuilding validates the rules for it (hand sizes vs deck).
            try:
                rules = QuiddlerConfig.from_mapping({**self.rules.to_dict(), "num_players": table})
            except ValueError as exc:
                raise TournamentError(f"rules for a table of {table}: {exc}") from None
            object.__setattr__(self, "rules", rules)

    # -- the schedule ---------------------------------------------------------------------

    @property
    def labels(self) -> list[str]:
        return player_labels(self.specs)

    @property
    def matchups(self) -> list[tuple[int, ...]]:
        """Every choice of `table_size` players from the pool, in lexicographic order."""
        return list(itertools.combinations(range(len(self.specs)), self.table_size))

    @property
    def total_games(self) -> int:
        """Games played: with duplicate deals, `games` rounded up to whole deals (table-size rotations)."""
        if self.duplicate:
            return math.ceil(self.games / self.table_size) * self.table_size
        return self.games

    @property
    def deals(self) -> int:
        return self.total_games // self.table_size if self.duplicate else self.total_games

    def slot(self, game: int) -> Slot:
        """Deal, seat rotation and matchup of game `game`.

        Rotation k seats the matchup's i-th player at seat (i - k) mod table size, so
        the table-size consecutive games of a deal put every player in every seat.
        """
        t = self.table_size
        matchups = self.matchups
        rotation = game % t
        block = game // t
        index = block % len(matchups)
        chosen = matchups[index]
        seats = tuple(chosen[(s + rotation) % t] for s in range(t))
        return Slot(game, block if self.duplicate else game, rotation, index, seats)

    def to_dict(self) -> dict:
        """The resolved tournament, JSON-ready."""
        return {
            "players": list(self.specs),
            "labels": self.labels,
            "table_size": self.table_size,
            "games_requested": self.games,
            "games": self.total_games,
            "deals": self.deals,
            "duplicate": self.duplicate,
            "seed": self.seed,
            "trusted": self.trusted,
            "rules": self.rules.to_dict(),
        }


@dataclass
class PlayedGame:
    """Everything about one finished game: schedule, deal, every action, every round result."""

    game: int
    deal: int
    rotation: int
    matchup: int
    seats: tuple[int, ...]
    deal_seed: int
    totals: list[int]
    """Final totals by seat."""
    actions: list[tuple[int, int]]
    """(seat, action id) in order."""
    rounds: list[dict]
    """Per round: `hand_size`, `dealer`, `went_out` (seat or None), `results` (RoundResult dicts by seat)."""

    @property
    def winners(self) -> list[int]:
        best = max(self.totals)
        return [s for s, t in enumerate(self.totals) if t == best]


def check_specs(specs: Sequence[str]) -> None:
    """Reject specs that cannot play a tournament (unknown names, a person at the terminal)."""
    from agents.registry import parse_spec

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
    from agents.policies import read_description
    from agents.registry import parse_spec
    from quiddler_env.envs.observation import observation_layout

    sizes = {observation_layout(n).size: n for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}
    tables = set()
    for spec in specs:
        try:
            name, path, _ = parse_spec(spec)
            if name != "policy":
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
    """Each `policy:` player's bundle: its folder (resolved), framework and checksums, verified against the files.

    Keyed by player label. `weights_sha256` is the one in `policy.json`, checked against
    `policy.pt` (and `model_sha256` against `model.zip` where the description has it); a
    trusted `model.zip` without a `policy.json` is named by the sha256 of its file. A
    mismatch is a `PolicyLoadError` (a ValueError) naming the file.
    """
    from agents.policies import bundle_identity
    from agents.registry import parse_spec

    out = {}
    for label, spec in zip(tournament.labels, tournament.specs, strict=True):
        name, path, _ = parse_spec(spec)
        if name == "policy":
            identity = bundle_identity(path, trusted=tournament.trusted)
            out[label] = {"spec": spec, "bundle": identity.pop("path"), **identity}
    return out


def build_players(tournament: Tournament) -> list:
    """One agent per player, for the tournament's table and rules (loads policies: errors name the file)."""
    from agents.registry import make

    check_specs(tournament.specs)
    return [
        make(spec, seed=0, num_players=tournament.table_size, config=tournament.rules, trusted=tournament.trusted)
        for spec in tournament.specs
    ]


def play_scheduled_game(tournament: Tournament, players: Sequence, game: QuiddlerGame, index: int) -> PlayedGame:
    """Play game `index` of the schedule with the given agents (one per pool player) on `game`."""
    slot = tournament.slot(index)
    seed = deal_seed(tournament.seed, slot.deal)
    decks, rng = deal_cards(seed, tournament.rules.num_rounds)
    for p in set(slot.seats):
        players[p].reset(agent_seed(tournament.seed, index, p))
    game.reset(rng=rng, decks=decks)
    seats = [players[p] for p in slot.seats]
    actions: list[tuple[int, int]] = []
    rounds: list[dict] = []
    while not game.is_over:
        seat = game.current_player
        hand_size, dealer = game.hand_size, game.dealer
        action = int(seats[seat].act(encode_observation(game, seat), game.legal_action_mask()))
        actions.append((seat, action))
        results = game.step(action)
        if results is not None:
            went_out = next((r.player for r in results if r.went_out), None)
            rounds.append(
                {
                    "hand_size": hand_size,
                    "dealer": dealer,
                    "went_out": went_out,
                    "results": [r.to_dict() for r in results],
                }
            )
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


def play_all(tournament: Tournament, players: Sequence) -> list[PlayedGame]:
    """Every game of the schedule in this process, with these agent objects (one per pool player)."""
    game = QuiddlerGame(tournament.rules)
    return [play_scheduled_game(tournament, players, game, g) for g in range(tournament.total_games)]


def seat_figures(played: Sequence[PlayedGame], player: int) -> dict[str, float]:
    """Pool player `player` over the games it played: games, wins (sole top total), ties (shared top), and
    the means of its final total, of the other seats' totals, and of its margin over the best other total."""
    wins = ties = 0
    totals, others, margins = [], [], []
    for g in played:
        if player not in g.seats:
            continue
        seat = g.seats.index(player)
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
    }


class _Table:
    """A process's players and game engine for one tournament (built once, reused for every game)."""

    def __init__(self, tournament: Tournament):
        self.tournament = tournament
        if any(spec.split(":", 1)[0].lower() == "policy" for spec in tournament.specs):
            import torch

            # One thread per process: the same arithmetic (so the same argmax) in every worker, and no oversubscription.
            torch.set_num_threads(1)
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
) -> list[PlayedGame]:
    """Play every game of the tournament; returns them in game order.

    `workers` > 1 plays chunks of games in that many processes (spawned, so torch and
    numba start clean; each ends with this process, even when it is killed); the result
    is identical for any `workers`. `progress(n)` is
    called as games finish.
    """
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise TournamentError(f"workers must be a positive integer, got {workers!r}")
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
            pending = {pool.submit(_play_chunk, indices) for indices in work}
            try:
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
