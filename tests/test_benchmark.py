"""The versioned benchmark: a fixed deal file, identical cards for identical runs, a stamp that follows the inputs."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from quiddler_agents.evaluation.benchmark import (
    BENCHMARKS,
    BenchmarkError,
    Protocol,
    body_sha256,
    candidate_tables,
    deal_file_bytes,
    get_protocol,
    load_deals,
    pairing,
    render_markdown,
    run_benchmark,
    with_changes,
    write_card,
)
from quiddler_agents.evaluation.schedule import Tournament, TournamentError
from quiddler_agents.evaluation.tournament import build_players, play_all
from quiddler_env.core.config import QuiddlerConfig

RULES = QuiddlerConfig(hand_sizes=[3, 4])


def tiny(tmp_path, name="deals.json.gz", data: bytes | None = None) -> Protocol:
    """A two-round protocol: random and greedy at tables of 2 and 4, three deals each."""
    data = deal_file_bytes(7, {2: 3, 4: 2}) if data is None else data
    path = tmp_path / name
    path.write_bytes(data)
    return Protocol(
        name="tiny",
        deal_file=path,
        deal_sha256=hashlib.sha256(data).hexdigest(),
        pool={2: ("random", "greedy"), 4: ("greedy",)},
        deals={2: 3, 4: 2},
        move_limit_s=1.0,
        rules=RULES,
    )


def without_timing(card: dict) -> dict:
    return {k: v for k, v in card.items() if k != "timing"}


def test_the_shipped_v1_deal_file_matches_its_declared_hash():
    v1 = get_protocol("v1")
    deals = load_deals(v1.deal_file, v1.deal_sha256)
    assert {t: len(deals[t]) for t in deals} == {2: 200, 4: 100}
    assert all(len(decks) == 8 and sorted(decks[0]) == sorted(decks[1]) for _, decks in deals[2][:5])
    assert v1.deal_file.stat().st_size < 1_000_000
    assert set(v1.pool) == {2, 4} and "zoo:champion-2p" in v1.pool[2] and "zoo:table-4p" in v1.pool[4]


def test_the_shipped_v1_deal_file_is_the_scripts_output():
    """benchmarks/make_deals.py --seed 20261205 --deals 2=200 4=100 writes exactly the shipped bytes."""
    assert deal_file_bytes(20261205, {2: 200, 4: 100}) == get_protocol("v1").deal_file.read_bytes()


def test_the_deal_files_ship_in_the_wheel():
    import fnmatch
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    patterns = pyproject["tool"]["setuptools"]["package-data"]["quiddler_agents.evaluation"]
    assert any(fnmatch.fnmatch("deals/v1.json.gz", p) for p in patterns)


def test_deal_file_bytes_are_reproducible():
    assert deal_file_bytes(3, {2: 2}) == deal_file_bytes(3, {2: 2})
    assert deal_file_bytes(3, {2: 2}) != deal_file_bytes(4, {2: 2})


def test_two_runs_give_identical_cards(tmp_path):
    protocol = tiny(tmp_path)
    first, second = run_benchmark(protocol, "greedy"), run_benchmark(protocol, "greedy")
    assert without_timing(first) == without_timing(second)
    assert first["body_sha256"] == body_sha256(first) == second["body_sha256"]
    a, b = write_card(first, tmp_path / "a"), write_card(second, tmp_path / "b")
    assert json.loads(a[0].read_text())["body_sha256"] == first["body_sha256"]
    # The Markdown differs only in its measured decision times.
    md_a, md_b = (p[1].read_text().split("## Decision times")[0] for p in (a, b))
    assert md_a == md_b and "Reduced run" not in md_a


def test_a_changed_rule_or_deal_file_changes_the_stamp(tmp_path):
    protocol = tiny(tmp_path)
    base = run_benchmark(protocol, "random")["stamp"]
    ruled = run_benchmark(with_changes(protocol, rules=QuiddlerConfig(hand_sizes=[3, 4], bonus_value=5)), "random")
    assert ruled["stamp"]["rules"] != base["rules"]
    assert ruled["stamp"]["deal_file"] == base["deal_file"]
    # A copy of the deal file with two cards of one deck swapped, declared with its own hash.
    data = json.loads(gzip.decompress(protocol.deal_file.read_bytes()))
    deck = data["tables"]["2"][0]["decks"][0]
    deck[0], deck[1] = deck[1], deck[0]
    swapped = gzip.compress(json.dumps(data).encode(), mtime=0)
    other = tiny(tmp_path, "swapped.json.gz", swapped)
    changed = run_benchmark(other, "random")["stamp"]
    assert changed["deal_file"]["sha256"] == hashlib.sha256(swapped).hexdigest() != base["deal_file"]["sha256"]
    assert changed["rules"] == base["rules"]


def test_a_tampered_deal_file_is_refused(tmp_path):
    protocol = tiny(tmp_path)
    raw = bytearray(protocol.deal_file.read_bytes())
    raw[-5] ^= 1
    protocol.deal_file.write_bytes(bytes(raw))
    with pytest.raises(BenchmarkError, match=r"deal file .*sha256 .* is not the protocol's .*changed") as info:
        run_benchmark(protocol, "greedy")
    assert "\n" not in str(info.value)
    with pytest.raises(BenchmarkError, match="unknown benchmark 'v9'; known: v1, v1-vocab"):
        get_protocol("v9")


def test_the_card_figures_are_the_tournaments(tmp_path):
    protocol = tiny(tmp_path)
    card = run_benchmark(protocol, "greedy", games_per_pairing=4)
    assert card["stamp"]["full"] is False and card["stamp"]["games_per_pairing"] == {"2": 4, "4": 4}
    deals = load_deals(protocol.deal_file, protocol.deal_sha256)
    tournament = Tournament(("greedy", "random"), games=4, table_size=2, rules=RULES, stacked=deals[2][:2])
    played = play_all(tournament, build_players(tournament), engine="single")
    figures = card["tables"]["2"]["opponents"]["random"]
    wins = sum(g.winners == [g.seats.index(0)] for g in played)
    assert (figures["games"], figures["deals"], figures["wins"]) == (4, 2, wins)
    diffs = [g.totals[g.seats.index(0)] - g.totals[g.seats.index(1)] for g in played]
    assert figures["paired_difference"]["estimate"] == pytest.approx(sum(diffs) / 4)
    # Each game was dealt the file's decks, seat rotations of one deal sharing them.
    assert [g.deal for g in played] == [0, 0, 1, 1] and played[0].deal_seed == deals[2][0][0]
    assert card["tables"]["4"]["opponents"]["greedy"]["games"] == 4
    assert "**Reduced run**" in render_markdown(card)
    assert card["timing"]["tables"]["2"]["decisions"] > 0


def test_given_deals_are_checked_and_played_by_both_engines(tmp_path):
    deals = load_deals(tiny(tmp_path).deal_file, tiny(tmp_path).deal_sha256)[2]
    with pytest.raises(TournamentError, match="3 deals to play, but only 2 given"):
        Tournament(("greedy", "random"), games=6, table_size=2, rules=RULES, stacked=deals[:2])
    # The same given decks in both engines: greedy ends every game with the same totals.
    tournament = Tournament(("greedy", "greedy"), games=6, table_size=2, rules=RULES, stacked=deals)
    single = play_all(tournament, build_players(tournament), engine="single")
    batched = play_all(tournament, build_players(tournament), engine="batched")
    assert [g.totals for g in single] == [g.totals for g in batched]
    seeded = Tournament(("greedy", "greedy"), games=6, table_size=2, rules=RULES)
    assert [g.totals for g in play_all(seeded, build_players(seeded))] != [g.totals for g in single]
    assert tournament.cards(1)[1][0] == list(deals[1][1][0])


def test_a_card_of_some_tables_says_so(tmp_path):
    protocol = tiny(tmp_path)
    card = run_benchmark(protocol, "greedy", tables=[2])
    assert list(card["tables"]) == ["2"] and list(card["stamp"]["rules"]) == ["2"]
    assert card["stamp"]["full"] is False and card["stamp"]["protocol_games_per_pairing"] == {"2": 6, "4": 8}
    assert card["tables"]["2"] == run_benchmark(protocol, "greedy")["tables"]["2"]
    # A policy trained for two players sits at the table of 2 only, unless told otherwise.
    assert candidate_tables(get_protocol("v1"), "zoo:champion-2p") == (2,)
    assert candidate_tables(get_protocol("v1"), "greedy") == (2, 4)
    stacked = load_deals(protocol.deal_file, protocol.deal_sha256)[4]
    table = pairing(protocol, "greedy", "random", 4, 1, stacked, trusted=True)
    assert table.specs == ("greedy", "random", "random", "random") and table.trusted and table.total_games == 4


def test_v1_has_two_tracks_on_the_same_deals_and_pool():
    assert sorted(BENCHMARKS) == ["v1", "v1-vocab"] and BENCHMARKS["v1"].deal_file.name == "v1.json.gz"
    full, vocab = BENCHMARKS["v1"], BENCHMARKS["v1-vocab"]
    for key in ("deal_file", "deal_sha256", "pool", "deals", "move_limit_s", "seed", "rules"):
        assert getattr(full, key) == getattr(vocab, key), key
    assert full.vocabularies == () and len(vocab.vocabularies) == max(vocab.tables)
    assert len(set(vocab.vocabularies)) == len(vocab.vocabularies)  # each seat draws its own
    assert full.rules_for(4).vocabularies == () and full.rules_for(4).num_players == 4
    assert vocab.rules_for(2).vocabularies == vocab.vocabularies[:2] and not vocab.rules_for(2).challenges


def test_the_vocabulary_track_plays_each_seat_with_its_own_words_and_stamps_them(tmp_path):
    seats = ("level-everyday:0.6:1", "level-everyday:0.6:2", "level-everyday:0.6:3", "level-everyday:0.6:4")
    protocol = with_changes(tiny(tmp_path), vocabularies=seats)
    card = run_benchmark(protocol, "greedy")
    stamp = card["stamp"]
    assert [v["spec"] for v in stamp["vocabularies"]] == list(seats)
    assert len({v["identity"] for v in stamp["vocabularies"]}) == 4
    assert all(20_000 < v["words"] < 27_000 for v in stamp["vocabularies"])  # 60% of level 3's 38,933
    assert stamp["rules"]["2"]["vocabularies"] == list(seats[:2]) and stamp["rules"]["4"]["vocabularies"] == list(seats)
    assert "seat 3's vocabulary `level-everyday:0.6:3`" in render_markdown(card)
    # Its games are not the full track's: the seats find fewer words.
    full = run_benchmark(tiny(tmp_path), "greedy")
    assert card["tables"] != full["tables"] and "vocabularies" not in full["stamp"]
    assert without_timing(card) == without_timing(run_benchmark(protocol, "greedy"))
    other = run_benchmark(with_changes(protocol, vocabularies=("level-everyday:0.6:9", *seats[1:])), "greedy")
    assert other["stamp"]["vocabularies"] != stamp["vocabularies"] and other["body_sha256"] != card["body_sha256"]


def test_the_command_writes_the_card_and_refuses_bad_input(tmp_path, monkeypatch, capsys):
    from quiddler_agents.cli.evaluate import main
    from quiddler_agents.evaluation import benchmark

    monkeypatch.setitem(benchmark.BENCHMARKS, "v1", tiny(tmp_path))
    cards = []
    for run in ("a", "b"):
        assert (
            main(["--benchmark", "v1", "greedy", "--games-per-pairing", "2", "--out", str(tmp_path / run), "--quiet"])
            == 0
        )
        cards.append(json.loads((tmp_path / run / "card.json").read_text()))
        assert (tmp_path / run / "card.md").read_text().startswith("# Benchmark tiny: `greedy`")
    assert without_timing(cards[0]) == without_timing(cards[1])
    assert cards[0]["stamp"]["games_per_pairing"] == {"2": 2, "4": 4} and cards[0]["stamp"]["full"] is False
    capsys.readouterr()
    for argv, message in (
        (["--benchmark", "v9", "greedy"], "unknown benchmark 'v9'; known: v1, v1-vocab"),
        (["--benchmark", "v1", "nobody", "--out", str(tmp_path / "c")], "nobody"),
        (["--benchmark", "v1", "greedy", "--games-per-pairing", "0"], "games per pairing must be a positive integer"),
        (["--benchmark", "v1", "greedy", "--players", "random"], "drop --players"),
        (["--players", "random", "greedy", "--games-per-pairing", "2"], "go with --benchmark"),
        (["--benchmark", "v1", "greedy", "--tables", "3"], "benchmark tiny has tables of (2, 4), not 3"),
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "c").exists()


@pytest.mark.slow
def test_the_console_command_runs_the_shipped_v1_twice_alike(tmp_path):
    import subprocess
    import sys

    cards = []
    for run in ("a", "b"):
        out = tmp_path / run
        argv = [sys.executable, "-m", "quiddler_agents.cli.evaluate", "--benchmark", "v1", "random"]
        argv += ["--games-per-pairing", "2", "--out", str(out), "--quiet"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        cards.append(json.loads((out / "card.json").read_text()))
    assert without_timing(cards[0]) == without_timing(cards[1])
    assert cards[0]["stamp"]["deal_file"]["sha256"] == get_protocol("v1").deal_sha256
