"""Every request to the table gets an answer, and the game is never left half-applied (issue 42, items 2-6).

The fuzz test at the end sends malformed bodies and headers and concurrent moves, bounded in
count and time, to a server on the loopback address only.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from quiddler_agents.table import server as server_module
from quiddler_agents.table.server import CURRENT, TableServer
from quiddler_agents.table.session import TableGame
from tests.table_client import call, page_token, serve
from tests.test_table_guard import NEW, post, raw

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def table(tmp_path):
    server, base = serve(tmp_path / "games")
    yield server, base
    server.shutdown()
    server.server_close()


def _api_post(server: TableServer, base: str, path: str, body: bytes, **headers: str):
    sent = {"Host": f"127.0.0.1:{server.server_port}", "Content_Type": "application/json"}
    sent["X_Quiddler_Token"] = page_token(base)
    return post(server.server_port, path, body, **{**sent, **headers})


def test_malformed_requests_each_get_a_one_line_answer(table, tmp_path):
    server, base = table
    games = tmp_path / "games"
    assert call(f"{base}/api/new", NEW)[0] == 200
    status, answer = _api_post(server, base, "/api/move", b'{"seat": 0}', Content_Length="abc")
    assert status == 400 and b"Content-Length 'abc' is not a number" in answer
    deep = b"[" * 100_000 + b"]" * 100_000  # inside the 1 MiB limit
    status, answer = _api_post(server, base, "/api/move", deep)
    assert status == 400 and b"nested too deeply" in answer
    status, answer = _api_post(server, base, "/api/move", b"1" * 5000)  # an integer too long to convert
    assert status == 400 and b"not JSON" in answer
    status, answer = _api_post(server, base, "/api/move", b"{}", Content_Length=str(2 << 20))
    assert status == 413
    # A saved game, or a replay named in the games folder, that is JSON but not an object.
    (games / "listy.json").write_text("[1]")
    status, answer = call(f"{base}/api/open", {"name": "listy"})
    assert status == 400 and "not a saved table game" in answer["error"]
    status, answer = call(f"{base}/api/replay?file=listy.json")
    assert status == 400 and "not a saved game" in answer["error"]
    (games / "deep.json").write_text("[" * 100_000)
    assert call(f"{base}/api/open", {"name": "deep"})[0] == 400
    assert call(f"{base}/api/state")[0] == 200  # the server still answers, the game as it was


def test_a_body_shorter_than_its_length_is_answered(table, monkeypatch):
    server, base = table
    monkeypatch.setattr(server_module.TableHandler, "timeout", 1)
    head = (
        f"POST /api/move HTTP/1.1\r\nHost: 127.0.0.1:{server.server_port}\r\nContent-Type: application/json\r\n"
        f"X-Quiddler-Token: {page_token(base)}\r\nContent-Length: 100\r\n\r\n"
    )
    status, answer = raw(server.server_port, head.encode() + b'{"seat": 0}')
    assert status in (400, 408) and (b"of its 100 bytes" in answer or b"did not come in time" in answer)


@pytest.mark.parametrize("content", ["[]", "{not json", "[" * 100_000, '{"format": "quiddler-table-1"}'])
def test_a_damaged_current_game_is_moved_aside_and_never_overwritten(tmp_path, capsys, content):
    games = tmp_path / "games"
    games.mkdir()
    (games / CURRENT).write_text(content)
    server, base = serve(games)
    try:
        printed = capsys.readouterr().out
        aside = [p for p in games.iterdir() if p.name.startswith(CURRENT + ".damaged-")]
        assert len(aside) == 1 and aside[0].read_text() == content and str(aside[0]) in printed
        assert call(f"{base}/api/state") == (200, {"game": None})
        assert call(f"{base}/api/new", NEW)[0] == 200
        assert aside[0].read_text() == content  # the new game went to a new current.json
        assert TableGame.from_record(json.loads((games / CURRENT).read_text())).record() == server.table.record()
        assert call(f"{base}/api/saved")[1]["games"] == []  # the damaged copy is not offered as a saved game
    finally:
        server.shutdown()
        server.server_close()


class _Failing:
    def act(self, observation, mask):
        raise RuntimeError("the agent's model is gone")


def test_an_agent_that_fails_leaves_the_game_as_it_was_and_playable(table, tmp_path):
    server, base = table
    assert call(f"{base}/api/new", NEW)[0] == 200
    view = call(f"{base}/api/state")[1]["game"]
    before = server.table.record()
    on_disk = (tmp_path / "games" / CURRENT).read_bytes()
    agent = server.table.agents[1]
    server.table.agents[1] = _Failing()
    draw = view["moves"][0]["action"]
    status, answer = call(f"{base}/api/move", {"seat": 0, "action": draw})
    assert status == 200  # a draw: the human moves again, no agent asked yet
    discard = answer["game"]["moves"][0]["action"]
    after_draw = server.table.record()
    status, answer = call(f"{base}/api/move", {"seat": 0, "action": discard})
    assert status == 500 and "RuntimeError: the agent's model is gone" in answer["error"]
    assert server.table.record() == after_draw  # the discard was undone with the agent's failed reply
    assert json.loads((tmp_path / "games" / CURRENT).read_text()) == after_draw
    assert answer["game"] == call(f"{base}/api/state")[1]["game"]
    server.table.agents[1] = agent
    status, answer = call(f"{base}/api/move", {"seat": 0, "action": discard})
    assert status == 200 and len(server.table.actions) > len(after_draw["actions"]) + 1  # greedy answered
    assert before != server.table.record() and on_disk != (tmp_path / "games" / CURRENT).read_bytes()


def test_a_new_game_whose_agent_fails_keeps_the_game_in_progress(table, monkeypatch):
    server, base = table
    assert call(f"{base}/api/new", NEW)[0] == 200
    before = server.table.record()

    def failing(self):
        raise MemoryError("Unable to allocate 745. GiB")

    monkeypatch.setattr(TableGame, "play_agents", failing)
    status, answer = call(f"{base}/api/new", {**NEW, "seats": ["greedy", "human"], "seed": 5})
    assert status == 500 and "MemoryError: Unable to allocate" in answer["error"]
    assert server.table.record() == before


def test_an_agent_spec_out_of_its_bounds_is_refused_in_one_line(table):
    server, base = table
    status, answer = call(f"{base}/api/new", {**NEW, "seats": ["human", "expert:samples=100000000000"]})
    assert status == 400 and "samples" in answer["error"] and "\n" not in answer["error"]
    assert server.table is None


@pytest.mark.slow
def test_play_names_what_is_wrong_with_its_folders_and_replay_files(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    plain = tmp_path / "plain"
    plain.write_text("x")
    cases = [
        (["--games-dir", str(plain)], f"--games-dir {plain} is not a folder"),
        (["--replay", str(fifo)], "is not a regular file"),
        (["--replay", str(folder)], "is a folder, not a file"),
        (["--replay", str(tmp_path / "none")], "does not exist"),
        (["--word-list", str(fifo)], "is not a regular file"),
    ]
    for args, message in cases:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "quiddler_agents.cli.play",
                "--port",
                "0",
                "--games-dir",
                str(tmp_path / "g"),
                *args,
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 2 and message in run.stderr and len(run.stderr.strip().splitlines()) == 1, (
            args,
            run.stderr,
        )


# -- the fuzz test ----------------------------------------------------------------------------------

_BODIES = [
    b"",
    b"{",
    b"null",
    b"[]",
    b'"text"',
    b"\xff\xfe",
    b'{"seat": "0", "action": "0"}',
    b'{"seat": 0, "action": 1e400}',
    b'{"seat": 0, "action": -1}',
    b'{"seat": 0, "action": 99999999999999999999999}',
    b'{"seats": ["human", "greedy"], "rules": {"bonus_value": 1e30}}',
    b'{"seats": ["human", "greedy"], "rules": {"hand_sizes": [3], "turn_cap": -1}}',
    b'{"seats": ["human", "greedy", "greedy", "greedy", "greedy", "greedy", "greedy", "greedy", "greedy"]}',
    b'{"seats": ["human", "search:samples=2"], "rules": {"hand_sizes": [2]}, "seed": 9}',
    b'{"name": "../../etc/passwd"}',
    b'{"name": "current"}',
    b'{"name": "fuzz"}',
    b"[" * 50_000,
    b'{"a":' * 20_000,
]


def _fuzz_request(rng: random.Random, server: TableServer, base: str) -> tuple[int, bytes]:
    port = server.server_port
    path = rng.choice(["/api/move", "/api/new", "/api/save", "/api/open", "/api/nope", "/api/state"])
    if path == "/api/move" and rng.random() < 0.5 and server.table is not None:  # a real move, maybe stale
        view = server.table.view()
        moves = view.get("moves") or [{"action": 0}]
        body = json.dumps({"seat": view["human"], "action": rng.choice(moves)["action"]}).encode()
    else:
        body = rng.choice(_BODIES)
    headers = {"Host": f"127.0.0.1:{port}", "Content_Type": "application/json", "X_Quiddler_Token": page_token(base)}
    twist = rng.randrange(8)
    if twist == 0:
        headers["Content_Length"] = rng.choice(["abc", "-5", "", "1e3", " 12", str(2**70)])
    elif twist == 1:
        headers["Content_Type"] = rng.choice(["text/plain", "application/x-www-form-urlencoded", ""])
    elif twist == 2:
        headers["Origin"] = rng.choice(["http://evil.example", "null", f"http://127.0.0.1:{port}"])
    elif twist == 3:
        headers["Host"] = rng.choice(["evil.example", f"127.0.0.1:{port + 1}", ""])
    if path == "/api/state":
        request = f"GET {path} HTTP/1.1\r\nHost: {headers['Host']}\r\nX-Quiddler-Token: {page_token(base)}\r\n\r\n"
        return raw(port, request.encode())
    return post(port, path, body, **headers)


def test_fuzzing_the_api_every_request_is_answered_and_the_game_always_replays(table, tmp_path):
    server, base = table
    assert call(f"{base}/api/new", {**NEW, "rules": {"hand_sizes": [3, 4, 5]}})[0] == 200
    statuses: list[int] = []
    problems: list[str] = []

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(40):
            try:
                status, answer = _fuzz_request(rng, server, base)
            except Exception as exc:  # no answer, or not HTTP
                problems.append(f"seed {seed}: {type(exc).__name__}: {exc}")
                continue
            statuses.append(status)
            head, _, payload = answer.partition(b"\r\n\r\n")
            if status >= 400 and b"application/json" in head:
                error = json.loads(payload)["error"]
                if "\n" in error:
                    problems.append(f"a reason of several lines: {error!r}")

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(t.is_alive() for t in threads) and not problems, problems[:5]
    assert len(statuses) == 6 * 40 and set(statuses) <= {200, 400, 403, 404, 409, 411, 413, 415, 500}
    assert 200 in statuses and 403 in statuses and 400 in statuses
    # What the server holds is what current.json replays to.
    current = json.loads((tmp_path / "games" / CURRENT).read_text())
    assert TableGame.from_record(current).record() == server.table.record() == current
