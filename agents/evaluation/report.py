"""Writing a tournament's results: results.json, games.csv, report.md, PNG plots, games.jsonl.

Every file is written to a temporary file in the output folder and moved into place
(`os.replace`), so an interrupted run leaves either the complete file or none.

| file | content |
|---|---|
| `results.json` | every figure (`summary.summarize`), the resolved tournament and rules, the dictionary identity, package versions, the seed; `run` holds what varies between runs (workers, time) |
| `games.csv` | one row per player per game |
| `report.md` | the figures as tables, with the plots |
| `win_rate.png`, `final_scores.png`, `round_scores.png` | win rate with Wilson whiskers, final-score distributions, mean round score by hand size with interval whiskers |
| `games.jsonl` | with `--save-games`: one game per line (deal, every action, every round result), for `--replay` |
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import tempfile
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from quiddler_env.core.cards import FACES

from .tournament import PlayedGame, Tournament, deal_cards

RESULTS_FORMAT = 1
PACKAGES = (
    "quiddler-env",
    "numpy",
    "numba",
    "gymnasium",
    "pettingzoo",
    "torch",
    "stable-baselines3",
    "sb3-contrib",
    "openskill",
    "matplotlib",
)
PLOTS = ("win_rate.png", "final_scores.png", "round_scores.png")


# -- writing files ----------------------------------------------------------------------------


def atomic_write(path: str | os.PathLike, write: Callable[[Any], None], binary: bool = False) -> None:
    """Write through a temporary file in the same folder, then `os.replace` it into place."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": ""})) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the permissions open() would
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write(path, lambda fh: fh.write(text))


def prepare_output(out: str | os.PathLike) -> Path:
    """Create the output folder and check a file can be written there (ValueError naming it if not)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"output folder {out} exists and is not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-test.", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"output folder {out} is not writable: {exc.strerror or exc}") from None
    return out


# -- results.json -------------------------------------------------------------------------------


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages a result depends on (None if not installed)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def dictionary_identity(tournament: Tournament) -> dict[str, Any]:
    """Which word list the games used: its name, the sha256 of its words, and of its file."""
    from quiddler_env.core.dictionary import load_dictionary

    d = load_dictionary(tournament.rules.dictionary)
    return {"name": d.name, "identity": d.identity, "source_sha256": d.source_digest}


def _rounded(value: Any, digits: int = 6) -> Any:
    """Floats rounded for reading (the rounding is deterministic, so results stay byte-identical)."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v, digits) for v in value]
    return value


