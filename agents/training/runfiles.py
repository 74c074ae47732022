"""What a run folder records besides models: the run's metadata, the metric CSVs and the learning curve.

The folder's layout is in `quiddler_agents.training.run`; every write goes through
`quiddler_env.core.files` (whole files only).
"""

from __future__ import annotations

import csv
import io
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from quiddler_env.core import files
from quiddler_env.envs.versions import ENV_VERSION

from ..provenance import dictionary_identity, now_iso, package_versions


def run_metadata(command: Sequence[str], dictionary: str) -> dict[str, Any]:
    """What run.json records at the start of a run."""
    return {
        "command": list(command),
        "cwd": os.getcwd(),
        "started": now_iso(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        "env_version": ENV_VERSION,
        "dictionary": dictionary_identity(dictionary),
        "resumes": [],
    }


class CsvTable:
    """A CSV of metric rows keyed by a step column; appended row by row, rewritten when new columns appear.

    Opening with `keep_until=S` drops rows after step S (a resumed run redoes those
    steps) and a torn last line (a run killed while writing it).
    """

    def __init__(self, path: str | os.PathLike, step_key: str = "step", keep_until: int | None = None) -> None:
        self.path = Path(path)
        self.step_key = step_key
        self.columns: list[str] = [step_key]
        self.rows: list[dict[str, str]] = []
        if self.path.exists():
            text = self.path.read_text()
            if text and not text.endswith("\n"):
                text = text[: text.rfind("\n") + 1]
            reader = csv.DictReader(io.StringIO(text))
            self.columns = list(reader.fieldnames or [step_key])
            for row in reader:
                try:
                    step = int(float(row.get(step_key) or ""))
                except ValueError:
                    continue
                if keep_until is None or step <= keep_until:
                    self.rows.append(row)
            self._rewrite()

    def _line(self, values: Sequence[Any]) -> str:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(values)
        return buf.getvalue()

    def _rewrite(self) -> None:
        text = self._line(self.columns) + "".join(self._line([r.get(c, "") for c in self.columns]) for r in self.rows)
        files.write_atomic(self.path, text)

    def append(self, row: Mapping[str, Any]) -> None:
        """Add a row (values formatted with repr for floats); new keys extend the header."""
        clean = {k: _fmt(v) for k, v in row.items()}
        new = [k for k in clean if k not in self.columns]
        self.rows.append(clean)
        if new or not self.path.exists():
            self.columns += sorted(new)
            self._rewrite()
            return
        try:
            with self.path.open("a") as fh:
                fh.write(self._line([clean.get(c, "") for c in self.columns]))
                fh.flush()
        except OSError as exc:  # a failed write names no file: say which
            if files.naming(exc, self.path) is exc:
                raise
            raise files.naming(exc, self.path) from exc

    def read(self) -> list[dict[str, str]]:
        return [dict(r) for r in self.rows]


STRENGTH_LEVELS = (0.50, 0.55)
"""The win rates whose time to reach the time to strength reports (issue 45's: 50% and 55% against expert)."""


def time_to_strength(
    rows: Sequence[Mapping[str, Any]], levels: Sequence[float] = STRENGTH_LEVELS
) -> dict[str, dict[str, dict[str, float] | None]]:
    """For each opponent of the evaluation `rows` (eval.csv's, and the warm start's) and each win rate in
    `levels`: the step and the run's wall time (`run_seconds`) of the first evaluation that reached it, or None
    if none did (or the rows predate `run_seconds`). Keys are the opponent, then the level as a string
    (`"0.55"`)."""
    out: dict[str, dict[str, dict[str, float] | None]] = {}
    for row in sorted(rows, key=lambda r: (float(r.get("run_seconds") or 0.0), int(float(r["step"])))):
        reached = out.setdefault(str(row["opponent"]), {f"{level:.2f}": None for level in levels})
        seconds = row.get("run_seconds")
        if seconds in (None, ""):
            continue
        for level in levels:
            key = f"{level:.2f}"
            if reached[key] is None and float(row["win_rate"]) >= level:
                reached[key] = {"step": int(float(row["step"])), "run_seconds": float(seconds)}
    return out


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    if hasattr(v, "item"):  # numpy / torch scalars
        return _fmt(v.item())
    return str(v)


def plot_learning_curve(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike, title: str) -> None:
    """The PNG learning curve: evaluation win rate (top) and mean final score per opponent over steps; in the
    challenge variant (eval.csv has `challenge_success`) a third panel: the share of the learner's challenges
    that won, and (dashed, right axis) how many it made a game."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[int, float, float, float, float, float]]] = {}
    variant = bool(rows) and "challenge_success" in rows[0]
    for r in rows:
        series.setdefault(str(r["opponent"]), []).append(
            (
                int(float(r["step"])),
                float(r["win_rate"]),
                float(r["mean_score"]),
                float(r["mean_opponent_score"]),
                float(r["challenge_success"]) if variant else 0.0,
                float(r["challenges_made"]) / float(r["games"]) if variant else 0.0,
            )
        )
    fig, axes = plt.subplots(3 if variant else 2, 1, figsize=(8, 10 if variant else 7), sharex=True)
    ax_win, ax_score = axes[0], axes[1]
    ax_made = axes[2].twinx() if variant else None
    for i, (opponent, points) in enumerate(sorted(series.items())):
        points.sort()
        steps = [p[0] for p in points]
        color = f"C{i}"
        ax_win.plot(steps, [p[1] for p in points], marker="o", ms=3, color=color, label=f"vs {opponent}")
        ax_score.plot(steps, [p[2] for p in points], marker="o", ms=3, color=color, label=f"learner vs {opponent}")
        ax_score.plot(steps, [p[3] for p in points], ls="--", color=color, label=f"{opponent} (opponent)")
        if variant:
            axes[2].plot(steps, [p[4] for p in points], marker="o", ms=3, color=color, label=f"won, vs {opponent}")
            ax_made.plot(steps, [p[5] for p in points], ls="--", color=color, label=f"made a game, vs {opponent}")
    if variant:
        axes[2].set_ylabel("challenges won (share)")
        axes[2].set_ylim(-0.02, 1.02)
        axes[2].grid(alpha=0.3)
        axes[2].legend(loc="upper left", fontsize=8)
        ax_made.set_ylabel("challenges made a game (dashed)")
        ax_made.legend(loc="upper right", fontsize=8)
        axes[2].set_xlabel("environment steps")
    ax_win.set_ylabel("win rate")
    ax_win.set_ylim(-0.02, 1.02)
    ax_win.axhline(0.5, color="grey", lw=0.8, ls=":")
    ax_win.grid(alpha=0.3)
    ax_win.legend(loc="lower right", fontsize=8)
    ax_win.set_title(title)
    ax_score.set_ylabel("mean final total")
    if not variant:
        ax_score.set_xlabel("environment steps")
    ax_score.grid(alpha=0.3)
    ax_score.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    files.write_atomic(path, buf.getvalue())
