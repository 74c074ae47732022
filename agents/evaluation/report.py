"""Writing a tournament's results: results.json, games.csv, report.md, PNG plots, games.jsonl.

A run is written into a staging folder beside the output folder and swapped into place
whole (`write_run`, through `quiddler_env.core.files`), so the folder holds exactly one
complete run: a killed run leaves the earlier folder or the new one, never a mix. A folder
holding anything evaluate.py did not write is refused (`check_output`), not replaced.

| file | content |
|---|---|
| `results.json` | every figure (`summary.summarize`), the resolved tournament and rules, each policy's bundle folder and weights sha256 (`policies`), the dictionary identity, package versions, the env version (`env_version`), the seed; `run` holds what varies between runs (workers, time) |
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
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from quiddler_env.core import files
from quiddler_env.core.cards import FACES
from quiddler_env.envs.versions import ENV_VERSION

from ..cli import program
from ..extras import install_command, missing
from ..provenance import dictionary_identity, package_versions
from .tournament import PlayedGame, Tournament, deal_cards

RESULTS_FORMAT = 1
PLOTS = ("win_rate.png", "final_scores.png", "round_scores.png")


# -- the output folder ---------------------------------------------------------------------------


def output_files(save_games: bool = False) -> tuple[str, ...]:
    """The files of one run, results.json last (its presence means the rest is complete)."""
    return ("games.csv", "report.md", *PLOTS, *(("games.jsonl",) if save_games else ()), "results.json")


OUTPUT_FILES = frozenset(output_files(save_games=True))


def is_results_document(path: str | os.PathLike) -> bool:
    """Whether `path` is a results.json this module wrote (a JSON object with our keys and format)."""
    try:
        doc = files.read_json(path)
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("format") == RESULTS_FORMAT and {"tournament", "summary"} <= set(doc)


def check_output(out: str | os.PathLike) -> Path:
    """An output folder this run may fill: new, empty, or an earlier run's (a ValueError naming it if not).

    Returns it as an absolute path (the folder is swapped by name beside it).

    The run's files replace the folder as a whole, so a folder holding anything else
    (files of the user, a results.json not ours) is refused rather than deleted.
    """
    if not isinstance(out, (str, os.PathLike)) or not str(out).strip():
        raise ValueError("out must name an output folder")
    given, out = out, Path(os.path.abspath(out))  # `.` and `..` named as the folders they are
    if not out.name:
        raise ValueError(f"output folder {given} is the root folder; name a folder in it")
    if out.is_symlink():
        raise ValueError(f"output folder {out} is a symbolic link; name the folder it points to")
    if out.exists() and not out.is_dir():
        raise ValueError(f"output folder {out} exists and is not a folder")
    # The run is written beside the folder and swapped in, so the folder's parent must be writable.
    files.check_writable_folder(out.parent if out.exists() else out, what="output folder")
    if out.exists():
        try:
            names = sorted(e.name for e in out.iterdir() if not files.is_temporary(e.name))
        except OSError as exc:
            raise ValueError(f"output folder {out} cannot be read: {exc.strerror or exc}") from None
        if names and not is_results_document(out / "results.json"):
            raise ValueError(
                f"output folder {out} is not empty and holds no results.json of {program('evaluate')} "
                f"({', '.join(names[:3])}{', ...' if len(names) > 3 else ''}); name a new or empty folder"
            )
        foreign = [n for n in names if n not in OUTPUT_FILES or not (out / n).is_file()]
        if foreign:
            raise ValueError(
                f"output folder {out} holds {foreign[0]!r}, which {program('evaluate')} did not write; "
                "move it away or name another folder (a run replaces the folder whole)"
            )
    return out


def remove_stale_run(out: Path) -> list[Path]:
    """Remove what a killed run left of `out`: its staging folders beside it, temporaries inside it.

    Only under the folder's lock (a live run's staging folder looks the same).
    """
    files.recover_folder(out)
    staging = re.compile(rf"\.{re.escape(out.name)}\.[a-z0-9_]{{8}}{re.escape(files.TMP_SUFFIX)}")
    removed = []
    if out.parent.is_dir():
        for entry in out.parent.iterdir():
            if staging.fullmatch(entry.name):
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
                removed.append(entry)
    return removed + files.remove_stale_temporaries(out, recursive=False)


# -- results.json -------------------------------------------------------------------------------


def _rounded(value: Any, digits: int = 6) -> Any:
    """Floats rounded for reading (the rounding is deterministic, so results stay byte-identical)."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: _rounded(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v, digits) for v in value]
    return value


