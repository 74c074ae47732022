"""Compile the package's numba kernels once into their on-disk cache (`quiddler_env.core.kernel_cache`), before
`pytest -n 2` starts: each xdist worker then loads the kernels it needs rather than compiling them. It plays a
few games of each kernel family, the plain rules and the challenge variant (whose word tables `tables` have one more
member, so every kernel that takes them compiles a second time). Rules with `vocabularies` and no challenges take the
variant's tables (the challenge phase is off at run time), so the variant's stage compiles theirs too: the same
signatures. Run by .ci/run; prints each stage's seconds."""

from __future__ import annotations

import sys
import time

import numpy as np

from quiddler_env.core.batch import BatchGame
from quiddler_env.core.config import QuiddlerConfig

PLAIN = QuiddlerConfig(hand_sizes=[3, 4])
CHALLENGE = QuiddlerConfig(
    hand_sizes=[3, 4], challenges=True, layout="choose", vocabularies=["referee", "enable:0.5:1"]
)


def timed(name, fn):
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    print(f"warm_kernels: {name}: {time.perf_counter() - start:.1f} s ({time.process_time() - cpu:.1f} s cpu)")
    sys.stdout.flush()


def batch_games(config):
    def run():
        batch = BatchGame(config, num_games=2)
        batch.reset(seed=0)
        rng = np.random.default_rng(0)
        while not batch.is_over.all():
            games = np.flatnonzero(~batch.is_over)
            masks = batch.action_masks(games)
            batch.step(np.asarray([rng.choice(np.flatnonzero(m)) for m in masks]), games)
            batch.observe(np.zeros(len(games), dtype=np.int64), games)
        batch.game(0)
        # The compiled bots' entry points, with the code arrays' dtypes the engine (int8) and tests (int64) pass.
        for dtype in (np.int64, np.int8):
            batch.reset(seed=1)
            batch.bot_actions(batch.all_games, np.zeros(2, dtype=np.int64))
            bots = np.ones((2, config.num_players), dtype=dtype)  # greedy at every seat
            batch.play_bots(batch.all_games, bots, np.zeros(2, dtype=np.int64))

    return run


def vector_env(config, opponents):
    def run():
        from quiddler_env.envs.vector_env import QuiddlerVectorEnv

        env = QuiddlerVectorEnv(num_envs=2, config=config, opponents=opponents)
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in range(60):
            env.step(np.asarray([rng.choice(np.flatnonzero(m)) for m in env.action_masks()]))

    return run


class FirstLegal:
    """A Python policy seat (the first legal move): the vector env's step then waits on it and ends in
    `finish_steps`, which the compiled opponents never reach (training's opponent mixes do)."""

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[0])


def features():
    from quiddler_env.envs.vector_env import QuiddlerVectorEnv
    from quiddler_env.features import ObservationFeatures

    env = QuiddlerVectorEnv(num_envs=2, config=PLAIN, opponents="greedy")
    obs, _ = env.reset(seed=0)
    for name in ("solver_v1", "solver_v2"):
        ObservationFeatures(name, PLAIN).batch(obs)


def solitaire():
    from quiddler_env.core.solitaire import SolitaireGame

    game = SolitaireGame()
    game.reset(seed=0)


def warm(variant: str) -> None:
    config = {"plain": PLAIN, "challenge": CHALLENGE}[variant]
    timed(f"{variant}: batch engine", batch_games(config))
    for opponents in ("random", "greedy", FirstLegal()):
        name = opponents if isinstance(opponents, str) else "Python policy"
        timed(f"{variant}: vector env, {name} opponents", vector_env(config, opponents))
    if variant == "plain":
        timed("plain: observation features", features)
        timed("plain: solitaire", solitaire)


if __name__ == "__main__":
    # `plain` and `challenge` compile mostly different signatures: .ci/run runs one process for each, side by side.
    start = time.perf_counter()
    variants = sys.argv[1:] or ["plain", "challenge"]
    for variant in variants:
        warm(variant)
    print(f"warm_kernels: {' and '.join(variants)}: {time.perf_counter() - start:.1f} s in all")
