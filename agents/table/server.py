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
| `GET /api/agents` | the agent specs a seat can take (`offer.py`), a line on each (`about`), the shipped `levels` and the bots that take one (`leveled`) |
| `GET /api/rules` | the rule options of a new game, each with a plain `label` (and `choice_labels`) |
| `GET /api/coach` | the coach on the human's decision now: the moves the search bot weighs, with their values (409 off turn) |
| `GET /api/review?file=F&game=k` | the coach's review of game k of a replay file: every decision's values and loss |

The server is the authority: the game lives here, every move is checked against the
legal ones, and after every move the game is written to `current.json` in the games
folder (atomically), so a reloaded or closed tab loses nothing, and a restarted server
picks the game up again. A move and the agents' replies land together or not at all: if
an agent fails, the human's move is undone too and the answer is a 500 with the reason.
A damaged `current.json` is moved aside (its new name printed), never overwritten.

Only the table's own pages may use it (`guard.py`: the Host, the Origin, the session's
token, JSON bodies only), and they may only load what it offers (`offer.py`: the bots,
the zoo, and the bundles and word lists named on its command line or kept in its games
folder). Files are read only from the games folder and the replay files named on the
command line; a name is never a path. Every request gets an answer: 400, 403, 404, 409,
411, 413, 415 or 500, each with a one-line reason.
"""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from quiddler_env.core import files
from quiddler_env.core.config import QuiddlerConfig

from ..coach import Coach
from ..evaluation.review import LARGE, VALUES, review_game, summarise
from .guard import Guard, Refused
from .offer import Offer
from .replay import replay_frames, replay_records
from .session import MoveRefused, TableGame

STATIC = Path(__file__).resolve().parent / "static"
PAGES = {"/": "table.html", "/replay": "replay.html"}
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css"}
CURRENT = "current.json"
COACH_SAMPLES = 32
"""The coach's determinizations per decision (the search bot's default)."""
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_BODY = 1 << 20
MAX_SEED = 2**63 - 1
TOKEN_MARK = "{{token}}"  # where the pages carry the session's token
HEADERS = {  # on every answer: never framed by another site, never sniffed, never cached
    "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def load_json(raw: bytes | str, what: str) -> Any:
    """JSON text as data; a ValueError names `what` and the problem (too deep or too long numbers too)."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError(f"{what} is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an integer too long to convert
        raise ValueError(f"{what} is not JSON: {str(exc).splitlines()[0]}") from None


class BadRequest(ValueError):
    """A request the API cannot take: 400 with the reason."""


