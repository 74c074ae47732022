"""The challenge variant (rule book section 7): scoring, the challenge phase, bluffs, vocabularies, the envs.

The golden tests use stacked decks and vocabulary files written here, and figures worked out by hand from the
card points (A 2, C 8, E 2, O 2, T 3, S 3, I 2, R 5).
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from quiddler_env.core import actions as A
from quiddler_env.core import laying
from quiddler_env.core.cards import FACE_INDEX, new_deck
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import Phase, QuiddlerGame
from quiddler_env.core.observation import encode_observation, observation_layout
from quiddler_env.core.scoring import Challenge, score_round
from quiddler_env.core.solver import Layout
from quiddler_env.core.vocabulary import load_vocabulary, parse_vocabulary_spec
from quiddler_env.envs.gym_env import QuiddlerEnv
from quiddler_env.envs.quiddler_v0 import env as aec_env

# -- stacked decks ---------------------------------------------------------------------------------


def stacked(*top: str) -> list[str]:
    """A whole deck (top first) starting with `top`."""
    from quiddler_env.core.cards import FACES

    rest = [FACES[f] for f in new_deck()]
    for face in top:
        rest.remove(face)
    return list(top) + rest


def one_round(tmp_path, vocab0: list[str], vocab1: list[str] | str = "referee", **rules) -> QuiddlerGame:
    """A 2-player, 3-card, one-round game: seat 0 is dealt E E O, seat 1 C A T; the discard top is R,
    the draw pile gives S, then I."""
    paths = []
    for k, words in enumerate((vocab0, vocab1)):
        if isinstance(words, str):
            paths.append(words)
            continue
        path = tmp_path / f"vocab{k}.txt"
        path.write_text("\n".join(words) + "\n")
        paths.append(str(path))
    config = QuiddlerConfig(hand_sizes=(3,), challenges=True, vocabularies=paths, **rules)
    game = QuiddlerGame(config)
    # Dealt one at a time from the dealer's left (seat 0 first): E C E A O T, then R turned up.
    game.reset(decks=[stacked("E", "C", "E", "A", "O", "T", "R", "S", "I")])
    assert game.hands[0][FACE_INDEX["E"]] == 2 and game.hands[1][FACE_INDEX["C"]] == 1
    return game


def play_to_challenges(game: QuiddlerGame) -> None:
    """Seat 0 draws S and goes out discarding it (laying E E O); seat 1 draws I and discards it (laying CAT)."""
    game.step(A.DRAW_PILE)
    game.step(A.go_out(FACE_INDEX["S"]))
    game.step(A.DRAW_PILE)
    game.step(A.discard(FACE_INDEX["I"]))


def test_an_invalid_word_fails_its_cards_count_unused_and_the_bonus_goes_to_the_other(tmp_path):
    # Seat 0 knows the made-up word EEO; the referee (ENABLE) does not.
    game = one_round(tmp_path, ["eeo", "cat"])
    play_to_challenges(game)
    # C A T spells ACT and CAT; a layout shows its first spelling.
    assert game.laid[0].spelled == ("eeo",) and game.laid[1].spelled == ("act",)
    # The challenge phase starts with the player after the one who went out: seat 1.
    assert game.phase == Phase.CHALLENGE and game.current_player == 1
    assert game.legal_actions() == [A.PASS, A.challenge(1, 0)]
    results = game.step(A.challenge(1, 0))
    # Seat 0 may challenge CAT (it knows it, and passes).
    assert results is None and game.current_player == 0 and game.phase == Phase.CHALLENGE
    results = game.step(A.PASS)
    assert results is not None
    r0, r1 = results
    # EEO failed: E E O (6 points) count as unused, -6 floored at 0; seat 0 then has no word.
    assert r0.words == () and r0.unused == ("E", "E", "O") and r0.unused_points == 6
    assert r0.round_score == 0 and r0.challenge.failed == ("eeo",) and r0.challenge.challenged == 1
    # CAT (13) alone is now the longest word: +10 (EEO's 3 letters would have tied it: no bonus).
    assert r1.bonuses == {"longest_word": 10} and r1.round_score == 23
    assert (r1.challenge.made, r1.challenge.won, r1.challenge.challenge_points) == (1, 1, 0)


def seat_1_goes_out_with_cat(game: QuiddlerGame) -> None:
    """Seat 0 keeps E E O (it lays OE, E unused); seat 1 goes out with CAT; in its last turn seat 0 draws the
    pile's next card and discards it."""
    game.step(A.DRAW_PILE)  # seat 0: E E O S
    game.step(A.discard(FACE_INDEX["S"]))
    game.step(A.DRAW_PILE)  # seat 1: C A T I
    game.step(A.go_out(FACE_INDEX["I"]))
    game.step(A.DRAW_PILE)  # seat 0's last turn
    face = next(f for f in range(31) if game.hands[0][f] and f not in (FACE_INDEX["E"], FACE_INDEX["O"]))
    game.step(A.discard(face))
    assert game.laid[0].spelled == ("oe",) and game.laid[1].spelled == ("cat",)  # seat 1 knows CAT, not ACT
    assert game.phase == Phase.CHALLENGE


