"""The OpenSpiel game `python_quiddler` against the AEC env, side by side: agent steps per second of random play.

    python benchmarks/bench_openspiel_game.py [--seconds 5] [--rounds 3] [--players 2]

Both play full default games with uniform random legal moves, for about `--seconds` each,
`--rounds` times in turn (so load on a shared machine falls on both), in this one process:

- `python_quiddler`: `state.apply_action` with a random legal move, chance outcomes sampled
  by their probabilities (not counted as steps); at each decision it reads what an agent
  reads, `observation_tensor` of the player to move and `legal_actions`.
- `quiddler_env.env()`: `last()` (the observation dict with its mask) and `step`.

Prints each one's median agent steps per second and the ratio. Needs the openspiel extra.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import quiddler_env  # noqa: E402


def openspiel_rate(seconds: float, players: int, seed: int) -> tuple[float, int]:
    """Agent steps per second of random play through `python_quiddler`, and the games played."""
    import pyspiel

    from quiddler_env.envs import openspiel  # registers python_quiddler (a one-line error without the extra)

    game = pyspiel.load_game(openspiel.SHORT_NAME, {"players": players})
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(outcomes[rng.choice(len(outcomes), p=probs)])
                continue
            state.observation_tensor(state.current_player())
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            steps += 1
        games += 1
    return steps / (time.perf_counter() - start), games


def aec_rate(seconds: float, players: int, seed: int) -> tuple[float, int]:
    """Agent steps per second of random play through `quiddler_env.env()`, and the games played."""
    env = quiddler_env.env(num_players=players)
    rng = np.random.default_rng(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=int(rng.integers(2**31)))
        for _agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[int(rng.integers(legal.size))]))
            steps += 1
        games += 1
    return steps / (time.perf_counter() - start), games


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--players", type=int, default=2)
    args = parser.parse_args(argv)
    openspiel_rate(0.5, args.players, 0)  # warm up both: the solver's tables, numba's kernels
    aec_rate(0.5, args.players, 0)
    rates: dict[str, list[float]] = {"python_quiddler": [], "quiddler_env.env()": []}
    games = dict.fromkeys(rates, 0)
    for r in range(args.rounds):
        for name, fn in (("python_quiddler", openspiel_rate), ("quiddler_env.env()", aec_rate)):
            rate, played = fn(args.seconds, args.players, r + 1)
            rates[name].append(rate)
            games[name] += played
    print(f"random play, {args.players} players, agent steps/s (median of {args.rounds} x {args.seconds:g} s)")
    print("| what | agent steps/s | games | runs |")
    print("|---|---|---|---|")
    for name, values in rates.items():
        runs = ", ".join(f"{v:,.0f}" for v in values)
        print(f"| `{name}` | {statistics.median(values):,.0f} | {games[name]} | {runs} |")
    ratio = statistics.median(rates["quiddler_env.env()"]) / statistics.median(rates["python_quiddler"])
    print(f"the AEC env is {ratio:.2f}x the OpenSpiel Python game")
    return 0


if __name__ == "__main__":
    sys.exit(main())
