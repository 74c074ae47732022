"""The browser table's HTTP server: the page, and a JSON API over one `TableGame` at a time.

Python's standard library serves it (`http.server.ThreadingHTTPServer`): a local table
for one person needs no web framework, and nothing to install or load from elsewhere;
the page is plain HTML, CSS and JavaScript shipped in `static/`. It listens on 127.0.0.1
unless asked otherwise.

| request | what it does |
|---|---|
| `GET /` , `GET /replay` | the table page, the replay viewer |
| `GET /api/state` | the human's view of the current game (`TableGame.view`), or `{"game": null}` |
| `POST /api/new` `{"seats": [...], "rules": {...}, "seed": s}` | a new game; the agents move up to the human's turn |
| `POST /api/move` `{"seat": h, "action": a}` | the human's move; a refused one answers 409 with the reason and changes nothing |
| `GET /api/saved` | the saved games and the replay files the server may open |
| `POST /api/save` `{"name": n}` / `POST /api/open` `{"name": n}` | save the current game / reopen a saved one |
| `GET /api/replay?file=F&game=k` | every position of game k of a replay file, all hands face up |
| `GET /api/agents`, `GET /api/rules` | the agent specs a seat can take, the rule options of a new game |

The server is the authority: the game lives here, every move is checked against the
legal ones, and after every move the game is written to `current.json` in the games
folder (atomically), so a reloaded or closed tab loses nothing, and a restarted server
picks the game up again. Files are read only from the games folder and the replay files
named on the command line; a name is never a path.
"""

from __future__ import annotations

import json
import re
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from quiddler_env.core import files
from quiddler_env.core.config import QuiddlerConfig

from .replay import replay_frames, replay_records
from .session import MoveRefused, TableGame

STATIC = Path(__file__).resolve().parent / "static"
PAGES = {"/": "table.html", "/replay": "replay.html"}
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css"}
CURRENT = "current.json"
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_BODY = 1 << 20


class BadRequest(ValueError):
    """A request the API cannot take: 400 with the reason."""


