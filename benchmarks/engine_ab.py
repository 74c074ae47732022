"""The engine alone, this checkout's against an earlier commit's, interleaved in one process.

    python benchmarks/engine_ab.py [--base HEAD] [--rounds 10] [--deals 2] [--games 1024] [--go-out HANDS]
                                   [--vector STEPS]

The development machine is shared: its speed moves by 10-30% within minutes, more than many
changes gain, so two runs one after the other compare the machine as much as the code. This
script loads both engines in one process (the base commit's `quiddler_env` exported with `git
archive` into a temporary folder under another name; the engine's modules import each other
relatively) and times them alternately: every round plays the same deals of `--games` games, every
seat a compiled random bot (`BatchGame.play_bots`, as `bench_vector.py`'s "engine alone" row), on one
core, each round in the other order than the last. Both trees are compiled afresh, in a numba cache
of the run's own (a warm cache could hold stale copies of the kernels a kernel calls from another
file; see the comment below the imports), so the first minute or two is compiling. Prints each
side's microseconds per learner step (a learner step: moves / players), the best and the median of
the rounds, and the median of the per-round ratios, and whether both trees played the same games
(the final state of the warm-up deal, by name: `SAME_STATE`). `--go-out HANDS` also times the learner's mask search
alone (`solver_kernel.go_out_face_bits_in`: which discards of a hand after a draw go out) on HANDS
random dealt hands of each size, 4 to 11 cards, the two trees alternately, the best of 5 passes each,
and checks that both answer the same. `--vector STEPS` also times each tree's vector env (`Quiddler-v0`'s
`QuiddlerVectorEnv`, `--games` games, random opponents, a uniformly random legal learner as in
`bench_vector.py`), STEPS steps a round from the same reset and the same learner draws, the rounds
alternating as above; it checks that both trees' envs return the same observations. `--single SECONDS` also
times each tree's `Quiddler-v0` (random opponents, the same random learner) for SECONDS a round, alternately,
and with `--vector` prints this checkout's vector env against both trees' `Quiddler-v0` (`bench_vector.py`'s
ratio, with the base's single env as the anchor too). Needs git and a checkout; asserts nothing.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Both trees compiled afresh, into a numba cache of this run's own. Before 0.8.9 (`core/kernel_cache.py`) the
# checkout's warm cache kept, in the engine's kernels, the code of the solver kernels they call as it was when
# cached: an edit to `solver_kernel.py` alone was not timed at all (a run "against HEAD" with the checkout
# at HEAD gave 0.965-0.978: its cache still held the previous commit's front). A base older than 0.8.9 has the
# same blind spot in a cache of its own, so neither tree uses one that this run did not fill.
os.environ["NUMBA_CACHE_DIR"] = _CACHE = tempfile.mkdtemp(prefix="quiddler-ab-numba-")
atexit.register(shutil.rmtree, _CACHE, True)

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench_vector import measure_single, random_legal  # noqa: E402  (the benchmarks' random learner)

BASE_NAME = "quiddler_base"


def export_base(rev: str, into: Path) -> None:
    """The package `quiddler_env` of commit `rev`, as `into/quiddler_base`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "quiddler_env"], capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"engine_ab: cannot export quiddler_env at {rev!r}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    (into / "quiddler_env").rename(into / BASE_NAME)


SAME_STATE = (
    lambda g: g.hands(),
    lambda g: g.totals,
    lambda g: g.round_scores,
    lambda g: g.bonuses,
    lambda g: g.laid_figures,
    lambda g: g.rng,
    lambda g: g.reshuffles,
    lambda g: g.rounds_completed,
    lambda g: g.draw_pile_size,
)
"""What two trees' games must agree on to be the same games (`BatchGame`'s named state)."""


def us_per_learner_step(games, bots: np.ndarray, deals: int) -> float:
    moves = np.zeros(games.num_games, dtype=np.int64)
    start = time.perf_counter()
    for d in range(deals):
        games.reset(1000 + d)
        games.play_bots(games.all_games, bots, moves)
    return (time.perf_counter() - start) / (moves.sum() / games.num_players) * 1e6


