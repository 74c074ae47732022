"""The training evaluations (`eval.opponents`): each entry a bot that fills the table, or a mixed table."""

from __future__ import annotations

from pathlib import Path

from quiddler_agents.training.config import load_run_config
from quiddler_agents.training.evaluation import evaluate_bundle

ROOT = Path(__file__).resolve().parents[1]
TABLE_4P = ROOT / "agents" / "zoo" / "table-4p"


def test_a_seat_list_seats_those_bots_beside_the_policy():
    cfg = load_run_config(
        ROOT / "configs/champion_4p.yaml",
        ["eval.games=8", "eval.opponents=[greedy, [greedy, greedy, greedy], [random, greedy, random]]"],
    )
    same, listed, mixed = evaluate_bundle(TABLE_4P, cfg, step=5)
    assert (same.opponent, listed.opponent, mixed.opponent) == (
        "greedy",
        "greedy+greedy+greedy",
        "random+greedy+random",
    )
    assert {r.step for r in (same, listed, mixed)} == {5} and {r.games for r in (same, listed, mixed)} == {8}
    # Three greedy seats written out are the same table as `greedy`: the same deals, the same games.
    figures = ("win_rate", "tie_rate", "mean_score", "mean_opponent_score", "mean_margin")
    assert [getattr(listed, k) for k in figures] == [getattr(same, k) for k in figures]
    # Two random seats (moves at random) pull the other seats' mean total below three greedy seats'.
    assert mixed.mean_opponent_score < same.mean_opponent_score - 20
