"""The batched engine plays seat vocabularies outside the challenge variant (`vocabularies` without `challenges`)
exactly as the single-game engine: random games replayed move by move in both (`tests/batch_parity.py`), masks,
observations, state, round results and totals compared after every move.

Each seat finds its go-out moves and has its layouts laid from its vocabulary's words within the referee's list;
there is no challenge phase and the observation is the plain game's.
"""

from __future__ import annotations

import pytest

from quiddler_env.core import actions as A
from quiddler_env.core.batch import BatchGame
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import Phase
from quiddler_env.core.observation import observation_layout

from .batch_parity import replay, vector_env_phases

SHORT = {"hand_sizes": [3, 5, 4]}
RULE_SETS: dict[str, dict] = {
    "two_auto": {"vocabularies": ["level-1", "referee"]},
    "two_choose": {"layout": "choose", "vocabularies": ["referee", "level-1"]},
    "three_auto_forced": {"num_players": 3, "go_out": "forced", "vocabularies": ["level-1", "referee", "level-2"]},
    "three_choose_subset": {
        "num_players": 3,
        "layout": "choose",
        "two_player_bonus": "both",
        "vocabularies": ["level-1", "enable:0.3:1", "referee"],
    },
}
"""Plain rules with seat vocabularies that the replay covers (each over `SHORT`'s rounds)."""


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RULE_SETS))
def test_batch_engine_replays_seat_vocabularies_without_challenges(name):
    config = QuiddlerConfig(**SHORT, **RULE_SETS[name])
    assert not config.challenges
    report = replay(config, seed=3, games=6)
    assert report.games == 6 and report.rounds == 6 * config.num_rounds
    assert report.challenges == 0 and report.bluffs == 0  # no challenge phase, no bluffs
    batch = BatchGame(config)
    assert batch.seat_words and len(batch.tables) == 10  # the variant's word tables ...
    assert batch.observation_size == observation_layout(config.num_players).size  # ... and the plain observation


@pytest.mark.slow
def test_the_vector_env_plays_seat_vocabularies_as_the_reference_encodes_them():
    """Each learner's observation and mask are the reference's (`encode_observation` of the game as a
    `QuiddlerGame`, whose seats have the rules' vocabularies), compiled greedy and random opponents."""
    from quiddler_env.envs.vector_env import QuiddlerVectorEnv

    config = QuiddlerConfig(**SHORT, num_players=3, layout="choose", vocabularies=["referee", "level-1", "level-2"])
    env = QuiddlerVectorEnv(num_envs=4, config=config, opponents=["greedy", "random"], learner_seat="random")
    checked = vector_env_phases(env, 150)
    assert checked >= {Phase.DRAW, Phase.DISCARD, Phase.LAY}
    assert env.action_masks().shape[1] == A.num_actions("choose")
