"""The game's compiled kernels, made ready before a run trains: compiled by numba on a machine's first run
(minutes on 2 cores), read from numba's cache on disk afterwards (about a second).

numba compiles a kernel when it is first called. Left to itself, a run's first minutes would go to
compiling in whatever phase first calls each kernel (the imitation's first game, the vector env's first
reset, the first evaluation), with nothing on the screen to say so. `compile_kernels` calls them all at
once, up front, so that the run can say what it is doing and how long it took.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .config import RunConfig


def kernel_counts() -> tuple[int, int]:
    """(compiled, read from the cache): the package's kernel compilations so far in this process."""
    from numba.core.dispatcher import Dispatcher

    compiled = cached = 0
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("quiddler_env"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, Dispatcher) and value.__module__ == name:
                stats = value.stats
                compiled += sum(stats.cache_misses.values())
                cached += sum(stats.cache_hits.values())
    return compiled, cached


class _FirstLegal:
    """A stand-in for the learner's policy at an evaluation table: a Python player on the batched engine."""

    def reset(self, seed: Any = None) -> None:
        pass

    def act(self, observation: np.ndarray, mask: np.ndarray) -> int:
        return int(np.flatnonzero(mask)[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.asarray([np.flatnonzero(mask)[0] for mask in masks], dtype=np.int64)


def compile_kernels(cfg: RunConfig, say: Callable[[str], None] | None = None) -> tuple[int, int]:
    """Play a little of everything a run plays, so that every kernel it calls is compiled (or read from the cache)
    now; returns how many were (compiled, read from the cache).

    A game of the single-game env with the Python bots and the run's observation features (the imitation's
    games, the bots' solver); a round of each of the run's other agents (the opponents, the evaluation bots,
    the teacher); an evaluation table on the batched engine (a Python player with the compiled
    bots); and a few steps of the batched vector env, with its opponents named and mixed (the training games
    of `train.vec_env: batched`). `say` gets a line after each part that compiled something.
    """
    from quiddler_env.core.game import QuiddlerGame
    from quiddler_env.core.observation import encode_observation
    from quiddler_env.envs.common import OpponentMix, env_option_names
    from quiddler_env.envs.gym_env import QuiddlerEnv
    from quiddler_env.envs.vector_env import QuiddlerVectorEnv
    from quiddler_env.wrappers import FeaturesGym, FeaturesVector

    from ..evaluation.tournament import Tournament, play_all
    from ..registry import make
    from .config import eval_specs

    first = kernel_counts()
    part = {"counts": first, "t0": time.perf_counter()}

    def part_done(what: str) -> None:
        counts = kernel_counts()
        if say is not None and counts[0] > part["counts"][0]:
            say(f"kernels: {what} compiled ({time.perf_counter() - part['t0']:.0f} s)")
        part.update(counts=counts, t0=time.perf_counter())

    rules = cfg.rules
    n = rules.num_players
    options = cfg.env_options
    features = cfg.algo.observation_features
    rng = np.random.default_rng(0)

    env = QuiddlerEnv(rules, opponents=[make("greedy", config=rules, seed=i) for i in range(n - 1)], **options)
    env = FeaturesGym(env, features) if features else env
    env.reset(seed=0)
    over = False
    while not over:
        legal = np.flatnonzero(env.unwrapped.action_masks())
        _, _, terminated, truncated, _ = env.step(int(rng.choice(legal)))
        over = terminated or truncated
    env.close()
    part_done("the single-game engine, the solver and the observation features")

    # The run's other agents (opponents, evaluation bots, the teacher): a round each, in seat 0 against greedy.
    specs = {o.spec for o in cfg.opponents} | {spec for _, spec in eval_specs(cfg)} | {cfg.pretrain.teacher}
    game = QuiddlerGame(rules)
    for spec in sorted(s for s in specs if s and s not in ("random", "greedy")):
        players = [make(spec, config=rules, seed=0)]
        players += [make("greedy", config=rules, seed=i) for i in range(1, n)]
        game.reset(0)
        while not game.is_over:
            p = game.current_player
            if game.step(players[p].act(encode_observation(game, p), game.legal_action_mask())) is not None:
                break  # the round is over
    part_done("the run's agents")

    seats = ("greedy", *("random",) * (n - 2))
    tournament = Tournament(("policy", *seats), games=1, seed=0, rules=rules)
    play_all(tournament, [_FirstLegal(), *(make(spec, config=rules) for spec in seats)])
    part_done("the batched engine's evaluation table")

    if cfg.train.vec_env == "batched":
        known = env_option_names("vector")
        vector_options = {k: v for k, v in options.items() if k in known}
        for opponents in ("greedy", OpponentMix([("random", 1.0), ("greedy", 1.0)])):
            venv = QuiddlerVectorEnv(2, rules, opponents=opponents, autoreset_mode="SameStep", **vector_options)
            venv = FeaturesVector(venv, features) if features else venv
            _, infos = venv.reset(seed=0)
            for _ in range(8):
                actions = [int(rng.choice(np.flatnonzero(mask))) for mask in infos["action_mask"]]
                _, _, _, _, infos = venv.step(np.asarray(actions))
            venv.close()
        part_done("the batched vector env")
    last = kernel_counts()
    return last[0] - first[0], last[1] - first[1]