def test_a_valid_word_challenged_costs_the_challenger_its_points(tmp_path):
    # Seat 1 knows only CAT: OE, a real word, is not in its vocabulary.
    game = one_round(tmp_path, ["oe", "cat"], ["cat"])
    seat_1_goes_out_with_cat(game)
    # After seat 1 (who went out) comes seat 0: it knows CAT and passes; then seat 1 challenges OE.
    assert game.current_player == 0
    game.step(A.PASS)
    assert game.current_player == 1 and game.legal_actions() == [A.PASS, A.challenge(1, 0)]
    r0, r1 = game.step(A.challenge(1, 0))
    assert r0.challenge.failed == () and r0.words == (("O", "E"),)
    # OE stands: seat 1 loses OE's 4 points. CAT 13 + longest word (3 letters > 2) 10 - 4 = 19.
    assert r1.challenge.challenge_points == -4 and r1.round_score == 19
    # Seat 0: OE 4 - unused E 2 = 2.
    assert r0.round_score == 2


def test_a_failed_go_out_word_keeps_the_round_ended_and_takes_the_house_penalty(tmp_path):
    game = one_round(tmp_path, ["eeo"], score_floor="none", failed_go_out_penalty=5)
    play_to_challenges(game)
    assert game.went_out == 0
    assert game.step(A.challenge(1, 0)) is None
    r0, r1 = game.step(A.PASS)  # seat 0 lets CAT stand
    # EEO failed: -6, and the player who went out with a failed word loses 5 more: -11 (no floor).
    assert r0.round_score == -11 and r0.challenge.go_out_penalty == -5 and r0.went_out
    assert r1.round_score == 23


@pytest.mark.parametrize(("floor", "expected"), [("round", 0), ("none", -11)])
def test_the_round_floor_applies_after_a_lost_challenge(tmp_path, floor, expected):
    # Seat 0 knows only OE: CAT is not in its vocabulary, but the referee knows it.
    game = one_round(tmp_path, ["oe"], ["cat"], score_floor=floor, bonus_value=0)
    seat_1_goes_out_with_cat(game)
    assert game.current_player == 0  # the player after the one who went out challenges first
    assert game.step(A.challenge(1, 0)) is None
    r0, r1 = game.step(A.PASS)
    # OE 4 - unused E 2 = 2, less CAT's 13 for the lost challenge: -11, then the floor.
    assert r0.challenge.challenge_points == -13 and r0.challenge.lost == 1
    assert r0.round_score == expected and r1.round_score == 13


# -- scoring from layouts ---------------------------------------------------------------------------


def _layout(*words: str, unused: tuple[str, ...] = ()) -> Layout:
    from quiddler_env.core.cards import POINTS

    faces = tuple(tuple(w.upper()) for w in words)
    used = sum(POINTS[FACE_INDEX[f]] for w in faces for f in w)
    left = sum(POINTS[FACE_INDEX[f]] for f in unused)
    return Layout(faces, tuple(words), unused, used - left, used, left)


def test_failed_words_count_for_neither_most_words_nor_longest():
    config = QuiddlerConfig(num_players=3, challenges=True)
    a = _layout("cat", "eat", "sat")  # 3 words, longest 3
    b = _layout("crate", "ta")  # 2 words, longest 5
    c = _layout("at")
    failed = Challenge(challenger=2, player=1, word=0, spelled="crate", points=20, valid=False)
    results = score_round([a, b, c], [0, 0, 0], config, went_out=0, challenges=[failed])
    # Without CRATE (5 letters), A's 3-letter words are the longest: A takes both bonuses.
    assert results[0].bonuses == {"most_words": 10, "longest_word": 10}
    assert results[1].bonuses == {} and results[1].words == (("T", "A"),)
    # B: TA 5 - CRATE 20 unused = -15, floored.
    assert results[1].round_score == 0 and results[1].unused_points == 20
    assert results[2].challenge.won == 1 and results[2].round_score == 5


