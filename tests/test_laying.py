"""Laying: the Pareto front of a hand's layouts, the automatic rule, the bonuses it counts.

Golden examples from issue 11 and the rule book (section 6, "Laying"), worked out by
hand; then cross-checks against `tests.reference`, which enumerates every layout of a
hand without the index or the kernels.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quiddler_env.core import laying
from quiddler_env.core.cards import FACE_INDEX, FACES, POINTS, hand_counts, new_deck
from quiddler_env.core.config import TWO_PLAYER_BONUS, QuiddlerConfig
from quiddler_env.core.dictionary import KEY_ORDER, load_dictionary
from quiddler_env.core.laying import MAX_CANDIDATES, auto_layout, bonuses_won, candidates, lay_key
from quiddler_env.core.scoring import score_round
from quiddler_env.core.solver import Figures, Layout, get_solver
from quiddler_env.core.solver_kernel import layout_front_hand

from .reference import all_layouts, layout_figures, pareto, table_bonus, word_table

DEFAULT = QuiddlerConfig()  # two players, longest-word bonus only, 10 points


def _laid(*words: str) -> Layout:
    """A laid layout of single-letter cards spelling `words`, every card used."""
    faces = tuple(tuple(c.upper() for c in w) for w in words)
    points = sum(POINTS[FACE_INDEX[f]] for w in faces for f in w)
    return Layout(words=faces, spelled=words, unused=(), score=points, card_points=points, unused_points=0)


TOP, BEAD, WALTZ, ZAX = _laid("top"), _laid("bead"), _laid("waltz"), _laid("zax")


def _front(hand: str, *, goes_out: bool = False, min_cards: int = 2) -> tuple[Layout, ...]:
    return get_solver(min_cards=min_cards).layout_front(hand_counts(hand.split()), full_only=goes_out)


def _lays(hand: str, laid, config=DEFAULT, num_players=2, goes_out=False) -> Layout:
    return auto_layout(_front(hand, goes_out=goes_out), laid, config, num_players)


def _figures(layout: Layout) -> tuple[int, int, int]:
    return layout.score, layout.longest, layout.n_words


def test_the_words_of_the_examples_are_in_enable():
    d = load_dictionary()
    for word in ("ether", "there", "three", "eh", "ret", "bead", "abed", "ab", "de", "top", "claim", "ain", "mo"):
        assert word in d, word
    for word in ("inia", "hang", "haj", "waltz", "zax"):
        assert word in d, word


# -- golden examples -----------------------------------------------------------------------------


def test_there_going_out_lays_ether():
    lay = _lays("T H E R E", [], goes_out=True)
    assert lay.spelled == ("ether",) and lay.unused == ()
    assert _figures(lay) == (19, 5, 1)
    assert bonuses_won(lay, [], DEFAULT, 2) == {"longest_word": 10}
    assert lay_key(lay, [], DEFAULT, 2) == (29, 5, 1)
    # The points-only best layout (ties: more words) is EH RET: same points, no longer word.
    best = get_solver().best_layout(["T", "H", "E", "R", "E"])
    assert sorted(best.spelled) == ["eh", "ret"] and best.score == 19


def test_bead_against_top_lays_the_four_letter_word():
    lay = _lays("B E A D", [TOP])
    assert sorted(lay.spelled[0]) == sorted("bead") and lay.n_words == 1
    assert lay.score == 17 and lay_key(lay, [TOP], DEFAULT, 2) == (27, 4, 1)
    ab_de = [x for x in _front("B E A D") if x.n_words == 2]
    assert [sorted(x.spelled) for x in ab_de] == [["ab", "de"]]
    assert lay_key(ab_de[0], [TOP], DEFAULT, 2) == (17, 2, 2)


def test_three_players_most_words_beats_claim():
    # O2 I2 A2 IN7 CL10 M5. CLAIM: 19 - 9 = 10, its 5 letters tie WALTZ: no bonus.
    # AIN + MO: 16 - 12 = 4, + 10 for the most words = 14 (the rule book's example);
    # INIA + MO (I N I A with the IN card) does better still under ENABLE: 18 - 10 = 8, + 10 = 18.
    laid = [WALTZ, ZAX]
    lay = _lays("O I A IN CL M", laid, num_players=3)
    assert sorted(lay.spelled) == ["inia", "mo"] and lay.unused == ("CL",)
    assert lay.score == 8 and bonuses_won(lay, laid, DEFAULT, 3) == {"most_words": 10}
    figures = {layout_figures(w, u) for w, u in all_layouts(["O", "I", "A", "IN", "CL", "M"])}
    assert (10, 5, 1) in figures and (4, 3, 2) in figures  # CLAIM, AIN + MO
    claim = [x for x in _front("O I A IN CL M") if x.spelled == ("claim",)][0]
    assert lay_key(claim, laid, DEFAULT, 3) == (10, 5, 1)


@pytest.mark.parametrize(
    ("laid", "config", "want", "total"),
    [
        ([], DEFAULT, "haj", 21),  # first to lay: HAJ's 3 letters win the bonus too
        ([TOP], DEFAULT, "hang", 17),  # HAJ ties TOP's 3 letters; HANG's 4 win: 7 + 10 > 11
        ([BEAD], DEFAULT, "haj", 11),  # HANG ties BEAD: no bonus for it, so HAJ's 11
        ([TOP], QuiddlerConfig(two_player_bonus="most_words"), "haj", 11),  # one word each: no bonus
        ([TOP], QuiddlerConfig(bonus_value=5), "hang", 12),  # 7 + 5 > 11
        ([TOP], QuiddlerConfig(bonus_value=3), "haj", 11),  # 7 + 3 < 11
        ([TOP], QuiddlerConfig(bonus_value=0), "haj", 11),
    ],
)
def test_agnjh_lays_hang_only_when_the_bonus_pays(laid, config, want, total):
    # H7 A2 J13 G6 N5: HAJ 22 - 11 = 11 (3 letters), HANG 20 - 13 = 7 (4 letters).
    lay = _lays("A G N J H", laid, config)
    assert lay.spelled == (want,)
    assert lay_key(lay, laid, config, 2)[0] == total


@pytest.mark.parametrize(
    ("num_players", "rule", "laid", "want", "won"),
    [
        (2, "longest_word", [TOP], ["ether"], {"longest_word": 10}),
        (2, "most_words", [TOP], ["eh", "ret"], {"most_words": 10}),
        # Both: ETHER wins the longest word, EH RET the most words, 29 each: the longer word.
        (2, "both", [TOP], ["ether"], {"longest_word": 10}),
        (2, "both", [WALTZ], ["eh", "ret"], {"most_words": 10}),  # ETHER ties WALTZ: 19
        (2, "longest_word", [WALTZ], ["ether"], {}),  # a tie: nobody's bonus, 19 each way
        (3, "longest_word", [], ["ether"], {"most_words": 10, "longest_word": 10}),  # first: both bonuses
        (3, "most_words", [TOP, WALTZ], ["eh", "ret"], {"most_words": 10}),
        (5, "longest_word", [TOP, ZAX, BEAD, _laid("ab", "de")], ["ether"], {"longest_word": 10}),
        (4, "longest_word", [TOP, _laid("ab", "de", "to"), WALTZ], ["ether"], {}),
    ],
)
def test_each_bonus_rule(num_players, rule, laid, want, won):
    config = QuiddlerConfig(two_player_bonus=rule, num_players=num_players)
    lay = _lays("T H E R E", laid, config, num_players, goes_out=True)
    assert sorted(lay.spelled) == want
    assert bonuses_won(lay, laid, config, num_players) == won


def test_no_bonus_without_words_or_with_bonus_value_zero():
    nothing = _lays("Q Z X", [])
    assert _figures(nothing) == (-41, 0, 0) and nothing.unused == ("Q", "X", "Z")
    assert bonuses_won(nothing, [], QuiddlerConfig(two_player_bonus="both"), 2) == {}
    zero = QuiddlerConfig(bonus_value=0, two_player_bonus="both")
    ether = _lays("T H E R E", [], zero, goes_out=True)
    assert ether.spelled == ("ether",) and bonuses_won(ether, [], zero, 2) == {}
    bead = _lays("B E A D", [TOP], zero)  # 17 either way: the longer word
    assert _figures(bead) == (17, 4, 1)


@pytest.mark.parametrize(
    ("floor", "totals", "want_rounds", "want_totals"),
    [
        ("round", [0, 5], [29, 0], [29, 5]),
        ("none", [0, 5], [29, -41], [29, -36]),
        ("total", [0, 5], [29, -41], [29, 0]),
        ("total", [0, 50], [29, -41], [29, 9]),
    ],
)
def test_a_round_scored_from_auto_layouts_keeps_the_floors(floor, totals, want_rounds, want_totals):
    config = QuiddlerConfig(score_floor=floor)
    goer = _lays("T H E R E", [], config, goes_out=True)
    other = _lays("Q Z X", [goer], config)
    results = score_round([goer, other], totals, config, went_out=0)
    assert [r.round_score for r in results] == want_rounds
    assert [r.total for r in results] == want_totals
    assert results[0].bonuses == {"longest_word": 10} and results[1].bonuses == {}
    # A tie at the table: WALTZ laid first, ETHER's 5 letters tie it, nobody gets the bonus.
    tie = score_round([WALTZ, _lays("T H E R E", [WALTZ], config, goes_out=True)], [0, 0], config)
    assert [r.bonuses for r in tie] == [{}, {}]


def test_empty_hand_and_a_hand_without_words():
    empty = get_solver().layout_front([0] * 31)
    assert [(x.words, x.unused, x.score) for x in empty] == [((), (), 0)]
    assert get_solver().layout_front([0] * 31, full_only=True) == ()
    assert [(x.words, x.unused) for x in _front("Q Z X")] == [((), ("Q", "X", "Z"))]
    assert _front("Q Z X", goes_out=True) == ()
    with pytest.raises(ValueError, match="front is empty"):
        auto_layout((), [], DEFAULT, 2)


def test_equal_keys_go_to_the_first_in_order():
    # A front never holds two layouts with the same (longest, words); a list of candidates may.
    ether, there = _laid("ether"), _laid("there")
    assert auto_layout([ether, there], [], DEFAULT, 2) is ether
    assert auto_layout([there, ether], [], DEFAULT, 2) is there
    assert auto_layout([_laid("eh", "ret"), ether], [], DEFAULT, 2) is ether  # 3 letters < 5


def test_candidates_are_the_front_cut_to_k(monkeypatch):
    solver = get_solver()
    counts = hand_counts(["O", "I", "A", "IN", "CL", "M"])
    front = solver.layout_front(counts)
    assert candidates(solver, counts, goes_out=False) == front
    assert candidates(solver, hand_counts(["Q", "Z", "X"]), goes_out=True) == ()
    assert candidates(solver, hand_counts(["T", "H", "E", "R", "E"]), goes_out=True) == _front(
        "T H E R E", goes_out=True
    )
    monkeypatch.setattr(laying, "MAX_CANDIDATES", 1)
    assert candidates(solver, counts, goes_out=False) == front[:1]
    assert solver.layout_front(list(counts)) is front  # memoised on the multiset


# -- cross-checks against every layout -----------------------------------------------------------


def _check_front(front, hand: list[str], want: set, min_cards: int, full_only: bool) -> None:
    got = [_figures(x) for x in front]
    assert got == sorted(want, reverse=True), hand  # exactly the non-dominated triples, in the fixed order
    assert len(front) <= MAX_CANDIDATES, hand
    table, d = word_table(), load_dictionary()
    for x in front:
        for faces, word in zip(x.words, x.spelled, strict=True):
            assert "".join(faces).lower() == word and word in d, (hand, word)
            assert tuple(sorted(faces)) in table and len(faces) >= min_cards, (hand, word)
        assert Counter(f for w in x.words for f in w) + Counter(x.unused) == Counter(hand), hand
        assert layout_figures(x.words, x.unused) == _figures(x), hand
        used = sum(POINTS[FACE_INDEX[f]] for w in x.words for f in w)
        assert (x.card_points, x.unused_points) == (used, sum(POINTS[FACE_INDEX[f]] for f in x.unused))
        assert not (full_only and x.unused), hand


def _sweep(n_hands: int, min_cards: int, seed: int) -> None:
    solver = get_solver(min_cards=min_cards)
    rng = np.random.default_rng(seed)
    deck = np.asarray(new_deck())
    for i in range(n_hands):
        hand = [FACES[f] for f in rng.choice(deck, 1 + i % 11, replace=False)]
        layouts = all_layouts(hand, min_cards)
        figures = [layout_figures(w, u) for w, u in layouts]
        counts = hand_counts(hand)
        front = solver.layout_front(counts)
        _check_front(front, hand, pareto(figures), min_cards, False)
        full = [f for (_, u), f in zip(layouts, figures, strict=True) if not u]
        _check_front(solver.layout_front(counts, full_only=True), hand, pareto(full), min_cards, True)
        # Today's best layout (ties: more words, then the longer word) is on the front.
        best = solver.best_layout(counts, counts=True)
        assert _figures(best) == _figures(max(front, key=lambda x: (x.score, x.n_words, x.longest))), hand


@pytest.mark.parametrize("min_cards", [1, 2])
def test_front_is_the_pareto_set_of_every_layout(min_cards):
    _sweep(165, min_cards, seed=100 + min_cards)


@pytest.mark.slow
@pytest.mark.parametrize("min_cards", [1, 2])
def test_front_is_the_pareto_set_of_every_layout_big_sweep(min_cards):
    _sweep(1650, min_cards, seed=200 + min_cards)


def _reference_layout(words, unused) -> Layout:
    score, _, _ = layout_figures(words, unused)
    left = sum(POINTS[FACE_INDEX[f]] for f in unused)
    table = word_table()
    return Layout(
        words=words,
        spelled=tuple(table[w] for w in words),
        unused=unused,
        score=score,
        card_points=score + left,
        unused_points=left,
    )


@st.composite
def _tables(draw, max_cards: int = 9):
    """A hand, whether it goes out, the table's rules, and random layouts of other hands already laid."""
    num_players = draw(st.integers(2, 8))
    config = QuiddlerConfig(
        num_players=num_players,
        hand_sizes=(3,),
        min_word_cards=draw(st.sampled_from([1, 2])),
        two_player_bonus=draw(st.sampled_from(TWO_PLAYER_BONUS)),
        bonus_value=draw(st.sampled_from([10, 0, 1, 5, 20])),
    )
    deck = [FACES[f] for f in draw(st.permutations(new_deck()))]
    n = draw(st.integers(1, max_cards))
    hand, rest = deck[:n], deck[n:]
    laid = []
    for _ in range(draw(st.integers(0, num_players - 1))):
        k = draw(st.integers(1, 8))
        other, rest = rest[:k], rest[k:]
        options = all_layouts(other, config.min_word_cards)
        laid.append(_reference_layout(*options[draw(st.integers(0, len(options) - 1))]))
    return hand, draw(st.booleans()), config, laid


