"""A tournament's schedule: who plays which game, in which seats, with which cards (no game is played here).

Game `g` is a pure function of (tournament, g): `Tournament.slot(g)` gives its matchup
and seat rotation, `deal_seed`/`deal_cards` its stacked decks and reshuffle generator,
`agent_seed` its players' generators. `tournament` plays the schedule on the single
engine, `batched` on the batched engine; both read it from here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from quiddler_env.core.batch import StreamGenerator
from quiddler_env.core.cards import new_deck
from quiddler_env.core.config import MAX_PLAYERS, MIN_PLAYERS, QuiddlerConfig

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


def deal_cards(seed: int, num_rounds: int) -> tuple[list[list[int]], StreamGenerator]:
    """Stacked decks (faces, top first) for every round, and the generator of the reshuffles.

    Both come from `seed` (a `deal_seed`): the decks from a numpy generator, the
    reshuffles from the batched engine's deal stream of that seed (`StreamGenerator`),
    so a game reshuffles alike in both engines, and replaying a saved game only needs the seed.
    """
    rng = np.random.default_rng(seed)
    decks = [rng.permutation(_DECK).tolist() for _ in range(num_rounds)]
    return decks, StreamGenerator(seed)


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
    stacked: tuple[tuple[int, tuple[tuple[int, ...], ...]], ...] | None = None
    """Given deals (a benchmark's deal file): per deal, its reshuffle seed and every round's deck (faces, top
    first); deal d plays `stacked[d]` instead of the cards of `deal_seed(seed, d)`. None: the seed's deals."""

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
        if self.stacked is not None:
            stacked = tuple(
                (int(seed), tuple(tuple(int(c) for c in deck) for deck in decks)) for seed, decks in self.stacked
            )
            object.__setattr__(self, "stacked", stacked)
            if len(stacked) < self.deals:
                raise TournamentError(f"{self.deals} deals to play, but only {len(stacked)} given")
            rounds = self.rules.num_rounds
            short = next((d for d, (_, decks) in enumerate(stacked) if len(decks) < rounds), None)
            if short is not None:
                raise TournamentError(
                    f"given deal {short} has {len(stacked[short][1])} decks, the rules play {rounds} rounds"
                )

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

    def cards(self, deal: int) -> tuple[int, list[list[int]], StreamGenerator]:
        """Deal `deal`'s seed, stacked decks (one per round) and reshuffle generator: given, or from the seed."""
        if self.stacked is None:
            seed = deal_seed(self.seed, deal)
            return (seed, *deal_cards(seed, self.rules.num_rounds))
        seed, decks = self.stacked[deal]
        return seed, [list(d) for d in decks[: self.rules.num_rounds]], StreamGenerator(seed)

    def to_dict(self) -> dict:
        """The resolved tournament, JSON-ready (`given_deals`: how many deals were given, when they were)."""
        extra = {} if self.stacked is None else {"given_deals": len(self.stacked)}
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
            **extra,
        }


def round_record(hand_size: int, dealer: int, results) -> dict:
    """One round of a `PlayedGame`: its hand size, dealer, who went out (seat or None), the results by seat."""
    went_out = next((r.player for r in results if r.went_out), None)
    return {"hand_size": hand_size, "dealer": dealer, "went_out": went_out, "results": [r.to_dict() for r in results]}


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
