"""Solitaire rules (RULES.md section 8): stacked deals move by move, win and loss, masks, determinism."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quiddler_env.core.cards import COUNTS, FACES, POINTS
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.solitaire import (
    CARDS_IN_PLAY,
    MAX_MOVES,
    MAX_SCORE,
    NUM_ACTIONS,
    NUM_PILES,
    IllegalMoveError,
    SolitaireGame,
    action_name,
    decode_action,
    piles_of,
    restart_action,
    word_action,
)

# A deal in six layers: layer k is the k-th card (from the top) of every pile, and
# each layer is exactly two words, so laying them layer by layer wins.
LAYERS = [
    ["W", "O", "R", "D", "G", "A", "M", "E"],  # piles 0-3 | 4-7
    ["QU", "I", "Z", "J", "O", "K", "E", "S"],  # piles 0-2 | 3-7
    ["TH", "E", "M", "B", "L", "A", "C", "K"],  # piles 0-2 | 3-7
    ["F", "O", "X", "V", "I", "N", "E", "S"],  # piles 0-2 | 3-7
    ["P", "L", "A", "Y", "H", "U", "N", "T"],  # piles 0-3 | 4-7
    ["CL", "A", "S", "H", "D", "R", "U", "G"],  # piles 0-3 | 4-7
]
WIN_PILES = [[LAYERS[k][p] for k in range(6)] for p in range(NUM_PILES)]
WIN_MOVES = [0x0F, 0xF0, 0x07, 0xF8, 0x07, 0xF8, 0x07, 0xF8, 0x0F, 0xF0, 0x0F, 0xF0]

# Pile 0 (A O E A O I) pairs with the top of piles 1..6 in turn and runs out after
# six two-card words; the cards those piles turn up (B C K J Q V) and Z spell nothing.
DIG_PILES = [
    ["A", "O", "E", "A", "O", "I"],
    ["T", "B", "G", "E", "R", "S"],
    ["X", "C", "U", "N", "I", "T"],
    ["M", "K", "A", "R", "E", "N"],
    ["D", "J", "O", "G", "S", "Y"],
    ["N", "Q", "I", "C", "E", "L"],
    ["F", "V", "A", "R", "E", "W"],
    ["Z", "A", "P", "B", "U", "T"],
]


@pytest.fixture(scope="module")
def game() -> SolitaireGame:
    return SolitaireGame()


def faces(cards) -> list[str]:
    return [FACES[c] if c >= 0 else "-" for c in cards]


# -- brute force: every subset of tops, every order, checked against the word list ---------


@lru_cache(maxsize=1)
def _anagram_keys() -> frozenset[str]:
    # A cheap necessary condition (the letters, sorted, must be some word's letters);
    # the permutations below decide.
    return frozenset("".join(sorted(w)) for w in load_dictionary().words)


def brute_force_mask(game: SolitaireGame) -> np.ndarray:
    """The legal action mask computed from the rule text alone, without the index."""
    words = load_dictionary()
    keys = _anagram_keys()
    tops = game.tops()
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    for piles_mask in range(1, 1 << NUM_PILES):
        chosen = piles_of(piles_mask)
        if any(tops[p] < 0 for p in chosen) or len(chosen) < game.min_word_cards:
            continue
        cards = [FACES[tops[p]].lower() for p in chosen]
        if "".join(sorted("".join(cards))) not in keys:
            continue
        if any("".join(order) in words for order in set(itertools.permutations(cards))):
            mask[word_action(piles_mask)] = 1
    sizes = [len(p) for p in game.piles]
    for src, dst in itertools.permutations(range(NUM_PILES), 2):
        if sizes[dst] == 0 and sizes[src] >= 2:
            mask[restart_action(src, dst)] = 1
    return mask


# -- the action table ------------------------------------------------------------------


def test_action_table_round_trips():
    seen = set()
    for m in range(1, 256):
        a = word_action(m)
        assert decode_action(a) == ("word", m, 0)
        seen.add(a)
    for src, dst in itertools.permutations(range(NUM_PILES), 2):
        a = restart_action(src, dst)
        assert decode_action(a) == ("restart", src, dst)
        seen.add(a)
    assert seen == set(range(NUM_ACTIONS)) and NUM_ACTIONS == 311
    assert action_name(word_action(0b101001)) == "word from piles 0+3+5"
    assert action_name(restart_action(2, 6)) == "restart pile 6 from pile 2"
    with pytest.raises(ValueError, match="311"):
        decode_action(311)
    with pytest.raises(ValueError, match="pile 3"):
        restart_action(3, 3)
    with pytest.raises(ValueError, match="256"):
        word_action(256)


def test_game_facts():
    assert CARDS_IN_PLAY == 48 and MAX_MOVES == 88
    # The 48 most valuable cards: Q Q J J Z Z X X V V W W CL CL ... ; computed independently here.
    deck_points = sorted((p for p, c in zip(POINTS, COUNTS, strict=True) for _ in range(c)), reverse=True)
    assert MAX_SCORE == sum(deck_points[:48]) == 394


# -- dealing ---------------------------------------------------------------------------


def test_deal_is_48_cards_five_down_one_up(game):
    game.reset(seed=11)
    assert [len(p) for p in game.piles] == [6] * 8
    assert game.face_down_counts() == [5] * 8
    assert sum(game.dealt_counts) == 48
    assert all(d <= c for d, c in zip(game.dealt_counts, COUNTS, strict=True))
    assert game.score == 0 and game.cards_laid == 0 and game.moves == 0
    assert game.tops() == [p[-1] for p in game.piles]


def test_same_seed_same_deal_and_other_seed_other_deal(game):
    game.reset(seed=5)
    first = [list(p) for p in game.piles]
    np.random.seed(123)  # the global generator must play no part
    game.reset(seed=5)
    assert game.piles == first
    game.reset(seed=6)
    assert game.piles != first
    game.reset(rng=np.random.default_rng(5))
    assert game.piles == first


def test_stacked_deal_is_validated(game):
    with pytest.raises(ValueError, match="8 piles"):
        game.reset(piles=WIN_PILES[:7])
    with pytest.raises(ValueError, match="pile 2 must hold 6 cards"):
        game.reset(piles=[*WIN_PILES[:2], WIN_PILES[2][:5], *WIN_PILES[3:]])
    with pytest.raises(ValueError, match="'ZZ'"):
        game.reset(piles=[["ZZ", "A", "A", "A", "A", "A"], *WIN_PILES[1:]])
    too_many_z = [["Z"] * 6, *WIN_PILES[1:]]
    with pytest.raises(ValueError, match="Z x7"):
        game.reset(piles=too_many_z)
    with pytest.raises(ValueError, match="string"):
        game.reset(piles=["AOEAOI", *DIG_PILES[1:]])


# -- scripted games, move by move ------------------------------------------------------------


def test_winning_deal_layer_by_layer(game):
    game.reset(piles=WIN_PILES)
    assert faces(game.tops()) == LAYERS[0]
    expected_words = []
    for i, piles_mask in enumerate(WIN_MOVES):
        before = faces(game.tops())
        assert game.is_legal(word_action(piles_mask)), (i, before)
        points = game.step(word_action(piles_mask))
        laid = game.words_laid[-1]
        assert sorted(laid.piles) == list(piles_of(piles_mask))
        assert [before[p] for p in laid.piles] == list(laid.faces)  # cards in spelling order, from their piles
        assert "".join(laid.faces).lower() == laid.word and laid.word in load_dictionary()
        assert points == laid.points == sum(POINTS[FACES.index(f)] for f in laid.faces)
        expected_words.append(laid.word)
        layer = (i // 2) + 1
        for p in piles_of(piles_mask):  # each used pile turned up its next card
            assert game.tops()[p] == (FACES.index(LAYERS[layer][p]) if layer < 6 else -1)
        game.check_invariants()
    # Anagrams: the engine names the first word in alphabetical order (METH, not THEM; VEINS, not VINES).
    assert expected_words == [
        "word",
        "game",
        "quiz",
        "jokes",
        "meth",
        "black",
        "fox",
        "veins",
        "paly",
        "hunt",
        "clash",
        "drug",
    ]
    assert game.won and game.is_over and game.cards_laid == 48 and game.cards_left == 0
    assert game.legal_actions() == [] and not game.legal_action_mask().any()
    assert game.score == 254
    quiz = game.words_laid[2]
    assert quiz.faces == ("QU", "I", "Z") and quiz.points == 25  # the rule book's QUIZ = 25


def _play_dig_opening(game: SolitaireGame) -> None:
    game.reset(piles=DIG_PILES)
    expected = [  # (piles mask, word, points, tops after)
        (0b0000011, "at", 5, "O B X M D N F Z"),
        (0b0000101, "ox", 14, "E B C M D N F Z"),
        (0b0001001, "em", 7, "A B C K D N F Z"),
        (0b0010001, "ad", 7, "O B C K J N F Z"),
        (0b0100001, "no", 7, "I B C K J Q F Z"),
        (0b1000001, "if", 8, "- B C K J Q V Z"),
    ]
    score = 0
    for piles_mask, word, points, tops_after in expected:
        assert game.play_word(piles_mask) == points
        score += points
        assert game.words_laid[-1].word == word
        assert " ".join(faces(game.tops())) == tops_after
        assert game.score == score
        game.check_invariants()
    assert game.face_down_counts() == [0, 4, 4, 4, 4, 4, 4, 5]


def test_no_word_but_a_restart_is_not_the_end(game):
    _play_dig_opening(game)
    assert game.word_moves() == []
    assert game.restart_moves() == [(src, 0) for src in range(1, 8)]
    assert not game.is_over and not game.won
    assert (game.legal_action_mask() == brute_force_mask(game)).all()
    # Pile 0 is empty: it cannot give a card, and a non-empty pile cannot receive one.
    with pytest.raises(IllegalMoveError, match="pile 1 from pile 0"):
        game.restart(0, 1)
    with pytest.raises(IllegalMoveError, match="legal actions"):
        game.restart(2, 1)
    with pytest.raises(IllegalMoveError, match="do not spell a word"):
        game.play_word(0b10000010)


def test_restart_that_turns_up_a_word(game):
    _play_dig_opening(game)
    assert game.step(restart_action(7, 0)) == 0
    # Z moved onto pile 0; pile 7 turned up its next card, A.
    assert " ".join(faces(game.tops())) == "Z B C K J Q V A"
    assert game.face_down_counts() == [0, 4, 4, 4, 4, 4, 4, 4]
    assert game.restarts == 1 and game.moves == 7 and game.score == 48
    spelled = {game.spell(m).word for m, _ in game.word_moves()}
    assert spelled == {"ab", "back", "cab", "jab", "jack", "ka", "kab", "vac"}
    assert not game.is_over
    # The restarted pile holds only its face-up card: it cannot restart another pile.
    assert all(src != 0 for src, _ in game.restart_moves())
    game.check_invariants()


def test_restart_that_finds_nothing_loses(game):
    _play_dig_opening(game)
    game.restart(1, 0)
    # B moved onto pile 0; pile 1 turned up G. No word, no empty pile: lost.
    assert " ".join(faces(game.tops())) == "B G C K J Q V Z"
    assert game.word_moves() == [] and game.restart_moves() == []
    assert game.is_over and not game.won
    assert game.score == 48 and game.cards_laid == 12 and game.cards_left == 36
    assert not brute_force_mask(game).any()
    with pytest.raises(IllegalMoveError):
        game.step(restart_action(2, 0))


def test_deal_without_a_word_is_lost_at_once(game):
    dead = [
        ["Z", "A", "A", "A", "A", "A"],
        ["X", "A", "A", "A", "A", "A"],
        ["J", "E", "E", "E", "E", "E"],
        ["Q", "E", "E", "E", "E", "E"],
        ["V", "I", "I", "I", "I", "E"],
        ["K", "I", "I", "I", "I", "E"],
        ["C", "O", "O", "O", "O", "U"],
        ["B", "O", "O", "O", "O", "U"],
    ]
    game.reset(piles=dead)
    assert faces(game.tops()) == ["Z", "X", "J", "Q", "V", "K", "C", "B"]
    assert game.is_over and not game.won and game.legal_actions() == []
    assert not brute_force_mask(game).any()


def test_min_word_cards_option():
    piles = [
        ["IN", "A", "A", "A", "A", "A"],
        ["ER", "E", "E", "E", "E", "E"],
        ["B", "O", "O", "O", "O", "O"],
        ["C", "O", "O", "O", "I", "I"],
        ["D", "I", "I", "I", "I", "I"],
        ["F", "I", "U", "U", "U", "U"],
        ["G", "U", "U", "E", "E", "E"],
        ["H", "E", "E", "E", "E", "A"],
    ]
    strict = SolitaireGame(QuiddlerConfig(min_word_cards=2))
    strict.reset(piles=piles)
    loose = SolitaireGame(QuiddlerConfig(min_word_cards=1))
    loose.reset(piles=piles)
    assert word_action(0b01) not in strict.legal_actions()  # a lone IN is not a word by default
    assert word_action(0b01) in loose.legal_actions() and word_action(0b10) in loose.legal_actions()
    assert loose.spell(0b01).word == "in" and loose.spell(0b10).word == "er"
    assert (strict.legal_action_mask() == brute_force_mask(strict)).all()
    assert (loose.legal_action_mask() == brute_force_mask(loose)).all()
    assert loose.play_word(0b01) == 7


def test_illegal_action_errors_name_the_move(game):
    game.reset(piles=WIN_PILES)
    with pytest.raises(IllegalMoveError, match=r"piles \[0\] .*tops are W O R D G A M E"):
        game.play_word(0b1)
    with pytest.raises(IllegalMoveError, match="out of range"):
        game.step(NUM_ACTIONS)
    with pytest.raises(IllegalMoveError, match="out of range"):
        game.step(-1)
    assert game.moves == 0 and game.score == 0  # a refused move changes nothing


# -- properties over random play ------------------------------------------------------------


def test_masks_match_brute_force_over_random_games(game):
    rng = np.random.default_rng(2024)
    checked = 0
    for seed in range(6):
        game.reset(seed=seed)
        while True:
            assert (game.legal_action_mask() == brute_force_mask(game)).all(), (seed, faces(game.tops()))
            checked += 1
            legal = game.legal_actions()
            if not legal:
                break
            game.step(int(rng.choice(legal)))
    assert checked > 30


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), choices=st.lists(st.integers(0, 10_000), min_size=MAX_MOVES, max_size=MAX_MOVES))
def test_random_play_properties(game, seed, choices):
    game.reset(seed=seed)
    dealt = list(game.dealt_counts)
    for k in range(MAX_MOVES + 1):
        game.check_invariants()  # cards conserved, score = points of the words laid
        assert game.cards_laid + game.cards_left == CARDS_IN_PLAY
        assert all(pile[-1] == top for pile, top in zip(game.piles, game.tops(), strict=True) if pile)
        assert 0 <= game.score <= MAX_SCORE
        legal = game.legal_actions()
        mask = game.legal_action_mask()
        assert sorted(np.flatnonzero(mask).tolist()) == legal
        assert (mask == brute_force_mask(game)).all(), faces(game.tops())
        assert game.is_over == (not legal)
        if not legal:
            assert game.won == (game.cards_left == 0)
            break
        a = legal[choices[k] % len(legal)]
        kind, _, _ = decode_action(a)
        before = game.cards_left
        points = game.step(a)
        assert (game.cards_left < before and points > 0) if kind == "word" else (game.cards_left == before)
    else:
        pytest.fail(f"game did not end within {MAX_MOVES} moves")
    assert game.dealt_counts == dealt
    laid = [0] * len(FACES)
    for w in game.words_laid:
        for f in w.faces:
            laid[FACES.index(f)] += 1
    assert laid == game.laid_counts


_TRAJECTORY = """
import numpy as np
from quiddler_env.core.solitaire import SolitaireGame
g = SolitaireGame(); rng = np.random.default_rng(7); out = []
for seed in range(3):
    g.reset(seed=seed)
    while g.legal_actions():
        a = int(rng.choice(g.legal_actions())); g.step(a); out.append(a)
    out.append(g.score)
print(out)
"""


@pytest.mark.slow
def test_same_game_in_processes_with_different_hash_seeds():
    runs = []
    for hash_seed in ("1", "987"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run([sys.executable, "-c", _TRAJECTORY], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        runs.append(proc.stdout)
    assert runs[0] == runs[1] and len(runs[0]) > 20