def test_challenges_need_the_variant():
    with pytest.raises(ValueError, match="challenges: false"):
        score_round(
            [_layout("at"), _layout("at")], [0, 0], QuiddlerConfig(), challenges=[Challenge(0, 1, 0, "at", 4, True)]
        )


# -- config and vocabularies ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ({"challenges": True, "vocabularies": ["a", "b", "c"]}, "one per seat"),
        ({"challenges": True, "vocabularies": ["enable:1.5:1"]}, "not in \\(0, 1\\]"),
        ({"challenges": True, "vocabularies": ["enable:0.5:x"]}, "SOURCE:P:SEED"),
        ({"challenges": "yes"}, "true or false"),
        ({"failed_go_out_penalty": 3}, "0 without challenges"),
        ({"challenges": True, "failed_go_out_penalty": -1}, "an integer 0..1000"),
    ],
)
def test_bad_variant_rules_name_the_key(rules, message):
    with pytest.raises(ValueError, match=message):
        QuiddlerConfig(**rules)


def test_a_seeded_subset_keeps_each_word_with_its_probability_and_is_reproducible():
    assert parse_vocabulary_spec("enable:0.25:7") == ("enable", 0.25, 7)
    full = load_vocabulary("enable")
    half = load_vocabulary("enable:0.5:11")
    again = load_vocabulary("enable:0.5:11")
    other = load_vocabulary("enable:0.5:12")
    assert half.words == again.words and half.words != other.words
    assert set(half.words) <= set(full.words)
    share = len(half.words) / len(full.words)
    assert abs(share - 0.5) < 0.01  # 172,820 words: the binomial's sd is about 0.0012
    assert all(half.lookup([FACE_INDEX[c.upper()] for c in w]) >= 0 for w in half.words[:300] if len(set(w)) == len(w))


def test_the_default_game_writes_no_variant_keys():
    assert "challenges" not in QuiddlerConfig().to_dict()
    assert QuiddlerConfig(challenges=True).to_dict()["vocabularies"] == []


# -- bluffs ---------------------------------------------------------------------------------------


def test_with_layout_choose_a_seat_may_go_out_by_bluffing_and_its_bluff_is_the_last_candidate(tmp_path):
    game = one_round(tmp_path, ["cat"], layout="choose")
    game.step(A.DRAW_PILE)  # E E O S: no word seat 0 knows
    honest = game.honest_go_out_faces()
    assert honest == 0
    # Every discard leaves three cards, which can be claimed as one word.
    assert all(game.is_legal(A.go_out(FACE_INDEX[f])) for f in ("E", "O", "S"))
    game.step(A.go_out(FACE_INDEX["S"]))
    assert game.phase == Phase.LAY and game.current_player == 0
    assert len(game.candidates) == 1 and game.candidate_bluff == 0
    bluff = game.candidates[0]
    assert bluff.unused == () and bluff.words == (("E", "E", "O"),) and bluff.score == 6
    obs = observation_layout(2, True).view(encode_observation(game, 0))
    assert obs["candidate_bluff"][0] == 1 and obs["candidate_bluff"].sum() == 1


def test_best_bluff_risks_the_fewest_points():
    solver = QuiddlerGame(QuiddlerConfig()).solver
    hand = [0] * 31
    for face in ("C", "A", "T", "Q", "X"):
        hand[FACE_INDEX[face]] += 1
    bluff = laying.best_bluff(solver, hand)
    # QAT honestly and C X (20 points) claimed: less at risk than CAT leaving Q X (27) or TAX leaving C Q (23).
    assert bluff.spelled == ("qat", "cx") and bluff.unused == () and bluff.score == 20 + 20
    assert laying.best_bluff(solver, [0] * 31) is None


# -- observation ----------------------------------------------------------------------------------


