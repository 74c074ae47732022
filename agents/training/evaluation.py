"""Periodic evaluation of a run's policy, played through `evaluate.py`'s own game loop, and the best-model rule.

The policy (an exported bundle, loaded like any `policy:` agent) sits at a table with
`num_players - 1` copies of each `eval.opponents` bot, or, for an entry that lists one spec
per other seat, at that mixed table. The games are a `Tournament`
of `quiddler_agents.evaluation` (seats rotated, deals duplicated, each deal from `eval.seed`),
played by `play_scheduled_game`, so every evaluation of a run plays the same deals and
a figure here means what it means in `evaluate.py`'s report.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .config import RunConfig


@dataclass(frozen=True)
class EvalRow:
    """The policy against one bot: a row of eval.csv."""

    step: int
    opponent: str
    """The bot filling the other seats, or a mixed table's specs joined by '+' (`expert+greedy+greedy`)."""
    games: int
    win_rate: float
    tie_rate: float
    loss_rate: float
    mean_score: float
    """The policy's mean final total."""
    mean_opponent_score: float
    """The mean final total of the other seats."""
    mean_margin: float
    """The policy's total minus the best other total, averaged."""
    seconds: float
    challenges_made: int | None = None
    """The challenge variant: challenges the policy made (None otherwise, and then not in eval.csv)."""
    challenge_success: float | None = None
    """The challenge variant: the share of them that won (the word failed)."""
    run_seconds: float | None = None
    """The run's wall time when these games began (`RunSession.run_seconds`); None outside a run."""

    def as_dict(self) -> dict[str, Any]:
        """The row's figures; the optional ones (challenges, run_seconds) only where they were measured."""
        return {k: v for k, v in asdict(self).items() if v is not None or k not in _OPTIONAL}


_OPTIONAL = ("challenges_made", "challenge_success", "run_seconds")


def best_score(rows: list[EvalRow]) -> tuple[float, float]:
    """The best-model rule: the mean over opponents of (win rate + half the tie rate), then the mean margin."""
    return (
        float(np.mean([r.win_rate + 0.5 * r.tie_rate for r in rows])),
        float(np.mean([r.mean_margin for r in rows])),
    )


def evaluate_bundle(bundle: Path, cfg: RunConfig, step: int, run_seconds: float | None = None) -> list[EvalRow]:
    """Play the bundle at `bundle` at each `eval.opponents` table for `eval.games` games (whole deals); every
    row records `run_seconds`, the run's clock when the evaluation began."""
    from ..evaluation.tournament import Tournament, play_all, seat_figures
    from ..policies import load_policy
    from ..registry import make
    from .config import eval_tables

    rules = cfg.rules
    learner = load_policy(bundle, config=rules, deterministic=cfg.eval.deterministic)
    rows = []
    for name, seats in eval_tables(cfg):
        t0 = time.perf_counter()
        tournament = Tournament(("policy", *seats), games=cfg.eval.games, seed=cfg.eval.seed, rules=rules)
        bots = [make(spec, config=rules) for spec in seats]
        f = seat_figures(play_all(tournament, [learner, *bots]), 0)  # the policy is pool player 0
        games = f["games"]
        rows.append(
            EvalRow(
                step=int(step),
                opponent=name,
                games=games,
                win_rate=f["wins"] / games,
                tie_rate=f["ties"] / games,
                loss_rate=1 - (f["wins"] + f["ties"]) / games,
                mean_score=f["mean_total"],
                mean_opponent_score=f["mean_others"],
                mean_margin=f["mean_margin"],
                seconds=time.perf_counter() - t0,
                run_seconds=run_seconds,
                **(
                    {
                        "challenges_made": f["challenges_made"],
                        "challenge_success": f["challenges_won"] / f["challenges_made"]
                        if f["challenges_made"]
                        else 0.0,
                    }
                    if rules.challenges
                    else {}
                ),
            )
        )
    return rows
