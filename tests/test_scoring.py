"""Round scoring: card points, bonuses, ties, the two-player option and the floors."""

from __future__ import annotations

import quiddler_env
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.scoring import bonuses_in_play, score_round


def lay(*hand):
    return quiddler_env.best_layout(list(hand))


def test_card_points_minus_unused():
    (r,) = score_round([lay("QU", "I", "Z", "M")], [0], QuiddlerConfig(bonus_value=0))
    assert (r.card_points, r.unused_points, r.round_score) == (25, 5, 20)


def test_bonuses_three_players_and_ties():
    config = QuiddlerConfig(num_players=3)
    quiz = lay("QU", "I", "Z", "M")  # 1 word, 4 letters
    two_words = lay("C", "A", "T", "D", "O", "G")  # 2 words, 3 letters
    nothing = lay("Q", "X")  # no word
    results = score_round([quiz, two_words, nothing], [0, 0, 0], config)
    assert results[0].bonuses == {"longest_word": 10}
    assert results[1].bonuses == {"most_words": 10}
    assert results[2].bonuses == {} and results[2].round_score == 0  # floored
    # A tie for most words: nobody gets it; a tie for longest: nobody gets it.
    tie = score_round([two_words, two_words, quiz], [0, 0, 0], config)
    assert [r.bonuses for r in tie] == [{}, {}, {"longest_word": 10}]


def test_two_player_bonus_option():
    quiz, two_words = lay("QU", "I", "Z", "M"), lay("C", "A", "T", "D", "O", "G")
    default = score_round([quiz, two_words], [0, 0], QuiddlerConfig())
    assert [r.bonuses for r in default] == [{"longest_word": 10}, {}]
    most = score_round([quiz, two_words], [0, 0], QuiddlerConfig(two_player_bonus="most_words"))
    assert [r.bonuses for r in most] == [{}, {"most_words": 10}]
    both = score_round([quiz, two_words], [0, 0], QuiddlerConfig(two_player_bonus="both", bonus_value=7))
    assert [r.bonuses for r in both] == [{"longest_word": 7}, {"most_words": 7}]
    assert bonuses_in_play(QuiddlerConfig(two_player_bonus="most_words"), 3) == ("most_words", "longest_word")


def test_score_floor_options():
    bad = lay("Q", "X", "Z")  # -41, no word
    good = lay("T", "O", "P")
    config = QuiddlerConfig(bonus_value=0)
    r_round = score_round([bad, good], [30, 0], config)
    assert (r_round[0].round_score, r_round[0].total) == (0, 30)
    r_none = score_round([bad, good], [30, 0], QuiddlerConfig(bonus_value=0, score_floor="none"))
    assert (r_none[0].round_score, r_none[0].total) == (-41, -11)
    r_total = score_round([bad, good], [30, 0], QuiddlerConfig(bonus_value=0, score_floor="total"))
    assert (r_total[0].round_score, r_total[0].total) == (-41, 0)


def test_results_rebuild_their_scores():
    results = score_round([lay("QU", "I", "Z", "M"), lay("T", "O", "P", "S")], [5, 7], QuiddlerConfig())
    for r, before in zip(results, [5, 7], strict=True):
        d = r.to_dict()
        assert d["round_score"] == max(0, d["card_points"] - d["unused_points"] + sum(d["bonuses"].values()))
        assert d["total"] == before + d["round_score"]
