"""Play Quiddler at the terminal against bots or a trained policy (`quiddler-play`).

    quiddler-play                                       # you against greedy
    quiddler-play --opponents expert random --seed 3
    quiddler-play --opponents policy:runs/quickstart
    python examples/play_human.py ...                   # the same, from a checkout

Type `help` at the prompt for the moves (`draw`, `take E`, `discard QU`,
`go out discarding M`, or a move number); `quit` or Ctrl-D leaves.
"""

from __future__ import annotations

import argparse
import sys

from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.envs.observation import encode_observation

from ..human import HumanAgent, HumanQuit
from ..registry import make


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="quiddler-play", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--opponents", nargs="+", default=["greedy"], help="agent specs, one per opponent seat")
    parser.add_argument("--seat", type=int, default=0, help="your seat (0 moves first in round 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=8, help="rounds to play (hand sizes 3, 4, ...)")
    args = parser.parse_args(argv)

    n = len(args.opponents) + 1
    try:
        config = QuiddlerConfig(num_players=n, hand_sizes=tuple(range(3, 3 + args.rounds)))
        if not 0 <= args.seat < n:
            raise ValueError(f"--seat {args.seat}: seats are 0..{n - 1}")
        bots = [
            make(spec, seed=args.seed + 1 + i, num_players=n, config=config) for i, spec in enumerate(args.opponents)
        ]
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    human = HumanAgent(seed=args.seed, num_players=n, config=config)
    seats = bots[: args.seat] + [human] + bots[args.seat :]
    game = QuiddlerGame(config)
    game.reset(seed=args.seed)
    try:
        while not game.is_over:
            p = game.current_player
            results = game.step(seats[p].act(encode_observation(game, p), game.legal_action_mask()))
            if results is not None:
                human.show_results(results, args.seat)
    except HumanQuit:
        print("\nGame left.")
        return 0
    winners = game.winners()
    verdict = "You win!" if winners == [args.seat] else ("A tie." if args.seat in winners else "You lose.")
    print(f"\nFinal totals: {game.totals}. {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