def _check_auto(hand, goes_out, config, laid) -> None:
    n = config.num_players
    layouts = [(w, u) for w, u in all_layouts(hand, config.min_word_cards) if u == () or not goes_out]
    if goes_out and not any(u == () for _, u in layouts):
        return
    laid_figures = [_figures(x) for x in laid]

    def key(figures):
        bonus = table_bonus(figures, laid_figures, config.two_player_bonus, n, config.bonus_value)
        return (figures[0] + bonus, figures[1], figures[2])

    want = max(key(layout_figures(w, u)) for w, u in layouts)
    front = get_solver(min_cards=config.min_word_cards).layout_front(hand_counts(hand), full_only=goes_out)
    lay = auto_layout(front, laid, config, n)
    assert lay_key(lay, laid, config, n) == want == key(_figures(lay)), (hand, laid_figures)
    assert sum(bonuses_won(lay, laid, config, n).values()) == want[0] - lay.score
    # The first such layout in the front's order.
    before = front[: front.index(lay)]
    assert all(key(_figures(x)) < want for x in before)
    assert not (goes_out and lay.unused)


@settings(derandomize=True, database=None, deadline=None, max_examples=120)
@given(_tables())
def test_auto_layout_is_the_best_response_to_the_table(table):
    _check_auto(*table)


