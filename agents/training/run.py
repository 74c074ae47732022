"""The run layer: one training run's folder and its life, the same for every backend.

    start_run(cfg)                  # a new run folder, trained to train.total_timesteps
    resume_run("runs/quickstart")   # continue from the newest intact checkpoint

A run folder (`runs/<name>`) holds one run:

| path | content |
|---|---|
| `config.yaml` | the resolved run config (`--resume` reads it back) |
| `run.json` | command line, start time, Python, platform, package versions, the env version (`env_version`), the dictionary's identity, resumes |
| `train.csv` | one row per logged training iteration (the backend's figures) |
| `eval.csv` | one row per evaluation and opponent: games, win/tie/loss rates, mean totals, margin, and `run_seconds` (the run's wall time when it began) |
| `learning_curve.png` | evaluation win rate and mean total against each bot over steps |
| `tensorboard/` | the same figures for TensorBoard |
| `checkpoints/step_<N>/` | `state.json` (the run's state and the sha256 of every other file) and the backend's files |
| `best/` | the policy bundle with the best evaluation score so far (`best_score`) |
| `final/` | the policy bundle at the end of training (`evaluate.py --players policy:RUN_DIR` plays it) |
| `summary.json` | steps, speed, env time share, the best step, the final evaluation, the time to strength |

Every file and folder is written whole (`quiddler_env.core.files`): a checkpoint, `best/`
and `final/` appear complete or not at all, and a run folder is only ever written by the
process holding its lock. A new run folder appears with its `config.yaml` and `run.json`
at once; if the run fails before its first checkpoint the folder is removed again.
`--resume` takes the newest checkpoint whose files match their checksums and that the
backend can load, and says which ones it skipped.

A backend (`quiddler_agents.training.backends`) supplies a `Trainer` and calls
`RunSession.boundary(step)` whenever its model, optimiser and step count agree (SB3:
at each rollout start; RLlib: after each iteration). The session evaluates, keeps the
best model and writes checkpoints when their step has come.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from quiddler_env.core import files

from ..cli import program
from ..extras import require
from ..progress import Progress, write
from ..provenance import now_iso
from .backends import BACKENDS, backend_part
from .checks import RunConfigError
from .config import RunConfig, apply_overrides, dump_yaml, eval_specs, eval_tables, guided_by_learner, read_yaml
from .evaluation import EvalRow, best_score, evaluate_bundle
from .runfiles import CsvTable, plot_learning_curve, run_metadata, time_to_strength

CONFIG_FILE = "config.yaml"
RUN_FILE = "run.json"
SUMMARY_FILE = "summary.json"
CHECKPOINT_DIR = "checkpoints"
BEST_DIR = "best"
FINAL_DIR = "final"
STATE_FILE = "state.json"
STATE_FORMAT = 2
RESUME_OVERRIDABLE = ("train.", "ray.", "rllib.num_", "rllib.sample_timeout_s")
"""On resume only these may change: the rest (rules, network, opponents) defines the run. `ray.*` and
`rllib.num_*` (where an RLlib run runs, with how many actors) are errors for an SB3 run anyway."""


class RunFolderError(RuntimeError):
    """A run folder that cannot be started or resumed as asked."""


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be restored (its message names the folder and what is wrong)."""


class RunWriteError(RuntimeError):
    """A run stopped because its folder could not be written (a full disk, a lost mount); the message names the
    file, the system's reason and whether the run can be resumed. What was written before stays whole."""


class Trainer(Protocol):
    """What a backend's `make_trainer(session)` returns."""

    def num_timesteps(self) -> int: ...

    def train(self, session: RunSession) -> None:
        """Train to `train.total_timesteps`, calling `session.boundary(step)` at consistent points."""

    def export_policy(self, folder: Path, description: dict[str, Any]) -> None:
        """Write the current policy as a bundle folder at `folder` (as one unit; see `quiddler_agents.policies`)."""

    def save_state(self, folder: Path) -> dict[str, Any]:
        """Write the backend's checkpoint files into the (staging) `folder`; return its JSON-able state."""

    def load_state(self, folder: Path, state: dict[str, Any]) -> None:
        """Restore from a checkpoint folder (raise `CheckpointError` if it cannot be used)."""

    def env_seconds(self) -> float:
        """Seconds spent inside the envs this session (for the env's share of the time)."""

    def summary(self) -> dict[str, Any]:
        """Backend-specific figures for `summary.json`."""

    def close(self) -> None: ...


