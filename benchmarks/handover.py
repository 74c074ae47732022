"""Where a player's gap to a bot lies: the player with the decisions of some kinds handed to a helper.

    python benchmarks/handover.py SPEC [--helper search] [--opponents search] [--kinds none go_out draw+go_out]
                                  [--deals 300] [--seed 4242]

Each `--kinds` item names a set of the coach's kinds of decision (`quiddler_agents.coach.KINDS`: draw, discard,
go_out, last_turn, lay, challenge), joined by `+`, or `none`. For each set, SPEC plays the same deals, every deal
with the table rotated through every seat, against `--opponents` (one spec for every other seat, or one per
seat); at its own decisions of the kinds in the set the helper moves instead (`go_out`: a discard where going out
is legal, that is whether to go out and on which card). It prints the share of games won (a tie for the top
counts half) and the points a game against the opponents' mean, with 95% intervals over deals: a kind whose
handover closes the gap is where the player loses to the helper. Asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import quiddler_agents  # noqa: E402
from quiddler_agents.arena import rotated_deal, seat_solver_of  # noqa: E402
from quiddler_agents.coach import KINDS, decision_kind  # noqa: E402
from quiddler_agents.evaluation.stats import mean_interval  # noqa: E402
from quiddler_env.core.config import QuiddlerConfig  # noqa: E402
from quiddler_env.core.game import QuiddlerGame  # noqa: E402


class Handover:
    """SPEC's player, but the helper moves at the decisions of `kinds` (read from the live game, `live`)."""

    def __init__(self, player, helper, kinds: frozenset[str]):
        self.player, self.helper, self.kinds = player, helper, kinds
        self.live: QuiddlerGame | None = None

    def reset(self, seed: int | None = None) -> None:
        self.player.reset(seed)
        self.helper.reset(seed)

    def act(self, observation, action_mask=None) -> int:
        mover = self.helper if decision_kind(self.live) in self.kinds else self.player
        return mover.act(observation, action_mask)

    def seat_solver(self):
        """The player's seat words (a bot's level), as the arena asks of an agent."""
        return seat_solver_of(self.player)


def parse_kinds(item: str) -> frozenset[str]:
    """`none` or `KIND+KIND...` as a set of kinds (SystemExit naming an unknown one)."""
    if item == "none":
        return frozenset()
    kinds = frozenset(item.split("+"))
    unknown = sorted(kinds - set(KINDS))
    if unknown:
        raise SystemExit(f"handover: unknown kind {unknown[0]!r} in {item!r}; kinds: {', '.join(KINDS)}")
    return kinds


def measure(spec: str, helper: str, opponents: list[str], kinds: frozenset[str], deals: int, seed: int) -> np.ndarray:
    """Per deal, the mean (win share, points minus the opponents' mean) of SPEC with `kinds` handed to `helper`."""
    rules = QuiddlerConfig(num_players=len(opponents) + 1)
    bot = Handover(
        quiddler_agents.make(spec, seed=seed, config=rules),
        quiddler_agents.make(helper, seed=seed, config=rules),
        kinds,
    )
    others = [quiddler_agents.make(other, seed=seed, config=rules) for other in opponents]
    out = np.zeros((deals, 2))
    for d in range(deals):  # the same seeds for every set of kinds
        results = rotated_deal(bot, others, seed + d, seed + 7919 * d, rules, partial(setattr, bot, "live"))
        out[d] = np.mean(results, axis=0)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec")
    parser.add_argument("--helper", default="search")
    parser.add_argument("--opponents", nargs="+", default=["search"], metavar="SPEC")
    parser.add_argument("--kinds", nargs="+", default=["none", "go_out", "draw"], metavar="KIND[+KIND]")
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--seed", type=int, default=4242)
    args = parser.parse_args(argv)
    sets = [(item, parse_kinds(item)) for item in args.kinds]
    warnings.simplefilter("ignore")  # a zoo bundle's env-version note, once per load
    n = len(args.opponents) + 1
    print(
        f"{args.spec} against {' '.join(args.opponents)}, kinds handed to {args.helper}: {args.deals} deals, {args.deals * n} games each"
    )
    print(f"{'handed over':28s} {'won':>24s} {'points a game':>28s} {'seconds':>8s}")
    for item, kinds in sets:
        start = time.perf_counter()
        out = measure(args.spec, args.helper, args.opponents, kinds, args.deals, args.seed)
        won, points = mean_interval(out[:, 0]), mean_interval(out[:, 1])
        print(
            f"{item:28s} {won.estimate:8.1%} [{won.low:.1%}, {won.high:.1%}] "
            f"{points.estimate:+10.2f} [{points.low:+.2f}, {points.high:+.2f}] {time.perf_counter() - start:8.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
