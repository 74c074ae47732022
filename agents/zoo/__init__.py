"""Trained policies shipped inside the package: the agent spec `zoo:NAME`.

Each entry is a folder `agents/zoo/NAME/` holding a weights-only policy bundle
(`policy.pt` and `policy.json`, loaded with `torch.load(weights_only=True)`, never
unpickled), the run config that trained it (`config.yaml`, so `train.py --config` can
train it again), its learning curve (`eval.csv`, the run's periodic evaluations, and
their plot `learning_curve.png`) and its evaluation table (`evaluation.md`, with the command that made it);
`run.json`, where the run left one, records how it ran (commands, resumes, package versions);
`README.md`, written by hand, says what the entry is (`ship` keeps it).
`python evaluate.py --list-agents` lists the entries; `ship` copies a run's final bundle in.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from quiddler_env.core import files

ZOO_DIR = Path(__file__).resolve().parent
ENTRY_FILES = ("policy.pt", "policy.json", "config.yaml", "eval.csv", "learning_curve.png", "evaluation.md")
"""What a zoo entry holds (see the module docstring)."""
README = "README.md"
"""An entry's own description, written by hand: shipping a new version of the entry keeps it."""


def entries(zoo_dir: Path | None = None) -> list[str]:
    """The names of the shipped policies, sorted."""
    root = zoo_dir or ZOO_DIR
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "policy.json").is_file())


def entry_path(name: str, zoo_dir: Path | None = None) -> Path:
    """The folder of zoo entry `name` (a ValueError naming the entries if there is none)."""
    known = entries(zoo_dir)
    if name not in known:
        raise ValueError(f"no zoo policy {name!r}; the zoo has: {', '.join(known) or 'nothing'}")
    return (zoo_dir or ZOO_DIR) / name


def summary(name: str, zoo_dir: Path | None = None) -> str:
    """The first line of an entry's evaluation table (what it is and how strong), for `--list-agents`."""
    path = entry_path(name, zoo_dir) / "evaluation.md"
    if not path.is_file():
        return "a shipped policy"
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text
    return "a shipped policy"


def ship(run_dir: str | os.PathLike, name: str, evaluation: str, zoo_dir: Path | None = None) -> Path:
    """Copy run `run_dir`'s final bundle (weights only), config, learning curve and `run.json` into zoo entry
    `name`, with `evaluation` (markdown) as its table; the entry is written as one unit (it replaces an older one
    whole, but for the older one's hand-written `README.md`, which it keeps)."""
    run = Path(run_dir)
    final = run / "final"
    missing = [f for f in ("policy.pt", "policy.json") if not (final / f).is_file()]
    if missing or not (run / "config.yaml").is_file():
        raise ValueError(f"{run} is not a finished run (needs config.yaml and final/policy.pt, final/policy.json)")
    target = (zoo_dir or ZOO_DIR) / name
    with files.staged_folder(target) as stage:
        if (target / README).is_file():  # the older entry's, read after staged_folder recovered a cut swap
            shutil.copyfile(target / README, stage / README)
        shutil.copyfile(final / "policy.pt", stage / "policy.pt")
        shutil.copyfile(final / "policy.json", stage / "policy.json")
        shutil.copyfile(run / "config.yaml", stage / "config.yaml")
        for extra in ("eval.csv", "learning_curve.png", "run.json"):
            if (run / extra).is_file():
                shutil.copyfile(run / extra, stage / extra)
        (stage / "evaluation.md").write_text(evaluation, encoding="utf-8")
    return target
