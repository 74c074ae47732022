"""Tournament schedule, seeds, duplicate deals and the figures computed from played games (in process)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np
import pytest

from quiddler_agents.evaluation.batched import play_batched
from quiddler_agents.evaluation.stats import wilson_interval
from quiddler_agents.evaluation.summary import summarize
from quiddler_agents.evaluation.tournament import (
    Tournament,
    TournamentError,
    _Table,
    chunks,
    deal_cards,
    deal_seed,
    player_labels,
    run_tournament,
)
from quiddler_env.core.cards import COUNTS
from quiddler_env.core.config import QuiddlerConfig

SHORT = QuiddlerConfig(hand_sizes=(3, 4, 5))


def dealt_hands(deck: list[int], num_players: int, hand_size: int, dealer: int) -> list[list[int]]:
    """The rule book's deal: one card at a time from the dealer's left, the deck's top card first."""
    hands = [[0] * len(COUNTS) for _ in range(num_players)]
    for i in range(num_players * hand_size):
        hands[(dealer + 1 + i) % num_players][deck[i]] += 1
    return hands


@pytest.fixture(scope="module")
def three_way():
    t = Tournament(("greedy", "random", "greedy"), games=9, seed=3, rules=SHORT)
    return t, run_tournament(t, workers=1, engine="single")


def test_labels_are_unique():
    assert player_labels(["greedy", "random", "greedy", "greedy"]) == ["greedy", "random", "greedy#2", "greedy#3"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"specs": ("greedy",)}, "at least 2 players"),
        ({"specs": ("greedy", "random"), "table_size": 3}, "table size 3 cannot be filled by 2 players"),
        ({"specs": ("greedy",) * 9}, "9 players cannot sit at one table"),
        ({"specs": ("greedy",) * 9, "table_size": 9}, "table size must be an integer 2..8"),
        ({"specs": ("greedy",) * 17, "table_size": 2}, "at most 16 players"),
        ({"specs": ("greedy", "random"), "games": 0}, "games must be a positive integer"),
        ({"specs": ("greedy", "random"), "seed": -1}, "seed must be a non-negative integer"),
    ],
)
def test_tournament_rejects_bad_input(kwargs, message):
    kwargs = {"games": 4, **kwargs}
    with pytest.raises(TournamentError, match=message):
        Tournament(**kwargs)


def test_table_size_sets_the_rules_players():
    t = Tournament(("greedy", "random", "expert"), games=5, rules=SHORT)
    assert t.table_size == 3 and t.rules.num_players == 3 and t.rules.hand_sizes == (3, 4, 5)
    assert t.total_games == 6 and t.deals == 2  # rounded up to whole duplicate deals
    assert Tournament(("greedy", "random", "expert"), games=5, duplicate=False).total_games == 5


def test_duplicate_schedule_rotates_every_player_through_every_seat():
    t = Tournament(("greedy", "random", "expert", "greedy"), games=8, seed=0)
    slots = [t.slot(g) for g in range(t.total_games)]
    by_deal = defaultdict(list)
    for s in slots:
        by_deal[s.deal].append(s)
    assert sorted(by_deal) == [0, 1]
    for games in by_deal.values():
        assert sorted(s.rotation for s in games) == [0, 1, 2, 3]
        for seat in range(4):  # each player sits in each seat once per deal
            assert sorted(s.seats[seat] for s in games) == [0, 1, 2, 3]


def test_pool_larger_than_table_cycles_matchups():
    t = Tournament(("greedy", "random", "expert"), games=12, table_size=2)
    assert t.matchups == [(0, 1), (0, 2), (1, 2)]
    slots = [t.slot(g) for g in range(12)]
    assert Counter(s.matchup for s in slots) == {0: 4, 1: 4, 2: 4}
    assert all(set(s.seats) == set(t.matchups[s.matchup]) for s in slots)
    assert [s.deal for s in slots] == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    # Without duplicate deals every game has its own deal, seats still rotating.
    t2 = Tournament(("greedy", "random", "expert"), games=12, table_size=2, duplicate=False)
    assert [t2.slot(g).deal for g in range(12)] == list(range(12))
    assert [t2.slot(g).rotation for g in range(4)] == [0, 1, 0, 1]


