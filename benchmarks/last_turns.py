"""How well a player plays its last turns: the discard after an opponent went out, which decides what it lays.

    python benchmarks/last_turns.py SPEC [SPEC ...] [--opponent expert] [--games 300] [--seed 0]

Plays `--games` 2-player games of each SPEC against `--opponent` (seats alternating) and, at every last-turn
discard of SPEC's seat with a choice, compares its move with the solver's best layouts (`solver_v1`'s figures
for each discard: the one that lays the most points net of the cards left) and with the expert's move in the
same position. Prints per SPEC: the last-turn discards, the share that keep a best layout by the solver's
count, the share equal to the expert's, and the mean points a discard gives up against the best layout.
The expert weighs the longest-word bonus too, so it keeps a best layout by the count alone about 88% of the
time. Asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import quiddler_agents  # noqa: E402
from quiddler_agents.base import SeatView  # noqa: E402
from quiddler_env.core import actions as A  # noqa: E402
from quiddler_env.core.config import QuiddlerConfig  # noqa: E402
from quiddler_env.core.game import QuiddlerGame  # noqa: E402
from quiddler_env.core.observation import encode_observation  # noqa: E402
from quiddler_env.features import SCORE_SCALE, ObservationFeatures  # noqa: E402


def last_turn_figures(spec: str, opponent: str, games: int, seed: int) -> dict[str, float]:
    """The last-turn discards of `spec` against `opponent` and how they compare (see the module docstring)."""
    import torch

    torch.set_num_threads(1)
    rules = QuiddlerConfig()
    features = ObservationFeatures("solver_v1", rules)
    player = quiddler_agents.make(spec, seed=seed, config=rules)
    other = quiddler_agents.make(opponent, seed=seed + 1, config=rules)
    expert = quiddler_agents.make("expert", seed=seed + 2, config=rules)
    decisions = best = agree = 0
    given_up = 0.0
    for g in range(games):
        game = QuiddlerGame(rules)
        game.reset(seed + g)
        seats = (player, other) if g % 2 == 0 else (other, player)
        while not game.is_over:
            p = game.current_player
            obs, mask = encode_observation(game, p), game.legal_action_mask()
            move = seats[p].act(obs, mask)
            seat = SeatView.decode(obs, 2)
            if seats[p] is player and seat.final_turn and seat.phase == "discard" and mask.sum() > 1:
                solver = features.batch(obs[None].astype(np.float32))[0][obs.shape[0] :]
                # A discard's layout, net of the cards left; a go-out discarding f has the same hand left.
                value = {
                    int(a): float(solver[8 + 4 * A.discarded_face(int(a))]) * SCORE_SCALE
                    for a in np.flatnonzero(mask)
                    if a >= A.DISCARD_BASE
                }
                top = max(value.values())
                decisions += 1
                best += value[move] >= top - 1e-6
                given_up += top - value[move]
                agree += move == expert.act(obs, mask)
            game.step(move)
    n = max(decisions, 1)
    return {"decisions": decisions, "best": best / n, "expert": agree / n, "points_given_up": given_up / n}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", metavar="SPEC")
    parser.add_argument("--opponent", default="expert")
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # a zoo bundle's env-version note, once per load
    print(f"{args.games} games against {args.opponent}, seed {args.seed}: last-turn discards")
    print(f"{'player':50s} {'discards':>8s} {'best layout':>11s} {'= expert':>8s} {'points given up':>15s}")
    for spec in args.specs:
        f = last_turn_figures(spec, args.opponent, args.games, args.seed)
        print(
            f"{spec:50s} {f['decisions']:8d} {f['best']:11.1%} {f['expert']:8.1%} {f['points_given_up']:15.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
