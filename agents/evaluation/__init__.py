"""Evaluating policies: tournaments with rotated seats and duplicate deals, intervals, ratings, reports.

    from quiddler_agents.evaluation import Tournament, run_tournament, summarize

    t = Tournament(("expert", "greedy", "random"), games=300, seed=0)
    played = run_tournament(t, workers=2)
    figures = summarize(t, played)

`evaluate.py` at the repository root is the command line over this package.

- `tournament`: the schedule (matchups, seat rotations, duplicate deals), seeds, playing games in parallel.
- `stats`: Wilson, t, clustered and Welch intervals; OpenSkill ratings.
- `summary`: the figures per player and per pair from the played games.
- `report`: results.json, games.csv, report.md, PNG plots, games.jsonl; a run written into its folder whole.
- `replay`: print a saved game turn by turn.
- `benchmark`: the versioned benchmark (`BENCHMARKS`), its shipped deal files (`deals/`) and score card.
"""

from .replay import ReplayError, read_game, replay_game
from .stats import Interval, clustered_mean_interval, mean_interval, t_quantile, welch_interval, wilson_interval
from .summary import summarize
from .tournament import PlayedGame, Tournament, TournamentError, run_tournament

__all__ = [
    "Interval",
    "PlayedGame",
    "ReplayError",
    "Tournament",
    "TournamentError",
    "clustered_mean_interval",
    "mean_interval",
    "read_game",
    "replay_game",
    "run_tournament",
    "summarize",
    "t_quantile",
    "welch_interval",
    "wilson_interval",
]