class TableServer(ThreadingHTTPServer):
    """The server: one current game (under a lock), its games folder and the replay files it may open."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], games_dir: Path, replay_files: list[Path] = ()) -> None:
        super().__init__(address, TableHandler)
        self.games_dir = Path(games_dir)
        self.games_dir.mkdir(parents=True, exist_ok=True)
        self.replay_files = {p.name: Path(p) for p in replay_files}
        self.lock = threading.Lock()
        self.table: TableGame | None = None
        current = self.games_dir / CURRENT
        if current.is_file():
            try:
                self.table = TableGame.from_record(json.loads(current.read_text()))
            except (ValueError, OSError) as exc:  # a damaged file is kept aside, never trusted
                print(f"quiddler-play: not resuming {current}: {exc}")

    # -- the API, called under the lock -----------------------------------------------------------

    def state(self) -> dict[str, Any]:
        return {"game": None} if self.table is None else {"game": self.table.view()}

    def new_game(self, body: dict[str, Any]) -> dict[str, Any]:
        seats = body.get("seats")
        if not isinstance(seats, list) or not 2 <= len(seats) <= 8:
            raise BadRequest("seats must be a list of 2 to 8 seats: 'human' once, and agent specs")
        rules = body.get("rules") or {}
        if not isinstance(rules, dict):
            raise BadRequest("rules must be a mapping of QuiddlerConfig fields")
        seed = body.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise BadRequest(f"seed must be a non-negative integer, got {seed!r}")
        try:
            table = TableGame(seats, QuiddlerConfig.from_mapping({**rules, "num_players": len(seats)}), seed)
            table.play_agents()
        except ValueError as exc:
            raise BadRequest(str(exc).splitlines()[0]) from None
        self.table = table
        self._keep()
        return self.state()

    def move(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.table is None:
            raise MoveRefused("no game: start one first")
        self.table.move(body.get("seat"), body.get("action"))
        self._keep()
        return self.state()

    def saved(self) -> dict[str, Any]:
        games = sorted(p.stem for p in self.games_dir.glob("*.json") if p.name != CURRENT)
        try:
            replays = {name: len(replay_records(path)) for name, path in self.replay_files.items()}
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        return {"games": games, "replays": replays}

    def save(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.table is None:
            raise BadRequest("no game to save")
        name = self._name(body.get("name"))
        files.write_json(self.games_dir / f"{name}.json", self.table.record())
        return self.saved()

    def open(self, body: dict[str, Any]) -> dict[str, Any]:
        name = self._name(body.get("name"))
        path = self.games_dir / f"{name}.json"
        if not path.is_file():
            raise BadRequest(f"no saved game {name!r}")
        try:
            self.table = TableGame.from_record(json.loads(path.read_text()))
        except ValueError as exc:
            raise BadRequest(f"saved game {name!r} cannot be opened: {exc}") from None
        self._keep()
        return self.state()

    def replay(self, query: dict[str, list[str]]) -> dict[str, Any]:
        name = (query.get("file") or [""])[0]
        try:
            if name in self.replay_files:
                records = replay_records(self.replay_files[name])
            elif _NAME.match(name.removesuffix(".json")) and (self.games_dir / name).is_file():
                records = [json.loads((self.games_dir / name).read_text())]
            else:
                raise BadRequest(f"no replay file {name!r} (see /api/saved)")
        except ValueError as exc:  # a ReplayError, or a saved game that is not JSON
            raise BadRequest(str(exc)) from None
        try:
            k = int((query.get("game") or ["0"])[0])
        except ValueError:
            raise BadRequest("game must be a number") from None
        if not 0 <= k < len(records):
            raise BadRequest(f"{name} holds games 0..{len(records) - 1}, not {k}")
        try:
            return {"file": name, "game": k, "games": len(records), "replay": replay_frames(records[k])}
        except ValueError as exc:
            raise BadRequest(str(exc)) from None

    def _name(self, name: Any) -> str:
        if not isinstance(name, str) or not _NAME.match(name) or name == CURRENT.removesuffix(".json"):
            raise BadRequest("a saved game's name is 1 to 64 letters, digits, '-' or '_' (and not 'current')")
        return name

    def _keep(self) -> None:
        if self.table is not None:
            files.write_json(self.games_dir / CURRENT, self.table.record())


class TableHandler(BaseHTTPRequestHandler):
    server: TableServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal is the user's
        pass

    def do_GET(self) -> None:
        url = urlparse(self.path)
        if url.path in PAGES:
            return self._file(STATIC / PAGES[url.path])
        if url.path.startswith("/static/"):
            name = url.path.removeprefix("/static/")
            if "/" in name or name.startswith(".") or not (STATIC / name).is_file():
                return self._json({"error": f"no file {url.path}"}, HTTPStatus.NOT_FOUND)
            return self._file(STATIC / name)
        routes = {
            "/api/state": lambda: self.server.state(),
            "/api/saved": lambda: self.server.saved(),
            "/api/agents": lambda: {"agents": _agent_specs()},
            "/api/rules": lambda: {"rules": _rule_options()},
            "/api/replay": lambda: self.server.replay(parse_qs(url.query)),
        }
        if url.path not in routes:
            return self._json({"error": f"no page {url.path}"}, HTTPStatus.NOT_FOUND)
        self._answer(routes[url.path])

    def do_POST(self) -> None:
        url = urlparse(self.path)
        routes = {
            "/api/new": self.server.new_game,
            "/api/move": self.server.move,
            "/api/save": self.server.save,
            "/api/open": self.server.open,
        }
        if url.path not in routes:
            return self._json({"error": f"no page {url.path}"}, HTTPStatus.NOT_FOUND)
        try:
            body = self._body()
        except BadRequest as exc:
            return self._json({"error": str(exc)}, HTTPStatus.BAD_REQUEST)
        self._answer(lambda: routes[url.path](body))

    def _answer(self, call) -> None:
        with self.server.lock:
            try:
                answer, status = call(), HTTPStatus.OK
            except MoveRefused as exc:
                answer, status = {"error": str(exc), **self.server.state()}, HTTPStatus.CONFLICT
            except BadRequest as exc:
                answer, status = {"error": str(exc)}, HTTPStatus.BAD_REQUEST
        self._json(answer, status)

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY:
            raise BadRequest("a JSON object body is required")
        try:
            body = json.loads(self.rfile.read(length))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadRequest(f"the body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise BadRequest("the body must be a JSON object")
        return body

    def _json(self, data: Any, status: HTTPStatus = HTTPStatus.OK) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(payload)

    def _file(self, path: Path) -> None:
        payload = path.read_bytes()
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", CONTENT_TYPES.get(path.suffix, "application/octet-stream"))
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _agent_specs() -> list[str]:
    from ..registry import REGISTRY
    from ..zoo import entries

    # `policy` and `zoo` name a bundle (policy:PATH, zoo:NAME): the zoo's entries are offered, a path is typed.
    names = [name for name in REGISTRY if name not in ("human", "policy", "zoo")]
    return names + [f"zoo:{e}" for e in entries()]


def _rule_options() -> list[dict[str, Any]]:
    """The rule options the new-game form offers (from `QuiddlerConfig`'s declarations), seats excepted."""
    return [
        {
            "name": o.name,
            "help": o.help,
            "kind": o.kind,
            "choices": list(o.choices) if o.choices else None,
            "default": o.default,
        }
        for o in QuiddlerConfig.rule_options()
        if o.name != "num_players"
    ]


def serve(host: str, port: int, games_dir: Path, replay_files: list[Path] = (), ready=None) -> None:
    """Serve until interrupted; `ready(server)` is called once it listens (the port is then `server.server_port`)."""
    server = TableServer((host, port), games_dir, list(replay_files))
    if ready is not None:
        ready(server)
    try:
        server.serve_forever()
    finally:
        server.server_close()
