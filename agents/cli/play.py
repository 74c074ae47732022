"""Play Quiddler against bots or trained policies: in the browser (`quiddler-play`, `python play.py`) or at the terminal.

    quiddler-play                                       # the browser table on http://127.0.0.1:8765/
    quiddler-play --port 9000 --replay results/x/games.jsonl   # also offer a replay file to the viewer
    quiddler-play --terminal                            # you against greedy, at the terminal
    quiddler-play --terminal --opponents expert random --seed 3
    python examples/play_human.py ...                   # the terminal seat, from a checkout

The browser table serves a page on the loopback address: pick the seats (you, the bots,
the zoo's policies and the bundles named with `--policy`) and the rules (word lists named
with `--word-list` or kept in `--games-dir`), play by clicking, save and reopen games;
`/replay` steps through saved games. Games live in `--games-dir` (the current game is
written there after every move). Only the table's own page may use its API; another
address than the loopback (`--host 0.0.0.0`) needs `--allow-remote`, since anyone who
can reach it may then play. At the terminal, type `help` at the prompt for
the moves (`draw`, `take E`, `discard QU`, `go out discarding M`, or a move number);
`quit` or Ctrl-D leaves.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.observation import encode_observation

from ..human import HumanAgent, HumanQuit
from ..registry import make
from . import program

PROG = program("play")
"""The command's name in its messages: `quiddler-play` when run as the console script, else `play.py`."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--terminal", action="store_true", help="play at the terminal instead of the browser")
    parser.add_argument("--host", default="127.0.0.1", help="browser table: the address to listen on (loopback)")
    parser.add_argument(
        "--allow-remote", action="store_true", help="browser table: let --host be an address other machines reach"
    )
    parser.add_argument(
        "--policy", action="append", default=[], metavar="BUNDLE", help="browser table: a policy bundle seats may play"
    )
    parser.add_argument(
        "--word-list", action="append", default=[], metavar="FILE", help="browser table: a word list the rules may use"
    )
    parser.add_argument("--port", type=int, default=8765, help="browser table: the port (0: any free one)")
    parser.add_argument(
        "--games-dir", default=str(Path.home() / ".cache" / "quiddler_env" / "table"), help="browser table: saved games"
    )
    parser.add_argument("--replay", nargs="*", default=[], metavar="GAMES_JSONL", help="replay files the viewer offers")
    parser.add_argument(
        "--opponents", nargs="+", default=["greedy"], help="terminal: agent specs, one per opponent seat"
    )
    parser.add_argument("--seat", type=int, default=0, help="your seat (0 moves first in round 1)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=8, help="rounds to play (hand sizes 3, 4, ...)")
    args = parser.parse_args(argv)
    if not args.terminal:
        return _browser(args)

    n = len(args.opponents) + 1
    try:
        config = QuiddlerConfig(num_players=n, hand_sizes=tuple(range(3, 3 + args.rounds)))
        if not 0 <= args.seat < n:
            raise ValueError(f"--seat {args.seat}: seats are 0..{n - 1}")
        bots = [make(spec, seed=args.seed + 1 + i, config=config) for i, spec in enumerate(args.opponents)]
    except ValueError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    human = HumanAgent(seed=args.seed, config=config)
    seats = bots[: args.seat] + [human] + bots[args.seat :]
    game = QuiddlerGame(config)
    game.reset(seed=args.seed)
    try:
        while not game.is_over:
            p = game.current_player
            results = game.step(seats[p].act(encode_observation(game, p), game.legal_action_mask()))
            if results is not None:
                human.show_results(results, args.seat)
    except HumanQuit:
        print("\nGame left.")
        return 0
    winners = game.winners()
    verdict = "You win!" if winners == [args.seat] else ("A tie." if args.seat in winners else "You lose.")
    print(f"\nFinal totals: {game.totals}. {verdict}")
    return 0


def _browser(args: argparse.Namespace) -> int:
    from ..table.guard import is_loopback
    from ..table.server import serve

    def error(message: str) -> int:
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 2

    replays = [Path(p) for p in args.replay]
    for flag, paths in (("--replay", replays), ("--policy", args.policy), ("--word-list", args.word_list)):
        for path in map(Path, paths):
            problem = _not_readable(path, folder_ok=flag == "--policy")
            if problem:
                return error(f"{flag} {path} {problem}")
    if not 0 <= args.port <= 65535:
        return error(f"--port {args.port} is not a port (0..65535)")
    games_dir = Path(args.games_dir)
    if games_dir.exists() and not games_dir.is_dir():
        return error(f"--games-dir {games_dir} is not a folder")
    try:
        games_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return error(f"cannot make --games-dir {games_dir}: {exc.strerror or exc}")
    if not is_loopback(args.host):
        if not args.allow_remote:
            return error(
                f"--host {args.host} serves the table beyond this machine: add --allow-remote if anyone who can "
                "reach it may play"
            )
        print(
            f"{PROG}: warning: listening on {args.host}: anyone who can reach this machine on that port "
            f"can play at this table and read its games",
            file=sys.stderr,
        )

    def ready(server) -> None:
        print(f"the Quiddler table: http://{args.host}:{server.server_port}/  (Ctrl-C stops it)", flush=True)

    try:
        serve(
            args.host,
            args.port,
            games_dir,
            replays,
            ready=ready,
            policies=[Path(p) for p in args.policy],
            word_lists=[Path(p) for p in args.word_list],
        )
    except OSError as exc:
        print(f"{PROG}: error: cannot serve on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nstopped.")
    return 0


def _not_readable(path: Path, folder_ok: bool = False) -> str | None:
    """What keeps `path` from being read as a file (or a folder, if `folder_ok`), or None."""
    if not path.exists():
        return "does not exist"
    if path.is_dir():
        return None if folder_ok else "is a folder, not a file"
    if not path.is_file():
        return "is not a regular file (a FIFO, a device or a socket)"
    return None


if __name__ == "__main__":
    sys.exit(main())