def _seeded_tables(n_tables: int, seed: int, max_cards: int):
    """Tables with hand sizes spread evenly, half of them a goer's hand (one that lays every card)."""
    rng = np.random.default_rng(seed)
    for i in range(n_tables):
        num_players = int(rng.integers(2, 9))
        config = QuiddlerConfig(
            num_players=num_players,
            hand_sizes=(3,),
            min_word_cards=int(rng.integers(1, 3)),
            two_player_bonus=TWO_PLAYER_BONUS[i % 3],
            bonus_value=int(rng.choice([10, 10, 0, 5, 20])),
        )
        deck = [FACES[f] for f in rng.permutation(new_deck())]
        n, goes_out = 1 + i % max_cards, i % 2 == 1
        hand = deck[:n]
        if goes_out:  # the first n cards in a row of the deck that can go out (the check only picks the input)
            solver, j = get_solver(min_cards=config.min_word_cards), 0
            while not solver.can_go_out(hand) and j < len(deck):
                j += 1
                hand = (deck + deck)[j : j + n]
        rest = list((Counter(deck) - Counter(hand)).elements())
        rng.shuffle(rest)
        laid = []
        for _ in range(int(rng.integers(0, num_players))):
            k = int(rng.integers(1, 9))
            other, rest = rest[:k], rest[k:]
            options = all_layouts(other, config.min_word_cards)
            laid.append(_reference_layout(*options[int(rng.integers(len(options)))]))
        yield hand, goes_out, config, laid


