"""The table server faces browsers: only its own page may use it (issue 42, item 1).

Each request here is one a hostile web page can make the user's browser send (a cross-site
`text/plain` POST needs no preflight; a DNS rebinding gives the page another Host), or one a
page could use to make the server open a file it was never offered.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from quiddler_agents import zoo
from quiddler_agents.table.session import TableGame
from tests.table_client import call, page_token, serve

REPO = Path(__file__).resolve().parents[1]
NEW = {"seats": ["human", "greedy"], "rules": {"hand_sizes": [3, 4]}, "seed": 3}


def raw(port: int, request: bytes, timeout: float = 30) -> tuple[int, bytes]:
    """Send bytes as they are; (status, whole answer). The server must answer and close."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(request)
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # the server may answer (and close) before it has read the whole request
            pass
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1."), answer[:200]
    return int(answer.split(b" ", 2)[1]), answer


def post(port: int, path: str, body: bytes, **headers: str) -> tuple[int, bytes]:
    headers = {"Content_Length": str(len(body)), **headers}  # a test may send a wrong length
    head = [f"POST {path} HTTP/1.1", "Connection: close"]
    head += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return raw(port, ("\r\n".join(head) + "\r\n\r\n").encode() + body)


@pytest.fixture
def table(tmp_path):
    server, base = serve(tmp_path / "games")
    yield server, base
    server.shutdown()
    server.server_close()


