"""Tournaments between policies and bots, with confidence intervals, duplicate deals, ratings and plots.

    python evaluate.py --players expert greedy policy:runs/x/model.zip --games 1000 --seed 0 --out results/x
    python evaluate.py --config configs/eval/default.yaml --games 200   # command-line values override the file
    python evaluate.py --replay results/x/games.jsonl --game 3           # needs a run with --save-games
    python evaluate.py --benchmark v1 greedy --out results/bench-greedy  # the versioned benchmark's score card
    python evaluate.py --review results/x/games.jsonl --seat 0 --out results/x-review  # the coach's review

Players are agent specs (`--list-agents`); seats rotate, and with duplicate deals
(default) every deal is replayed with the seats rotated so each player gets every
seat's cards. The rule flags are QuiddlerConfig's fields (their help is declared there).

--out holds exactly one complete run: results.json, games.csv, report.md, the PNG plots
(and games.jsonl with --save-games) are written into a staging folder beside it and
swapped in whole, so nothing of an earlier run stays and a killed run leaves the old
folder or the new one. An --out that another evaluate.py is writing, or a non-empty
folder holding files evaluate.py did not write, is refused. Worker processes end with
this one, even on kill -9. A bad input is a one-line error and exit code 2, with nothing
written. Ctrl-C (SIGINT) and SIGTERM stop the workers and end with one line, exit code
130 and 143 (128 + the signal), and --out as it was.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from quiddler_env.core.config import QuiddlerConfig, RuleOption

from ..extras import MissingExtra, skipped
from . import exit_with, interrupted_status, program, stop_signals

EXIT_BAD_INPUT = 2
REVIEW_SAMPLES = 32
"""The review's determinizations per decision (the search bot's default)."""
DEFAULTS: dict[str, Any] = {
    "players": None,
    "games": 1000,
    "seed": 0,
    "table_size": None,
    "duplicate": True,
    "workers": None,
    "engine": "auto",
    "out": "results/eval",
    "save_games": False,
    "trust_models": False,
    "quiet": False,
    "rules": {},
}
# Rule options of QuiddlerConfig settable from the command line, read from its fields (num_players is the table size).
RULE_OPTIONS = tuple(o for o in QuiddlerConfig.rule_options() if o.kind is not None)
RULE_FLAGS = tuple(o.name for o in RULE_OPTIONS)

PROG = program("evaluate")
"""The command's name in its messages: `quiddler-evaluate` when run as the console script, else `evaluate.py`."""


