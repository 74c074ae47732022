"""The browser table's server side: the game authority (`quiddler_agents.table.session`), the saved games, the replay
positions and the JSON API over HTTP on the loopback address. (The page itself, in Chromium: test_table_browser.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quiddler_agents.search import SearchAgent
from quiddler_agents.table.replay import replay_frames, replay_records
from quiddler_agents.table.server import CURRENT, TableServer
from quiddler_agents.table.session import MoveRefused, TableGame
from quiddler_env.core.cards import FACES
from quiddler_env.core.config import QuiddlerConfig
from tests.table_client import call as _call
from tests.table_client import serve

SHORT = QuiddlerConfig(hand_sizes=(3, 4))


def _finish(table: TableGame) -> TableGame:
    """Play the human's seat with its last legal move (a go-out when there is one) to the game's end."""
    table.play_agents()
    while not table.game.is_over:
        table.move(table.human, table.view()["moves"][-1]["action"])
    return table


def test_a_move_out_of_turn_or_not_legal_is_refused_and_changes_nothing():
    table = TableGame(["greedy", "human"], SHORT, seed=2)
    before = table.record()
    with pytest.raises(MoveRefused, match="not your turn: greedy"):
        table.move(1, 0)  # seat 0 (greedy) moves first and has not been played
    assert table.record() == before
    table.play_agents()
    view = table.view()
    assert view["to_move"] == 1 and [m["name"] for m in view["moves"]][0] == "draw"
    before = table.record()
    for seat, action, reason in [
        (0, 0, "seat 0 is not the human's seat"),
        (1, 40, "move 40 is not legal now"),
        (1, "0", "move '0' is not legal"),
        (1, True, "not legal"),
    ]:
        with pytest.raises(MoveRefused, match=reason):
            table.move(seat, action)
        assert table.record() == before


def test_a_whole_game_shows_the_round_results_and_the_totals():
    table = _finish(TableGame(["human", "greedy", "expert"], SHORT, seed=5))
    view = table.view()
    assert view["game_over"] and len(view["results"]) == 2 and len(view["totals_history"]) == 3
    assert view["totals_history"][-1] == list(table.game.totals) == [s["total"] for s in view["seats"]]
    assert view["winners"] == table.game.winners()
    for result in view["results"][-1]:
        assert set(result) >= {"player", "spelled", "unused", "bonuses", "round_score", "total"}
    with pytest.raises(MoveRefused, match="the game is over"):
        table.move(0, 0)


def test_the_view_shows_the_human_only_their_own_hand():
    table = TableGame(["human", "greedy"], seed=1)
    table.play_agents()
    view = table.view()
    assert sorted(c["face"] for c in view["hand"]) == sorted(
        face for face, count in zip(FACES, table.game.hands[0], strict=True) for _ in range(count)
    )
    assert "hands" not in view and view["seats"][1]["cards"] == sum(table.game.hands[1])
    best = table.game.best_layout(0)
    assert view["best_layout"]["score"] == best.score


def test_a_saved_game_reopens_exactly_and_a_tampered_one_is_refused():
    table = TableGame(["human", "greedy"], SHORT, seed=9)
    table.play_agents()
    for _ in range(5):
        table.move(0, table.view()["moves"][0]["action"])
    record = json.loads(json.dumps(table.record()))
    again = TableGame.from_record(record)
    assert again.view() == table.view() and again.record() == record
    bad = json.loads(json.dumps(record))
    bad["actions"][1][1] = 63
    with pytest.raises(ValueError, match="move 1 .* is not legal in the replay"):
        TableGame.from_record(bad)
    with pytest.raises(ValueError, match="not a saved table game"):
        TableGame.from_record({**record, "format": "x"})


def test_replay_frames_step_through_every_move_with_every_hand():
    table = _finish(TableGame(["human", "greedy"], SHORT, seed=4))
    replay = replay_frames(table.record())
    frames = replay["frames"]
    assert len(frames) == len(table.actions) + 1 and frames[0]["move"] is None
    assert all(len(f["hands"]) == 2 for f in frames[:-1]) and frames[-1]["phase"] == "over"
    assert [f["results"] is not None for f in frames].count(True) == 2
    assert frames[-1]["totals"] == list(table.game.totals) and replay["winners"] == table.game.winners()


def _serve(tmp_path: Path, replay_files=()):
    return serve(tmp_path / "games", replay_files)


def test_the_api_plays_refuses_saves_reopens_and_resumes(tmp_path):
    server, base = _serve(tmp_path)
    try:
        assert _call(f"{base}/api/state") == (200, {"game": None})
        status, data = _call(
            f"{base}/api/new", {"seats": ["human", "greedy"], "rules": {"hand_sizes": [3, 4]}, "seed": 3}
        )
        assert status == 200 and data["game"]["to_move"] == 0
        view = data["game"]
        status, data = _call(f"{base}/api/move", {"seat": 0, "action": 63})
        assert status == 409 and data["error"].startswith("move 63 is not legal now") and data["game"] == view
        assert _call(f"{base}/api/move", raw=b"{not json")[0] == 400
        assert _call(f"{base}/api/new", {"seats": ["greedy", "greedy"]})[1]["error"].startswith(
            "a table seats exactly one"
        )
        assert _call(f"{base}/api/new", {"seats": ["human", "wizard"]})[0] == 400
        status, data = _call(f"{base}/api/move", {"seat": 0, "action": 0})
        assert status == 200 and data["game"]["phase"] == "discard"
        assert json.loads((tmp_path / "games" / CURRENT).read_text())["actions"][-1] == [0, 0]
        assert _call(f"{base}/api/save", {"name": "../escape"})[0] == 400
        assert _call(f"{base}/api/save", {"name": "mid"})[1]["games"] == ["mid"]
        _call(f"{base}/api/move", {"seat": 0, "action": data["game"]["moves"][0]["action"]})
        status, data = _call(f"{base}/api/open", {"name": "mid"})
        assert status == 200 and data["game"]["phase"] == "discard"
        replay = _call(f"{base}/api/replay?file=mid.json&game=0")[1]["replay"]
        saved = json.loads((tmp_path / "games" / "mid.json").read_text())
        assert len(replay["frames"]) == len(saved["actions"]) + 1
        assert _call(f"{base}/api/replay?file=/etc/passwd")[0] == 400
    finally:
        server.shutdown()
        server.server_close()
    # A new server on the same folder resumes the current game.
    again = TableServer(("127.0.0.1", 0), tmp_path / "games")
    try:
        assert again.state()["game"]["phase"] == "discard"
    finally:
        again.server_close()


def test_a_games_jsonl_file_is_offered_to_the_viewer(tmp_path):
    games = tmp_path / "games.jsonl"
    tables = [_finish(TableGame(["human", "greedy"], SHORT, seed=s)) for s in (1, 2)]
    games.write_text("".join(json.dumps(t.record()) + "\n" for t in tables))
    assert len(replay_records(games)) == 2
    server, base = _serve(tmp_path, [games])
    try:
        assert _call(f"{base}/api/saved")[1]["replays"] == {"games.jsonl": 2}
        data = _call(f"{base}/api/replay?file=games.jsonl&game=1")[1]
        assert data["games"] == 2 and data["replay"]["frames"][-1]["totals"] == list(tables[1].game.totals)
        assert _call(f"{base}/api/replay?file=games.jsonl&game=2")[1]["error"] == "games.jsonl holds games 0..1, not 2"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_the_viewer_replays_the_games_that_evaluate_saves(tmp_path):
    from quiddler_agents.cli import evaluate

    out = tmp_path / "results"
    args = ["--players", "greedy", "expert", "--games", "2", "--workers", "1", "--save-games", "--out", str(out)]
    assert evaluate.main([*args, "--quiet"]) == 0
    records = replay_records(out / "games.jsonl")
    assert len(records) == 2
    for record in records:
        replay = replay_frames(record)
        assert replay["seats"] == record["seats"] and replay["frames"][-1]["totals"] == record["totals"]
        assert len(replay["frames"]) == len(record["actions"]) + 1


def test_any_agent_spec_takes_a_seat_at_a_table_of_up_to_eight():
    table = _finish(TableGame(["greedy", "expert", "human", "random"], SHORT, seed=6))
    assert table.game.is_over and len(table.view()["seats"]) == 4
    assert _finish(TableGame(["zoo:champion-2p", "human"], SHORT, seed=6)).game.is_over
    with pytest.raises(ValueError, match="takes observations of size 287"):  # a 2-player policy at 3 seats
        TableGame(["zoo:champion-2p", "human", "greedy"])
    with pytest.raises(ValueError, match="unknown agent 'wizard'"):
        TableGame(["human", "wizard"])
    with pytest.raises(ValueError, match="num_players"):
        TableGame(["human"] + ["greedy"] * 8)


def test_with_layout_choose_the_human_lays_by_choosing_a_candidate():
    table = TableGame(["human", "greedy"], QuiddlerConfig(hand_sizes=(4, 5), layout="choose"), seed=8)
    table.play_agents()
    laid = 0
    while not table.game.is_over:
        view = table.view()
        if view["phase"] == "lay":
            assert view["candidates"] and [m["name"] for m in view["moves"]] == [
                f"lay {k + 1}" for k in range(len(view["candidates"]))
            ]
            laid += 1
        table.move(0, view["moves"][0]["action"] if view["phase"] != "discard" else view["moves"][-1]["action"])
    assert laid == 2  # once a round


def test_the_challenge_variant_offers_the_human_its_challenges_by_word_and_logs_the_verdicts():
    rules = QuiddlerConfig(hand_sizes=(4, 5), challenges=True, layout="choose", vocabularies=["enable", "enable:0.5:4"])
    table = TableGame(["human", "random"], rules, seed=3)
    table.play_agents()
    challenged = 0
    while not table.game.is_over:
        view = table.view()
        names = [m["name"] for m in view["moves"]]
        if view["phase"] == "challenge":
            assert names[0] == "pass" and all(n.startswith("challenge ") for n in names[1:])
            # Each challenge names the word as it was laid and the seat that laid it.
            laid = {w.upper() for w in table.game.laid[1].spelled}
            assert {n.split()[1] for n in names[1:]} <= laid and all(n.endswith("(random)") for n in names[1:])
            if len(names) > 1:
                challenged += 1
                table.move(0, view["moves"][1]["action"])
                mine = [e for e in table.log if e["seat"] == 0][-1]  # the agents may have moved since
                assert mine["move"].endswith((": it stands", ": it fails"))
                continue
        table.move(0, view["moves"][0]["action"] if view["phase"] != "discard" else view["moves"][-1]["action"])
    assert challenged > 0
    assert all("challenge" in r for rnd in table.results for r in rnd)


def test_the_form_gets_the_offered_seats_plain_rule_labels_and_whole_errors(tmp_path):
    server, base = _serve(tmp_path)
    try:
        offered = _call(f"{base}/api/agents")[1]
        assert {"greedy", "expert", "search", "zoo:champion-2p"} <= set(offered["agents"])
        assert set(offered["about"]) == set(offered["agents"]) and all(offered["about"].values())
        # The level picker's choices: the shipped levels (their one declaration) and the bots that take one.
        from quiddler_env.core.levels import LEVELS

        assert offered["levels"] == [{"number": lv.number, "name": lv.name, "words": lv.words} for lv in LEVELS]
        assert offered["leveled"] == ["greedy", "expert", "search", "guided"]
        rules = {r["name"]: r for r in _call(f"{base}/api/rules")[1]["rules"]}
        assert rules["min_word_cards"]["label"] == "Fewest cards in a word"
        assert all(r["label"] and "_" not in r["label"] for r in rules.values())
        assert rules["two_player_bonus"]["choice_labels"] == ["longest word only", "most words only", "both"]
        # A misspelt seat: the reason whole, on one line, with what the table offers.
        status, data = _call(f"{base}/api/new", {"seats": ["human", "greddy"]})
        assert status == 400 and "\n" not in data["error"]
        assert data["error"].startswith("unknown agent 'greddy' in seat 'greddy'; this table offers: human, random")
        assert "zoo:champion-2p" in data["error"] and data["error"].endswith("policy:PATH")
        # A bad parameter of a known agent: its reason whole too.
        status, data = _call(f"{base}/api/new", {"seats": ["human", "search:n=3"]})
        assert status == 400 and data["error"].endswith("known: " + ", ".join(SearchAgent.PARAMS))
    finally:
        server.shutdown()
        server.server_close()


def test_the_view_names_each_move_s_kind_and_card_and_shows_laid_words_as_cards():
    table = TableGame(["human", "greedy"], SHORT, seed=4)
    view = table.view()
    assert {(m["kind"], m.get("face")) for m in view["moves"]} == {("draw", None), ("take", None)}
    assert view["points"]["QU"] == 9 and view["points"]["A"] == 2
    table.move(0, 0)
    view = table.view()
    hand = {c["face"] for c in view["hand"]}
    assert {m["face"] for m in view["moves"] if m["kind"] == "discard"} == hand
    best = view["best_layout"]
    assert ["".join(w) for w in best["cards"]] == best["words"]
    _finish(table)
    over = table.view()
    assert over["game_over"] and over["points"]


def test_the_coach_answers_on_the_humans_turn_behind_the_guard_and_reviews_saved_games(tmp_path):
    from quiddler_agents.coach import Coach

    server, base = _serve(tmp_path)
    try:
        assert _call(f"{base}/api/coach")[0] == 409  # no game yet
        _call(f"{base}/api/new", {"seats": ["human", "greedy"], "rules": {"hand_sizes": [3, 4]}, "seed": 3})
        server.coaches[json.dumps(server.table.config.to_dict(), sort_keys=True)] = Coach(
            server.table.config, samples=8
        )
        assert _call(f"{base}/api/coach", headers={"X-Quiddler-Token": "wrong"})[0] == 403  # the guard's token
        status, data = _call(f"{base}/api/coach")
        coach = data["coach"]
        assert status == 200 and coach["kind"] == "draw" and coach["basis"] == "rollouts" and coach["played"] == 0
        assert {m["move"] for m in coach["moves"]} == {"draw", f"take {server.table.view()['discard_top']['face']}"}
        assert coach["best"]["move"] == coach["moves"][0]["move"] == coach["search"]["move"]
        assert _call(f"{base}/api/coach")[1] == data  # seeded by the game and the move: the same answer
        _finish(server.table)
        assert _call(f"{base}/api/coach")[0] == 409  # the game is over
        _call(f"{base}/api/save", {"name": "done"})
        status, data = _call(f"{base}/api/review?file=done.json&game=0")
        review = data["review"]
        assert status == 200 and {d["player"] for d in review["decisions"]} == {"human", "greedy"}
        assert all(d["loss"] is None or d["loss"] >= 0 for d in review["decisions"])
        assert set(review["players"]) == {"human", "greedy"}
        assert _call(f"{base}/api/review?file=nothing.json")[0] == 400
    finally:
        server.shutdown()
        server.server_close()


def test_the_coach_answers_a_challenge_decision_with_its_values(tmp_path):
    from quiddler_agents.coach import Coach

    rules = QuiddlerConfig(
        hand_sizes=(3, 4), challenges=True, layout="choose", vocabularies=["enable:0.5:1", "enable:0.5:2"]
    )
    server = TableServer(("127.0.0.1", 0), tmp_path / "games")
    try:
        server.table = table = TableGame(["human", "greedy"], rules, seed=1)
        server.coaches[json.dumps(rules.to_dict(), sort_keys=True)] = Coach(rules, samples=4)
        table.play_agents()
        while table.view()["phase"] != "challenge" or len(table.view()["moves"]) < 2:
            assert not table.game.is_over
            table.move(0, table.view()["moves"][0]["action"])
        coach = server.coach()["coach"]
        assert coach["kind"] == coach["basis"] == "challenge" and "challenge =" in coach["values"]
        moves = {m["move"]: m["value"] for m in coach["moves"]}
        assert moves["pass"] == 0.0 and len(moves) == len(table.view()["moves"])
        assert all(v is not None for v in moves.values()) and any(n.startswith("challenge ") for n in moves)
    finally:
        server.server_close()