def test_a_cross_site_text_plain_post_cannot_overwrite_a_saved_game_or_the_game_in_progress(table, tmp_path):
    server, base = table
    port = server.server_port
    assert call(f"{base}/api/new", NEW)[0] == 200
    assert call(f"{base}/api/save", {"name": "mygame"})[0] == 200
    saved = (tmp_path / "games" / "mygame.json").read_bytes()
    in_progress = server.table.record()
    host = f"127.0.0.1:{port}"
    evil = {"Host": host, "Content_Type": "text/plain", "Origin": "http://evil.example"}
    for path, body in [("/api/save", {"name": "mygame"}), ("/api/new", {**NEW, "seed": 4})]:
        status, answer = post(port, path, json.dumps(body).encode(), **evil)  # the curl of the issue
        assert status == 403, answer
        # Even with the token (which another site cannot read), another origin or a text body is refused.
        token = {"X_Quiddler_Token": page_token(base)}
        assert post(port, path, json.dumps(body).encode(), **evil, **token)[0] == 403
        status, answer = post(port, path, json.dumps(body).encode(), Host=host, Content_Type="text/plain", **token)
        assert status == 415 and b"application/json" in answer
        status, answer = post(port, path, json.dumps(body).encode(), Host=host, Content_Type="application/json")
        assert status == 403 and b"token" in answer
    assert (tmp_path / "games" / "mygame.json").read_bytes() == saved and server.table.record() == in_progress
    # A browser's own word for a request from another site is believed too.
    status, answer = call(f"{base}/api/state", headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403


def test_a_rebound_host_gets_neither_the_state_nor_the_page_with_its_token(table):
    server, base = table
    port = server.server_port
    assert call(f"{base}/api/new", NEW)[0] == 200
    for path in ("/api/state", "/", "/replay"):
        request = f"GET {path} HTTP/1.1\r\nHost: attacker.example:{port}\r\nConnection: close\r\n\r\n".encode()
        status, answer = raw(port, request)
        assert status == 403 and server.guard.token.encode() not in answer
    assert raw(port, b"GET /api/state HTTP/1.0\r\n\r\n")[0] == 403  # no Host at all
    for name in ("localhost", "127.0.0.1", "[::1]"):
        request = f"GET / HTTP/1.1\r\nHost: {name}:{port}\r\nConnection: close\r\n\r\n".encode()
        status, answer = raw(port, request)
        assert status == 200 and server.guard.token.encode() in answer
        assert b"frame-ancestors 'none'" in answer and b"X-Frame-Options: DENY" in answer


def test_the_page_loads_only_what_the_server_offers(table, tmp_path):
    server, base = table
    games = tmp_path / "games"
    outside = tmp_path / "words.txt"
    outside.write_text("qi\nza\nox\n")
    refused = [
        ({"seats": ["human", "policy:/etc/passwd"]}, "policy bundle '/etc/passwd' is not offered"),
        ({"seats": ["human", f"policy:{zoo.entry_path('champion-2p')}"]}, "is not offered"),
        ({"seats": ["human", "greedy"], "rules": {"dictionary": "/dev/zero"}}, "rules: dictionary: word list"),
        ({"seats": ["human", "greedy"], "rules": {"dictionary": str(outside)}}, "is not offered"),
        ({"seats": ["human", "greedy"], "rules": {"dictionary": "../words.txt"}}, "is not offered"),
        (
            {"seats": ["human", "greedy"], "rules": {"challenges": True, "vocabularies": [f"{outside}:0.5:1"]}},
            "rules: vocabularies: word list",
        ),
        ({"seats": ["human", "greedy"], "rules": {"challenges": True, "vocabularies": {"a": 1}}}, "must be a list"),
        ({"seats": ["human", 7]}, "a seat is an agent spec"),
        ({"seats": ["human", "greedy"], "seed": 10**30}, "seed must be an integer from 0 to"),
    ]
    for body, reason in refused:
        status, answer = call(f"{base}/api/new", {"seed": 1, **body})
        assert status == 400 and reason in answer["error"], (body, answer)
        assert "\n" not in answer["error"]
    assert server.table is None
    # A word list kept in the games folder is offered, by its name there.
    (games / "mine.txt").write_text(outside.read_text())
    status, answer = call(f"{base}/api/new", {**NEW, "rules": {"hand_sizes": [3], "dictionary": "mine.txt"}})
    assert status == 200 and server.table.config.dictionary == str((games / "mine.txt").resolve())


def test_bundles_and_word_lists_named_on_the_command_line_are_offered(tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("qi\nza\nox\nin\n")
    bundle = zoo.entry_path("champion-2p")
    server, base = serve(tmp_path / "games", policies=[bundle], word_lists=[words])
    try:
        assert f"policy:{bundle.resolve()}" in call(f"{base}/api/agents")[1]["agents"]
        body = {"seats": ["human", f"policy:{bundle}"], "rules": {"hand_sizes": [3], "dictionary": str(words)}}
        status, answer = call(f"{base}/api/new", {**body, "seed": 2})
        assert status == 200, answer
        assert isinstance(server.table, TableGame) and server.table.config.dictionary == str(words.resolve())
    finally:
        server.shutdown()
        server.server_close()


def _play(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "quiddler_agents.cli.play", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ctrl_c_as_at_a_terminal,
        **kwargs,
    )


def _ctrl_c_as_at_a_terminal() -> None:
    # A test run started in the background of a script inherits SIGINT ignored, and Python keeps an ignored
    # SIGINT ignored: the command under test gets Ctrl-C as a terminal gives it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_serving_beyond_the_loopback_needs_a_flag_and_says_who_can_reach_it(tmp_path):
    games = str(tmp_path / "games")
    refused = _play("--host", "0.0.0.0", "--port", "0", "--games-dir", games)
    out, err = refused.communicate(timeout=120)
    assert refused.returncode == 2 and "--allow-remote" in err and "Traceback" not in err
    served = _play("--host", "0.0.0.0", "--port", "0", "--games-dir", games, "--allow-remote")
    try:
        line = served.stdout.readline()
        assert line.startswith("the Quiddler table: http://0.0.0.0:")
    finally:
        served.send_signal(signal.SIGINT)
        out, err = served.communicate(timeout=180)  # (generous: a loaded CI machine once took over 60 s)
    assert "anyone who can reach this machine" in err
    assert os.path.isdir(games)