def test_laid_words_show_cards_points_length_and_own_knowledge_and_verdicts_only_once_challenged(tmp_path):
    game = one_round(tmp_path, ["eeo", "cat"])
    play_to_challenges(game)
    for seat, known in ((0, [1.0, 1.0]), (1, [1.0, 0.0])):
        v = observation_layout(2, True).view(encode_observation(game, seat))
        row_eeo = 0 if seat == 0 else 1  # seat 0's words: row 0 for seat 0, row 1 (the next seat) for seat 1
        assert v["word_cards"][row_eeo, 0, FACE_INDEX["E"]] == 2
        assert v["word_figures"][row_eeo, 0, 0] == pytest.approx(6 / 100)
        assert v["word_figures"][row_eeo, 0, 1] == pytest.approx(3 / 22)
        assert v["word_known"][row_eeo, 0] == known[1 if seat == 1 else 0]
        assert v["word_challenged"].sum() == 0 and v["word_failed"].sum() == 0
    assert observation_layout(2, True).view(encode_observation(game, 1))["challenging"][0] == 1
    game.step(A.challenge(1, 0))
    v = observation_layout(2, True).view(encode_observation(game, 0))
    assert v["word_challenged"][0, 0] == 1 and v["word_failed"][0, 0] == 1
    assert list(v["challenge_record"][1]) == [1, 1, 0]  # seat 1: made 1, won 1


def _referee_file(tmp_path, share: float) -> str:
    """A referee that lacks about 1 - share of ENABLE (seats that know all of ENABLE then lay words it rejects)."""
    words = load_vocabulary("enable").words
    keep = np.random.default_rng(0).random(len(words)) < share
    path = tmp_path / "referee.txt"
    path.write_text("\n".join(w for w, k in zip(words, keep, strict=True) if k) + "\n")
    return str(path)


def test_the_referee_verdict_is_in_no_observation_before_the_challenge(tmp_path):
    """The same games under two referees: every observation is identical up to the first challenge, and the two
    games do part afterwards (the test can see a difference where one exists)."""
    strict = _referee_file(tmp_path, 0.6)
    rules = {"num_players": 3, "hand_sizes": (5, 8), "challenges": True, "vocabularies": ["enable"], "layout": "choose"}
    parted = 0
    for seed in range(6):
        games = [QuiddlerGame(QuiddlerConfig(**rules, dictionary=d)) for d in ("enable", strict)]
        for g in games:
            g.reset(seed)
        rng = np.random.default_rng(seed)
        while not games[0].is_over:
            before = [[encode_observation(g, p) for p in range(3)] for g in games]
            for a, b in zip(*before, strict=True):
                np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(games[0].legal_action_mask(), games[1].legal_action_mask())
            legal = games[0].legal_actions()
            action = legal[int(rng.integers(len(legal)))]
            for g in games:
                g.step(action)
            if action >= A.CHALLENGE_BASE:
                v = [g.challenge_log[-1].valid if g.challenge_log else g.challenge_history[-1][-1].valid for g in games]
                if v[0] != v[1]:
                    parted += 1
                    break
            if games[0].totals != games[1].totals:
                break
    assert parted > 0


# -- envs ------------------------------------------------------------------------------------------

VARIANT = {"challenges": True, "layout": "choose", "hand_sizes": (3, 5)}


@pytest.mark.parametrize("num_players", [2, 3, 8])
def test_the_aec_env_passes_api_and_seed_tests_with_challenges(num_players):
    rules = dict(VARIANT, num_players=num_players, vocabularies=[f"enable:0.5:{k}" for k in range(num_players)])
    api_test(aec_env(config=rules), num_cycles=400)
    seed_test(lambda: aec_env(config=rules), num_cycles=200)


def test_the_gym_env_passes_check_env_with_challenges():
    env = QuiddlerEnv(config=dict(VARIANT, vocabularies=["enable:0.5:1"]))
    check_env(env)
    assert env.action_space.n == A.NUM_CHALLENGE_ACTIONS == 158
    assert env.observation_space.shape == (observation_layout(2, True).size,)


def test_random_play_reaches_challenges_and_every_mask_matches_the_legal_list():
    config = QuiddlerConfig(num_players=3, **VARIANT, vocabularies=["enable:0.5:1", "enable", "enable:0.25:2"])
    game = QuiddlerGame(config)
    rng = np.random.default_rng(0)
    challenged = passes = 0
    for seed in range(8):
        game.reset(seed)
        while not game.is_over:
            legal = game.legal_actions()
            assert np.flatnonzero(game.legal_action_mask()).tolist() == legal
            action = legal[int(rng.integers(len(legal)))]
            challenged += action >= A.CHALLENGE_BASE
            passes += action == A.PASS
            game.step(action)
        for results, made in zip(game.round_history, game.challenge_history, strict=True):
            assert sum(r.challenge.made for r in results) == len(made)
            assert sum(len(r.challenge.failed) for r in results) == sum(not c.valid for c in made)
    assert challenged > 20 and passes > 20


