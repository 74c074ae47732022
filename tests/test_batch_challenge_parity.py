"""The batched engine plays the challenge variant exactly as the single-game engine: random games replayed move by
move in both (`tests/batch_parity.py`), with per-seat vocabularies, bluffs, the challenge phase and its scoring.

The vocabularies are seeded subsets of ENABLE (quick to build, cached on disk); a stricter referee (a subset of
ENABLE written here) makes honest words fail too, not only bluffs.
"""

from __future__ import annotations

import numpy as np
import pytest

from quiddler_env.core import actions as A
from quiddler_env.core.batch import BatchGame, StreamGenerator, game_seed
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import Phase, QuiddlerGame
from quiddler_env.core.observation import encode_observation
from quiddler_env.core.vocabulary import load_vocabulary

from .batch_parity import replay, state_differences, vector_env_phases

SHORT = {"hand_sizes": [3, 5, 4], "challenges": True}
VARIANTS: dict[str, dict] = {
    "two_auto": {"vocabularies": ["referee", "enable:0.3:1"]},
    "two_choose_penalty": {"layout": "choose", "vocabularies": ["enable:0.4:2", "referee"], "failed_go_out_penalty": 9},
    "three_choose_one_card_words": {
        "num_players": 3,
        "layout": "choose",
        "min_word_cards": 1,
        "vocabularies": ["enable:0.3:1", "enable:0.5:3", "referee"],
        "score_floor": "none",
    },
    "four_auto_forced": {
        "num_players": 4,
        "go_out": "forced",
        "vocabularies": ["referee", "enable:0.3:1", "enable:0.3:1", "enable:0.6:4"],
    },
    "four_choose_cap_penalty": {
        "num_players": 4,
        "layout": "choose",
        "turn_cap": 2,
        "vocabularies": ["enable:0.3:1", "referee", "enable:0.6:4", "referee"],
        "failed_go_out_penalty": 15,
    },
}
"""The variant's rule sets the replay covers (each over `SHORT`'s rounds)."""
GO_OUT_CHANCE = {"four_choose_cap_penalty": 0.02}
"""How often a replay takes a legal go-out (default 0.3): rarely where the turn cap should come first."""


@pytest.fixture(scope="module")
def strict_referee(tmp_path_factory) -> str:
    """A referee that lacks about 40% of ENABLE: seats that know all of ENABLE lay words it rejects."""
    words = load_vocabulary("enable").words
    keep = np.random.default_rng(0).random(len(words)) < 0.6
    path = tmp_path_factory.mktemp("referee") / "referee.txt"
    path.write_text("\n".join(w for w, k in zip(words, keep, strict=True) if k) + "\n")
    return str(path)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(VARIANTS))
def test_batch_engine_replays_the_challenge_variant(name):
    config = QuiddlerConfig(**SHORT, **VARIANTS[name])
    report = replay(config, seed=3, games=6, go_out_chance=GO_OUT_CHANCE.get(name, 0.3))
    assert report.games == 6 and report.rounds == 6 * config.num_rounds
    assert report.challenges > 0
    if config.layout == "choose":
        assert report.bluffs > 0 and report.failed > 0  # bluffs were laid, and caught
    if name == "four_choose_cap_penalty":
        assert report.turn_caps > 0


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["auto", "choose"])
def test_words_fail_under_a_strict_referee_in_both_engines(strict_referee, layout):
    rules = {"num_players": 3, "dictionary": strict_referee, "failed_go_out_penalty": 6, "layout": layout}
    config = QuiddlerConfig(**SHORT, **rules, vocabularies=["enable", "enable:0.5:3", "referee"])
    report = replay(config, seed=5, games=6, go_out_chance=0.6)
    assert report.challenges > 0 and report.failed > 0


def _random_moves(batch: BatchGame, rng: np.random.Generator, moves: int) -> None:
    for _ in range(moves):
        batch.step(np.asarray([rng.choice(np.flatnonzero(m)) for m in batch.action_masks()]))


