"""The coach (`agents.coach`) and the review of saved games (`evaluation.review`, `evaluate.py --review`).

Small on purpose: two players, a few short rounds, few determinizations."""

from __future__ import annotations

import json

import numpy as np
import pytest

from quiddler_agents.cli.evaluate import main
from quiddler_agents.coach import Coach, coach_seed, decision_kind
from quiddler_agents.evaluation.review import review
from quiddler_agents.evaluation.schedule import deal_cards
from quiddler_agents.search import SearchAgent
from quiddler_env.core import actions as A
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.observation import encode_observation

RULES = QuiddlerConfig(num_players=2, hand_sizes=(3, 4, 5))
HAND_SIZES = ("--hand-sizes", "3", "4", "5")


def evaluate(capsys, *args) -> tuple[int, str, str]:
    """evaluate.py in this process: (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def positions(seed: int = 3):
    """Every decision of a game search plays against itself: (game before the move, the move search made)."""
    game = QuiddlerGame(RULES)
    decks, rng = deal_cards(seed, RULES.num_rounds)
    game.reset(rng=rng, decks=decks)
    bot = SearchAgent(0, RULES, samples=8)
    while not game.is_over:
        p = game.current_player
        yield game, p
        game.step(bot.act(encode_observation(game, p), game.legal_action_mask()))


def test_the_coach_gives_the_search_bots_own_values_and_move():
    coach = Coach(RULES, samples=8)
    kinds = 0
    seen = set()
    for checked, (game, p) in enumerate(positions()):
        obs, mask = encode_observation(game, p), game.legal_action_mask()
        seed = coach_seed(11, checked)
        bot = SearchAgent(seed, RULES, samples=8)  # the bot as it decides, same seed: same determinizations
        move = bot.act(obs, mask)
        advice = coach.weigh(obs, mask, seed, kind=decision_kind(game))
        seen.add(advice.kind)
        assert advice.search_move == move and advice.best == move
        if bot.last_values is not None:
            candidates, values = bot.last_values
            assert advice.basis == "rollouts" and advice.moves == candidates
            np.testing.assert_array_equal(advice.values, values)
            assert advice.loss(move) == 0.0
            assert all(advice.loss(a) >= 0 for a in advice.moves)
            kinds += 1
            # A move the bot did not weigh, valued beside its candidates, changes neither their values nor the move.
            other = [a for a in np.flatnonzero(mask).tolist() if a not in candidates]
            if other:
                extra = coach.weigh(obs, mask, seed, played=other[0])
                assert extra.moves == [*candidates, other[0]] and extra.search_move == move
                np.testing.assert_array_equal(extra.values[: len(candidates)], values)
                assert extra.loss(other[0]) is not None and extra.loss(other[0]) >= 0
    assert kinds >= 5 and {"draw", "last_turn"} <= seen and seen & {"discard", "go_out"}


def test_the_coach_is_seeded():
    game, p = next(positions())
    coach = Coach(RULES, samples=8, seed=5)
    first, again = coach.advise(game, (0, 0)), Coach(RULES, samples=8, seed=5).advise(game, (0, 0))
    assert first == again and first.values is not None
    assert first.kind == "draw" and set(first.moves) == {A.DRAW_PILE, A.TAKE_DISCARD}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """games.jsonl of search against itself and of search against random (2 games each, in this process)."""
    folder = tmp_path_factory.mktemp("games")
    out = {}
    for name, players in (("self", ("search", "search")), ("random", ("search", "random"))):
        code = main([str(a) for a in (
            "--players", *players, "--games", 2, *HAND_SIZES, "--save-games", "--quiet", "--workers", 1,
            "--seed", 4, "--out", folder / name,
        )])  # fmt: skip
        assert code == 0
        out[name] = folder / name / "games.jsonl"
    return out


def test_search_loses_little_where_random_loses_much(saved):
    own = review(saved["self"], samples=32)
    both = own["players"]["search"], own["players"]["search#2"]
    per_decision = sum(p["loss"] for p in both) / sum(p["weighed"] for p in both)
    assert sum(p["weighed"] for p in both) >= 20
    assert per_decision < 1.0, own["players"]  # near zero: only the coach's own sampling noise

    mixed = review(saved["random"], samples=32)
    rnd, srch = mixed["players"]["random"], mixed["players"]["search"]
    assert rnd["weighed"] >= 10 and rnd["loss"] > 20
    assert rnd["loss_per_decision"] > 4 * max(per_decision, srch["loss_per_decision"], 0.1)
    # Each decision's losses are summed per kind: the kinds add up to the whole.
    assert sum(k["loss"] for k in rnd["kinds"].values()) == pytest.approx(rnd["loss"], abs=0.01)
    assert mixed["costliest"][0]["loss"] == max(
        d["loss"] for g in mixed["games"] for d in g["decisions"] if d["loss"] is not None
    )


def test_the_review_is_seeded_and_takes_one_seat(saved):
    one = review(saved["random"], seat=1, samples=8, seed=2)
    assert one == review(saved["random"], seat=1, samples=8, seed=2)
    assert {d["seat"] for g in one["games"] for d in g["decisions"]} == {1}
    assert review(saved["random"], seat=1, samples=8, seed=3) != one


def test_the_command_writes_markdown_and_json(saved, tmp_path, capsys):
    code, _, err = evaluate(capsys, "--review", saved["random"], "--samples", 8, "--out", tmp_path / "r", "--quiet")
    assert code == 0, err
    data = json.loads((tmp_path / "r" / "review.json").read_text())
    text = (tmp_path / "r" / "review.md").read_text()
    assert data["format"] == "quiddler-review-1" and len(data["games"]) == 2
    assert "## Points lost per kind of decision" in text and "| random |" in text
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["review.json", "review.md"]


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("not json\n", (), "line 1 is not JSON"),
        ('{"game": 0, "rules": {}}\n', (), "is not a saved game (no 'actions' field)"),
        (None, (), "cannot read saved games"),
        ("SAVED", ("--seat", 5), "seat 5 is not a seat of saved game 0"),
        ("SAVED", ("--samples", 0), "--samples must be 1.."),
    ],
)
def test_the_command_refuses_a_bad_file_in_one_line(saved, tmp_path, capsys, content, args, message):
    path = tmp_path / "games.jsonl"
    if content == "SAVED":
        path = saved["random"]
    elif content is not None:
        path.write_text(content)
    code, out, err = evaluate(capsys, "--review", path, *args, "--out", tmp_path / "r", "--quiet")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and message in lines[0] and out == "", err
    assert lines[0].startswith("evaluate.py: error: ")
    assert not (tmp_path / "r").exists()


def test_the_command_reviews_a_game_saved_at_the_table_one_seat(tmp_path, capsys):
    from quiddler_agents.table.session import TableGame
    from quiddler_env.core import files

    table = TableGame(["human", "greedy"], RULES, seed=2)
    table.play_agents()
    while not table.game.is_over:
        table.move(0, table.view()["moves"][0]["action"])
    saved = files.write_json(tmp_path / "mine.json", table.record())  # as the table saves it: indented JSON
    code, out, err = evaluate(capsys, "--review", saved, "--seat", 0, "--samples", 8, "--out", tmp_path / "r")
    assert code == 0, err
    data = json.loads((tmp_path / "r" / "review.json").read_text())
    assert list(data["players"]) == ["human"] and data["seat"] == 0
    assert {d["seat"] for d in data["games"][0]["decisions"]} == {0}
    assert f"human: {data['players']['human']['loss']:.1f} points lost in 1 game(s)" in out
    assert "| human (seat 0) |" in (tmp_path / "r" / "review.md").read_text()
    # With its other options refused in one line.
    code, out, err = evaluate(capsys, "--review", saved, "--players", "greedy", "--out", tmp_path / "s")
    assert code == 2 and err.strip().splitlines() == [
        "evaluate.py: error: --review FILE takes no --players, --benchmark or --replay"
    ]
    code, out, err = evaluate(capsys, "--players", "greedy", "random", "--seat", 1)
    assert code == 2 and err.strip().splitlines() == ["evaluate.py: error: --seat and --samples go with --review FILE"]


VARIANT = QuiddlerConfig(
    num_players=2, hand_sizes=(3, 4), challenges=True, layout="choose", vocabularies=["enable:0.5:1", "enable:0.5:2"]
)
"""The challenge variant, each seat knowing half the referee's words: a word a seat does not know is suspect
enough to challenge (under `layout: choose` players may bluff)."""


def challenge_positions(seed: int = 1):
    """The challenge decisions (more than one legal move) of a variant game search plays against itself."""
    game = QuiddlerGame(VARIANT)
    decks, rng = deal_cards(seed, VARIANT.num_rounds)
    game.reset(rng=rng, decks=decks)
    bot = SearchAgent(0, VARIANT, samples=4)
    while not game.is_over:
        p = game.current_player
        if decision_kind(game) == "challenge" and len(game.legal_actions()) > 1:
            yield game, p
        game.step(bot.act(encode_observation(game, p), game.legal_action_mask()))


def test_the_coach_values_challenges_as_the_bots_decide_them():
    from quiddler_agents.base import SeatView
    from quiddler_agents.expert import ExpertAgent

    coach = Coach(VARIANT, samples=4)
    checked = challenged = 0
    for k, (game, p) in enumerate(challenge_positions()):
        obs, mask = encode_observation(game, p), game.legal_action_mask()
        seed = coach_seed(3, k)
        bot = SearchAgent(seed, VARIANT, samples=4)
        weighed = bot.weigh(obs, mask)
        advice = coach.weigh(obs, mask, seed, kind=decision_kind(game))
        # The coach's values are the search bot's own, and its move is the one the bots play (the expert's rule).
        assert advice.kind == "challenge" and advice.basis == weighed.basis == "challenge"
        assert advice.moves == weighed.moves == game.legal_actions()
        np.testing.assert_array_equal(advice.values, weighed.values)
        move = ExpertAgent(seed, VARIANT).act(obs, mask)
        assert advice.search_move == advice.best == move == SearchAgent(seed, VARIANT, samples=4).act(obs, mask)
        assert advice.values[advice.moves.index(move)] == max(advice.values) and advice.loss(move) == 0.0
        # Letting the words stand is worth 0; a word the seat knows costs its points to challenge.
        seat = SeatView.decode(obs, 2, True)
        for a, v in zip(advice.moves, advice.values, strict=True):
            if a == A.PASS:
                assert v == 0.0
            else:
                word = seat.words[A.challenged(a)[0]][A.challenged(a)[1]]
                assert v == -word.points if word.known else v != 0.0
        challenged += move != A.PASS
        checked += 1
    assert checked >= 3 and challenged >= 1


def test_a_review_of_a_variant_game_weighs_its_challenges():
    from quiddler_agents.evaluation.review import review_game, summarise
    from quiddler_agents.table.session import TableGame

    table = TableGame(["human", "search:samples=4"], VARIANT, seed=1)
    table.play_agents()
    made = 0
    while not table.game.is_over:
        moves = table.view()["moves"]
        challenge = [m for m in moves if m["kind"] == "challenge"]
        move = challenge[0] if challenge and made < 2 else moves[0]  # two challenges, then passes and first moves
        made += move is not moves[0]
        table.move(0, move["action"])
    coach = Coach(VARIANT, samples=4)
    data = review_game(table.record(), lambda rules: coach, seats=[0])
    weighed = [d for d in data["decisions"] if d["kind"] == "challenge"]
    assert made == 2 and len(weighed) >= 2
    assert all(d["basis"] == "challenge" and d["loss"] is not None and d["loss"] >= 0 for d in weighed)
    assert all(m["value"] is not None for d in weighed for m in d["moves"])
    kinds = summarise([data])["human"]["kinds"]
    assert kinds["challenge"]["decisions"] == len(weighed)
    assert kinds["challenge"]["loss"] == pytest.approx(sum(d["loss"] for d in weighed), abs=0.01)
