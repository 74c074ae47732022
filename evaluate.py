"""Tournaments between policies and bots, with confidence intervals, duplicate deals, ratings and plots.

    python evaluate.py --players expert greedy policy:runs/x/model.zip --games 1000 --seed 0 --out results/x
    python evaluate.py --config configs/eval/default.yaml --games 200   # command-line values override the file
    python evaluate.py --replay results/x/games.jsonl --game 3           # needs a run with --save-games

Players are agent specs (`--list-agents`); seats rotate, and with duplicate deals
(default) every deal is replayed with the seats rotated so each player gets every
seat's cards. Writes results.json, games.csv, report.md and PNG plots into --out,
each file atomically. A bad input is a one-line error and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

EXIT_BAD_INPUT = 2
DEFAULTS: dict[str, Any] = {
    "players": None,
    "games": 1000,
    "seed": 0,
    "table_size": None,
    "duplicate": True,
    "workers": None,
    "out": "results/eval",
    "save_games": False,
    "trust_models": False,
    "quiet": False,
    "rules": {},
}
# Rule options of QuiddlerConfig settable from the command line (num_players is the table size).
RULE_FLAGS = (
    "hand_sizes",
    "min_word_cards",
    "two_player_bonus",
    "bonus_value",
    "score_floor",
    "go_out",
    "dictionary",
    "turn_cap",
)


class BadInput(Exception):
    """A problem with what the user asked for: reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not usage + error
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def _turn_cap(text: str) -> int | None:
    if text.lower() in ("none", "null", "off"):
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"turn cap must be an integer or none, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="evaluate.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Defaults: " + ", ".join(f"{k}={v}" for k, v in DEFAULTS.items() if k != "rules") + ".",
    )
    p.add_argument("--config", type=Path, help="YAML file with any of the options below (and `rules:`)")
    p.add_argument("--players", nargs="+", metavar="SPEC", help="agent specs, e.g. expert greedy policy:PATH")
    p.add_argument("--games", type=int, help="games to play (with duplicate deals: rounded up to whole deals)")
    p.add_argument("--seed", type=int, help="seed of every deal and every agent generator")
    p.add_argument("--table-size", type=int, help="seats per game, 2..8 (default: the number of players)")
    p.add_argument(
        "--duplicate", action=argparse.BooleanOptionalAction, default=None, help="duplicate deals (default on)"
    )
    p.add_argument("--workers", type=int, help="worker processes (default, or 0: all cores)")
    p.add_argument("--out", type=Path, help="output folder")
    p.add_argument(
        "--save-games", action=argparse.BooleanOptionalAction, default=None, help="write games.jsonl (for --replay)"
    )
    p.add_argument(
        "--trust-models",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="let policy: specs unpickle model.zip (only for files you trust)",
    )
    p.add_argument("--quiet", action=argparse.BooleanOptionalAction, default=None, help="no progress bar, no summary")
    p.add_argument("--list-agents", action="store_true", help="print the agent specs and exit")
    rules = p.add_argument_group("rules (QuiddlerConfig; defaults: the rule book's)")
    rules.add_argument("--hand-sizes", type=int, nargs="+", metavar="N", help="cards dealt each round, e.g. 3 4 5")
    rules.add_argument("--min-word-cards", type=int, help="1 or 2")
    rules.add_argument("--two-player-bonus", help="longest_word, most_words or both")
    rules.add_argument("--bonus-value", type=int, help="points of each bonus (0 disables)")
    rules.add_argument("--score-floor", help="round, total or none")
    rules.add_argument("--go-out", help="optional or forced")
    rules.add_argument("--dictionary", help='"enable" or a word-list file')
    rules.add_argument(
        "--turn-cap", type=_turn_cap, help="turns each per round before it is scored anyway; none: no cap"
    )
    replay = p.add_argument_group("replay")
    replay.add_argument("--replay", type=Path, metavar="FILE", help="print a game from a games.jsonl file and exit")
    replay.add_argument("--game", type=int, default=0, help="which game to replay (its index; default 0)")
    return p


def read_config_file(path: Path) -> dict[str, Any]:
    """The options in a YAML file (safe_load); unknown keys are an error naming them."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BadInput(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise BadInput(f"config file {path} is not valid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise BadInput(f"config file {path} must hold a mapping of options, got {type(data).__name__}")
    unknown = sorted(set(data) - set(DEFAULTS))
    if unknown:
        raise BadInput(f"config file {path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(DEFAULTS)}")
    if data.get("rules") is not None and not isinstance(data["rules"], Mapping):
        raise BadInput(f"config file {path}: rules must be a mapping of rule options")
    return dict(data)


def resolve(args: argparse.Namespace) -> dict[str, Any]:
    """Defaults, then the config file, then the command line."""
    options = {k: (dict(v) if isinstance(v, dict) else v) for k, v in DEFAULTS.items()}
    if args.config is not None:
        file = read_config_file(args.config)
        rules = file.pop("rules", None) or {}
        options.update(file)
        options["rules"] = dict(rules)
    for key in DEFAULTS:
        if key != "rules" and getattr(args, key, None) is not None:
            options[key] = getattr(args, key)
    for key in RULE_FLAGS:
        if getattr(args, key) is not None:
            options["rules"][key] = getattr(args, key)
    if "num_players" in options["rules"]:
        raise BadInput("rules: num_players is set by table_size (or the number of players), not as a rule")
    players = options["players"]
    if not players:
        raise BadInput("no players: pass --players SPEC [SPEC ...] or `players:` in the config file")
    if isinstance(players, str) or not all(isinstance(s, str) for s in players):
        raise BadInput(f"players must be a list of agent specs, got {players!r}")
    for key in ("games", "seed", "workers", "table_size"):
        value = options[key]
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise BadInput(f"{key} must be an integer, got {value!r}")
    if options["workers"] is not None and options["workers"] < 0:
        raise BadInput(f"workers must be 0 (all cores) or more, got {options['workers']}")
    for key in ("duplicate", "save_games", "trust_models", "quiet"):
        if not isinstance(options[key], bool):
            raise BadInput(f"{key} must be true or false, got {options[key]!r}")
    if options["out"] is None or not str(options["out"]):
        raise BadInput("out must name an output folder")
    return options


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (the registry's lists of specs become a short list)."""
    lines = str(exc).strip().splitlines() or [type(exc).__name__]
    first = lines[0]
    if len(lines) > 1 and first.rstrip().endswith("specs:"):
        from agents.registry import REGISTRY

        first = first.rstrip()[: -len("specs:")].rstrip("; ") + f"; known agents: {', '.join(REGISTRY)}"
    elif len(lines) > 1:
        first = " ".join(line.strip() for line in lines)
    return first