def _play_on(copy: QuiddlerGame, batch: BatchGame, i: int, rng: np.random.Generator) -> None:
    """Play `copy` and batch game i on with the same random moves; they stay the same game."""
    row = np.asarray([i])
    while not copy.is_over:
        mask = copy.legal_action_mask()
        assert np.array_equal(mask, batch.action_masks(row)[0])
        for p in range(copy.num_players):
            assert np.array_equal(encode_observation(copy, p), batch.observe(np.asarray([p]), row)[0])
        action = int(rng.choice(np.flatnonzero(mask)))
        results = copy.step(action)
        batch.step(np.asarray([action]), row)
        assert state_differences(copy, batch.game(i)) == []
        if results is not None:
            assert batch.round_results(i) == results
    assert copy.totals == batch.totals[i].tolist() and batch.is_over[i]


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["auto", "choose"])
def test_a_batch_game_as_a_quiddler_game_plays_on_in_every_phase(layout):
    """`BatchGame.game(i)` carries the variant's state (challenge log and queue, the bluff candidate): taken in a
    lay phase, in a challenge phase and elsewhere, it plays on as the batch game."""
    config = QuiddlerConfig(**SHORT, **VARIANTS["three_choose_one_card_words"] | {"layout": layout})
    batch = BatchGame(config, num_games=2)
    rng = np.random.default_rng(1)
    seen = set()
    for seed in range(8):
        batch.reset(seed=seed)
        _random_moves(batch, rng, int(rng.integers(5, 40)))
        i = int(rng.integers(2))
        if batch.is_over[i]:
            continue
        seen.add(int(batch.phase[i]))
        assert state_differences(batch.game(i), batch.game(i)) == []
        _play_on(batch.game(i), batch, i, rng)
    assert Phase.CHALLENGE in seen


@pytest.mark.slow
def test_a_loaded_game_of_the_variant_plays_on_as_the_quiddler_game():
    config = QuiddlerConfig(**SHORT, **VARIANTS["two_choose_penalty"])
    single = QuiddlerGame(config)
    single.reset(seed=4)
    rng = np.random.default_rng(4)
    while single.round < 1 or single.phase != Phase.DRAW:  # into the second round, after a challenge phase
        single.step(int(rng.choice(single.legal_actions())))
    target = BatchGame(config, num_games=2)
    target.load(1, single, seed=12)
    assert state_differences(single, target.game(1)) == []
    single.rng = StreamGenerator(12)  # the loaded row deals and reshuffles from its own seed
    _play_on(single, target, 1, rng)


def test_a_round_of_challenges_reads_back_in_order():
    """The challenge log and the round's results as the single engine has them."""
    config = QuiddlerConfig(**SHORT, **VARIANTS["two_choose_penalty"])
    batch = BatchGame(config, num_games=1)
    batch.reset(seeds=np.asarray([game_seed(7, 0)], dtype=np.uint64))
    single = QuiddlerGame(config, solver=batch.solver)
    single.reset(rng=StreamGenerator(game_seed(7, 0)))
    while single.round == 0:
        legal = single.legal_actions()
        challenge = [a for a in legal if a >= A.CHALLENGE_BASE]
        action = challenge[-1] if challenge else [a for a in legal if a != A.PASS][-1]  # go out, challenge all
        results = single.step(action)
        batch.step(np.asarray([action]))
        assert batch.game(0).challenge_log == single.challenge_log
    assert len(single.challenge_history[0]) > 1
    assert batch.round_results(0) == results and results[0].challenge is not None


@pytest.mark.slow
def test_the_vector_env_plays_the_variant_as_the_reference_encodes_it():
    """The vector env builds its games on `BatchGame`, so it plays the variant now: each learner's observation
    and mask are the reference's (`encode_observation` of the game as a `QuiddlerGame`), opponents greedy."""
    from quiddler_env.envs.vector_env import QuiddlerVectorEnv

    config = QuiddlerConfig(**SHORT, **VARIANTS["three_choose_one_card_words"])
    env = QuiddlerVectorEnv(num_envs=4, config=config, opponents="greedy")
    checked = vector_env_phases(env, 200)
    assert checked >= {Phase.DRAW, Phase.DISCARD, Phase.LAY, Phase.CHALLENGE}