def test_deal_seeds_differ_and_decks_are_full_shuffles():
    seeds = {deal_seed(0, d) for d in range(100)} | {deal_seed(1, d) for d in range(100)}
    assert len(seeds) == 200
    decks, rng = deal_cards(deal_seed(0, 0), 3)
    assert len(decks) == 3 and all(sorted(np.bincount(d, minlength=31)) == sorted(COUNTS) for d in decks)
    assert decks[0] != decks[1]
    again, rng2 = deal_cards(deal_seed(0, 0), 3)
    assert again == decks and rng.permutation(np.arange(50)).tolist() == rng2.permutation(np.arange(50)).tolist()


def test_chunks_cover_every_game_in_whole_deals():
    t = Tournament(("greedy", "random", "expert"), games=300, seed=0)
    for workers in (1, 2, 7):
        parts = chunks(t, workers)
        assert [g for part in parts for g in part] == list(range(t.total_games))
        assert all(part[0] % 3 == 0 for part in parts) and all(len(part) % 3 == 0 for part in parts)


def test_duplicate_games_replay_the_same_cards(three_way):
    t, played = three_way
    assert [g.game for g in played] == list(range(9))
    by_deal = defaultdict(list)
    for g in played:
        by_deal[g.deal].append(g)
    assert len(by_deal) == 3
    seeds = {games[0].deal_seed for games in by_deal.values()}
    assert len(seeds) == 3  # different deals, different cards
    for games in by_deal.values():
        assert len({g.deal_seed for g in games}) == 1
        decks, _ = deal_cards(games[0].deal_seed, 3)
        # Whoever sits in a seat gets that seat's cards: each player got every seat's hand once.
        first_round = dealt_hands(decks[0], 3, 3, dealer=2)
        got = defaultdict(list)
        for g in games:
            for seat, player in enumerate(g.seats):
                got[player].append(tuple(first_round[seat]))
        assert all(sorted(hands) == sorted(tuple(h) for h in first_round) for hands in got.values())


def test_each_game_is_a_pure_function_of_its_index(three_way):
    t, played = three_way
    table = _Table(t)
    # Played alone and out of order, in a fresh table, games come out the same.
    for g in (7, 2):
        alone = table.play([g])[0]
        assert alone == played[g]
    assert all(g.rounds and len(g.rounds) == 3 for g in played)


def test_batched_games_are_pure_functions_of_their_index_too(three_way):
    t, single = three_way
    played = run_tournament(t, workers=1)  # auto: a pool of random and greedy plays batched
    assert run_tournament(t, workers=1, engine="batched") == played
    for g in (7, 2):
        assert play_batched(t, list(t.specs), [g])[0] == played[g]
    # The same schedule, seats and decks as the single engine; the bots' tie-breaks are their own.
    for a, b in zip(played, single, strict=True):
        assert (a.game, a.deal, a.seats, a.deal_seed) == (b.game, b.deal, b.seats, b.deal_seed)
        assert a.rounds[0]["results"] != [] and len(a.rounds) == len(b.rounds)
    assert [g.totals for g in played] != [g.totals for g in single]


def test_the_challenge_variant_plays_batched_too():
    """Random and greedy are compiled bots in the variant too: auto plays it batched, game by game the same."""
    rules = QuiddlerConfig(
        hand_sizes=(3, 4), challenges=True, layout="choose", vocabularies=["referee", "enable:0.5:2"]
    )
    t = Tournament(("greedy", "random"), games=4, seed=5, rules=rules)
    played = run_tournament(t, workers=1)
    assert run_tournament(t, workers=1, engine="batched") == played
    assert play_batched(t, list(t.specs), [3])[0] == played[3]
    results = [r for g in played for rnd in g.rounds for r in rnd["results"]]
    assert all("challenge" in r for r in results) and any(r["challenge"]["made"] for r in results)