class TableServer(ThreadingHTTPServer):
    """The server: one current game (under a lock), its games folder and the replay files it may open."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        games_dir: Path,
        replay_files: list[Path] = (),
        *,
        policies: list[Path] = (),
        word_lists: list[Path] = (),
    ) -> None:
        self.games_dir = Path(games_dir)
        self.games_dir.mkdir(parents=True, exist_ok=True)
        super().__init__(address, TableHandler)
        self.guard = Guard(address[0], self.server_port)
        self.offer = Offer(self.games_dir, policies, word_lists)
        self.replay_files = {p.name: Path(p) for p in replay_files}
        self.lock = threading.Lock()
        self.table: TableGame | None = None
        self.coaches: dict[str, Coach] = {}
        current = self.games_dir / CURRENT
        if current.is_file():
            try:
                self.table = TableGame.from_record(load_json(files.read_text(current), CURRENT))
            except (ValueError, OSError) as exc:  # a damaged file is kept aside, never trusted nor overwritten
                aside = current.with_name(f"{CURRENT}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
                current.replace(aside)
                print(f"quiddler-play: not resuming {current}: {str(exc).splitlines()[0]}; kept it as {aside}")

    def handle_error(self, request, client_address) -> None:
        """A connection that failed outside the API (the client went away mid-answer): one line, no traceback."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, (ConnectionError, TimeoutError)):
            print(f"quiddler-play: a request from {client_address[0]} failed: {type(exc).__name__}: {exc}")

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
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise BadRequest(f"seed must be an integer from 0 to {MAX_SEED}, got {seed!r}")
        try:
            seats = [self.offer.seat(spec) for spec in seats]
            config = QuiddlerConfig.from_mapping({**self.offer.rules(rules), "num_players": len(seats)})
            table = TableGame(seats, config, seed)
        except ValueError as exc:  # said whole (a spec's error lists what it may be), on one line
            raise BadRequest(" ".join(line.strip() for line in str(exc).splitlines() if line.strip())) from None
        table.play_agents()  # an agent that fails here leaves the game in progress as it was
        self._keep(table)
        self.table = table
        return self.state()

    def move(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.table is None:
            raise MoveRefused("no game: start one first")
        played = len(self.table.actions)
        try:
            self.table.move(body.get("seat"), body.get("action"))
            self._keep(self.table)
        except MoveRefused:
            raise  # nothing was played
        except Exception:
            self.table.rewind(played)  # the move and the agents' replies land together or not at all
            raise
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
            table = TableGame.from_record(load_json(files.read_text(path), f"saved game {name!r}"))
        except (ValueError, OSError) as exc:
            raise BadRequest(f"saved game {name!r} cannot be opened: {str(exc).splitlines()[0]}") from None
        self._keep(table)
        self.table = table
        return self.state()

    def _record(self, query: dict[str, list[str]]) -> tuple[str, int, list[dict[str, Any]]]:
        """The replay file `file`'s games and the index `game` asked for (checked)."""
        name = (query.get("file") or [""])[0]
        try:
            if name in self.replay_files:
                records = replay_records(self.replay_files[name])
            elif _NAME.match(name.removesuffix(".json")) and (self.games_dir / name).is_file():
                records = [load_json(files.read_text(self.games_dir / name), name)]
            else:
                raise BadRequest(f"no replay file {name!r} (see /api/saved)")
        except (ValueError, OSError) as exc:  # a ReplayError, or a saved game that is not JSON
            raise BadRequest(str(exc).splitlines()[0]) from None
        try:
            k = int((query.get("game") or ["0"])[0])
        except ValueError:
            raise BadRequest("game must be a number") from None
        if not 0 <= k < len(records):
            raise BadRequest(f"{name} holds games 0..{len(records) - 1}, not {k}")
        return name, k, records

    def replay(self, query: dict[str, list[str]]) -> dict[str, Any]:
        name, k, records = self._record(query)
        try:
            return {"file": name, "game": k, "games": len(records), "replay": replay_frames(records[k])}
        except ValueError as exc:
            raise BadRequest(str(exc)) from None

    def _coach(self, rules: QuiddlerConfig) -> Coach:
        """The coach of games under `rules` (kept: its rollout batches are built once)."""
        key = json.dumps(rules.to_dict(), sort_keys=True)
        if key not in self.coaches:
            self.coaches[key] = Coach(rules, samples=COACH_SAMPLES)
        return self.coaches[key]

    def coach(self) -> dict[str, Any]:
        """The coach on the human's decision now: the moves the search bot weighs, each with its value."""
        table = self.table
        if table is None:
            raise MoveRefused("no game: start one first")
        game = table.game
        if game.is_over:
            raise MoveRefused("the game is over: the replay viewer reviews it")
        if game.current_player != table.human:
            raise MoveRefused("the coach answers on your turn")
        advice = self._coach(table.config).advise(game, (table.seed, len(table.actions)))
        return {"coach": advice.to_dict(table.name) | {"played": len(table.actions), "values": VALUES}}

    def review(self, query: dict[str, list[str]]) -> dict[str, Any]:
        """The coach's review of game `game` of a replay file: every seat's decisions, by move number."""
        name, k, records = self._record(query)
        try:
            data = review_game(records[k], self._coach)
        except ValueError as exc:
            raise BadRequest(str(exc).splitlines()[0]) from None
        return {
            "file": name,
            "game": k,
            "review": {"decisions": data["decisions"], "players": summarise([data]), "large": LARGE, "values": VALUES},
        }

    def _name(self, name: Any) -> str:
        if not isinstance(name, str) or not _NAME.match(name) or name == CURRENT.removesuffix(".json"):
            raise BadRequest("a saved game's name is 1 to 64 letters, digits, '-' or '_' (and not 'current')")
        return name

    def _keep(self, table: TableGame) -> None:
        """Write `table` as the game in progress (atomically: the file holds the old game or the new one)."""
        files.write_json(self.games_dir / CURRENT, table.record())


class TableHandler(BaseHTTPRequestHandler):
    server: TableServer
    timeout = 30  # seconds a client may take to send its request: a stalled one does not hold a thread forever

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal is the user's
        pass

    def do_GET(self) -> None:
        url = urlparse(self.path)
        if not self._allowed("GET", url.path):
            return
        if url.path in PAGES:
            return self._page(STATIC / PAGES[url.path])
        if url.path.startswith("/static/"):
            name = url.path.removeprefix("/static/")
            if "/" in name or name.startswith(".") or not (STATIC / name).is_file():
                return self._json({"error": f"no file {url.path}"}, HTTPStatus.NOT_FOUND)
            return self._file(STATIC / name)
        routes = {
            "/api/state": lambda: self.server.state(),
            "/api/saved": lambda: self.server.saved(),
            "/api/agents": lambda: {
                "agents": self.server.offer.agents(),
                "about": self.server.offer.about(),
                "levels": self.server.offer.levels(),
                "leveled": self.server.offer.leveled(),
            },
            "/api/rules": lambda: {"rules": _rule_options()},
            "/api/replay": lambda: self.server.replay(parse_qs(url.query)),
            "/api/coach": lambda: self.server.coach(),
            "/api/review": lambda: self.server.review(parse_qs(url.query)),
        }
        if url.path not in routes:
            return self._json({"error": f"no page {url.path}"}, HTTPStatus.NOT_FOUND)
        self._answer(routes[url.path])

    def do_POST(self) -> None:
        url = urlparse(self.path)
        if not self._allowed("POST", url.path):
            return
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
        except Refused as exc:
            return self._refuse(exc)
        self._answer(lambda: routes[url.path](body))

    def _allowed(self, method: str, path: str) -> bool:
        """Whether the guard lets the request through (if not, it has been answered)."""
        try:
            self.server.guard.check(method, path, self.headers)
        except Refused as exc:
            self._refuse(exc)
            return False
        return True

    def _refuse(self, exc: Refused) -> None:
        """Answer a refused request and close its connection, whose body may be unread.

        The connection is closed only once the client has sent what it meant to (or a second has passed):
        closing with unread bytes would reset it, and the client could lose the answer."""
        self.close_connection = True  # an unread body must not be taken for the next request
        self._json({"error": str(exc)}, exc.status)
        try:
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(1)
            while self.connection.recv(1 << 16):
                pass
        except OSError:
            pass

    def _answer(self, call) -> None:
        with self.server.lock:
            try:
                answer, status = call(), HTTPStatus.OK
            except MoveRefused as exc:
                answer, status = {"error": str(exc), **self.server.state()}, HTTPStatus.CONFLICT
            except BadRequest as exc:
                answer, status = {"error": str(exc)}, HTTPStatus.BAD_REQUEST
            except Exception as exc:  # an agent that failed, a full disk: said in one line, the game as it was
                reason = str(exc).splitlines()[0] if str(exc) else ""
                answer = {"error": f"the server could not do it: {type(exc).__name__}: {reason}", **self.server.state()}
                status = HTTPStatus.INTERNAL_SERVER_ERROR
        self._json(answer, status)

    def _body(self) -> dict[str, Any]:
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            raise Refused(HTTPStatus.LENGTH_REQUIRED, "a JSON object body with a Content-Length is required")
        try:
            length = int(length_text)
        except ValueError:
            raise Refused(HTTPStatus.BAD_REQUEST, f"Content-Length {length_text[:40]!r} is not a number") from None
        if length > MAX_BODY:
            raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the body is over {MAX_BODY} bytes")
        if length <= 0:
            raise Refused(HTTPStatus.BAD_REQUEST, "a JSON object body is required")
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            raise Refused(HTTPStatus.REQUEST_TIMEOUT, f"the body's {length} bytes did not come in time") from None
        if len(raw) < length:
            raise Refused(HTTPStatus.BAD_REQUEST, f"the body ended after {len(raw)} of its {length} bytes")
        try:
            body = load_json(raw, "the body")
        except ValueError as exc:
            raise Refused(HTTPStatus.BAD_REQUEST, str(exc)) from None
        if not isinstance(body, dict):
            raise Refused(HTTPStatus.BAD_REQUEST, "the body must be a JSON object")
        return body

    def _send(self, status: HTTPStatus, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _json(self, data: Any, status: HTTPStatus = HTTPStatus.OK) -> None:
        self._send(status, "application/json", json.dumps(data).encode())

    def _page(self, path: Path) -> None:
        """A page, carrying the session's token for its API calls."""
        page = path.read_text(encoding="utf-8").replace(TOKEN_MARK, self.server.guard.token)
        self._send(HTTPStatus.OK, CONTENT_TYPES[".html"], page.encode())

    def _file(self, path: Path) -> None:
        self._send(HTTPStatus.OK, CONTENT_TYPES.get(path.suffix, "application/octet-stream"), path.read_bytes())


RULE_LABELS = {  # what the new-game form calls each rule option (its field name is for configs)
    "hand_sizes": "Cards dealt each round",
    "min_word_cards": "Fewest cards in a word",
    "two_player_bonus": "Bonuses with two players",
    "bonus_value": "Points of each bonus",
    "score_floor": "No negative scores",
    "go_out": "Going out",
    "dictionary": "Dictionary",
    "turn_cap": "Turns each before a round is scored anyway",
    "layout": "Laying words",
    "challenges": "Challenge variant",
    "vocabularies": "Each seat's words (levels, word lists)",
    "failed_go_out_penalty": "Penalty when a word of the player out fails",
}
CHOICE_LABELS = {  # plain words for the choices of the rule options (the value sent stays the field's)
    "two_player_bonus": {"longest_word": "longest word only", "most_words": "most words only", "both": "both"},
    "score_floor": {"round": "no round below zero", "total": "no total below zero", "none": "negatives allowed"},
    "go_out": {"optional": "optional when possible", "forced": "forced when possible"},
    "layout": {"auto": "automatic (best layout)", "choose": "each player chooses"},
    "min_word_cards": {1: "1 (a lone IN or ER counts)", 2: "2"},
    "challenges": {False: "off", True: "on"},
}


def _rule_options() -> list[dict[str, Any]]:
    """The rule options the new-game form offers (from `QuiddlerConfig`'s declarations), seats excepted.

    Each has a plain `label` and, for choices, `choice_labels` (the form shows these; it sends `name`'s values).
    """
    return [
        {
            "name": o.name,
            "label": RULE_LABELS.get(o.name, o.name.replace("_", " ").capitalize()),
            "choice_labels": [CHOICE_LABELS.get(o.name, {}).get(c, str(c)) for c in o.choices] if o.choices else None,
            "help": o.help,
            "kind": o.kind,
            "choices": list(o.choices) if o.choices else None,
            "default": o.default,
        }
        for o in QuiddlerConfig.rule_options()
        if o.name != "num_players"
    ]


def serve(
    host: str,
    port: int,
    games_dir: Path,
    replay_files: list[Path] = (),
    ready=None,
    *,
    policies: list[Path] = (),
    word_lists: list[Path] = (),
) -> None:
    """Serve until interrupted; `ready(server)` is called once it listens (the port is then `server.server_port`)."""
    server = TableServer((host, port), games_dir, list(replay_files), policies=policies, word_lists=word_lists)
    if ready is not None:
        ready(server)
    try:
        server.serve_forever()
    finally:
        server.server_close()