def results_document(
    tournament: Tournament, summary: dict[str, Any], run: dict[str, Any], policies: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The content of results.json. Everything but `run` depends only on the tournament (and its seed).

    `policies` (`tournament.policy_identities`): each policy player's bundle folder and weights sha256.
    """
    return {
        "format": RESULTS_FORMAT,
        "seed": tournament.seed,
        "tournament": tournament.to_dict(),
        "policies": policies or {},
        "dictionary": dictionary_identity(tournament.rules.dictionary),
        "versions": package_versions(),
        "env_version": ENV_VERSION,
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
    if any("challenges" in p for p in s["players"].values()):
        lines += [
            "",
            "## Challenges",
            "",
            "Made, won (the word failed) and lost (it stood) by each player; then its own words: laid, challenged by "
            "others, failed.",
            "",
            f"| player | made | won | lost | success [{conf}% CI] | points lost challenging | words laid | "
            "challenged | failed |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for label, p in s["players"].items():
            c = p["challenges"]
            lines.append(
                f"| `{label}` | {c['made']} | {c['won']} | {c['lost']} | {_pct(c['success_rate'])} | "
                f"{-c['challenge_points']} | {c['words_laid']} | {c['challenged']} | {c['failed']} |"
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
    if plots_available():
        lines += [f"![{name[:-4].replace('_', ' ')}]({name})" for name in PLOTS]
    else:
        lines += [f"None: they need matplotlib (the eval extra: `{install_command('eval')}`)."]
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


def plots_available() -> bool:
    """Whether matplotlib (the eval extra) is here: without it a run has no plots."""
    return missing("matplotlib") is None


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


def render_outputs(
    tournament: Tournament,
    played: Sequence[PlayedGame],
    summary: dict[str, Any],
    run: dict[str, Any],
    save_games: bool = False,
    policies: dict[str, Any] | None = None,
) -> dict[str, bytes]:
    """Every file of the run, in memory, keyed by name in `output_files` order (results.json last)."""
    document = results_document(tournament, summary, run, policies)
    rendered: dict[str, bytes] = {
        "games.csv": games_csv(tournament, played).encode(),
        "report.md": report_markdown(document).encode(),
    }
    if plots_available():
        rendered.update(plots(summary, played, tournament))
    if save_games:
        rendered["games.jsonl"] = games_jsonl(tournament, played).encode()
    rendered["results.json"] = results_json(document).encode()
    return {name: rendered[name] for name in output_files(save_games) if name in rendered}


def write_outputs(
    out: Path,
    tournament: Tournament,
    played: Sequence[PlayedGame],
    summary: dict[str, Any],
    run: dict[str, Any],
    save_games: bool = False,
    policies: dict[str, Any] | None = None,
) -> list[Path]:
    """Render everything in memory first, then write each file into `out` (files.write_atomic); returns the paths.

    `write_run` puts a whole run in place at once; this writes into a folder as it is.
    """
    rendered = render_outputs(tournament, played, summary, run, save_games, policies)
    out.mkdir(parents=True, exist_ok=True)
    return [files.write_atomic(out / name, data) for name, data in rendered.items()]


def write_run(
    out: Path,
    tournament: Tournament,
    played: Sequence[PlayedGame],
    summary: dict[str, Any],
    run: dict[str, Any],
    save_games: bool = False,
    policies: dict[str, Any] | None = None,
) -> list[Path]:
    """Write the run into a staging folder beside `out` and swap it in whole (`files.staged_folder`).

    A kill leaves the earlier folder or the complete new one, never a mix, and nothing of
    an earlier run stays beside the new files. Returns the paths as they are in `out`.
    """
    with files.staged_folder(out) as staging:
        written = write_outputs(staging, tournament, played, summary, run, save_games, policies)
    return [out / p.name for p in written]