def session_seed(seed: int, step: int) -> int:
    """The seed of a (re)start at `step` (the backends' envs): fixed by the run seed, new for every restart point."""
    import numpy as np

    return int(np.random.SeedSequence([seed, step]).generate_state(1, dtype=np.uint32)[0])


def checkpoint_name(step: int) -> str:
    return f"step_{step:09d}"


def checkpoint_step(name: str) -> int | None:
    """The step of a checkpoint folder's name (`checkpoint_name`'s), or None for any other name."""
    return int(name[5:]) if name.startswith("step_") and name[5:].isdigit() else None


def next_multiple(step: int, every: int) -> int:
    """The first multiple of `every` after `step` (when a periodic event is next due)."""
    return (step // every + 1) * every


# -- the folder --------------------------------------------------------------------------------------------


def _config_text(cfg: RunConfig) -> str:
    return "# The resolved config of this run (train.py --resume reads it back).\n" + dump_yaml(cfg)


def checkpoints(folder: Path) -> list[tuple[int, Path]]:
    """The checkpoint folders of a run with a `state.json`, newest first (not yet verified)."""
    root = folder / CHECKPOINT_DIR
    found = []
    if root.is_dir():
        for p in root.iterdir():
            step = checkpoint_step(p.name)
            if step is not None and (p / STATE_FILE).is_file():
                found.append((step, p))
    return sorted(found, reverse=True)


PRETRAIN_DIR = "pretrain"
"""The warm start's progress (sb3's `PretrainStore`): a run cut during it resumes after its last finished stage.
Removed at the first checkpoint, which holds the warmed-up network."""


def pretrain_started(folder: Path) -> bool:
    """Whether the run's warm start saved progress (a run with no checkpoint may then be resumed)."""
    files.recover_folder(folder / PRETRAIN_DIR)
    return (folder / PRETRAIN_DIR / "progress.json").is_file()


def read_checkpoint_state(folder: Path) -> dict[str, Any]:
    """A checkpoint's `state.json`, after checking every file it lists against its sha256."""
    try:
        state = files.read_json(folder / STATE_FILE)
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"checkpoint {folder}: {STATE_FILE} is unreadable: {exc}") from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        got = state.get("format") if isinstance(state, dict) else state
        raise CheckpointError(f"checkpoint {folder}: {STATE_FILE} has format {got!r}, not {STATE_FORMAT}")
    listed = state.get("files")
    step = state.get("num_timesteps")
    if not isinstance(listed, dict) or not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise CheckpointError(f"checkpoint {folder}: {STATE_FILE} lacks its file list or step count")
    for name, digest in sorted(listed.items()):
        path = folder / name
        try:
            ok = files.sha256_file(path) == digest
        except OSError as exc:
            raise CheckpointError(f"checkpoint {folder}: {name} is unreadable: {exc}") from None
        if not ok:
            raise CheckpointError(f"checkpoint {folder}: {name} does not match its sha256 in {STATE_FILE}")
    return state


