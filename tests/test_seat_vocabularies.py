"""Seat vocabularies outside the challenge variant (`vocabularies` without `challenges`): the config, the words a
seat lays in both engines, the spaces, the envs, an opponent's level inside `Quiddler-v0` and the vector env, and
the one-line errors. (The move-by-move parity of the two engines: `tests/test_batch_vocabulary_parity.py`.)"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

from quiddler_agents.registry import make
from quiddler_agents.search import SearchAgent
from quiddler_env.core import actions as A
from quiddler_env.core.batch import BatchGame
from quiddler_env.core.batch_bots import GREEDY
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.engine import Game
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.levels import level_dictionary
from quiddler_env.core.observation import encode_observation, observation_layout
from quiddler_env.core.vocabulary import load_seat_vocabulary, load_vocabulary
from quiddler_env.envs.gym_env import QuiddlerEnv
from quiddler_env.envs.quiddler_v0 import env as aec_env
from quiddler_env.envs.vector_env import OpponentMix, QuiddlerVectorEnv

pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
]

LEVEL_1 = {"vocabularies": ["level-1", "referee"]}


def _one_line(exc: pytest.ExceptionInfo, *needles: str) -> str:
    text = str(exc.value)
    assert "\n" not in text, text
    for needle in needles:
        assert needle in text, (needle, text)
    return text


# -- the config and the words ----------------------------------------------------------------------------------


def test_vocabularies_play_without_challenges_and_read_back_from_the_config():
    config = QuiddlerConfig(hand_sizes=[3, 4], **LEVEL_1)
    assert not config.challenges and config.vocabularies == ("level-1", "referee")
    data = config.to_dict()
    assert data["vocabularies"] == ["level-1", "referee"] and "challenges" not in data
    assert QuiddlerConfig.from_mapping(data) == config
    assert "vocabularies" not in QuiddlerConfig().to_dict()  # the records of plain games read as before
    config.check_word_lists()
    game = QuiddlerGame(config)
    assert game.seat_words and not game.challenges and not game.bluffing
    assert game.seat_solvers[0].dictionary is level_dictionary(1)
    assert game.seat_solvers[1] is game.solver


def test_a_vocabulary_outside_the_variant_is_kept_within_the_referee(tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("cat\nqqqz\nzzzx\n")  # one word of ENABLE, two that are not words
    within = load_seat_vocabulary(str(words))
    assert within.words == ("cat",)
    assert load_seat_vocabulary(str(words)) is within  # built once
    assert set(load_seat_vocabulary(str(words), challenges=True).words) == {"cat", "qqqz", "zzzx"}
    assert load_seat_vocabulary("level-2") is level_dictionary(2)  # already within ENABLE: itself
    assert load_seat_vocabulary("referee") is load_dictionary("enable")
    game = QuiddlerGame(QuiddlerConfig(vocabularies=[str(words), "referee"]))
    assert game.seat_solvers[0].dictionary.words == ("cat",)


def test_config_errors_of_seat_vocabularies_are_one_line(tmp_path):
    nothing = tmp_path / "nothing.txt"
    nothing.write_text("qqqz\nzzzx\n")
    config = QuiddlerConfig(vocabularies=[str(nothing)])  # the spec's form is fine; its words are read later
    with pytest.raises(ValueError) as exc:
        config.check_word_lists()
    _one_line(exc, "'vocabularies[0]'", "no word of the referee's list")
    with pytest.raises(ValueError) as exc:
        QuiddlerGame(config)
    _one_line(exc, "no word of the referee's list")
    with pytest.raises(ValueError) as exc:
        QuiddlerConfig(vocabularies=["level-9"])
    _one_line(exc, "'vocabularies'", "unknown level '9'")
    with pytest.raises(ValueError) as exc:
        QuiddlerConfig(vocabularies=["referee", "level-1", "level-2"])
    _one_line(exc, "'vocabularies'", "one per seat")
    with pytest.raises(ValueError) as exc:
        QuiddlerConfig(vocabularies=["referee"], failed_go_out_penalty=3)
    _one_line(exc, "0 without challenges")
    with pytest.raises(ValueError) as exc:
        QuiddlerGame(QuiddlerConfig(**LEVEL_1)).set_seat_solvers([None, None])
    _one_line(exc, "set_seat_solvers", "vocabularies")


def test_a_bot_level_beside_the_rules_vocabularies_is_a_one_line_error():
    rules = QuiddlerConfig(**LEVEL_1)
    for spec in ("greedy:level=1", "expert:level=2", "search:level=1"):
        with pytest.raises(ValueError) as exc:
            make(spec, config=rules)
        _one_line(exc, spec.split(":")[0], "level", "vocabularies")
    bot = make("greedy", config=rules)  # without a level: its seat's words (the seat read off its observation)
    game = QuiddlerGame(rules)
    game.reset(seed=0)
    for seat in (0, 1):
        bot.act(encode_observation(game, seat), game.legal_action_mask())
        assert bot.seat == seat
        assert bot.solver.dictionary is game.seat_solvers[seat].dictionary
    with pytest.raises(ValueError) as exc:
        QuiddlerEnv(config=rules, opponents="greedy:level=2")
    _one_line(exc, "option 'opponents'", "level", "vocabularies")
    with pytest.raises(ValueError) as exc:
        QuiddlerVectorEnv(num_envs=2, config=rules, opponents="greedy:level=2")
    _one_line(exc, "option 'opponents'", "level", "vocabularies")


def test_an_agent_reads_its_seat_off_a_plain_observation_in_every_round():
    rules = QuiddlerConfig(num_players=3, hand_sizes=[3, 4, 3, 5], vocabularies=["level-1", "referee", "level-2"])
    bot = make("greedy", config=rules)
    game = QuiddlerGame(rules)
    game.reset(seed=1)
    rng = np.random.default_rng(1)
    rounds = set()
    while not game.is_over:
        p = game.current_player
        bot.act(encode_observation(game, p), game.legal_action_mask())
        assert bot.seat == p
        rounds.add(game.round)
        game.step(int(rng.choice(game.legal_actions())))
    assert rounds == {0, 1, 2, 3}


# -- both engines lay only a seat's words ------------------------------------------------------------------------


def test_every_word_laid_for_a_level_1_seat_is_a_level_1_word_and_an_enable_word():
    """The compiled greedy bot in both seats, stepped move by move on the batched engine, and random play on the
    readable engine: seat 0 (level-1) lays only level-1 words, seat 1 (referee) lays others too."""
    level, enable = set(level_dictionary(1).words), load_dictionary("enable")
    config = QuiddlerConfig(hand_sizes=[4, 6, 8, 10], **LEVEL_1)
    laid: list[set[str]] = [set(), set()]
    batch = BatchGame(config, num_games=4)
    batch.reset(seed=2)
    greedy = np.full(4, GREEDY, dtype=np.int64)
    while not batch.is_over.all():
        games = np.flatnonzero(~batch.is_over)
        rounds_before = batch.rounds_completed[games].copy()
        batch.step(batch.bot_actions(games, greedy[: games.size]), games)
        for i in games[batch.rounds_completed[games] > rounds_before].tolist():
            for seat, result in enumerate(batch.round_results(i)):
                laid[seat].update(result.spelled)
    game = QuiddlerGame(config)
    rng = np.random.default_rng(0)
    for seed in range(4):
        game.reset(seed=seed)
        while not game.is_over:
            legal = game.legal_actions()
            go = [a for a in legal if a >= A.GO_OUT_BASE]
            results = game.step(go[0] if go and rng.random() < 0.5 else int(rng.choice(legal)))
            for seat, result in enumerate(results or []):
                laid[seat].update(result.spelled)
    assert laid[0] and laid[0] <= level, laid[0] - level
    assert all(word in enable for word in laid[0] | laid[1])
    assert laid[1] - level, "the referee's seat laid only level-1 words: the check is vacuous"


# -- spaces and envs -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["auto", "choose"])
@pytest.mark.parametrize("num_players", [2, 3])
def test_the_observation_and_action_spaces_are_the_plain_games(layout, num_players):
    plain = QuiddlerConfig(num_players=num_players, layout=layout)
    rules = QuiddlerConfig(num_players=num_players, layout=layout, vocabularies=["level-1"])
    assert Game(rules).observation_size == Game(plain).observation_size == observation_layout(num_players).size
    assert Game(rules).num_actions == Game(plain).num_actions == A.num_actions(layout)
    gym_env, gym_plain = QuiddlerEnv(config=rules), QuiddlerEnv(config=plain)
    assert gym_env.observation_space == gym_plain.observation_space
    assert gym_env.action_space == gym_plain.action_space
    aec, aec_plain = aec_env(config=rules), aec_env(config=plain)
    assert aec.observation_space("player_0") == aec_plain.observation_space("player_0")
    assert aec.action_space("player_0") == aec_plain.action_space("player_0")
    vector = QuiddlerVectorEnv(num_envs=2, config=rules)
    assert vector.single_observation_space == gym_plain.observation_space
    assert vector.single_action_space == gym_plain.action_space


@pytest.mark.parametrize("num_players", [2, 3])
def test_the_aec_env_passes_the_api_test_with_seat_vocabularies(num_players):
    rules = {
        "num_players": num_players,
        "hand_sizes": (3, 5),
        "vocabularies": ["level-1"] + ["referee"] * (num_players - 1),
    }
    api_test(aec_env(config=rules), num_cycles=300)


def test_the_gym_env_passes_check_env_with_seat_vocabularies():
    env = QuiddlerEnv(config={"hand_sizes": (3, 5), "layout": "choose", **LEVEL_1}, opponents="greedy")
    check_env(env)
    assert env.engine.config.vocabularies == ("level-1", "referee")


def _opponent_words(env: QuiddlerEnv, episodes: int) -> tuple[set[str], set[str], set[int]]:
    """The words the opponents and the learner laid over `episodes` (the learner plays at random), and its seats."""
    rng = np.random.default_rng(0)
    theirs: set[str] = set()
    mine: set[str] = set()
    seats = set()
    for episode in range(episodes):
        _, info = env.reset(seed=episode)
        seats.add(env.seat)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            done = terminated or truncated
        for results in env.engine.round_history:
            for result in results:
                (mine if result.player == env.seat else theirs).update(result.spelled)
    return theirs, mine, seats


def test_quiddler_v0_lays_a_level_opponent_only_its_levels_words():
    level = set(level_dictionary(1).words)
    env = QuiddlerEnv(config={"hand_sizes": (4, 6, 8)}, opponents="greedy:level=1", learner_seat="random")
    assert env.config.vocabularies == ()  # the rules as given; the engine's name the opponent's level
    theirs, mine, seats = _opponent_words(env, episodes=6)
    assert seats == {0, 1}  # both arrangements, one engine each
    assert {engine.config.vocabularies for engine in env._engines.values()} == {
        ("referee", "level-1"),
        ("level-1", "referee"),
    }
    assert theirs and theirs <= level, theirs - level
    assert mine - level, "the learner laid only level-1 words: the check is vacuous"
    # A level-less opponent keeps the plain rules (no vocabularies in the engine).
    assert QuiddlerEnv(opponents="greedy").engine.config.vocabularies == ()


def test_the_vector_env_seats_a_compiled_level_greedy_with_its_words():
    level = set(level_dictionary(1).words)
    config = QuiddlerConfig(num_players=3, hand_sizes=(4, 6))
    env = QuiddlerVectorEnv(num_envs=4, config=config, opponents=["greedy:level=1", "greedy"], learner_seat=1)
    assert env.engine_config.vocabularies == ("referee", "referee", "level-1")
    assert env.games.seat_words and env.config.vocabularies == ()
    obs, infos = env.reset(seed=0)
    assert obs.shape == (4, observation_layout(3).size)
    rng = np.random.default_rng(0)
    laid: list[set[str]] = [set(), set(), set()]
    for _ in range(120):
        obs, _, _, _, infos = env.step(np.asarray([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]]))
        for i in np.flatnonzero(infos.get("_round_scores", np.zeros(4, dtype=bool))).tolist():
            for seat, result in enumerate(env.games.round_results(i)):
                laid[seat].update(result.spelled)
    assert laid[2] and laid[2] <= level, laid[2] - level
    assert laid[0] - level, "the level-less greedy laid only level-1 words: the check is vacuous"
    with pytest.raises(ValueError) as exc:
        env.set_opponents(["greedy", "greedy"])
    _one_line(exc, "set_opponents", "levels")
    env.set_opponents(["greedy:level=beginner", "random"])  # the same level, by name; another level-less bot


def test_the_vector_env_refuses_a_level_it_cannot_seat_in_one_line():
    config = QuiddlerConfig(hand_sizes=(3,))
    for options in (
        {"opponents": "greedy:level=1", "learner_seat": "random"},
        {"opponents": OpponentMix([("greedy:level=1", 1), ("greedy", 1)])},
    ):
        with pytest.raises(ValueError) as exc:
            QuiddlerVectorEnv(num_envs=2, config=config, **options)
        _one_line(exc, "option 'opponents'", "level", "learner_seat")
    for bad, needle in (("greedy:level=9", "unknown level '9'"), ("random:level=1", "not a compiled bot")):
        with pytest.raises(ValueError) as exc:
            QuiddlerVectorEnv(num_envs=2, config=config, opponents=bad)
        _one_line(exc, "option 'opponents'", needle)


def test_search_rolls_out_with_the_seats_vocabularies():
    rules = QuiddlerConfig(hand_sizes=(4,), **LEVEL_1)
    bot = SearchAgent(seed=0, config=rules, samples=2)
    game = QuiddlerGame(rules)
    game.reset(seed=0)
    while game.current_player != 1:
        game.step(game.legal_actions()[0])
    bot.act(encode_observation(game, 1), game.legal_action_mask())
    (batch,) = bot._batches.values()
    assert bot.seat == 1
    # The bot is the rollouts' seat 0, the level-1 seat follows: the rules' vocabularies in relative order.
    assert batch.config.vocabularies == ("referee", "level-1") and not batch.config.challenges
    assert batch.seat_solvers[1].dictionary is load_vocabulary("level-1")
