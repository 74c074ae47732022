"""The spread of round scores between two seats: what `search:win=true` reads the rounds to come as.

    python benchmarks/round_spread.py [--players 2] [--agent expert] [--games 1000] [--seed 1000]

Plays `--games` games of `--agent` in every seat and prints, per hand size, the mean and the standard
deviation of (seat 0's round score - another seat's), over every other seat, then the spread over all rounds.
`quiddler_agents.search.ROUND_SPREAD` is this figure for players of like strength (2 and 4 players, the
expert and the search bot: 11 to 15 points a round). Prints the constant beside it; asserts nothing.
"""

from __future__ import annotations

import argparse

import numpy as np

from quiddler_agents import registry
from quiddler_agents.arena import play_game
from quiddler_agents.search import ROUND_SPREAD
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame


def round_differences(num_players: int, spec: str, games: int, seed: int) -> dict[int, np.ndarray]:
    """Per hand size: seat 0's round score minus each other seat's, over `games` games of `spec` in every seat
    (deals from `seed`, `seed + 1`, ...)."""
    config = QuiddlerConfig(num_players=num_players)
    agents = [registry.make(spec, seed=seed + k, num_players=num_players) for k in range(num_players)]
    differences: dict[int, list[int]] = {}
    for g in range(games):
        game = QuiddlerGame(config)
        play_game(agents, seed=seed + g, game=game)
        for hand_size, results in zip(config.hand_sizes, game.round_history, strict=True):
            score = {r.player: r.round_score for r in results}
            differences.setdefault(hand_size, []).extend(score[0] - score[k] for k in range(1, num_players))
    return {size: np.asarray(d, dtype=np.float64) for size, d in differences.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--agent", default="expert")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1000)
    args = parser.parse_args(argv)
    differences = round_differences(args.players, args.agent, args.games, args.seed)
    print(f"{args.games} games of {args.agent} at {args.players} players: seat 0's round score minus another's")
    print("cards   mean  spread")
    for size, d in sorted(differences.items()):
        print(f"{size:5d} {d.mean():6.2f} {d.std():7.2f}")
    every = np.concatenate(list(differences.values()))
    print(f"all   {every.mean():6.2f} {every.std():7.2f}   (ROUND_SPREAD: {ROUND_SPREAD:g})")


if __name__ == "__main__":
    main()
