"""The benchmark, versioned: a fixed protocol, played by one candidate agent, reported as a score card.

`BENCHMARKS` declares each version once: the shipped deal file (its sha256 checked on load),
the pool of opponents at each table size, the deals per pairing, the rules, the seed of the
agents' generators and the time limit per move. `run_benchmark` plays the candidate against
each opponent of the pool (at a table of 4, against three copies of it), every deal in every
seat rotation, and returns the card: per table and opponent the games, the candidate's wins
with a Wilson interval, its mean paired point difference (its total minus the mean of the
others', per deal) with a t interval, and OpenSkill ratings; stamped with what makes the
figures what they are. The card's `timing` (measured decision times against the time limit)
varies from run to run and is left out of `body_sha256`; everything else is the same for the
same command.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from quiddler_env.core.cards import new_deck
from quiddler_env.core.config import QuiddlerConfig

from .schedule import PlayedGame, Tournament, TournamentError, deal_seed
from .stats import DEFAULT_CONFIDENCE, clustered_mean_interval, wilson_interval

CARD_SCHEMA = "quiddler-benchmark-card"
CARD_VERSION = 1
DEAL_FORMAT = "quiddler-deals"
DEALS_DIR = Path(__file__).parent / "deals"
MAX_ROUNDS = 8
"""Decks stored per deal: the rule book's eight rounds (rules with fewer rounds use the first ones)."""
STAMP_PACKAGES = ("quiddler-env", "numpy", "numba", "openskill", "torch", "stable-baselines3", "sb3-contrib")


class BenchmarkError(ValueError):
    """A benchmark that cannot be run as asked (unknown version, a changed deal file): one line."""


@dataclass(frozen=True)
class Protocol:
    """One benchmark version: which deals, which opponents, how many games, under which rules."""

    name: str
    deal_file: Path
    deal_sha256: str
    pool: Mapping[int, tuple[str, ...]]
    """Opponents by table size; at a table of n the candidate meets n - 1 copies of each."""
    deals: Mapping[int, int]
    """Deals per pairing by table size (each played in every seat rotation)."""
    move_limit_s: float
    seed: int = 0
    """Seed of the agents' generators (the cards come from the deal file)."""
    rules: QuiddlerConfig = field(default_factory=QuiddlerConfig)
    vocabularies: tuple[str, ...] = ()
    """The vocabulary track: seat k's vocabulary spec at every table (one per seat of the largest table); seats
    find and lay only their words (the rules' `vocabularies`). () for the full track: every seat knows the
    whole dictionary."""

    @property
    def tables(self) -> tuple[int, ...]:
        return tuple(sorted(self.pool))

    def rules_for(self, table: int) -> QuiddlerConfig:
        """The rules at a table of `table`: the protocol's, for that many players, with the seats' vocabularies."""
        changes: dict[str, Any] = {"num_players": table}
        if self.vocabularies:
            changes["vocabularies"] = list(self.vocabularies[:table])
        return QuiddlerConfig.from_mapping({**self.rules.to_dict(), **changes})


_V1 = Protocol(
    name="v1",
    deal_file=DEALS_DIR / "v1.json.gz",
    deal_sha256="77038ec5972e5dfcbb2d28f71bc3af823e8cb31a70f734c7552a5bbcb3d1d60e",
    pool={
        2: ("random", "greedy", "expert", "search", "zoo:champion-2p"),
        4: ("random", "greedy", "expert", "search", "zoo:table-4p"),
    },
    deals={2: 200, 4: 100},
    move_limit_s=1.0,
    seed=0,
)

VOCABULARY_TRACK = tuple(f"level-everyday:0.6:{seat}" for seat in range(1, 5))
"""The vocabulary track's seats: each draws its own 60% of level 3 ("everyday", SCOWL size 35: 38,933 words),
about 23,400 words a seat, seeded by the seat's number: a person's vocabulary rather than a word finder's."""