def go_out_loop(solver_kernel):
    """A compiled loop of one tree's mask search over hands (rows of 31 face counts)."""
    search = solver_kernel.go_out_face_bits_in

    @njit(cache=False)
    def loop(hands, key_order, min_cards, e0, e1, e2, e3, term_cards, ws):
        bits = np.empty(hands.shape[0], np.int64)
        for k in range(hands.shape[0]):
            bits[k] = search(hands[k], key_order, min_cards, e0, e1, e2, e3, term_cards, False, ws)
        return bits

    return loop


def compare_go_out(packages: list[str], n_hands: int) -> None:
    """The mask's go-out search of each tree over the same random dealt hands, alternately, by hand size."""
    from quiddler_env.core.cards import COUNTS

    deck = np.repeat(np.arange(len(COUNTS)), COUNTS)
    rng = np.random.default_rng(12)
    sides = []
    for package in packages:
        kernels = importlib.import_module(f"{package}.core.batch_kernels")
        games = importlib.import_module(f"{package}.core.batch").BatchGame(num_games=1)
        # (a base tree from before the kernels' names were spelled out calls them S and R)
        S = games.tables if hasattr(games, "tables") else games.S
        rules = games.rules if hasattr(games, "rules") else games.R
        tables = (S[0], int(rules[kernels.R_MIN_CARDS]), S[1], S[2], S[3], S[4], S[7], S[8])
        sides.append((go_out_loop(importlib.import_module(f"{package}.core.solver_kernel")), tables))
    print(f"the mask's go-out search, {n_hands} random dealt hands a size, best of 5 passes, one core")
    print(f"{'cards':>5} {'base us':>8} {'checkout us':>11} {'base / checkout':>15}")
    for cards in range(4, 12):
        hands = np.zeros((n_hands, len(COUNTS)), np.int64)
        for h in hands:
            np.add.at(h, rng.choice(deck, size=cards, replace=False), 1)
        answers = [loop(hands, *tables) for loop, tables in sides]  # compiles and warms up
        if not np.array_equal(answers[0], answers[1]):
            raise SystemExit(f"engine_ab: the trees' go-out searches differ on hands of {cards} cards")
        best = [float("inf")] * len(sides)
        for _ in range(5):
            for j, (loop, tables) in enumerate(sides):
                start = time.perf_counter()
                loop(hands, *tables)
                best[j] = min(best[j], (time.perf_counter() - start) / n_hands * 1e6)
        print(f"{cards:>5} {best[0]:>8.2f} {best[1]:>11.2f} {best[0] / best[1]:>15.2f}")


def vector_round(envs, seed: int, steps: int) -> tuple[float, np.ndarray]:
    """Microseconds a learner step of `steps` vector env steps from `reset(seed)`, and the last observations."""
    rng = np.random.default_rng(seed)
    obs, infos = envs.reset(seed=seed)
    start = time.perf_counter()
    for _ in range(steps):
        obs, _, _, _, infos = envs.step(random_legal(rng, infos["action_mask"]))  # as bench_vector.measure_vector
    return (time.perf_counter() - start) / (steps * envs.num_envs) * 1e6, obs


def compare_vector(packages: list[str], labels: list[str], n_games: int, steps: int, rounds: int) -> list[float]:
    """Each tree's vector env, the same steps alternately (see the module docstring); returns the medians."""
    envs = [
        importlib.import_module(f"{package}.envs.vector_env").QuiddlerVectorEnv(num_envs=n_games)
        for package in packages
    ]
    finals = [vector_round(e, 0, 20)[1] for e in envs]  # compiles and warms up
    same = np.array_equal(finals[0], finals[1])
    times: list[list[float]] = [[], []]
    for r in range(rounds):
        for j in (0, 1) if r % 2 == 0 else (1, 0):
            times[j].append(vector_round(envs[j], 100 + r, steps)[0])
    print(f"vector env, {n_games} games, random opponents, {steps} steps a round, {rounds} rounds alternating")
    print(f"the same observations as the base (after the warm-up's steps): {'yes' if same else 'no'}")
    print(f"{'tree':<24} {'best':>8} {'median':>8}  (microseconds a learner step)")
    for label, t in zip(labels, times, strict=True):
        print(f"{label:<24} {min(t):>8.3f} {statistics.median(t):>8.3f}")
    ratios = [b / n for b, n in zip(*times, strict=True)]
    print(
        f"base / this checkout, per round: median {statistics.median(ratios):.3f}; this checkout faster in "
        f"{sum(r > 1 for r in ratios)} of {len(ratios)} rounds"
    )
    return [statistics.median(t) for t in times]