def results_document(tournament: Tournament, summary: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """The content of results.json. Everything but `run` depends only on the tournament (and its seed)."""
    return {
        "format": RESULTS_FORMAT,
        "seed": tournament.seed,
        "tournament": tournament.to_dict(),
        "dictionary": dictionary_identity(tournament),
        "versions": package_versions(),
        "summary": _rounded(summary),
        "run": run,
    }


def results_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"


# -- games.csv ----------------------------------------------------------------------------------

CSV_COLUMNS = (
    "game",
    "deal",
    "rotation",
    "seat",
    "player",
    "spec",
    "total",
    "rank",
    "result",
    "went_out_rounds",
    "words",
    "longest_word",
    "round_scores",
)


def games_csv(tournament: Tournament, played: Sequence[PlayedGame]) -> str:
    """One row per player per game; `round_scores` holds the round scores joined by spaces."""
    from .stats import ranks_from_totals

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    labels = tournament.labels
    for g in played:
        ranks = ranks_from_totals(g.totals)
        top = max(g.totals)
        n_top = sum(t == top for t in g.totals)
        for seat, p in enumerate(g.seats):
            results = [rnd["results"][seat] for rnd in g.rounds]
            words = [w for r in results for w in r["spelled"]]
            longest = min(words, key=lambda w: (-len(w), w)).upper() if words else ""
            outcome = "win" if g.totals[seat] == top and n_top == 1 else "tie" if g.totals[seat] == top else "loss"
            writer.writerow(
                (
                    g.game,
                    g.deal,
                    g.rotation,
                    seat,
                    labels[p],
                    tournament.specs[p],
                    g.totals[seat],
                    ranks[seat],
                    outcome,
                    sum(bool(r["went_out"]) for r in results),
                    len(words),
                    longest,
                    " ".join(str(r["round_score"]) for r in results),
                )
            )
    return buffer.getvalue()


# -- games.jsonl --------------------------------------------------------------------------------


def game_line(tournament: Tournament, g: PlayedGame) -> dict[str, Any]:
    """One saved game: enough to replay it move by move (`replay.replay_game`)."""
    decks, _ = deal_cards(g.deal_seed, tournament.rules.num_rounds)
    labels = tournament.labels
    return {
        "game": g.game,
        "deal": g.deal,
        "rotation": g.rotation,
        "seats": [labels[p] for p in g.seats],
        "specs": [tournament.specs[p] for p in g.seats],
        "rules": tournament.rules.to_dict(),
        "deal_seed": g.deal_seed,
        "decks": [[FACES[f] for f in deck] for deck in decks],
        "actions": [list(a) for a in g.actions],
        "rounds": g.rounds,
        "totals": g.totals,
        "winners": g.winners,
    }


def games_jsonl(tournament: Tournament, played: Sequence[PlayedGame]) -> str:
    return "".join(json.dumps(game_line(tournament, g), separators=(",", ":")) + "\n" for g in played)


# -- report.md ----------------------------------------------------------------------------------


def _num(value: Any, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _pct(iv: dict[str, Any]) -> str:
    if iv["estimate"] is None:
        return "-"
    if iv["low"] is None:
        return f"{100 * iv['estimate']:.1f}%"
    return f"{100 * iv['estimate']:.1f}% [{100 * iv['low']:.1f}, {100 * iv['high']:.1f}]"


def _mean(iv: dict[str, Any], digits: int = 1) -> str:
    if iv["estimate"] is None:
        return "-"
    if iv["low"] is None:
        return _num(iv["estimate"], digits)
    return f"{iv['estimate']:.{digits}f} [{iv['low']:.{digits}f}, {iv['high']:.{digits}f}]"


def report_markdown(document: dict[str, Any]) -> str:
    """report.md: the tournament, then the tables, then the plots."""
    t = document["tournament"]
    s = document["summary"]
    run = document["run"]
    conf = round(100 * s["confidence"])
    unit = s["units"]
    lines = [
        "# Quiddler tournament",
        "",
        f"Players: {', '.join(f'`{label}`' for label in t['labels'])}; table of {t['table_size']}; "
        f"{t['games']} games ({t['deals']} deals{', duplicate: every deal played in every seat rotation' if t['duplicate'] else ''}); "
        f"seed {t['seed']}.",
        "",
        f"Rules: `{json.dumps(t['rules'], sort_keys=True)}`. Dictionary: {document['dictionary']['name']} "
        f"(sha256 of the words {document['dictionary']['identity'][:16]}...).",
        "",
        f"Intervals are {conf}%: Wilson for rates; t intervals for means, with each {unit} as one unit.",
        "",
        "## Players",
        "",
        f"| player | games | wins | ties | win rate [{conf}% CI] | mean final score [{conf}% CI] | mean rank | "
        "go-out rate | words / round | longest word |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, p in s["players"].items():
        longest = p["longest_word"]
        lines.append(
            f"| `{label}` | {p['games']} | {p['wins']} | {p['ties']} | {_pct(p['win_rate'])} | "
            f"{_mean(p['final_score'])} | {_num(p['mean_rank'], 2)} | {_pct(p['go_out_rate'])} | "
            f"{_num(p['words_per_round'], 2)} | {longest['word'] + ' (' + str(longest['letters']) + ')' if longest else '-'} |"
        )
    sizes = list(next(iter(s["players"].values()))["round_score_by_hand_size"])
    lines += [
        "",
        "## Mean round score by hand size",
        "",
        "| player | " + " | ".join(f"{h} cards" for h in sizes) + " |",
        "|---|" + "---|" * len(sizes),
    ]
    for label, p in s["players"].items():
        cells = " | ".join(_mean(p["round_score_by_hand_size"][h]) for h in sizes)
        lines.append(f"| `{label}` | {cells} |")
    lines += [
        "",
        "## Head to head",
        "",
        "Score difference = a's final total - b's, over the games both played. *Raw*: the two "
        "players' totals as independent samples (Welch). *Paired*: the difference within each "
        f"{unit}, which cancels the luck of the cards.",
        "",
        f"| a | b | games | a ahead | b ahead | level | a win rate [{conf}% CI] | "
        f"raw difference [{conf}% CI] | paired difference [{conf}% CI] |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for pair in s["pairs"]:
        diff = pair["score_difference"]
        lines.append(
            f"| `{pair['a']}` | `{pair['b']}` | {pair['games']} | {pair['a_ahead']} | {pair['b_ahead']} | "
            f"{pair['level']} | {_pct(pair['a_win_rate'])} | {_mean(diff['raw'])} | {_mean(diff['paired'])} |"
        )
    if s["ratings"]:
        lines += [
            "",
            "## Ratings",
            "",
            f"{s['ratings']['model']}. Ordinal = mu - 3 sigma (what OpenSkill ranks by).",
            "",
            f"| player | mu [{conf}% interval] | sigma | ordinal |",
            "|---|---|---|---|",
        ]
        ranked = sorted(s["ratings"]["players"].items(), key=lambda kv: (-kv[1]["ordinal"], kv[0]))
        for label, r in ranked:
            lines.append(
                f"| `{label}` | {r['mu']:.2f} [{r['low']:.2f}, {r['high']:.2f}] | {r['sigma']:.2f} | {r['ordinal']:.2f} |"
            )
    lines += ["", "## Plots", ""]
    lines += [f"![{name[:-4].replace('_', ' ')}]({name})" for name in PLOTS]
    lines += [
        "",
        "## Run",
        "",
        f"{run['workers']} worker(s), {run['seconds']:.1f} s ({run['games_per_second']:.1f} games/s). "
        f"Versions: {', '.join(f'{k} {v}' for k, v in document['versions'].items() if v)}.",
        "",
    ]
    return "\n".join(lines)


# -- plots --------------------------------------------------------------------------------------


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


def plots(summary: dict[str, Any], played: Sequence[PlayedGame], tournament: Tournament) -> dict[str, bytes]:
    """The three PNGs, as bytes keyed by file name (Agg backend: no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(summary["players"])
    players = summary["players"]
    conf = round(100 * summary["confidence"])
    out: dict[str, bytes] = {}

    fig, ax = plt.subplots(figsize=(7, 0.6 * len(labels) + 1.5))
    ys = range(len(labels))
    rates = [players[k]["win_rate"]["estimate"] or 0.0 for k in labels]
    lows = [r - (players[k]["win_rate"]["low"] or r) for r, k in zip(rates, labels, strict=True)]
    highs = [(players[k]["win_rate"]["high"] or r) - r for r, k in zip(rates, labels, strict=True)]
    ax.barh(ys, rates, xerr=[lows, highs], capsize=4, color="tab:blue", alpha=0.8)
    ax.set_yticks(list(ys), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"win rate (ties not counted), {conf}% Wilson interval")
    ax.set_title(f"Win rate over {summary['games']} games")
    out["win_rate.png"] = _png(fig)
    plt.close(fig)

    finals: list[list[int]] = [[] for _ in labels]
    for g in played:
        for seat, p in enumerate(g.seats):
            finals[p].append(g.totals[seat])
    fig, ax = plt.subplots(figsize=(max(5.0, 1.3 * len(labels) + 2), 4.5))
    ax.boxplot(finals, showmeans=True)
    ax.set_xticks(range(1, len(labels) + 1), labels, rotation=20 if len(labels) > 3 else 0)
    ax.set_ylabel("final score (box: quartiles; triangle: mean)")
    ax.set_title("Final scores")
    out["final_scores.png"] = _png(fig)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, label in enumerate(labels):
        by_size = players[label]["round_score_by_hand_size"]
        sizes = [int(h) for h in by_size]
        means = [by_size[h]["estimate"] for h in by_size]
        err_low = [
            m - iv["low"] if iv["low"] is not None else 0.0 for m, iv in zip(means, by_size.values(), strict=True)
        ]
        err_high = [
            iv["high"] - m if iv["high"] is not None else 0.0 for m, iv in zip(means, by_size.values(), strict=True)
        ]
        # Shift the players' points a little apart so the whiskers do not hide each other.
        offset = (i - (len(labels) - 1) / 2) * 0.08
        ax.errorbar(
            [h + offset for h in sizes],
            [m if m is not None else float("nan") for m in means],
            yerr=[err_low, err_high],
            marker="o",
            capsize=3,
            label=label,
        )
    ax.set_xlabel("cards dealt (hand size)")
    ax.set_ylabel(f"mean round score, {conf}% interval")
    ax.set_title("Round score by hand size")
    ax.legend()
    out["round_scores.png"] = _png(fig)
    plt.close(fig)
    return out


def write_outputs(
    out: Path,
    tournament: Tournament,
    played: Sequence[PlayedGame],
    summary: dict[str, Any],
    run: dict[str, Any],
    save_games: bool = False,
) -> list[Path]:
    """Render everything in memory first, then write each file atomically; returns the paths written."""
    document = results_document(tournament, summary, run)
    files: dict[str, bytes] = {
        "games.csv": games_csv(tournament, played).encode(),
        "report.md": report_markdown(document).encode(),
    }
    files.update(plots(summary, played, tournament))
    if save_games:
        files["games.jsonl"] = games_jsonl(tournament, played).encode()
    # results.json last: when it is there, the rest of the run's files are complete too.
    files["results.json"] = results_json(document).encode()
    written = []
    for name, data in files.items():
        path = out / name
        atomic_write(path, lambda fh, data=data: fh.write(data), binary=True)
        written.append(path)
    return written