def test_the_batched_engine_and_its_compiled_bots_play_the_variant():
    from quiddler_env.core.batch import BatchGame
    from quiddler_env.core.batch_bots import BOT_CODES

    games = BatchGame(QuiddlerConfig(**VARIANT), num_games=4)  # two rounds
    games.reset(seed=0)
    assert games.action_masks().shape == (4, A.NUM_CHALLENGE_ACTIONS)
    picked = set()
    while not games.is_over.all():  # the bots' picks, move by move (greedy's, as GreedyAgent: test_batch_bots)
        live = np.flatnonzero(~games.is_over)
        masks = games.action_masks(live)
        for bot in ("random", "greedy"):
            choices = games.bot_actions(live, np.full(live.size, BOT_CODES[bot]))
            assert all(masks[j, a] for j, a in enumerate(choices)), bot  # every pick legal
        picked.update(choices.tolist())
        games.step(choices, live)
    assert A.PASS in picked
    games.reset(seed=1)
    moves = np.zeros(4, dtype=np.int64)
    bots = np.asarray([[0, 1], [1, 1], [1, 0], [0, 0]], dtype=np.int8)  # random 0, greedy 1
    games.play_bots(np.arange(4), bots, moves)
    assert games.is_over.all() and games.rounds_completed.tolist() == [2] * 4  # whole games in one call


@pytest.mark.parametrize("layout", ["auto", "choose"])
def test_the_vector_env_plays_the_variant_with_compiled_and_python_opponents(layout):
    from quiddler_env.envs.gym_env import UniformRandomPolicy
    from quiddler_env.envs.vector_env import QuiddlerVectorEnv

    rules = dict(VARIANT, layout=layout, num_players=3, vocabularies=["referee", "enable:0.3:1", "enable:0.5:2"])
    runs = []
    for opponents in ("random", "greedy", UniformRandomPolicy(seed=3)):
        envs = QuiddlerVectorEnv(6, config=rules, opponents=opponents)
        assert envs.single_action_space.n == A.NUM_CHALLENGE_ACTIONS
        obs, infos = envs.reset(seed=11)
        rng = np.random.default_rng(5)
        episodes, rewards = 0, []
        for _ in range(400):
            assert envs.observation_space.contains(obs)
            actions = [int(rng.choice(np.flatnonzero(m))) for m in infos["action_mask"]]
            obs, reward, terminated, truncated, infos = envs.step(actions)
            assert not infos.get("illegal_action", np.zeros(6, bool)).any()
            episodes += int(terminated.sum())
            rewards.append(reward.copy())
        assert episodes >= 6  # every sub-env finished games, challenge phases and all
        runs.append(np.asarray(rewards))
    again = QuiddlerVectorEnv(6, config=rules, opponents="random")
    obs, infos = again.reset(seed=11)
    rng = np.random.default_rng(5)
    replay = []
    for _ in range(400):
        obs, reward, *_, infos = again.step([int(rng.choice(np.flatnonzero(m))) for m in infos["action_mask"]])
        replay.append(reward.copy())
    assert np.array_equal(np.asarray(replay), runs[0])  # the same seed, the same games


# -- training --------------------------------------------------------------------------------------


def _run_config(**sections):
    from quiddler_agents.training.config import RunConfig

    base = {"env": {"challenges": True, "layout": "choose"}, "train": {"vec_env": "dummy"}}
    for key, value in sections.items():
        base[key] = {**base.get(key, {}), **value} if isinstance(value, dict) else value
    return RunConfig.from_mapping(base)


@pytest.mark.parametrize(
    ("sections", "message"),
    [
        ({"algo": {"observation_features": "solver_v1"}}, "algo.observation_features.*vocabulary"),
    ],
)
def test_a_run_config_names_what_the_variant_cannot_run_with(sections, message):
    from quiddler_agents.training.config import RunConfigError

    assert _run_config().rules.challenges
    with pytest.raises(RunConfigError, match=message):
        _run_config(**sections)


def test_a_run_config_may_train_the_variant_on_the_batched_vector_env():
    cfg = _run_config(train={"vec_env": "batched"})  # the vector env plays the variant (test above)
    assert cfg.train.vec_env == "batched" and cfg.rules.challenges


