"""The leaderboard: score cards of one benchmark, side by side, one table per table size.

Every card of a benchmark plays its candidate against the same pool on the same deals, so the cards compare:
per table size a row per candidate, its win rate against each opponent of the pool and its mean paired
difference over the pool (the mean of the pairings' estimates: every pairing plays the same number of games),
best first. Only tables played with the protocol's games are ranked (a policy's card, which plays only the
table it was trained for, ranks there; a reduced run is listed below by name, unranked), and cards of
different benchmarks, env versions, deal files or rules are refused rather than mixed.

    python -m quiddler_agents.evaluation.leaderboard benchmarks/cards/v1/*/card.json   # Markdown on stdout

The docs' leaderboard page is this module's output on the committed cards (`docs/hooks.py`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .benchmark import CARD_SCHEMA, BenchmarkError, body_sha256

_SAME = ("benchmark", "env_version", "deal_file", "dictionary", "vocabularies", "seed")
"""What must be the same on every card of one leaderboard for their figures to compare (and the pool and rules
at each table size both cards played)."""


def read_card(path: str | Path) -> dict[str, Any]:
    """A card.json, checked: its schema and that its body hashes to its `body_sha256` (one-line errors)."""
    path = Path(path)
    try:
        card = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise BenchmarkError(f"score card {path}: cannot be read ({exc})") from None
    if not isinstance(card, dict) or card.get("schema") != CARD_SCHEMA:
        raise BenchmarkError(f"score card {path}: not a {CARD_SCHEMA} file")
    if card.get("body_sha256") != body_sha256(card):
        raise BenchmarkError(f"score card {path}: its figures do not match its body_sha256 (edited?)")
    return card


def committed_cards(benchmark: str, root: str | Path) -> list[dict[str, Any]]:
    """The cards of `benchmark` under `root` (a checkout's `benchmarks/cards`: `NAME/*/card.json`), by folder."""
    return [read_card(p) for p in sorted(Path(root, benchmark).glob("*/card.json"))]


def _check_same(cards: Sequence[Mapping[str, Any]]) -> None:
    first = cards[0]["stamp"]
    for card in cards[1:]:
        s = card["stamp"]
        shared = set(s["pool"]) & set(first["pool"])
        differ = [key for key in _SAME if s.get(key) != first.get(key)]
        differ += [
            f"{key} at {t} players" for key in ("pool", "rules") for t in sorted(shared) if s[key][t] != first[key][t]
        ]
        if differ:
            raise BenchmarkError(
                f"cards of {first['candidate']!r} and {s['candidate']!r} differ in {differ[0]}: they do not compare"
            )


def _percent(iv: Mapping[str, Any]) -> str:
    return f"{iv['estimate'] * 100:.1f} [{iv['low'] * 100:.1f}, {iv['high'] * 100:.1f}]"


def _full_at(card: Mapping[str, Any], table: str) -> bool:
    """Whether the card played `table` with the protocol's games per pairing."""
    s = card["stamp"]
    played = s["games_per_pairing"].get(table)
    return table in card["tables"] and played is not None and played == s["protocol_games_per_pairing"].get(table)


def standings(cards: Sequence[Mapping[str, Any]], table: str) -> list[dict[str, Any]]:
    """The ranked rows of one table size: candidate, per-opponent figures, mean paired difference, card hash.

    Tables played in full only (the protocol's games per pairing: a policy's card plays only the table it was
    trained for, in full), best mean paired difference first (ties by name)."""
    rows = []
    for card in cards:
        s = card["stamp"]
        if not _full_at(card, table):
            continue
        opponents = card["tables"][table]["opponents"]
        diffs = [f["paired_difference"]["estimate"] for f in opponents.values()]
        ratings = card["tables"][table].get("ratings") or {}
        rows.append(
            {
                "candidate": s["candidate"],
                "opponents": opponents,
                "mean_paired_difference": sum(diffs) / len(diffs),
                "rating": ratings.get("candidate"),
                "card": card["body_sha256"][:16],
            }
        )
    rows.sort(key=lambda r: (-r["mean_paired_difference"], r["candidate"]))
    return rows


def render_leaderboard(cards: Sequence[Mapping[str, Any]]) -> str:
    """The leaderboard of `cards` (one benchmark's) as Markdown."""
    if not cards:
        return "No score cards yet.\n"
    _check_same(cards)
    stamp = cards[0]["stamp"]
    lines = [
        f"Benchmark {stamp['benchmark']}, env version {stamp['env_version']}, deal file "
        f"`{stamp['deal_file']['name']}` ({stamp['deal_file']['sha256'][:16]}), dictionary "
        f"`{stamp['dictionary']['name']}`. Win rate in % with its 95% interval; the paired difference is the "
        "candidate's total minus the mean of the others', per game, averaged over the pool's pairings.",
        "",
    ]
    tables = sorted({t for card in cards for t in card["tables"]}, key=int)
    for table in tables:
        rows = standings(cards, table)
        if not rows:
            continue
        pool = next(list(c["stamp"]["pool"][table]) for c in cards if table in c["stamp"]["pool"])
        lines += [
            f"### {table} players",
            "",
            "| rank | candidate | " + " | ".join(f"vs `{p}`" for p in pool) + " | mean paired difference "
            "| OpenSkill mu [95%] | card |",
            "|" + "---|" * (len(pool) + 5),
        ]
        for rank, row in enumerate(rows, 1):
            cells = [_percent(row["opponents"][p]["win_rate"]) if p in row["opponents"] else "n/a" for p in pool]
            r = row["rating"]
            rating = f"{r['mu']:.2f} [{r['low']:.2f}, {r['high']:.2f}]" if r else "n/a"
            lines.append(
                f"| {rank} | `{row['candidate']}` | " + " | ".join(cells) + f" | {row['mean_paired_difference']:+.2f} "
                f"| {rating} | `{row['card']}` |"
            )
        lines.append("")
    reduced = sorted(c["stamp"]["candidate"] for c in cards if not any(_full_at(c, t) for t in c["tables"]))
    if reduced:
        lines += ["Reduced runs, not ranked: " + ", ".join(f"`{name}`" for name in reduced) + ".", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the leaderboard of the card.json files named on the command line."""
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        print("usage: python -m quiddler_agents.evaluation.leaderboard CARD.json ...", file=sys.stderr)
        return 2
    try:
        print(render_leaderboard([read_card(p) for p in paths]))
    except BenchmarkError as exc:
        print(f"leaderboard: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