BENCHMARKS: dict[str, Protocol] = {
    "v1": _V1,
    "v1-vocab": dataclasses.replace(_V1, name="v1-vocab", vocabularies=VOCABULARY_TRACK),
}
"""The declared benchmarks: the full track (`v1`) and the vocabulary track (`v1-vocab`), same deals and pool."""


# -- the deal file -------------------------------------------------------------------------------


def make_deals(seed: int, counts: Mapping[int, int]) -> dict[str, list[dict]]:
    """Deals by table size: each a reshuffle seed and MAX_ROUNDS shuffled decks, from `seed`."""
    deck = np.asarray(new_deck(), dtype=np.int64)
    out: dict[str, list[dict]] = {}
    for table, n in sorted(counts.items()):
        deals = []
        for d in range(n):
            s = deal_seed(seed, table * 1_000_000 + d)
            rng = np.random.default_rng(s)
            deals.append({"seed": s, "decks": [rng.permutation(deck).tolist() for _ in range(MAX_ROUNDS)]})
        out[str(table)] = deals
    return out


def deal_file_bytes(seed: int, counts: Mapping[int, int]) -> bytes:
    """A deal file's bytes: gzip (no time stamp) of compact JSON, the same for the same arguments."""
    data = {"format": DEAL_FORMAT, "version": 1, "seed": seed, "tables": make_deals(seed, counts)}
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def load_deals(path: str | Path, sha256: str) -> dict[int, tuple]:
    """The deal file's deals by table size, as `Tournament.stacked`; refused unless its bytes hash to `sha256`."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BenchmarkError(f"deal file {path}: {exc.strerror or exc}") from None
    digest = hashlib.sha256(raw).hexdigest()
    if digest != sha256:
        raise BenchmarkError(
            f"deal file {path}: sha256 {digest[:16]}... is not the protocol's {sha256[:16]}...; it was changed"
        )
    try:
        data = json.loads(gzip.decompress(raw))
        if data.get("format") != DEAL_FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {DEAL_FORMAT!r}")
        return {
            int(t): tuple((int(d["seed"]), tuple(tuple(deck) for deck in d["decks"])) for d in deals)
            for t, deals in data["tables"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BenchmarkError(f"deal file {path}: not a deal file ({exc})") from None


def get_protocol(name: str) -> Protocol:
    """The declared benchmark `name` (an unknown one is a one-line error naming the known ones)."""
    if name not in BENCHMARKS:
        raise BenchmarkError(f"unknown benchmark {name!r}; known: {', '.join(sorted(BENCHMARKS))}")
    return BENCHMARKS[name]


# -- playing -------------------------------------------------------------------------------------


class _Timed:
    """An agent whose decisions are timed (wall clock, seconds); everything else passes through."""

    def __init__(self, agent: Any):
        self.agent = agent
        self.times: list[float] = []

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, observation, mask) -> int:
        start = time.perf_counter()
        action = self.agent.act(observation, mask)
        self.times.append(time.perf_counter() - start)
        return action

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)


def pairing(
    protocol: Protocol, candidate: str, opponent: str, table: int, deals: int, stacked: tuple, trusted: bool = False
) -> Tournament:
    """The tournament of one pairing: the candidate and table - 1 copies of the opponent, `deals` deals
    (`trusted`: a `policy:` candidate may unpickle its model.zip)."""
    return Tournament(
        (candidate, *[opponent] * (table - 1)),
        games=deals * table,
        seed=protocol.seed,
        table_size=table,
        rules=protocol.rules_for(table),
        stacked=stacked[:deals],
        trusted=trusted,
    )


def play_pairing(tournament: Tournament) -> tuple[list[PlayedGame], _Timed]:
    """Every game of one pairing, game by game in this process, the candidate's decisions timed.

    Game 0 is played once untimed first, so compiling (numba, torch) is not counted against the time
    limit; every game resets the players' generators, so the warm-up changes no result.
    """
    from quiddler_env.core.game import QuiddlerGame

    from .tournament import build_players, play_all, play_scheduled_game

    players = build_players(tournament)
    play_scheduled_game(tournament, players, QuiddlerGame(tournament.rules), 0)
    timed = _Timed(players[0])
    players[0] = timed
    return play_all(tournament, players, engine="single"), timed


def candidate_figures(played: Sequence[PlayedGame], confidence: float = DEFAULT_CONFIDENCE) -> dict[str, Any]:
    """Pool player 0 (the candidate) over the games: wins (sole top total), ties, losses, win rate, paired difference.

    The paired difference of a game is the candidate's total minus the mean of the others'; its
    interval is a t interval over deals (the rotations of a deal share its cards).
    """
    wins = ties = 0
    diffs, deals = [], []
    for g in played:
        seat = g.seats.index(0)
        winners = g.winners
        wins += winners == [seat]
        ties += seat in winners and len(winners) > 1
        others = [t for s, t in enumerate(g.totals) if s != seat]
        diffs.append(g.totals[seat] - sum(others) / len(others))
        deals.append(g.deal)
    n = len(played)
    return {
        "games": n,
        "deals": len(set(deals)),
        "wins": wins,
        "ties": ties,
        "losses": n - wins - ties,
        "win_rate": wilson_interval(wins, n, confidence).to_dict(),
        "paired_difference": clustered_mean_interval(diffs, deals, confidence).to_dict(),
    }


def _ratings(table: int, results: Sequence[tuple[str, Sequence[PlayedGame]]]) -> dict | None:
    """OpenSkill ratings at one table size over every pairing's games, in pool order (None without openskill)."""
    from ..extras import missing
    from .stats import openskill_ratings

    if missing("openskill") is not None:
        return None
    names = ["candidate"]
    tables = []
    for opponent, played in results:
        first = len(names)
        names.extend([opponent] + [f"{opponent}#{k}" for k in range(2, table)])
        index = [0] + list(range(first, first + table - 1))
        tables.extend(([index[p] for p in g.seats], g.totals) for g in played)
    rated = openskill_ratings(names, tables)
    return {name: {k: rated[name][k] for k in ("mu", "sigma", "ordinal", "low", "high")} for name in names}