class BadInput(Exception):
    """A problem with what the user asked for: reported as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not usage + error
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def _int_or_none(name: str):
    def parse(text: str) -> int | None:
        if text.lower() in ("none", "null", "off"):
            return None
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer or none, got {text!r}") from None

    return parse


def _bool(name: str):
    def parse(text: str) -> bool:
        value = {
            "true": True,
            "on": True,
            "yes": True,
            "1": True,
            "false": False,
            "off": False,
            "no": False,
            "0": False,
        }
        if text.lower() not in value:
            raise argparse.ArgumentTypeError(f"{name} must be true or false, got {text!r}")
        return value[text.lower()]

    return parse


def _shown(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return " ".join(map(str, value)) or "none"
    return "none" if value is None else str(value)


def add_rule_option(group: argparse._ArgumentGroup, option: RuleOption) -> None:
    """One rule flag, its type and help from the QuiddlerConfig field's declaration."""
    text = option.help
    if option.choices and option.kind not in ("choice", "bool"):  # their metavars list them
        text += f"; one of {', '.join(map(str, option.choices))}"
    elif option.bounds is not None:
        text += f"; {option.bounds[0]}..{option.bounds[1]}"
    text += f" (default {_shown(option.default)})"
    kwargs: dict[str, Any] = {"help": text.replace("%", "%%")}
    if option.kind == "int":
        kwargs.update(type=int, metavar="N")
    elif option.kind == "ints":
        kwargs.update(type=int, nargs="+", metavar="N")
    elif option.kind == "int_or_none":
        kwargs.update(type=_int_or_none(option.name.replace("_", " ")), metavar="N|none")
    elif option.kind == "choice":
        kwargs.update(metavar="{" + ",".join(map(str, option.choices)) + "}")
    elif option.kind == "text":
        kwargs.update(metavar="TEXT")
    elif option.kind == "texts":
        kwargs.update(nargs="+", metavar="TEXT")
    elif option.kind == "bool":
        kwargs.update(type=_bool(option.name.replace("_", " ")), metavar="{true,false}")
    else:
        raise ValueError(f"rule option {option.name}: no command-line form for kind {option.kind!r}")
    # Absent unless given, so a given `none` (no turn cap) is told apart from an option not given.
    group.add_argument(option.flag, dest=option.name, default=argparse.SUPPRESS, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
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
    p.add_argument(
        "--engine",
        choices=("auto", "batched", "single"),
        help="batched: every game at once on the batched engine (random and greedy compiled); single: game by game; "
        "auto (default): batched when every player is random or greedy",
    )
    p.add_argument("--out", help="output folder: replaced whole by this run's files (a new, empty or earlier run's)")
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
    for option in RULE_OPTIONS:
        add_rule_option(rules, option)
    bench = p.add_argument_group("benchmark (docs/evaluation.md, Benchmark v1)")
    bench.add_argument(
        "--benchmark",
        nargs=2,
        metavar=("NAME", "SPEC"),
        help="play the versioned benchmark NAME (v1: the full dictionary; v1-vocab: the vocabulary track) with "
        "agent SPEC; writes card.json and card.md into --out "
        "(default results/benchmark-NAME)",
    )
    bench.add_argument(
        "--games-per-pairing",
        type=int,
        metavar="K",
        help="with --benchmark: a smaller run of about K games per opponent (whole rotations); the card says so",
    )
    bench.add_argument(
        "--tables",
        type=int,
        nargs="+",
        metavar="T",
        help="with --benchmark: only these of its table sizes (default: a policy's trained table, else all)",
    )
    replay = p.add_argument_group("replay")
    replay.add_argument("--replay", type=Path, metavar="FILE", help="print a game from a games.jsonl file and exit")
    replay.add_argument("--game", type=int, default=0, help="which game to replay (its index; default 0)")
    review = p.add_argument_group("review (docs/evaluation.md, The coach and the review)")
    review.add_argument(
        "--review",
        type=Path,
        metavar="FILE",
        help="weigh every decision of the saved games in FILE (games.jsonl, or a game saved at the table) with "
        "the search bot; writes review.json and review.md into --out (default results/review). --seed seeds it, "
        "--games N reviews the first N games only",
    )
    review.add_argument("--seat", type=int, metavar="N", help="with --review: only seat N's decisions")
    review.add_argument(
        "--samples",
        type=int,
        metavar="K",
        help=f"with --review: the coach's determinizations (default {REVIEW_SAMPLES})",
    )
    return p


def read_config_file(path: Path) -> dict[str, Any]:
    """The options in a YAML file (files.read_yaml_mapping); unknown keys are an error naming them."""
    from quiddler_env.core.files import read_yaml_mapping

    try:
        data = read_yaml_mapping(path, what="config file")
    except ValueError as exc:
        raise BadInput(str(exc)) from None
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
        if hasattr(args, key):
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
    if options["engine"] not in ("auto", "batched", "single"):
        raise BadInput(f"engine must be auto, batched or single, got {options['engine']!r}")
    for key in ("duplicate", "save_games", "trust_models", "quiet"):
        if not isinstance(options[key], bool):
            raise BadInput(f"{key} must be true or false, got {options[key]!r}")
    out = options["out"]
    if not isinstance(out, (str, os.PathLike)) or not str(out).strip():
        raise BadInput(f"out must name an output folder, got {out!r}")
    options["out"] = Path(out)
    options["argv"] = list(getattr(args, "argv", sys.argv[1:]))
    return options


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (the registry's lists of specs become a short list)."""
    lines = str(exc).strip().splitlines() or [type(exc).__name__]
    first = lines[0]
    if len(lines) > 1 and first.rstrip().endswith("specs:"):
        from ..registry import REGISTRY

        first = first.rstrip()[: -len("specs:")].rstrip("; ") + f"; known agents: {', '.join(REGISTRY)}"
    elif len(lines) > 1:
        first = " ".join(line.strip() for line in lines)
    return first


def run(args: argparse.Namespace) -> int:
    options = resolve(args)
    from quiddler_env.core.files import FolderBusyError, FolderLock
    from quiddler_env.core.game import QuiddlerGame

    from ..evaluation.report import check_output, remove_stale_run
    from ..evaluation.tournament import (
        Tournament,
        build_players,
        policy_identities,
        policy_table_size,
    )

    try:
        out = check_output(options["out"])  # before the players load: a bad folder fails at once (absolute)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    table_size = options["table_size"]
    if table_size is None:
        # A policy plays the table size it was trained for; the pool then takes turns at that table.
        trained = policy_table_size(options["players"])
        if trained is not None and trained != len(options["players"]) and trained <= len(options["players"]):
            table_size = trained
            if not options["quiet"]:
                print(
                    f"{PROG}: the policies play {trained}-player tables, so the {len(options['players'])} "
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
        tournament.rules.check_word_lists()  # a bad word list fails here, naming its rule, not in a worker
        QuiddlerGame(tournament.rules)
        build_players(tournament)  # every spec and model file checked before anything is played or written
        policies = policy_identities(tournament)
    except (ValueError, OSError) as exc:
        raise BadInput(_one_line(exc)) from None

    lock = FolderLock(out, what="output folder")
    try:
        lock.acquire()  # held until the run is in place: a second evaluate.py on this folder stops here
    except FolderBusyError as exc:
        raise BadInput(exc.strerror) from None
    except OSError as exc:
        raise BadInput(f"output folder {out}: cannot take its lock {lock.path}: {exc.strerror or exc}") from None
    try:
        remove_stale_run(out)  # what a killed run left
        check_output(out)  # again, now that no other run can change it
        return _play_and_write(options, tournament, policies, out, shown=options["out"])
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    finally:
        lock.release()


def _play_and_write(options: dict[str, Any], tournament, policies: dict[str, Any], out: Path, shown: Path) -> int:
    """Play the tournament, then put its files in `out` as one unit (the caller holds the folder's lock).

    `shown`: the folder as the user named it, for messages and results.json.
    """
    from ..evaluation.report import write_run
    from ..evaluation.summary import summarize
    from ..evaluation.tournament import default_workers, policy_identities, run_tournament

    workers = options["workers"] or default_workers()
    quiet = options["quiet"]
    if not quiet and tournament.total_games != tournament.games:
        print(
            f"{PROG}: playing {tournament.total_games} games ({tournament.deals} whole duplicate deals of "
            f"{tournament.table_size} seat rotations) for --games {tournament.games}",
            file=sys.stderr,
        )
    from ..progress import Progress

    # A bar on a terminal (tqdm: the eval extra), nothing elsewhere.
    bar = Progress("playing", tournament.total_games, "game", bar=True, enabled=not quiet and sys.stderr.isatty())
    start = time.perf_counter()
    try:
        played = run_tournament(tournament, workers=workers, progress=bar.update, engine=options["engine"])
    except KeyboardInterrupt as exc:
        bar.close()
        print(f"{PROG}: interrupted; no results written ({shown} is as it was)", file=sys.stderr)
        return interrupted_status(exc)
    bar.close()
    seconds = time.perf_counter() - start
    if policy_identities(tournament) != policies:
        raise ValueError("a policy bundle changed while the games were played; no results written, run again")
    summary = summarize(tournament, played)
    # What the base install leaves out (the eval extra's), said in one line each; the rest is written.
    notes = [skipped("plots", "eval", "matplotlib")]
    if len(tournament.specs) > 2:
        notes.append(skipped("ratings", "eval", "openskill"))
    for note in filter(None, notes):
        print(f"{PROG}: {note}", file=sys.stderr)
    run_info = {
        "workers": workers,
        "engine": options["engine"],
        "seconds": round(seconds, 3),
        "games_per_second": round(len(played) / seconds, 3) if seconds > 0 else None,
        "out": str(shown),
        "save_games": options["save_games"],
        "argv": options["argv"],
    }
    try:
        written = write_run(out, tournament, played, summary, run_info, options["save_games"], policies)
    except KeyboardInterrupt as exc:
        print(f"{PROG}: interrupted while writing; {shown} holds the earlier run or this one, whole", file=sys.stderr)
        return interrupted_status(exc)
    except OSError as exc:
        print(f"{PROG}: error: cannot write the results to {shown}: {exc}", file=sys.stderr)
        return 1
    if not quiet:
        print_summary(summary)
        print(f"wrote {', '.join(p.name for p in written)} to {shown}/ ({len(played)} games in {seconds:.1f} s)")
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
    for label, p in summary["players"].items():
        c = p.get("challenges")
        if c is not None:
            print(
                f"{label:<{width}} challenges made {c['made']}, won {c['won']}, lost {c['lost']}; "
                f"its words challenged {c['challenged']} of {c['words_laid']}, failed {c['failed']}"
            )


def benchmark(args: argparse.Namespace) -> int:
    """Play a versioned benchmark and write its score card (card.json, card.md) into --out."""
    from ..evaluation.benchmark import BenchmarkError, get_protocol, render_markdown, run_benchmark, write_card

    name, spec = args.benchmark
    clashing = [flag for flag, value in (("--players", args.players), ("--config", args.config)) if value is not None]
    if clashing:
        raise BadInput(f"--benchmark fixes the players and rules; drop {', '.join(clashing)}")
    try:
        protocol = get_protocol(name)
    except BenchmarkError as exc:
        raise BadInput(str(exc)) from None
    from ..evaluation.tournament import check_specs
    from ..registry import parse_spec

    try:  # the spec's name and options, before any game
        parse_spec(spec)
        check_specs([spec])
    except ValueError as exc:
        raise BadInput(_one_line(exc)) from None
    out = Path(args.out or f"results/benchmark-{name}")

    def progress(table: int, opponent: str) -> None:
        if not args.quiet:
            print(f"{PROG}: benchmark {name}: {spec} at a table of {table} against {opponent}", file=sys.stderr)

    try:
        card = run_benchmark(
            protocol,
            spec,
            games_per_pairing=args.games_per_pairing,
            progress=progress,
            tables=args.tables,
            trusted=bool(args.trust_models),
        )
    except ValueError as exc:  # a bad spec, a changed deal file, a bad K: one line
        raise BadInput(_one_line(exc)) from None
    paths = write_card(card, out)
    if not args.quiet:
        print(render_markdown(card))
        print(f"wrote {paths[0]} and {paths[1]}")
    return 0


def review(args: argparse.Namespace) -> int:
    from ..evaluation.replay import ReplayError
    from ..evaluation.review import review as review_games
    from ..evaluation.review import write_review
    from ..params import MAX_SAMPLES

    if args.players is not None or args.benchmark is not None or args.replay is not None:
        raise BadInput("--review FILE takes no --players, --benchmark or --replay")
    if args.seat is not None and args.seat < 0:
        raise BadInput(f"--seat must be a seat number from 0, got {args.seat}")
    samples = REVIEW_SAMPLES if args.samples is None else args.samples
    if not 1 <= samples <= MAX_SAMPLES:
        raise BadInput(f"--samples must be 1..{MAX_SAMPLES}, got {samples}")
    if args.games is not None and args.games < 1:
        raise BadInput(f"--games must be at least 1, got {args.games}")
    out = Path(args.out or "results/review")
    seed = 0 if args.seed is None else args.seed
    games = None if args.games is None else range(args.games)
    quiet = bool(args.quiet)

    def progress(done: int) -> None:
        if not quiet:
            print(f"\rreviewed {done} game(s)", end="", file=sys.stderr, flush=True)

    try:
        data = review_games(args.review, seat=args.seat, games=games, seed=seed, samples=samples, progress=progress)
    except (ReplayError, ValueError) as exc:
        raise BadInput(_one_line(exc)) from None
    if not quiet:
        print(file=sys.stderr)
    try:
        paths = write_review(data, out)
    except OSError as exc:
        print(f"{PROG}: error: cannot write the review to {out}: {exc}", file=sys.stderr)
        return 1
    if not quiet:
        for name, row in data["players"].items():
            kinds = ", ".join(f"{k} {v['loss']:.1f}" for k, v in row["kinds"].items() if v["decisions"])
            print(f"{name}: {row['loss']:.1f} points lost in {row['games']} game(s) ({kinds})")
        print(f"wrote {paths[0]} and {paths[1]}")
    return 0


def replay(args: argparse.Namespace) -> int:
    from ..evaluation.replay import ReplayError, read_game, replay_game

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
    args.argv = sys.argv[1:] if argv is None else list(argv)
    with stop_signals():  # SIGTERM ends the command as Ctrl-C does
        try:
            if args.list_agents:
                from ..registry import available

                print(available())
                return 0
            if args.review is not None:
                return review(args)
            if args.seat is not None or args.samples is not None:
                raise BadInput("--seat and --samples go with --review FILE")
            if args.replay is not None:
                return replay(args)
            if args.benchmark is not None:
                return benchmark(args)
            if args.games_per_pairing is not None or args.tables is not None:
                raise BadInput("--games-per-pairing and --tables go with --benchmark NAME SPEC")
            return run(args)
        except (BadInput, MissingExtra) as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except KeyboardInterrupt as exc:  # before the games began (loading the players): nothing was written
            print(f"{PROG}: interrupted; no results written", file=sys.stderr)
            return interrupted_status(exc)


def console() -> None:
    """The `quiddler-evaluate` console script."""
    exit_with(main)


if __name__ == "__main__":
    exit_with(main)