def test_summary_figures_agree_with_the_games(three_way):
    t, played = three_way
    s = summarize(t, played)
    assert s["games"] == 9 and s["units"] == "deal"
    assert list(s["players"]) == ["greedy", "random", "greedy#2"]
    total_wins = 0
    for p, fig in enumerate(s["players"].values()):
        totals = [g.totals[g.seats.index(p)] for g in played]
        wins = sum(1 for g in played if g.winners == [g.seats.index(p)])
        ties = sum(1 for g in played if len(g.winners) > 1 and g.seats.index(p) in g.winners)
        total_wins += wins
        assert (fig["games"], fig["wins"], fig["ties"], fig["losses"]) == (9, wins, ties, 9 - wins - ties)
        assert fig["win_rate"] == wilson_interval(wins, 9).to_dict()
        assert fig["final_score"]["estimate"] == pytest.approx(np.mean(totals))
        assert fig["final_score"]["n"] == 3  # three deals, three units
        assert fig["final_score"]["min"] == min(totals) and fig["final_score"]["max"] == max(totals)
        for h, hand_size in enumerate((3, 4, 5)):
            scores = [g.rounds[h]["results"][g.seats.index(p)]["round_score"] for g in played]
            assert fig["round_score_by_hand_size"][str(hand_size)]["estimate"] == pytest.approx(np.mean(scores))
        went = sum(r["results"][g.seats.index(p)]["went_out"] for g in played for r in g.rounds)
        assert fig["go_out_rate"]["estimate"] == pytest.approx(went / 27)
        words = [w for g in played for r in g.rounds for w in r["results"][g.seats.index(p)]["spelled"]]
        assert fig["words_per_round"] == pytest.approx(len(words) / 27)
        assert fig["longest_word"]["letters"] == max(len(w) for w in words)
    assert total_wins <= 9
    assert len(s["pairs"]) == 3
    for pair in s["pairs"]:
        assert pair["a_ahead"] + pair["b_ahead"] + pair["level"] == pair["games"] == 9
        raw, paired = pair["score_difference"]["raw"], pair["score_difference"]["paired"]
        assert raw["estimate"] == pytest.approx(paired["estimate"])
        assert paired["n"] == 3 and raw["n"] == 9
    assert s["ratings"] is not None and set(s["ratings"]["players"]) == {"greedy", "random", "greedy#2"}


def test_two_player_pool_has_no_ratings_and_game_units_without_duplicate():
    t = Tournament(("greedy", "random"), games=3, seed=1, duplicate=False, rules=SHORT)
    played = run_tournament(t)
    s = summarize(t, played)
    assert s["ratings"] is None and s["units"] == "game"
    assert s["pairs"][0]["score_difference"]["paired"]["n"] == 3
    assert len({g.deal_seed for g in played}) == 3
    assert math.isclose(
        s["pairs"][0]["score_difference"]["paired"]["estimate"],
        np.mean([g.totals[g.seats.index(0)] - g.totals[g.seats.index(1)] for g in played]),
    )


def test_run_tournament_rejects_bad_workers():
    t = Tournament(("greedy", "random"), games=2, rules=SHORT)
    with pytest.raises(TournamentError, match="workers must be a positive integer"):
        run_tournament(t, workers=0)


def test_policy_table_size_reads_the_bundles(tmp_path):
    import json

    from quiddler_agents.evaluation.tournament import policy_table_size
    from quiddler_env.core.observation import observation_layout

    def size(n: int) -> int:
        return observation_layout(n).size

    def bundle(name: str, observation_size: int) -> str:
        folder = tmp_path / name
        folder.mkdir()
        desc = {"format": 1, "observation_size": observation_size, "action_size": 64, "net_arch": [8]}
        desc |= {"activation": "Tanh", "policy_class": "MaskableActorCriticPolicy"}
        desc |= {"features_extractor": "FlattenExtractor", "share_features_extractor": True}
        desc["weights_sha256"] = "0" * 64  # required by the bundle format (not checked for the table size)
        (folder / "policy.json").write_text(json.dumps(desc))
        return f"policy:{folder}/model.zip"

    two, two_again, three = bundle("a", size(2)), bundle("b", size(2)), bundle("c", size(3))
    assert policy_table_size(["greedy", "random"]) is None
    assert policy_table_size([two, "greedy", two_again]) == 2
    assert policy_table_size([three, "random"]) == 3
    assert policy_table_size([two, three]) is None  # they disagree: the player count decides
    assert policy_table_size([f"policy:{tmp_path}/missing/model.zip", "greedy"]) is None


def test_seat_figures_count_one_players_games():
    from quiddler_agents.evaluation.tournament import PlayedGame, seat_figures

    def game(seats, totals):
        return PlayedGame(0, 0, 0, 0, tuple(seats), 0, list(totals), [], [])

    played = [
        game((0, 1), (30, 20)),  # player 0 at seat 0: sole top
        game((1, 0), (30, 30)),  # a tie on the top total
        game((1, 0), (40, 10)),  # player 0 at seat 1: a loss by 30
        game((1, 2), (5, 5)),  # player 0 not at this table
    ]
    f = seat_figures(played, 0)
    assert (f["games"], f["wins"], f["ties"]) == (3, 1, 1)
    assert f["mean_total"] == (30 + 30 + 10) / 3 and f["mean_others"] == (20 + 30 + 40) / 3
    assert f["mean_margin"] == (10 + 0 - 30) / 3