def _listing(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder` (relative POSIX paths)."""
    return {p.relative_to(folder).as_posix(): files.sha256_file(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def bundle_step(folder: Path) -> int | None:
    """The training step a policy bundle was written at (its policy.json's `num_timesteps`)."""
    try:
        return int(files.read_json(folder / "policy.json")["num_timesteps"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


# -- checks before anything is written ---------------------------------------------------------------------


def preflight(cfg: RunConfig) -> None:
    """What would fail later, checked before a run folder is made: the word lists (the referee's and, with
    challenges, each seat's), every agent the run plays."""
    from ..registry import make

    backend = BACKENDS.get(cfg.backend)
    if backend is not None:  # an unknown one is backend_part's error below
        require(backend.extra, *backend.modules, what=backend.needs)
    rules = cfg.rules
    try:
        rules.check_word_lists()
    except ValueError as exc:
        raise RunConfigError(str(exc).replace("config key '", "config key 'env.", 1)) from None
    specs = [(f"opponents[{i}].spec", o.spec) for i, o in enumerate(cfg.opponents)]
    specs += eval_specs(cfg)
    if cfg.pretrain.teacher:
        specs.append(("pretrain.teacher", cfg.pretrain.teacher))
    if cfg.pretrain.dagger_teacher:
        specs.append(("pretrain.dagger_teacher", cfg.pretrain.dagger_teacher))
    for key, spec in specs:
        try:
            if key.startswith("pretrain.") and guided_by_learner(spec):
                continue  # guided by the network in training: nothing to load (its parameters were checked)
            make(spec, config=rules)
        except (OSError, ValueError) as exc:
            raise RunConfigError(f"config key {key!r}: {exc}") from None
    backend_part(cfg.backend, "trainer")  # the backend's library is installed


# -- the session -------------------------------------------------------------------------------------------


class RunSession:
    """One process's part of a run: its tables, timers, evaluation, checkpoints and the best model."""

    def __init__(self, cfg: RunConfig, folder: Path, *, quiet: bool = False) -> None:
        self.cfg = cfg
        self.folder = folder
        self.quiet = quiet
        self.start_step = 0
        self.resumed_from: int | None = None
        self.backend_state: dict[str, Any] = {}
        self.next_eval = 0 if cfg.eval.at_start else cfg.eval.every
        self.next_checkpoint = cfg.train.checkpoint_every
        self.last_eval_step: int | None = None
        self.last_checkpoint: int | None = None
        self.best: dict[str, Any] = {"step": None, "score": None}
        self.latest_eval: list[dict[str, Any]] = []
        self.eval_seconds = 0.0
        self.checkpoint_seconds = 0.0
        self.t_start = time.perf_counter()  # the training phase's start (a trainer resets it): for its steps/s
        self.t_opened = self.t_start  # this session's start: for the run's clock
        self.seconds_before = 0.0
        self.warm_start_evals: list[dict[str, Any]] = []
        self.train_table: CsvTable | None = None
        self.eval_table: CsvTable | None = None
        self._tb = None
        self.on_eval: Callable[[list[EvalRow]], None] | None = None

    # -- state ----------------------------------------------------------------------------------

    def open_tables(self) -> None:
        """train.csv and eval.csv; a resumed run drops the rows after its checkpoint (it plays them again)."""
        keep = self.start_step if self.resumed_from is not None else None
        self.train_table = CsvTable(self.folder / "train.csv", keep_until=keep)
        self.eval_table = CsvTable(self.folder / "eval.csv", keep_until=keep)

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from a checkpoint's state."""
        self.start_step = self.resumed_from = int(state["num_timesteps"])
        self.next_eval = int(state["next_eval"])
        self.next_checkpoint = int(state["next_checkpoint"])
        self.last_eval_step = state.get("last_eval_step")
        self.last_checkpoint = self.start_step
        self.best = dict(state.get("best") or {"step": None, "score": None})
        self.backend_state = dict(state.get("backend_state") or {})
        self.seconds_before = float(state.get("run_seconds") or 0.0)
        self.warm_start_evals = list(state.get("warm_start_evals") or [])
        best = self.folder / BEST_DIR
        if best.exists() and bundle_step(best) != self.best["step"]:
            # best/ came from an evaluation after the checkpoint, which this session plays again: forget it.
            shutil.rmtree(best, ignore_errors=True)
            self.best = {"step": None, "score": None}

    def _state(self, step: int) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "backend": self.cfg.backend,
            "num_timesteps": int(step),
            "next_eval": self.next_eval,
            "next_checkpoint": self.next_checkpoint,
            "last_eval_step": self.last_eval_step,
            "best": self.best,
            "run_seconds": self.run_seconds(),
            "warm_start_evals": self.warm_start_evals,
            "time": now_iso(),
        }

    def run_seconds(self) -> float:
        """The run's wall time so far: the sessions before this one up to the checkpoint it resumed from (the
        work it kept), then this session's, warm start, kernels and evaluations included."""
        return self.seconds_before + time.perf_counter() - self.t_opened

    def carry_over(self, seconds: float) -> None:
        """Count `seconds` of an earlier session's kept work (a cut warm start's saved stages) on the run's clock."""
        self.seconds_before += seconds

    # -- logging ----------------------------------------------------------------------------------

    @property
    def tensorboard(self):
        if self._tb is None:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(str(self.folder / "tensorboard"))
        return self._tb

    def log_train(self, row: dict[str, Any]) -> None:
        """One row of train.csv (and its numbers in TensorBoard under train/)."""
        assert self.train_table is not None
        self.train_table.append(row)
        step = int(row["step"])
        for key, value in row.items():
            if key != "step" and isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
                self.tensorboard.add_scalar(key if "/" in key else f"train/{key}", value, step)

    def say(self, text: str, *, always: bool = False) -> None:
        """A progress line on stderr (`always`: also with --quiet, for what the user must know)."""
        if always or not self.quiet:
            write(f"[{self.cfg.name}] {text}")

    def progress(self, label: str, total: int, unit: str, *, show: bool = True, **options: Any) -> Progress:
        """A phase's progress: a bar on a terminal, else a line every tenth (none with --quiet or `show=False`)."""
        return Progress(
            label,
            total,
            unit,
            self.say,
            bar=sys.stderr.isatty(),
            enabled=show and not self.quiet,
            desc=f"[{self.cfg.name}] {label}",
            **options,
        )

    def compile_kernels(self) -> None:
        """Compile the game's kernels now (or read them from numba's cache), saying so and how long it took."""
        from .kernels import compile_kernels

        self.say("compiling the game's kernels (numba: minutes on a machine's first run, then read from its cache)")
        t0 = time.perf_counter()
        compiled, cached = compile_kernels(self.cfg, say=self.say)
        self.say(
            f"kernels ready in {time.perf_counter() - t0:.1f} s ({compiled} compiled, {cached} read from the cache)"
        )

    # -- events -------------------------------------------------------------------------------------

    def boundary(self, trainer: Trainer, step: int, *, final: bool = False) -> None:
        """Evaluate and checkpoint when their step has come (or at the end, if not done at this step)."""
        if step >= self.next_eval or (final and self.last_eval_step != step):
            self.evaluate(trainer, step)
            self.next_eval = next_multiple(step, self.cfg.eval.every)
        if step >= self.next_checkpoint or self.last_checkpoint is None or (final and self.last_checkpoint != step):
            if step >= self.next_checkpoint:
                self.next_checkpoint = next_multiple(step, self.cfg.train.checkpoint_every)
            self.checkpoint(trainer, step)

    def description(self, step: int, **extra: Any) -> dict[str, Any]:
        """What a policy bundle of this run records besides its network."""
        cfg = self.cfg
        return {
            "config": cfg.rules.to_dict(),
            "env_options": dict(cfg.env_options),
            "run": cfg.name,
            "backend": cfg.backend,
            "num_timesteps": int(step),
            "observation_features": cfg.algo.observation_features,
            "opponents": [{"spec": o.spec, "weight": o.weight} for o in cfg.opponents],
            **extra,
        }

    def evaluate(self, trainer: Trainer, step: int) -> list[EvalRow]:
        """Play the current policy against every `eval.opponents` bot; keep it as best/ if it scores best."""
        t0 = time.perf_counter()
        run_seconds = round(self.run_seconds(), 1)  # the time to strength counts up to these games' start
        opponents = ", ".join(name for name, _ in eval_tables(self.cfg))
        self.say(f"evaluation at step {step}: {self.cfg.eval.games} games against each of {opponents}")
        with tempfile.TemporaryDirectory(prefix=".eval.", suffix=files.TMP_SUFFIX, dir=self.folder) as tmp:
            bundle = Path(tmp) / "policy"
            trainer.export_policy(bundle, self.description(step))
            rows = evaluate_bundle(bundle, self.cfg, step, run_seconds)
            self.last_eval_step = step
            self.latest_eval = [r.as_dict() for r in rows]
            assert self.eval_table is not None
            for r in rows:
                self.eval_table.append(r.as_dict())
                for key in ("win_rate", "tie_rate", "mean_score", "mean_margin"):
                    self.tensorboard.add_scalar(f"eval/{r.opponent}/{key}", getattr(r, key), step)
            score = best_score(rows)
            if self.best["score"] is None or score > tuple(self.best["score"]):
                self.best = {"step": step, "score": list(score)}
                # A bundle is written as one unit: best/ is the old bundle or this one, never a mix.
                trainer.export_policy(self.folder / BEST_DIR, self.description(step, eval=self.latest_eval))
        plot_learning_curve(self.eval_table.read(), self.folder / "learning_curve.png", self.cfg.name)
        seconds = time.perf_counter() - t0
        self.eval_seconds += seconds
        if self.on_eval is not None:
            self.on_eval(rows)
        figures = ", ".join(f"{r.opponent}: win {r.win_rate:.2f} score {r.mean_score:.0f}" for r in rows)
        self.say(f"step {step}: eval {figures} ({seconds:.1f} s)")
        return rows

    def evaluate_now(self, trainer: Trainer, label: str) -> list[EvalRow]:
        """Play the current policy against every `eval.opponents` bot outside the learning curve (the warm start's
        rounds: `pretrain.eval_each_round`): not in eval.csv. The backend puts them in `warm_start_evals`, which
        the checkpoints keep, for the time to strength."""
        t0 = time.perf_counter()
        run_seconds = round(self.run_seconds(), 1)
        with tempfile.TemporaryDirectory(prefix=".eval.", suffix=files.TMP_SUFFIX, dir=self.folder) as tmp:
            bundle = Path(tmp) / "policy"
            trainer.export_policy(bundle, self.description(0))
            rows = evaluate_bundle(bundle, self.cfg, 0, run_seconds)
        figures = ", ".join(f"{r.opponent}: win {r.win_rate:.2f} margin {r.mean_margin:+.1f}" for r in rows)
        self.say(f"{label}: eval {figures} ({time.perf_counter() - t0:.1f} s)")
        return rows

    def checkpoint(self, trainer: Trainer, step: int) -> Path:
        """`checkpoints/step_<N>/` as one folder: the backend's files, then state.json with their checksums."""
        t0 = time.perf_counter()
        root = self.folder / CHECKPOINT_DIR
        with files.staged_folder(root / checkpoint_name(step)) as staged:
            backend_state = trainer.save_state(staged)
            state = {**self._state(step), "backend_state": backend_state, "files": _listing(staged)}
            files.write_json(staged / STATE_FILE, state)
        self.last_checkpoint = step
        for _, old in checkpoints(self.folder)[self.cfg.train.keep_checkpoints :]:
            shutil.rmtree(old, ignore_errors=True)
        # A checkpoint holds the warmed-up network now: the warm start's progress (its decisions) is not needed.
        shutil.rmtree(self.folder / PRETRAIN_DIR, ignore_errors=True)
        self.checkpoint_seconds += time.perf_counter() - t0
        return root / checkpoint_name(step)

    # -- the end ------------------------------------------------------------------------------------

    def timing(self, trainer: Trainer) -> dict[str, float]:
        """Steps/s and env share of this session, both without evaluation and checkpoint time."""
        wall = time.perf_counter() - self.t_start
        busy = max(wall - self.eval_seconds - self.checkpoint_seconds, 1e-9)
        env_seconds = trainer.env_seconds()
        steps = trainer.num_timesteps() - self.start_step
        return {
            "steps": steps,
            "wall_seconds": wall,
            "train_seconds": busy,
            "eval_seconds": self.eval_seconds,
            "checkpoint_seconds": self.checkpoint_seconds,
            "env_seconds": env_seconds,
            "env_share": env_seconds / busy,
            "steps_per_second": steps / busy,
        }

    def finish(self, trainer: Trainer) -> dict[str, Any]:
        """The last evaluation and checkpoint, final/, summary.json; returns the summary."""
        step = trainer.num_timesteps()
        self.boundary(trainer, step, final=True)
        timing = self.timing(trainer)
        final = self.folder / FINAL_DIR
        trainer.export_policy(final, self.description(step, eval=self.latest_eval, best_step=self.best["step"]))
        summary = {
            "name": self.cfg.name,
            "backend": self.cfg.backend,
            "num_timesteps": step,
            "total_timesteps": self.cfg.train.total_timesteps,
            "resumed_from": self.resumed_from,
            "session": timing,
            "best_step": self.best["step"],
            "best_score": self.best["score"],
            "final_eval": self.latest_eval,
            "time_to_strength": time_to_strength(
                self.warm_start_evals + (self.eval_table.read() if self.eval_table is not None else [])
            ),
            "model": str(final),
            "backend_summary": trainer.summary(),
        }
        files.write_json(self.folder / SUMMARY_FILE, summary)
        return summary

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
            self._tb = None


# -- starting and resuming -------------------------------------------------------------------------------


def _lock(folder: Path) -> files.FolderLock:
    try:
        return files.FolderLock(folder, "run folder").acquire()
    except files.FolderBusyError as exc:
        raise RunFolderError(exc.strerror) from None
    except OSError as exc:
        raise RunFolderError(f"run folder {folder}: cannot take its lock: {exc}") from None


def start_run(
    cfg: RunConfig,
    *,
    run_dir: str | os.PathLike | None = None,
    force: bool = False,
    command: Sequence[str] | None = None,
    quiet: bool = False,
) -> dict[str, Any]:
    """Train a new run into `run_dir` (default: the config's `run_dir`, else `runs/<name>`); returns the summary.

    A folder that holds a run (a checkpoint) is an error unless `force`, which replaces it;
    a run folder without any checkpoint (a run killed before its first one) is replaced.
    """
    folder = Path(run_dir) if run_dir is not None else cfg.output_dir()
    try:
        files.check_writable_folder(folder, "run folder")
    except ValueError as exc:
        raise RunFolderError(str(exc)) from None
    preflight(cfg)
    lock = _lock(folder)
    try:
        files.recover_folder(folder)
        if folder.exists() and any(folder.iterdir()):
            if not (folder / CONFIG_FILE).is_file():
                raise RunFolderError(f"output folder {folder} exists and is not a run folder; choose another run_dir")
            if checkpoints(folder) and not force:
                raise RunFolderError(
                    f"run folder {folder} already holds a run; continue it with --resume {folder}, "
                    "or start over with --force (replaces it)"
                )
        meta = run_metadata(list(command if command is not None else sys.argv), cfg.rules.dictionary)
        meta["backend"] = cfg.backend
        try:
            with files.staged_folder(folder) as staged:
                files.write_atomic(staged / CONFIG_FILE, _config_text(cfg))
                files.write_json(staged / RUN_FILE, meta)
            # A stop from here on (Ctrl-C, SIGTERM) leaves no half-made run, even one that lands while the
            # session is still opening: the run folder is there from the line above.
            session = RunSession(cfg, folder, quiet=quiet)
            return _train(session, [])
        except BaseException:
            if not checkpoints(folder):
                shutil.rmtree(folder, ignore_errors=True)  # nothing to resume: leave no half-made run behind
            raise
    except (OSError, RuntimeError) as exc:
        error = _write_error(exc, folder)
        if error is None:
            raise
        raise error from exc
    finally:
        lock.release()


def resume_run(
    run_dir: str | os.PathLike,
    overrides: Sequence[str] = (),
    *,
    command: Sequence[str] | None = None,
    quiet: bool = False,
) -> dict[str, Any]:
    """Continue the run in `run_dir` from its newest intact checkpoint (to `train.total_timesteps`, which may rise)."""
    folder = Path(run_dir)
    config_file = folder / CONFIG_FILE
    if not folder.is_dir():
        raise RunFolderError(f"run folder {folder} does not exist")
    if not config_file.is_file():
        raise RunFolderError(f"{folder} is not a run folder (no {CONFIG_FILE})")
    for text in overrides:
        key = text.partition("=")[0].strip()
        if not key.startswith(RESUME_OVERRIDABLE):
            raise RunConfigError(
                f"override {text!r}: a resumed run may only change {', '.join(p + '*' for p in RESUME_OVERRIDABLE)}; "
                f"{key!r} defines the run (start a new run to change it)"
            )
    lock = _lock(folder)
    try:
        files.remove_stale_temporaries(folder)
        data = apply_overrides(read_yaml(config_file), overrides)
        try:
            cfg = RunConfig.from_mapping(data)
        except RunConfigError as exc:
            raise RunConfigError(f"{config_file}: {exc}") from None
        preflight(cfg)
        candidates = checkpoints(folder)
        if not candidates and not pretrain_started(folder):
            raise RunFolderError(
                f"run folder {folder} has no checkpoint to resume from (it stopped before its first one); "
                f"start it again with: {program('train')} --config {config_file} --run-dir {folder}"
            )
        newest = candidates[0][0] if candidates else 0
        if cfg.train.total_timesteps < newest:
            raise RunConfigError(
                f"config key 'train.total_timesteps': {cfg.train.total_timesteps} is below the {newest} steps this "
                f"run has done; resume with train.total_timesteps={newest} or more"
            )
        session = RunSession(cfg, folder, quiet=quiet)
        return _train(
            session,
            candidates,
            on_restored=lambda: _record_resume(folder, cfg, overrides, command, config_changed=bool(overrides)),
        )
    except (OSError, RuntimeError) as exc:
        error = _write_error(exc, folder)
        if error is None:
            raise
        raise error from exc
    finally:
        lock.release()


def _record_resume(folder: Path, cfg: RunConfig, overrides, command, *, config_changed: bool) -> None:
    if config_changed:
        files.write_atomic(folder / CONFIG_FILE, _config_text(cfg))
    meta_file = folder / RUN_FILE
    try:
        meta = files.read_json(meta_file)
    except (OSError, ValueError):
        meta = run_metadata([], cfg.rules.dictionary)
    meta.setdefault("resumes", []).append(
        {"time": now_iso(), "command": list(command if command is not None else sys.argv), "overrides": list(overrides)}
    )
    files.write_json(meta_file, meta)


def _train(
    session: RunSession,
    candidates: list[tuple[int, Path]],
    on_restored: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Build the backend's trainer, restore the newest usable checkpoint of `candidates`, train, finish."""
    cfg = session.cfg
    session.compile_kernels()
    trainer = backend_part(cfg.backend, "trainer").make_trainer(session)
    try:
        if candidates:
            skipped = []
            for step, folder in candidates:
                try:
                    state = read_checkpoint_state(folder)
                    if state.get("backend") != cfg.backend:
                        raise CheckpointError(f"checkpoint {folder} was written by backend {state.get('backend')!r}")
                    trainer.load_state(folder, state)
                except CheckpointError as exc:
                    skipped.append(str(exc))
                    continue
                session.restore(state)
                for text in skipped:
                    session.say(f"skipping {text}", always=True)
                if skipped:
                    session.say(f"resuming from the newest intact checkpoint, {folder.name} (step {step})", always=True)
                break
            else:
                raise RunFolderError(
                    f"run folder {session.folder}: no checkpoint can be restored ({'; '.join(skipped)})"
                )
        if cfg.train.total_timesteps < session.start_step:
            raise RunConfigError(
                f"config key 'train.total_timesteps': {cfg.train.total_timesteps} is below the "
                f"{session.start_step} steps of the checkpoint"
            )
        if on_restored is not None:
            on_restored()
        session.open_tables()
        trainer.train(session)
        return session.finish(trainer)
    finally:
        trainer.close()
        session.close()


def _write_error(exc: Exception, folder: Path) -> RunWriteError | None:
    """`exc` as a `RunWriteError` if an OSError is behind it (see `_os_error`), else None. Call it after the
    failed run's folder was cleaned up: the message says whether checkpoints are left to resume from."""
    err = _os_error(exc)
    if err is None:
        return None
    what = f"writing {err.filename} failed" if err.filename else "a write failed"
    if checkpoints(folder):
        then = f"its checkpoints are whole: continue with {program('train')} --resume {folder}"
    else:
        then = "no checkpoint was written, so nothing is kept"
    return RunWriteError(f"run folder {folder}: {what}: {err.strerror or err}; {then}")


def _os_error(exc: BaseException) -> OSError | None:
    """The OSError behind `exc`: itself, or the one a library's own error was raised while handling (torch and
    zipfile raise RuntimeErrors and more OSErrors cleaning up after a full disk). None for this module's errors,
    which say what is wrong themselves, and for a broken pipe (a lost worker process, not a write)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, (RunFolderError, CheckpointError, RunWriteError)):
            return None
        if isinstance(cause, OSError):
            return None if isinstance(cause, ConnectionError) else cause
        seen.add(id(cause))
        cause = cause.__cause__ if cause.__cause__ is not None or cause.__suppress_context__ else cause.__context__
    return None