def stamp(protocol: Protocol, candidate: str, games_per_pairing: Mapping[int, int]) -> dict[str, Any]:
    """What makes the card's figures what they are: env, rules, dictionary, deals, pool, packages.

    `games_per_pairing` by table size names the tables played; `full` says they are all the protocol's,
    at its number of games."""
    tables = tuple(sorted(games_per_pairing))
    from quiddler_env import ENV_VERSION
    from quiddler_env.core.files import sha256_file

    from ..provenance import dictionary_identity, package_versions

    versions = package_versions()
    rules = {str(t): protocol.rules_for(t).to_dict() for t in tables}
    full = tables == protocol.tables and all(games_per_pairing[t] == protocol.deals[t] * t for t in tables)
    return {
        "benchmark": protocol.name,
        "candidate": candidate,
        "env_version": ENV_VERSION,
        "rules": rules,
        "dictionary": dictionary_identity(protocol.rules.dictionary),
        **({"vocabularies": vocabulary_identities(protocol)} if protocol.vocabularies else {}),
        "deal_file": {"name": Path(protocol.deal_file).name, "sha256": sha256_file(protocol.deal_file)},
        "pool": {str(t): list(protocol.pool[t]) for t in tables},
        "games_per_pairing": {str(t): games_per_pairing[t] for t in tables},
        "protocol_games_per_pairing": {str(t): protocol.deals[t] * t for t in protocol.tables},
        "full": full,
        "seed": protocol.seed,
        "move_limit_s": protocol.move_limit_s,
        "packages": {name: versions.get(name) for name in ("python", *STAMP_PACKAGES)},
    }