def compare_single(packages: list[str], labels: list[str], seconds: float, rounds: int) -> list[float]:
    """Each tree's `Quiddler-v0` (`gym_env.QuiddlerEnv`, random opponents), alternately; prints and returns the
    medians of microseconds a learner step."""
    envs = [importlib.import_module(f"{package}.envs.gym_env").QuiddlerEnv() for package in packages]
    for env in envs:
        measure_single(env, 1.0, 0)  # compiles and warms up
    times: list[list[float]] = [[], []]
    for r in range(rounds):
        for j in (0, 1) if r % 2 == 0 else (1, 0):
            times[j].append(1e6 / measure_single(envs[j], seconds, 100 + r))
    print(f"Quiddler-v0, random opponents, {seconds:g} s a round, {rounds} rounds alternating")
    print(f"{'tree':<24} {'best':>8} {'median':>8}  (microseconds a learner step)")
    for label, t in zip(labels, times, strict=True):
        print(f"{label:<24} {min(t):>8.3f} {statistics.median(t):>8.3f}")
    return [statistics.median(t) for t in times]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", default="HEAD", help="the commit to compare against (default: HEAD)")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--deals", type=int, default=2)
    p.add_argument("--games", type=int, default=1024)
    p.add_argument("--go-out", type=int, default=0, metavar="HANDS", help="also time the mask's go-out search")
    p.add_argument("--vector", type=int, default=0, metavar="STEPS", help="also time the vector env, STEPS a round")
    p.add_argument("--single", type=float, default=0, metavar="SECONDS", help="also time Quiddler-v0, SECONDS a round")
    args = p.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core, as bench_vector

    with tempfile.TemporaryDirectory(prefix="quiddler-ab-") as tmp:
        export_base(args.base, Path(tmp))
        sys.path.insert(0, tmp)
        sides = {}
        for label, package in ((f"base ({args.base})", BASE_NAME), ("this checkout", "quiddler_env")):
            batch = importlib.import_module(f"{package}.core.batch")
            codes = importlib.import_module(f"{package}.core.batch_bots").BOT_CODES
            games = batch.BatchGame(num_games=args.games)
            bots = np.full((args.games, games.num_players), codes["random"], dtype=np.int64)
            us_per_learner_step(games, bots, 1)  # compiles (each side its own numba cache) and warms up
            sides[label] = (games, bots, [])
        # The warm-up played the same deals to their ends: the same games leave the same state, compared by name
        # (the rows' layout may differ between the trees: a field added moves the others).
        (base_games, _, _), (games, _, _) = sides.values()
        same = all(np.array_equal(state(base_games), state(games)) for state in SAME_STATE)
        for r in range(args.rounds):
            # Each round in the other order (ABBA...): whichever plays first in a round is favoured or not.
            for games, bots, times in list(sides.values())[:: 1 if r % 2 == 0 else -1]:
                times.append(us_per_learner_step(games, bots, args.deals))
        if args.go_out > 0:
            compare_go_out([BASE_NAME, "quiddler_env"], args.go_out)
        vector = single = None
        if args.vector > 0:
            vector = compare_vector([BASE_NAME, "quiddler_env"], list(sides), args.games, args.vector, args.rounds)
        if args.single > 0:
            single = compare_single([BASE_NAME, "quiddler_env"], list(sides), args.single, args.rounds)
        if vector and single:
            print(
                f"this checkout's vector env: {single[0] / vector[1]:.2f}x the base's Quiddler-v0, "
                f"{single[1] / vector[1]:.2f}x its own (learner steps/s, the medians above)"
            )

    print(f"engine alone, {args.games} games x {args.deals} deals, random bots, {args.rounds} rounds alternating")
    print(f"the same games as the base (every game's final state, one deal): {'yes' if same else 'no'}")
    print(f"{'tree':<24} {'best':>8} {'median':>8}  (microseconds a learner step)")
    for label, (_, _, times) in sides.items():
        print(f"{label:<24} {min(times):>8.3f} {statistics.median(times):>8.3f}")
    (_, _, base), (_, _, new) = sides.values()
    ratios = [b / n for b, n in zip(base, new, strict=True)]
    faster = sum(r > 1 for r in ratios)
    print(
        f"base / this checkout, per round: median {statistics.median(ratios):.3f}; this checkout faster in "
        f"{faster} of {len(ratios)} rounds"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
