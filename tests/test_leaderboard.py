"""The leaderboard: ranks full cards of one benchmark, refuses cards that do not compare or were edited."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

from quiddler_agents.evaluation.benchmark import BenchmarkError, body_sha256
from quiddler_agents.evaluation.leaderboard import committed_cards, main, read_card, render_leaderboard, standings

ROOT = Path(__file__).resolve().parents[1]
POOL = ["random", "greedy", "expert"]


def _iv(estimate, width):
    return {"estimate": estimate, "low": estimate - width, "high": estimate + width, "n": 400}


def _card(
    candidate: str, diffs: dict[str, float], full: bool = True, env_version: int = 5, tables=("2",), bonus: int = 10
) -> dict:
    """A card of the benchmark's shape with the given paired differences (win rate 0.5 + diff / 100)."""
    opponents = {
        name: {
            "games": 400,
            "deals": 200,
            "wins": 200,
            "ties": 0,
            "losses": 200,
            "win_rate": _iv(0.5 + d / 100, 0.05),
            "paired_difference": _iv(d, 2.0),
        }
        for name, d in diffs.items()
    }
    card = {
        "schema": "quiddler-benchmark-card",
        "schema_version": 1,
        "stamp": {
            "benchmark": "v1",
            "candidate": candidate,
            "env_version": env_version,
            "deal_file": {"name": "v1.json.gz", "sha256": "ab" * 32},
            "dictionary": {"name": "enable", "identity": "cd" * 32},
            "pool": {t: POOL for t in tables},
            "rules": {t: {"num_players": int(t), "bonus_value": bonus} for t in tables},
            "seed": 0,
            "full": full,
            "games_per_pairing": {t: 400 if full else 4 for t in tables},
            "protocol_games_per_pairing": {t: 400 for t in tables},
        },
        "tables": {
            t: {"opponents": opponents, "ratings": {"candidate": {"mu": 25.0, "low": 24.0, "high": 26.0}}}
            for t in tables
        },
    }
    card["body_sha256"] = body_sha256(card)
    return card


def test_full_cards_rank_by_mean_paired_difference_and_reduced_runs_are_listed_apart():
    cards = [
        _card("greedy", {"random": 40.0, "greedy": 0.0, "expert": -10.0}),  # mean 10
        _card("search", {"random": 50.0, "greedy": 12.0, "expert": 8.0}),  # mean 23.33
        _card("random", {"random": 0.0, "greedy": -40.0, "expert": -50.0}),  # mean -30
        _card("quick", {"random": 90.0, "greedy": 90.0, "expert": 90.0}, full=False),
    ]
    rows = standings(cards, "2")
    assert [r["candidate"] for r in rows] == ["search", "greedy", "random"]
    assert rows[0]["mean_paired_difference"] == pytest.approx((50 + 12 + 8) / 3)
    text = render_leaderboard(cards)
    ranked = [line for line in text.splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")]
    assert "`search`" in ranked[0] and "`greedy`" in ranked[1]
    assert "+23.33" in ranked[0]
    assert "58.0 [53.0, 63.0]" in ranked[0]  # its win rate against expert: 0.5 + 8 / 100
    assert "Reduced runs, not ranked: `quick`" in text
    assert "| `quick`" not in text


def test_cards_that_do_not_compare_or_were_edited_are_refused_in_one_line(tmp_path):
    with pytest.raises(BenchmarkError, match="differ in env_version"):
        render_leaderboard([_card("a", {"random": 1.0}), _card("b", {"random": 1.0}, env_version=4)])
    with pytest.raises(BenchmarkError, match="differ in rules at 2 players"):
        render_leaderboard([_card("a", {"random": 1.0}), _card("b", {"random": 1.0}, bonus=5)])
    edited = _card("greedy", {"random": 40.0})
    edited = copy.deepcopy(edited)
    edited["tables"]["2"]["opponents"]["random"]["wins"] = 399
    path = tmp_path / "card.json"
    path.write_text(json.dumps(edited))
    with pytest.raises(BenchmarkError, match="do not match its body_sha256") as err:
        read_card(path)
    assert "\n" not in str(err.value)
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(BenchmarkError, match="not a quiddler-benchmark-card"):
        read_card(tmp_path / "other.json")


def test_a_card_of_one_table_sits_beside_cards_of_every_table():
    both = _card("greedy", {"random": 40.0}, tables=("2", "4"))
    zoo = _card("zoo:champion-2p", {"random": 60.0}, tables=("2",))
    zoo["stamp"]["full"] = False  # as run_benchmark stamps a card of fewer tables than the protocol's
    zoo["body_sha256"] = body_sha256(zoo)
    text = render_leaderboard([both, zoo])
    two, four = text.split("### 4 players")
    assert "| 1 | `zoo:champion-2p`" in two and "| 2 | `greedy`" in two
    assert "| 1 | `greedy`" in four and "champion" not in four


def test_the_command_prints_the_table_of_the_cards_it_is_given(tmp_path, capsys):
    for card in (_card("greedy", {"random": 40.0}), _card("expert", {"random": 45.0})):
        folder = tmp_path / "v1" / card["stamp"]["candidate"]
        folder.mkdir(parents=True)
        (folder / "card.json").write_text(json.dumps(card))
    cards = committed_cards("v1", tmp_path)
    assert [c["stamp"]["candidate"] for c in cards] == ["expert", "greedy"]
    assert main([str(p) for p in sorted((tmp_path / "v1").glob("*/card.json"))]) == 0
    out = capsys.readouterr().out
    assert "| 1 | `expert`" in out and "| 2 | `greedy`" in out
    assert main([str(tmp_path / "missing.json")]) == 2
    assert "cannot be read" in capsys.readouterr().err


def test_the_docs_leaderboard_shows_every_committed_full_card():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = hooks.on_page_markdown("<!-- table:leaderboard-v1 -->", None, None, None)
    cards = committed_cards("v1", ROOT / "benchmarks" / "cards")
    for card in cards:
        name = f"`{card['stamp']['candidate']}`"
        assert name in page
        if card["stamp"]["full"]:
            assert f"`{card['body_sha256'][:16]}`" in page
    assert "<!-- table:" not in page


def test_the_readmes_table_is_the_leaderboards_at_two_players():
    board = render_leaderboard(committed_cards("v1", ROOT / "benchmarks" / "cards")).split("### 4 players")[0]
    readme = (ROOT / "README.md").read_text()
    rows = [line for line in readme.splitlines() if line.startswith("| ") and line[2].isdigit() and "| `" in line]
    assert len(rows) == len([line for line in board.splitlines() if line.startswith("| ") and line[2].isdigit()])
    for row in rows:  # the README keeps the columns up to the mean paired difference
        assert any(line.startswith(row.rstrip(" |")) for line in board.splitlines()), row