def run(args: argparse.Namespace) -> int:
    options = resolve(args)
    from agents.evaluation.report import prepare_output, write_outputs
    from agents.evaluation.summary import summarize
    from agents.evaluation.tournament import (
        Tournament,
        build_players,
        default_workers,
        policy_table_size,
        run_tournament,
    )
    from quiddler_env.core.config import QuiddlerConfig
    from quiddler_env.core.game import QuiddlerGame

    table_size = options["table_size"]
    if table_size is None:
        # A policy plays the table size it was trained for; the pool then takes turns at that table.
        trained = policy_table_size(options["players"])
        if trained is not None and trained != len(options["players"]) and trained <= len(options["players"]):
            table_size = trained
            if not options["quiet"]:
                print(
                    f"evaluate.py: the policies play {trained}-player tables, so the {len(options['players'])} "
                    f"players take turns at tables of {trained} (--table-size sets it)",
                    file=sys.stderr,
                )
    try:
        rules = QuiddlerConfig.from_mapping(options["rules"])
        tournament = Tournament(
            specs=tuple(options["players"]),
            games=options["games"],
            seed=options["seed"],
            table_size=table_size,
            duplicate=options["duplicate"],
            rules=rules,
            trusted=options["trust_models"],
        )
        QuiddlerGame(tournament.rules)  # loads the dictionary: a bad word list fails here, not in a worker
        build_players(tournament)  # every spec and model file checked before anything is played or written
    except (ValueError, OSError) as exc:
        raise BadInput(_one_line(exc)) from None
    try:
        out = prepare_output(options["out"])
    except ValueError as exc:
        raise BadInput(str(exc)) from None

    workers = options["workers"] or default_workers()
    quiet = options["quiet"]
    if not quiet and tournament.total_games != tournament.games:
        print(
            f"evaluate.py: playing {tournament.total_games} games ({tournament.deals} whole duplicate deals of "
            f"{tournament.table_size} seat rotations) for --games {tournament.games}",
            file=sys.stderr,
        )
    from tqdm import tqdm

    bar = tqdm(
        total=tournament.total_games,
        unit="game",
        file=sys.stderr,
        disable=quiet or not sys.stderr.isatty(),
        dynamic_ncols=True,
    )
    start = time.perf_counter()
    try:
        played = run_tournament(tournament, workers=workers, progress=bar.update)
    except KeyboardInterrupt:
        bar.close()
        print("evaluate.py: interrupted; no results written", file=sys.stderr)
        return 130
    bar.close()
    seconds = time.perf_counter() - start
    summary = summarize(tournament, played)
    run_info = {
        "workers": workers,
        "seconds": round(seconds, 3),
        "games_per_second": round(len(played) / seconds, 3) if seconds > 0 else None,
        "out": str(out),
        "argv": sys.argv[1:],
    }
    written = write_outputs(out, tournament, played, summary, run_info, save_games=options["save_games"])
    if not quiet:
        print_summary(summary)
        print(f"wrote {', '.join(p.name for p in written)} to {out}/ ({len(played)} games in {seconds:.1f} s)")
    return 0


def print_summary(summary: dict[str, Any]) -> None:
    conf = round(100 * summary["confidence"])
    width = max(len(label) for label in summary["players"]) + 2
    print(f"{'player':<{width}} {'games':>6} {'wins':>5} {'ties':>5}  win rate [{conf}% CI]    mean final [{conf}% CI]")
    for label, p in summary["players"].items():
        wr, fs = p["win_rate"], p["final_score"]
        rate = f"{100 * wr['estimate']:5.1f}% [{100 * wr['low']:.1f}, {100 * wr['high']:.1f}]"
        mean = f"{fs['estimate']:.1f}" + (f" [{fs['low']:.1f}, {fs['high']:.1f}]" if fs["low"] is not None else "")
        print(f"{label:<{width}} {p['games']:>6} {p['wins']:>5} {p['ties']:>5}  {rate:<22} {mean}")


def replay(args: argparse.Namespace) -> int:
    from agents.evaluation.replay import ReplayError, read_game, replay_game

    try:
        record = read_game(args.replay, args.game)
        lines: list[str] = []
        replay_game(record, lines.append)  # checked to the end before anything is printed
    except ReplayError as exc:
        raise BadInput(str(exc)) from None
    print("\n".join(lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.list_agents:
            from agents.registry import available

            print(available())
            return 0
        if args.replay is not None:
            return replay(args)
        return run(args)
    except BadInput as exc:
        print(f"evaluate.py: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
