"""A test client of the table server's API: the token is read from the served page, as the page's script reads it."""

from __future__ import annotations

import functools
import json
import re
import threading
import urllib.error
import urllib.request
from pathlib import Path

from quiddler_agents.table.guard import TOKEN_HEADER
from quiddler_agents.table.server import TableServer


def serve(games_dir: Path, replay_files=(), **offered) -> tuple[TableServer, str]:
    """A table server on a free loopback port, serving in a daemon thread: (server, base URL)."""
    server = TableServer(("127.0.0.1", 0), games_dir, list(replay_files), **offered)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


@functools.cache
def page_token(base: str) -> str:
    """The session token the table page carries (its `quiddler-token` meta tag)."""
    with urllib.request.urlopen(base + "/", timeout=30) as response:
        page = response.read().decode()
    return re.search(r'<meta name="quiddler-token" content="([^"]+)">', page).group(1)


def call(url: str, body=None, raw: bytes | None = None, headers: dict[str, str] | None = None):
    """(status, JSON answer) of a GET, or of a POST when there is a body; the page's token and JSON type sent."""
    base = re.match(r"http://[^/]+", url).group(0)
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    sent = {"Content-Type": "application/json", TOKEN_HEADER: page_token(base), **(headers or {})}
    request = urllib.request.Request(url, data=data, headers={k: v for k, v in sent.items() if v is not None})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