def test_auto_layout_on_seeded_tables():
    for table in _seeded_tables(300, seed=5, max_cards=10):
        _check_auto(*table)


@pytest.mark.slow
@settings(derandomize=True, database=None, deadline=None, max_examples=1000)
@given(_tables(max_cards=11))
def test_auto_layout_is_the_best_response_to_the_table_big_sweep(table):
    _check_auto(*table)


@pytest.mark.slow
def test_auto_layout_on_seeded_tables_big_sweep():
    for table in _seeded_tables(1500, seed=6, max_cards=11):
        _check_auto(*table)


# -- the automatic rule's shortcut in the batched engine ------------------------------------------


def _kernel_front(counts, full_only: bool, slack: int, min_cards: int = 2, by_longest: bool = False):
    """`layout_front_hand` as the engine calls it: (used, longest, words, terms, unused) per layout."""
    solver = get_solver(min_cards=min_cards)
    used, longest, words, term_off, terms, unused_off, unused = layout_front_hand(
        np.asarray(counts, dtype=np.int64),
        np.asarray(KEY_ORDER, dtype=np.int64),
        min_cards,
        full_only,
        *solver._trie,
        solver._term_points,
        solver._term_letters,
        solver._term_cards,
        np.asarray(POINTS, dtype=np.int64),
        slack,
        by_longest,
    )
    return [
        (
            int(used[i]),
            int(longest[i]),
            int(words[i]),
            tuple(terms[term_off[i] : term_off[i + 1]].tolist()),
            tuple(unused[unused_off[i] : unused_off[i + 1]].tolist()),
        )
        for i in range(used.shape[0])
    ]


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_cards=st.integers(1, 11),
    full_only=st.booleans(),
    bonus_value=st.sampled_from([0, 3, 10, 25, -5]),
    bonuses=st.sampled_from(["longest_word", "most_words", "both"]),
    min_cards=st.sampled_from([1, 2]),
)
def test_auto_rule_front_keeps_every_layout_the_rule_can_pick(
    seed, n_cards, full_only, bonus_value, bonuses, min_cards
):
    # The engine's automatic rule reads a shortened front (`slack`: the bonuses' worth in all). It must be the
    # whole front's layouts using at least U - slack // 2 points (U: the most any layout uses), with the same
    # words, and the rule must pick the same layout from it, whatever was laid before. Where the longest word's
    # bonus is the only one and not negative (`by_longest`), the front by longest word alone keeps some of
    # those, in the same order, and the rule still picks the same layout.
    rng = np.random.default_rng(seed)
    hand = [FACES[f] for f in rng.choice(np.asarray(new_deck()), n_cards, replace=False)]
    counts = hand_counts(hand)
    total = sum(POINTS[FACE_INDEX[f]] for f in hand)
    config = QuiddlerConfig(bonus_value=bonus_value, two_player_bonus=bonuses, min_word_cards=min_cards)
    slack = abs(bonus_value) * (2 if bonuses == "both" else 1)
    whole = _kernel_front(counts, full_only, -1, min_cards)
    short = _kernel_front(counts, full_only, slack, min_cards)
    fronts = [short]
    if bonuses == "longest_word" and bonus_value >= 0:
        fronts.append(_kernel_front(counts, full_only, slack, min_cards, by_longest=True))
        assert _kernel_front(counts, full_only, -1, min_cards, by_longest=True) == whole  # no slack: the whole front
    if not whole:
        assert fronts == [[]] * len(fronts)
        return
    most = max(x[0] for x in whole)
    assert short == [x for x in whole if x[0] >= most - slack // 2]
    kept = iter(short)
    assert all(x in kept for x in fronts[-1])  # a subsequence of the short front
    for _ in range(4):
        laid = [
            Figures(int(rng.integers(-20, 40)), int(rng.integers(0, 9)), int(rng.integers(0, 5)))
            for _ in range(int(rng.integers(0, 3)))
        ]

        def figures(front):
            return [Figures(2 * u - total, L, W) for u, L, W, _, _ in front]

        want = whole[laying.auto_index(figures(whole), laid, config, 2)]
        for front in fronts:
            got = front[laying.auto_index(figures(front), laid, config, 2)]
            assert got == want, (hand, laid)