def vocabulary_identities(protocol: Protocol) -> list[dict[str, Any]]:
    """Each seat's vocabulary of the track: its spec, its word count and the sha256 of its sorted words."""
    from quiddler_env.core.vocabulary import load_vocabulary

    out = []
    for spec in protocol.vocabularies:
        words = load_vocabulary(spec, protocol.rules.dictionary)
        out.append({"spec": spec, "words": len(words.words), "identity": words.identity})
    return out


def body_sha256(card: Mapping[str, Any]) -> str:
    """The sha256 of the card's canonical JSON without `timing` and without this hash."""
    body = {k: v for k, v in card.items() if k not in ("timing", "body_sha256")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def candidate_tables(protocol: Protocol, candidate: str) -> tuple[int, ...]:
    """The protocol's tables a candidate can sit at: a policy's trained table when it is one of them, else all."""
    from .tournament import policy_table_size

    trained = policy_table_size([candidate])
    return (trained,) if trained in protocol.tables else protocol.tables


def run_benchmark(
    protocol: Protocol,
    candidate: str,
    games_per_pairing: int | None = None,
    progress=None,
    tables: Sequence[int] | None = None,
    trusted: bool = False,
) -> dict[str, Any]:
    """Play the protocol with `candidate` and return its score card (JSON-ready).

    `games_per_pairing` plays fewer games (the first deals of the file, in whole rotations), `tables` some
    of the protocol's table sizes (None: the table a `policy:`/`zoo:` candidate was trained for, when it
    is one of them, else all); the card's stamp then says `full: false`. `progress(table, opponent)` is
    called before each pairing. `trusted` lets a `policy:` candidate unpickle its model.zip.
    """
    tables = candidate_tables(protocol, candidate) if tables is None else tuple(sorted(set(tables)))
    unknown = [t for t in tables if t not in protocol.tables]
    if unknown or not tables:
        shown = ", ".join(map(str, unknown)) or "none"
        raise BenchmarkError(f"benchmark {protocol.name} has tables of {protocol.tables}, not {shown}")
    stacked_by_table = load_deals(protocol.deal_file, protocol.deal_sha256)
    deals_of: dict[int, int] = {}
    for t in tables:
        full = protocol.deals[t]
        if games_per_pairing is not None:
            if not isinstance(games_per_pairing, int) or isinstance(games_per_pairing, bool) or games_per_pairing < 1:
                raise BenchmarkError(f"games per pairing must be a positive integer, got {games_per_pairing!r}")
            full = min(full, math.ceil(games_per_pairing / t))
        if len(stacked_by_table.get(t, ())) < full:
            raise BenchmarkError(f"deal file {protocol.deal_file}: fewer than {full} deals for a table of {t}")
        deals_of[t] = full
    card: dict[str, Any] = {
        "schema": CARD_SCHEMA,
        "schema_version": CARD_VERSION,
        "stamp": stamp(protocol, candidate, {t: deals_of[t] * t for t in tables}),
        "tables": {},
    }
    timing: dict[str, Any] = {}
    for t in tables:
        results = []
        opponents = {}
        times: list[float] = []
        for opponent in protocol.pool[t]:
            if progress:
                progress(t, opponent)
            try:
                tournament = pairing(protocol, candidate, opponent, t, deals_of[t], stacked_by_table[t], trusted)
            except TournamentError as exc:
                raise BenchmarkError(str(exc)) from None
            played, timed = play_pairing(tournament)
            results.append((opponent, played))
            opponents[opponent] = candidate_figures(played)
            times.extend(timed.times)
        card["tables"][str(t)] = {"opponents": opponents, "ratings": _ratings(t, results)}
        arr = np.asarray(times) if times else np.zeros(1)
        timing[str(t)] = {
            "decisions": len(times),
            "median_s": float(np.median(arr)),
            "max_s": float(arr.max()),
            "over_limit": int((arr > protocol.move_limit_s).sum()) if times else 0,
        }
    card["body_sha256"] = body_sha256(card)
    card["timing"] = {"measured": "wall clock of the candidate's decisions; varies between runs", "tables": timing}
    return card


# -- the card as Markdown ------------------------------------------------------------------------


def _iv(iv: Mapping[str, Any], scale: float = 1.0, digits: int = 1, unit: str = "") -> str:
    if iv["estimate"] is None:
        return "n/a"
    text = f"{iv['estimate'] * scale:.{digits}f}{unit}"
    if iv["low"] is not None:
        text += f" [{iv['low'] * scale:.{digits}f}, {iv['high'] * scale:.{digits}f}]"
    return text


def render_markdown(card: Mapping[str, Any]) -> str:
    """The card as Markdown, from its JSON alone (the one format both files share)."""
    s = card["stamp"]
    lines = [
        f"# Benchmark {s['benchmark']}: `{s['candidate']}`",
        "",
        ("Full protocol." if s["full"] else "**Reduced run** (fewer tables or games per pairing than the protocol's).")
        + f" Card sha256 (without timing) `{card['body_sha256'][:16]}`.",
        "",
    ]
    for t, table in card["tables"].items():
        lines += [
            f"## {t} players ({s['games_per_pairing'][t]} games per pairing; the protocol plays "
            f"{s['protocol_games_per_pairing'][t]})",
            "",
            "| opponent | games | wins | ties | losses | win rate % [95%] | paired difference [95%] |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, f in table["opponents"].items():
            lines.append(
                f"| `{name}` | {f['games']} | {f['wins']} | {f['ties']} | {f['losses']} | "
                f"{_iv(f['win_rate'], 100)} | {_iv(f['paired_difference'], 1, 2)} |"
            )
        if table["ratings"]:
            rated = ", ".join(
                f"`{n}` {r['mu']:.2f} [{r['low']:.2f}, {r['high']:.2f}]" for n, r in table["ratings"].items()
            )
            lines += ["", f"OpenSkill mu [95%]: {rated}."]
        lines.append("")
    packages = ", ".join(f"{k} {v}" for k, v in s["packages"].items() if v is not None)
    lines += [
        "## Stamp",
        "",
        f"- env version {s['env_version']}; dictionary `{s['dictionary']['name']}` {s['dictionary']['identity'][:16]}",
        *(
            f"- seat {k + 1}'s vocabulary `{v['spec']}`: {v['words']:,} words, {v['identity'][:16]}"
            for k, v in enumerate(s.get("vocabularies", ()))
        ),
        f"- deal file `{s['deal_file']['name']}` sha256 {s['deal_file']['sha256'][:16]}; agents' seed {s['seed']}",
        *(f"- rules ({t} players): `{json.dumps(r, sort_keys=True)}`" for t, r in s["rules"].items()),
        f"- packages: {packages}",
        "",
    ]
    timing = card.get("timing")
    if timing:
        lines += [f"## Decision times (measured; limit {s['move_limit_s']} s a move; not part of the card's hash)", ""]
        for t, m in timing["tables"].items():
            flag = f" **{m['over_limit']} over the limit**" if m["over_limit"] else ""
            lines.append(
                f"- {t} players: {m['decisions']} decisions, median {m['median_s'] * 1000:.2f} ms, "
                f"max {m['max_s'] * 1000:.1f} ms{flag}"
            )
        lines.append("")
    return "\n".join(lines)


def write_card(card: Mapping[str, Any], out: str | Path) -> tuple[Path, Path]:
    """card.json and card.md, each written atomically into folder `out` (created)."""
    from quiddler_env.core.files import write_atomic, write_json

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    return write_json(folder / "card.json", card), write_atomic(folder / "card.md", render_markdown(card))


def with_changes(protocol: Protocol, **changes: Any) -> Protocol:
    """The protocol with some fields replaced (tests, and a smaller local protocol)."""
    return dataclasses.replace(protocol, **changes)
