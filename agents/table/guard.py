"""Who may talk to the table server: the checks a local server facing browsers makes (as Jupyter does).

A page on any other website can send requests to 127.0.0.1 from the user's browser, and
after a DNS rebinding can even read the answers. So every request must pass:

- **Host**: one of the loopback names (`127.0.0.1`, `localhost`, `[::1]`) with the served
  port, or the address the server was told to listen on with `--allow-remote`. A page
  reached through a rebound name (`attacker.example:8765`) is refused, the page included,
  so it never sees the token.
- **Token**: every `/api/` request carries the per-session token (`X-Quiddler-Token`), which
  the server writes into the pages it serves; another site cannot read it.
- **Origin**: a request that changes something (POST) and carries an `Origin` must come
  from the table's own origin; browsers send one with every cross-site POST.
- **Content type**: a POST body is read only as `application/json`; a cross-site form or
  `text/plain` POST (which browsers send without a preflight) is refused.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import socket
from collections.abc import Mapping
from http import HTTPStatus

TOKEN_HEADER = "X-Quiddler-Token"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class Refused(Exception):
    """A request the guard turns away: its status and a one-line reason."""

    def __init__(self, status: HTTPStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def is_loopback(host: str) -> bool:
    """Whether an address to listen on reaches only this machine (`localhost`, 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def remote_names(host: str) -> set[str]:
    """The names a browser elsewhere may use for this machine when the table listens on `host`."""
    names = {host} if host not in ("0.0.0.0", "::", "") else set()
    machine = socket.gethostname()
    names |= {machine, socket.getfqdn()}
    try:
        names |= {info[4][0] for info in socket.getaddrinfo(machine, None)}
    except OSError:
        pass
    return {f"[{name}]" if ":" in name else name.lower() for name in names if name}


class Guard:
    """The checks for one server: the Host names it answers to and its session token."""

    def __init__(self, host: str, port: int, token: str | None = None) -> None:
        self.port = port
        self.token = token or secrets.token_urlsafe(32)
        names = set(LOOPBACK_NAMES)
        if not is_loopback(host):  # served to the network (`--allow-remote`): its own names too
            names |= remote_names(host)
        self.hosts = frozenset(f"{name}:{port}" for name in names) | frozenset(names if port == 80 else ())
        self.origins = frozenset(f"http://{host}" for host in self.hosts)

    def check(self, method: str, path: str, headers: Mapping[str, str]) -> None:
        """Raise `Refused` unless the request may be answered."""
        host = (headers.get("Host") or "").strip().lower()
        if host not in self.hosts:
            raise Refused(HTTPStatus.FORBIDDEN, f"host {host or '(none)'!r} is not this table's address")
        origin = headers.get("Origin")
        if method == "POST" and origin is not None and origin.lower() not in self.origins:
            raise Refused(HTTPStatus.FORBIDDEN, f"requests from {origin!r} may not change the table")
        if not path.startswith("/api/"):
            return  # the pages: a link from elsewhere may open them (they are never framed: see the server)
        # Browsers say where a request comes from: the API answers only the table's own pages.
        if headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
            raise Refused(HTTPStatus.FORBIDDEN, "requests from other sites may not use the table")
        if not hmac.compare_digest((headers.get(TOKEN_HEADER) or "").encode(), self.token.encode()):
            raise Refused(HTTPStatus.FORBIDDEN, f"the {TOKEN_HEADER} header does not hold this session's token")
        if method == "POST":
            kind = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if kind != "application/json":
                raise Refused(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "the body must be sent as application/json")
