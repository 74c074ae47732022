"""What knowing the opponents' hidden cards is worth to a search bot: the ceiling of any reading of their moves.

    python benchmarks/hidden_cards.py [SPEC] [--opponents SPEC [SPEC ...]] [--deals 1000] [--players N] [--seed 0]

`search` and `guided` deal the cards they cannot see at random (`quiddler_agents.search`); `reads=true` weighs
those deals by what the neighbours' last moves say. However good a reading, it cannot beat knowing: this script
plays SPEC (a `search` or `guided` spec) twice on the same deals against `--opponents` (one spec for every other
seat, or one per seat in the order they sit after the bot), once as it is and once *sighted*, its
determinizations holding the opponents' true hands (the draw pile still dealt at random from the rest). Each deal
is played with the table rotated through every seat. It prints, for both, the share of games
won (a tie for the top counts half) and the points a game against the opponents' mean, with 95% intervals over
deals, and the sighted bot's gain per deal. The sighted bot reads the live game: it is a measuring device, not a
player. Asserts nothing.
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
from quiddler_agents.arena import rotated_deal  # noqa: E402
from quiddler_agents.evaluation.stats import mean_interval  # noqa: E402
from quiddler_agents.search import SearchAgent  # noqa: E402
from quiddler_env.core.cards import NUM_FACES  # noqa: E402
from quiddler_env.core.config import QuiddlerConfig  # noqa: E402


def sighted(bot: SearchAgent) -> SearchAgent:
    """The same bot, its determinizations holding the hidden hands of the game in `bot.live` (set per game)."""
    dealt_at_random = bot._determinize

    def determinize(seat, turns, batch):
        game = dealt_at_random(seat, turns, batch)
        n, me = bot.num_players, bot.live.current_player
        hands = [list(game.hands[0])] + [list(bot.live.hands[(me + k) % n]) for k in range(1, n)]
        # The draw pile: the unseen cards less the opponents' hidden ones (their taken cards are not unseen).
        rest = np.asarray(seat.unseen, dtype=np.int64)
        for k in range(1, n):
            rest -= np.asarray(hands[k]) - np.asarray(seat.opponent_taken[k - 1])
        draw_pile = np.repeat(np.arange(NUM_FACES), rest)
        bot.rng.shuffle(draw_pile)
        game.hands, game.draw_pile = hands, draw_pile.tolist()
        return game

    bot._determinize = determinize  # the instance's own: `_rollouts` calls it for every deal
    bot.live = None
    return bot


def measure(spec: str, opponents: list[str], deals: int, seed: int) -> dict[str, np.ndarray]:
    """Per deal, the mean win share and points of SPEC as it is ("plain") and sighted ("sighted")."""
    players = len(opponents) + 1
    rules = QuiddlerConfig(num_players=players)
    bots = {kind: quiddler_agents.make(spec, seed=seed, config=rules) for kind in ("plain", "sighted")}
    if not isinstance(bots["plain"], SearchAgent):
        raise SystemExit(f"hidden_cards: {spec!r} is not a search bot (search, guided)")
    bots["sighted"] = sighted(bots["sighted"])
    opponents = [quiddler_agents.make(other, seed=seed, config=rules) for other in opponents]
    out = {kind: np.zeros((deals, 2)) for kind in bots}
    for d in range(deals):
        for kind, bot in bots.items():  # the same seeds for both kinds
            before = partial(setattr, bot, "live") if kind == "sighted" else None
            results = rotated_deal(bot, opponents, seed + d, seed + 7919 * d, rules, before)
            out[kind][d] = np.mean(results, axis=0)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", nargs="?", default="search")
    parser.add_argument("--opponents", nargs="+", default=["search"], metavar="SPEC")
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--players", type=int, help="the table (default: the bot and the opponents named)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # a zoo bundle's env-version note, once per load
    opponents = args.opponents
    if args.players is not None:
        if len(opponents) == 1:
            opponents = opponents * (args.players - 1)
        elif len(opponents) != args.players - 1:
            parser.error(
                f"--players {args.players} takes one opponent spec or {args.players - 1}, not {len(opponents)}"
            )
    start = time.perf_counter()
    out = measure(args.spec, opponents, args.deals, args.seed)
    players = len(opponents) + 1
    games = args.deals * players
    print(f"{args.spec} against {' '.join(opponents)}: {args.deals} deals, {games} games each")
    print(f"{'':8s} {'won':>24s} {'points a game':>28s}")
    for kind in ("plain", "sighted"):
        won, points = mean_interval(out[kind][:, 0]), mean_interval(out[kind][:, 1])
        print(
            f"{kind:8s} {won.estimate:8.1%} [{won.low:.1%}, {won.high:.1%}] "
            f"{points.estimate:+10.2f} [{points.low:+.2f}, {points.high:+.2f}]"
        )
    gain_won = mean_interval(out["sighted"][:, 0] - out["plain"][:, 0])
    gain_points = mean_interval(out["sighted"][:, 1] - out["plain"][:, 1])
    print(
        f"{'gain':8s} {gain_won.estimate:+8.1%} [{gain_won.low:+.1%}, {gain_won.high:+.1%}] "
        f"{gain_points.estimate:+10.2f} [{gain_points.low:+.2f}, {gain_points.high:+.2f}]"
    )
    print(f"{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
