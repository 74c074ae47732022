"""The hand solver: golden layouts, brute-force cross-checks, the go-out question, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import quiddler_env
from quiddler_env.core.cards import FACE_INDEX, FACES, LETTERS, POINTS, hand_counts, new_deck
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.solver import _KEY_ORDER, get_solver
from quiddler_env.core.solver_kernel import go_out_face, go_out_face_bits, go_out_face_start, new_scratch

from .reference import brute_best, faces_of, word_table

GOLDEN = json.loads((Path(__file__).parent / "data" / "best_layouts.json").read_text())["cases"]


def _random_hands(n_hands: int, sizes: tuple[int, ...], seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    deck = np.asarray(new_deck())
    return [[FACES[f] for f in rng.choice(deck, int(rng.choice(sizes)), replace=False)] for _ in range(n_hands)]


@pytest.mark.parametrize("min_cards", [1, 2])
@pytest.mark.parametrize("case", GOLDEN, ids=lambda c: "-".join(c["hand"]))
def test_golden_best_layouts(case, min_cards):
    want = case[f"min_cards_{min_cards}"]
    config = QuiddlerConfig(min_word_cards=min_cards)
    layout = quiddler_env.best_layout(case["hand"], config)
    assert layout.score == want["score"]
    assert layout.n_words == want["words"]
    assert layout.longest == want["longest_letters"]
    assert quiddler_env.can_go_out(case["hand"], config) == want["can_go_out"]
    # The layout itself is consistent: real words, every card accounted for once.
    table = word_table()
    for faces, word in zip(layout.words, layout.spelled, strict=True):
        assert "".join(faces).lower() == word
        assert tuple(sorted(faces)) in table
        assert len(faces) >= min_cards
    laid = [f for w in layout.words for f in w] + list(layout.unused)
    assert Counter(laid) == Counter(case["hand"])
    used = sum(POINTS[FACE_INDEX[f]] for w in layout.words for f in w)
    unused = sum(POINTS[FACE_INDEX[f]] for f in layout.unused)
    assert (layout.card_points, layout.unused_points, layout.score) == (used, unused, used - unused)


def test_seed_examples():
    assert quiddler_env.best_layout(["T", "O", "P"]).score == 11
    quiz = quiddler_env.best_layout(["QU", "I", "Z", "M"])
    assert quiz.spelled == ("quiz",) and quiz.unused == ("M",) and quiz.score == 20
    assert not quiddler_env.can_go_out(["QU", "I", "Z", "M"])
    # STEVE is a proper noun, not a word: the five cards cannot make one five-letter word.
    steve = quiddler_env.best_layout(["S", "T", "E", "V", "E"])
    assert "steve" not in steve.spelled and all(len(w) < 5 for w in steve.spelled)


def test_every_spelling_is_found():
    # QUIZ spelled with the QU card or with Q + U; THE with TH or T + H.
    assert quiddler_env.best_layout(["Q", "U", "I", "Z"]).spelled == ("quiz",)
    d = get_solver().dictionary
    the_combo = d.spellings_of(d.lookup([FACE_INDEX["TH"], FACE_INDEX["E"]]))
    the_letters = d.spellings_of(d.lookup([FACE_INDEX[f] for f in "THE"]))
    assert ("the", ("TH", "E")) in the_combo and ("eth", ("E", "TH")) in the_combo
    assert ("the", ("T", "H", "E")) in the_letters
    assert quiddler_env.best_layout(["TH", "E"]).score == 11
    # Three Z cards do not exist, so no index entry may need them.
    assert d.lookup([FACE_INDEX["Z"]] * 3 + [FACE_INDEX["A"]]) == -1


def test_min_cards_one_allows_a_lone_combination():
    one = QuiddlerConfig(min_word_cards=1)
    assert quiddler_env.can_go_out(["IN"], one)
    assert not quiddler_env.can_go_out(["IN"])
    assert quiddler_env.best_layout(["IN", "Q"], one).spelled == ("in",)


@pytest.mark.parametrize("min_cards", [1, 2])
def test_solver_matches_brute_force_on_random_hands(min_cards):
    solver = get_solver(min_cards=min_cards)
    hands = _random_hands(1500, (2, 3, 4, 5, 6, 7, 8), seed=min_cards)
    hands += _random_hands(60, (9, 10), seed=10 + min_cards)
    for hand in hands:
        layout = solver.best_layout(hand)
        assert (layout.score, layout.n_words, layout.longest, solver.can_go_out(hand)) == brute_best(hand, min_cards), (
            hand
        )


def test_go_out_faces_matches_brute_force():
    solver = get_solver()
    for hand in _random_hands(400, (3, 4, 5, 6, 7, 8), seed=7):
        counts = hand_counts(hand)
        bits = solver.go_out_faces(counts)
        for f, c in enumerate(counts):
            rest = list(counts)
            if c:
                rest[f] -= 1
            want = bool(c) and brute_best(faces_of(rest))[3]
            assert bool(bits >> f & 1) == want, (hand, FACES[f])


@pytest.mark.parametrize("min_cards", [1, 2])
def test_one_discard_go_out_search_answers_as_the_whole(min_cards):
    """`go_out_face` (one discard at a time, in any order, sharing one search) answers as `go_out_face_bits`
    (every discard at once), and as brute force on the smaller hands; a face not held never goes out."""
    solver = get_solver(min_cards=min_cards)
    tables = (_KEY_ORDER, min_cards, *solver._trie, solver._term_cards)
    ws = new_scratch()
    rng = np.random.default_rng(21 + min_cards)
    hands = _random_hands(300, (2, 3, 4, 5, 6, 7), seed=30 + min_cards) + _random_hands(
        200, (8, 9, 10, 11, 12), seed=40 + min_cards
    )
    went_out = 0
    for hand in hands:
        counts = np.asarray(hand_counts(hand), dtype=np.int64)
        whole = go_out_face_bits(counts, *tables, False)
        search = go_out_face_start(counts, *tables, ws)
        faces = rng.permutation(len(FACES))
        asked = np.concatenate([faces, rng.choice(faces, 5)])  # each face, then some again
        for f in asked:
            assert go_out_face(int(f), solver._trie[1], search) == bool(whole >> f & 1), (hand, FACES[f])
        if len(hand) <= 7:
            for f in np.flatnonzero(counts):
                rest = counts.copy()
                rest[f] -= 1
                assert go_out_face(int(f), solver._trie[1], search) == brute_best(faces_of(rest), min_cards)[3], (
                    hand,
                    FACES[f],
                )
        went_out += whole != 0
    assert went_out > 50  # the hands include many that go out


def test_discard_options_agree_with_best_layout():
    solver = get_solver()
    for hand in _random_hands(300, (4, 6, 8, 11), seed=3):
        counts = hand_counts(hand)
        options = solver.discard_options(counts)
        assert sorted(o.face for o in options) == sorted({FACE_INDEX[f] for f in hand})
        for o in options:
            rest = list(counts)
            rest[o.face] -= 1
            layout = solver.best_layout(rest, counts=True)
            assert (o.score, o.n_words, o.longest) == (layout.score, layout.n_words, layout.longest)
            assert o.goes_out == bool(solver.go_out_faces(counts) >> o.face & 1)


def test_draw_discard_rows_are_each_draws_discard_options():
    """Row i of `draw_discard_figures(hand, drawn)`: the best layout after each discard of `hand + drawn[i]`."""
    solver = get_solver()
    rng = np.random.default_rng(4)
    for hand in _random_hands(120, (3, 6, 10, 11), seed=4):
        counts = hand_counts(hand)
        drawn = [-1, *(int(f) for f in rng.choice(len(FACES), size=4)), FACE_INDEX[hand[0]]]
        table = solver.draw_discard_figures(counts, drawn)
        assert table.faces.shape == (len(drawn), 12)
        for i, d in enumerate(drawn):
            after = list(counts)
            if d >= 0:
                after[d] += 1
            present = sorted(f for f, c in enumerate(after) if c)
            assert table.faces[i].tolist() == present + [-1] * (12 - len(present))
            for j, f in enumerate(present):
                rest = list(after)
                rest[f] -= 1
                layout = solver.best_layout(rest, counts=True)
                got = (table.score[i, j], table.n_words[i, j], table.longest[i, j], table.goes_out[i, j])
                assert got == (layout.score, layout.n_words, layout.longest, bool(solver.go_out_faces(after) >> f & 1))


def test_draw_discard_figures_refuse_a_hand_too_large():
    solver = get_solver()
    twelve = hand_counts(["A", "E", "I", "O", "U", "B", "C", "D", "G", "H", "L", "M"])
    # A thirteenth card of a face already held fits (13 cards, 12 faces); a thirteenth face does not.
    assert solver.draw_discard_figures(twelve, [-1, FACE_INDEX["A"]]).faces.shape == (2, 12)
    with pytest.raises(ValueError, match="hands of more than 13 cards"):
        solver.draw_discard_figures(twelve, [FACE_INDEX["A"], FACE_INDEX["N"]])


def test_memoised_answers_are_identical():
    solver = get_solver()
    hand = ["E", "R", "A", "S", "T", "IN", "G", "O", "L", "D", "M"]
    first = solver.best_layout(hand)
    assert solver.best_layout(list(reversed(hand))) is first
    assert first.longest == max(len(w) for w in first.spelled)
    assert first.longest == max(sum(LETTERS[FACE_INDEX[f]] for f in w) for w in first.words)


def test_bad_faces_are_named():
    with pytest.raises(ValueError, match="unknown card face 'M7'"):
        quiddler_env.best_layout(["QU", "M7"])


@pytest.mark.slow
def test_command_line_solve():
    out = subprocess.run(
        [sys.executable, "-m", "quiddler_env", "solve", "QU", "I", "Z", "M"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "QUIZ" in out.stdout and "score 20" in out.stdout and "can go out: no" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "quiddler_env", "solve", "QX"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown card face 'QX'" in bad.stderr