def test_a_run_config_of_the_variant_may_train_against_and_from_search():
    """The search bot plays the variant (its rollouts on the batched engine, which plays it too)."""
    cfg = _run_config(opponents=[{"spec": "search:samples=4", "weight": 1.0}], pretrain={"teacher": "search"})
    assert cfg.rules.challenges and cfg.opponents[0].spec == "search:samples=4"


@pytest.mark.slow
def test_a_tiny_run_on_the_variant_logs_its_challenges_and_its_policy_plays_the_variant(tmp_path):
    import csv
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    run = tmp_path / "run"
    overrides = ["algo.net_arch=[32, 32]", "algo.n_steps=64", "algo.batch_size=128", "train.n_envs=2",
                 "train.total_timesteps=256", "eval.every=128", "eval.games=4", "train.checkpoint_every=256"]  # fmt: skip
    cmd = [sys.executable, "train.py", "--config", "challenges", "--run-dir", str(run), *overrides]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = list(csv.DictReader((run / "eval.csv").open()))
    assert {r["opponent"] for r in rows} == {"random", "greedy"}
    assert all(int(r["challenges_made"]) >= 0 and 0 <= float(r["challenge_success"]) <= 1 for r in rows)
    assert (run / "learning_curve.png").stat().st_size > 10_000
    from quiddler_agents.policies import load_policy

    rules = QuiddlerConfig(challenges=True, layout="choose", vocabularies=["enable:0.5:1", "enable:0.5:2"])
    policy = load_policy(run / "final", config=rules)
    game = QuiddlerGame(rules)
    game.reset(0)
    while not game.is_over:
        p = game.current_player
        game.step(policy.act(encode_observation(game, p), game.legal_action_mask()))
    assert len(game.round_history) == rules.num_rounds


def test_when_every_seat_knows_the_referees_words_the_bots_play_the_plain_game():
    """With every vocabulary the referee's list, no word is unknown: the bots never challenge, and the variant
    plays the very games of the plain rules (same deals, same moves but its passes, same totals)."""
    from quiddler_agents.evaluation.schedule import Tournament
    from quiddler_agents.evaluation.tournament import run_tournament

    plain = QuiddlerConfig(hand_sizes=(3, 5, 7))
    variant = QuiddlerConfig(hand_sizes=(3, 5, 7), challenges=True, vocabularies=["enable"])
    played = [
        run_tournament(Tournament(("expert", "greedy"), games=8, seed=4, rules=rules), engine="single")
        for rules in (plain, variant)
    ]
    for a, b in zip(*played, strict=True):
        assert a.totals == b.totals and a.actions == [m for m in b.actions if m[1] != A.PASS]
        assert any(m[1] == A.PASS for m in b.actions)
        assert all(r["challenge"]["made"] == 0 for rnd in b.rounds for r in rnd["results"])


def test_the_solver_features_refuse_the_variant_by_name():
    from quiddler_env.features import ObservationFeatures

    rules = QuiddlerConfig(challenges=True)  # (search plays it: `tests/test_search.py`)
    with pytest.raises(ValueError, match="not defined for the challenge variant"):
        ObservationFeatures("solver_v1", rules)


def test_a_bot_without_the_rules_infers_the_variant_from_the_observation_size():
    import quiddler_agents

    rules = QuiddlerConfig(num_players=3, challenges=True, hand_sizes=(3,))
    game = QuiddlerGame(rules)
    game.reset(2)
    bot = quiddler_agents.make("random", seed=0)
    action = bot.act(encode_observation(game, 0), game.legal_action_mask())
    assert game.is_legal(action) and bot.num_players == 3 and bot.challenges is True


def test_after_a_turn_cap_the_challenges_start_with_the_rounds_first_player(tmp_path):
    game = one_round(tmp_path, ["eeo", "cat"], turn_cap=1)
    game.step(A.DRAW_PILE)
    game.step(A.discard(FACE_INDEX["S"]))  # seat 0 could go out with EEO but plays on
    game.step(A.DRAW_PILE)
    game.step(A.discard(FACE_INDEX["I"]))  # one turn each: the cap; everyone lays, nobody went out
    assert game.went_out is None and game.laid[0].spelled == ("eeo",)
    assert game.phase == Phase.CHALLENGE and game.current_player == 0  # the round's first player
    game.step(A.PASS)
    assert game.current_player == 1
    r0, r1 = game.step(A.challenge(1, 0))
    assert r0.challenge.failed == ("eeo",) and r1.challenge.won == 1
