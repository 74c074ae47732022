"""The install in layers (issue 43): what needs an extra says which in one line; the commands go by the name
they were started as; a training run says what it is doing, phase by phase; the zoo keeps an entry's README.

A missing extra is simulated with `sys.modules[name] = None` (then `import name` raises ImportError and
`importlib.util.find_spec(name)` finds nothing). `.ci/base` checks the real base install, outside the checkout.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

from quiddler_agents import extras
from quiddler_agents.cli import evaluate, program, train
from quiddler_agents.extras import MissingExtra, missing, require
from quiddler_agents.training.run import RunFolderError, resume_run

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
BIN = Path(sys.executable).parent
EDITABLE = 'pip install -e ".[train]"'  # the hint from the checkout's root


def _without(monkeypatch, *modules: str) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def _lines(text: str) -> list[str]:
    return text.strip().splitlines()


# -- the layers -----------------------------------------------------------------------------------------------


def test_the_base_install_is_what_an_env_user_needs_and_the_extras_layer_on_it():
    project = PYPROJECT["project"]
    base = {req.split(">")[0].split("=")[0] for req in project["dependencies"]}
    assert base == {"numpy", "numba", "pyyaml", "gymnasium", "pettingzoo"}
    extra = project["optional-dependencies"]
    assert {"eval", "train", "rllib", "integrations", "docs", "dev", "all"} <= set(extra)
    assert "quiddler-env[eval]" in extra["train"] and "torch" in extra["train"]  # torch unpinned: the user's build
    assert "quiddler-env[train]" in extra["dev"] and "quiddler-env[train]" in extra["rllib"]  # the tests train
    assert extra["all"] == ["quiddler-env[train,rllib,integrations,docs,dev,openspiel]"]

    def normal(name: str) -> str:  # a distribution's name as pip compares it (open_spiel is open-spiel)
        return re.sub(r"[-_.]+", "-", name).lower()

    names = {normal(req.split(">")[0].split("[")[0].split("<")[0]) for reqs in extra.values() for req in reqs}
    for module in {m for modules in extras.EXTRAS.values() for m in modules}:  # each module checked is installed
        assert normal(module) in names, module


def test_require_names_the_extra_and_the_missing_module(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert missing("numpy", "yaml") is None
    require("train", what="training")  # this venv has every extra
    _without(monkeypatch, "sb3_contrib")
    assert missing("numpy", "sb3_contrib", "torch") == "sb3_contrib"
    with pytest.raises(MissingExtra) as caught:
        require("train", what="training")
    assert str(caught.value) == f"training needs the train extra: {EDITABLE} (missing: sb3_contrib)"
    assert isinstance(caught.value, ImportError) and caught.value.extra == "train"


def test_the_hint_outside_the_checkout_root_names_the_checkout(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert extras.install_command("eval") == f'pip install -e "{ROOT}[eval]"'
    monkeypatch.setattr(extras, "_CHECKOUT", tmp_path)  # as installed from a wheel: no checkout around the package
    assert extras.install_command("eval") == 'pip install "quiddler-env[eval]"'


@pytest.mark.parametrize("module", ["torch", "stable_baselines3", "tensorboard"])
def test_train_without_the_train_extra_says_which_in_one_line(monkeypatch, capsys, tmp_path, module):
    monkeypatch.chdir(ROOT)
    _without(monkeypatch, module)
    run = tmp_path / "run"
    assert train.main(["--config", "quickstart", "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err
    assert _lines(err) == [f"train.py: error: training needs the train extra: {EDITABLE} (missing: {module})"]
    assert not run.exists()  # said before a run folder is made
    assert train.main(["--config", "quickstart", "--print-config"]) == 0  # a config reads without it


def test_resume_without_the_train_extra_says_which_in_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(ROOT)
    assert train.main(["--config", "quickstart", "--print-config"]) == 0
    (tmp_path / "config.yaml").write_text(capsys.readouterr().out, encoding="utf-8")
    _without(monkeypatch, "torch")
    assert train.main(["--resume", str(tmp_path)]) == 2
    assert _lines(capsys.readouterr().err) == [
        f"train.py: error: training needs the train extra: {EDITABLE} (missing: torch)"
    ]


def test_evaluate_with_a_policy_without_torch_says_which_extra_in_one_line(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(ROOT)
    _without(monkeypatch, "torch")
    out = tmp_path / "out"
    status = evaluate.main(["--players", "zoo:champion-2p", "greedy", "--games", "2", "--out", str(out)])
    assert status == 2
    assert _lines(capsys.readouterr().err) == [
        f"evaluate.py: error: playing a trained policy needs the train extra: {EDITABLE} (missing: torch)"
    ]
    assert not out.exists()


def test_evaluate_without_the_eval_extra_writes_the_rest_and_says_what_it_left_out(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(ROOT)
    _without(monkeypatch, "matplotlib", "openskill", "tqdm")
    out = tmp_path / "out"
    args = ["--players", "greedy", "random", "expert:samples=1", "--games", "3", "--workers", "1", "--quiet"]
    assert evaluate.main([*args, "--hand-sizes", "3", "4", "--out", str(out)]) == 0
    hint = 'pip install -e ".[eval]"'
    assert _lines(capsys.readouterr().err) == [
        f"evaluate.py: no plots: they need the eval extra: {hint} (missing: matplotlib)",
        f"evaluate.py: no ratings: they need the eval extra: {hint} (missing: openskill)",
    ]
    assert sorted(p.name for p in out.iterdir()) == ["games.csv", "report.md", "results.json"]
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["summary"]["games"] == 3 and doc["summary"]["ratings"] is None
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Plots" in report and "(win_rate.png)" not in report and "the eval extra" in report
    # The same run with the extra writes the plots and the ratings, and says nothing of them.
    monkeypatch.undo()
    monkeypatch.chdir(ROOT)
    assert evaluate.main([*args, "--hand-sizes", "3", "4", "--out", str(out)]) == 0
    assert "extra" not in capsys.readouterr().err
    assert {"win_rate.png", "final_scores.png", "round_scores.png"} <= {p.name for p in out.iterdir()}
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["summary"]["ratings"] is not None


# -- the commands' names --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv0", "command", "name"),
    [
        ("/home/u/.venv/bin/quiddler-train", "train", "quiddler-train"),
        ("train.py", "train", "train.py"),
        ("/site-packages/quiddler_agents/cli/evaluate.py", "evaluate", "evaluate.py"),  # python -m
        ("/venv/Scripts/quiddler-evaluate.exe", "evaluate", "quiddler-evaluate"),  # a Windows launcher's name
        ("/usr/bin/pytest", "evaluate", "evaluate.py"),  # a program calling main(): the script's name
        ("/venv/bin/quiddler-evaluate", "train", "train.py"),  # another command's name is not this one's
        ("", "play", "play.py"),
    ],
)
def test_a_command_goes_by_the_name_it_was_started_as(monkeypatch, argv0, command, name):
    monkeypatch.setattr(sys, "argv", [argv0, "--help"])
    assert program(command) == name


def test_the_resume_hint_names_the_console_script_when_run_as_it(monkeypatch, tmp_path):
    (tmp_path / "config.yaml").write_text("name: x\n", encoding="utf-8")
    for argv0, name in (("/venv/bin/quiddler-train", "quiddler-train"), ("train.py", "train.py")):
        monkeypatch.setattr(sys, "argv", [argv0])
        with pytest.raises(RunFolderError, match=f"start it again with: {name} --config "):
            resume_run(tmp_path)


def _run(*command: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.slow
def test_the_console_scripts_and_the_scripts_name_themselves_in_their_messages():
    for script in ("quiddler-evaluate", "quiddler-train", "quiddler-play"):
        if not (BIN / script).is_file():
            pytest.skip(f"{script} is not installed in this venv (pip install -e .)")
    cases = [
        ((str(BIN / "quiddler-evaluate"), "--players", "wizard"), "quiddler-evaluate: error: "),
        ((sys.executable, "evaluate.py", "--players", "wizard"), "evaluate.py: error: "),
        ((str(BIN / "quiddler-train"), "--config", "no-such-config"), "quiddler-train: error: "),
        ((sys.executable, "train.py", "--config", "no-such-config"), "train.py: error: "),
        ((str(BIN / "quiddler-play"), "--port", "99999"), "quiddler-play: error: "),
        ((sys.executable, "play.py", "--port", "99999"), "play.py: error: "),
    ]
    for command, prefix in cases:
        proc = _run(*command)
        lines = _lines(proc.stderr)
        assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith(prefix), (command, proc.stderr)
    usage = _run(str(BIN / "quiddler-evaluate"), "--help").stdout
    assert usage.startswith("usage: quiddler-evaluate ")


# -- a run says what it is doing --------------------------------------------------------------------------------

TINY_RUN = [
    "--config",
    "quickstart",
    "pretrain.games=4",
    "pretrain.epochs=2",
    "train.total_timesteps=128",
    "train.n_envs=8",
    "algo.n_steps=16",
    "algo.batch_size=64",
    "algo.net_arch=[16]",
    "eval.games=2",
    "eval.opponents=[random]",
]
PHASES = [
    "[quickstart] compiling the game's kernels (numba",
    "[quickstart] kernels ready in ",
    "[quickstart] imitation: playing 4 games of zoo:champion-2p against random, greedy",
    "[quickstart] imitation: 4 games played in ",
    "[quickstart] imitation of zoo:champion-2p: ",
    "[quickstart] training: MaskablePPO for 128 steps against random, greedy",
    "[quickstart] evaluation at step 0: 2 games against each of random",
    "[quickstart] step 0: eval random: win ",
    "[quickstart] training: 128 steps in ",
    "[quickstart] evaluation at step 128: 2 games against each of random",
    "[quickstart] step 128: eval random: win ",
]


@pytest.mark.slow
def test_a_tiny_run_says_each_phase_in_order_and_quiet_silences_them(tmp_path):
    proc = _run(sys.executable, "train.py", *TINY_RUN, "--run-dir", str(tmp_path / "run"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = _lines(proc.stderr)
    found = []
    for phase in PHASES:
        at = [i for i, line in enumerate(lines) if line.startswith(phase)]
        assert len(at) == 1, (phase, proc.stderr)
        found.append(at[0])
    assert found == sorted(found), proc.stderr  # in this order
    assert "model: " in proc.stdout
    quiet = _run(sys.executable, "train.py", *TINY_RUN, "--run-dir", str(tmp_path / "quiet"), "--quiet")
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    assert not [line for line in _lines(quiet.stderr) if line.startswith("[quickstart]")], quiet.stderr


def test_a_phase_in_lines_shows_its_progress_each_tenth_and_nothing_when_disabled(monkeypatch):
    from quiddler_agents import progress

    clock = iter(float(t) for t in range(0, 1000, 6))  # 6 s between calls: more than MIN_GAP
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    said: list[str] = []
    phase = progress.Progress("imitation", 20, "game", said.append)
    for _ in range(20):
        phase.update(1)
    phase.close()
    assert said[0] == "imitation: 2/20 games (12 s)" and said[-1] == "imitation: 20/20 games (120 s)"
    assert len(said) == 10  # one a tenth
    silent: list[str] = []
    quiet = progress.Progress("imitation", 20, "game", silent.append, enabled=False)
    for _ in range(20):
        quiet.update(1)
    assert silent == [] and quiet.done == 20


# -- the zoo ------------------------------------------------------------------------------------------------------


def test_shipping_a_zoo_entry_again_keeps_its_readme(tmp_path):
    pytest.importorskip("torch")
    from quiddler_agents import zoo
    from tests.test_zoo import fake_run

    run = fake_run(tmp_path / "run")
    shelf = tmp_path / "zoo"
    entry = zoo.ship(run, "tiny-2p", "# tiny-2p\n", zoo_dir=shelf)
    assert not (entry / "README.md").exists()  # a new entry: its README is written by hand
    (entry / "README.md").write_text("# tiny-2p, by hand\n", encoding="utf-8")
    (entry / "notes.txt").write_text("anything else goes\n", encoding="utf-8")
    zoo.ship(run, "tiny-2p", "# tiny-2p, again\n", zoo_dir=shelf)
    assert (entry / "README.md").read_text(encoding="utf-8") == "# tiny-2p, by hand\n"
    assert (entry / "evaluation.md").read_text(encoding="utf-8") == "# tiny-2p, again\n"
    assert not (entry / "notes.txt").exists()  # the rest is replaced whole


def test_the_zoo_readmes_are_package_data():
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["quiddler_agents.zoo"]
    assert "*/README.md" in patterns
    shipped = {p.relative_to(ROOT / "agents" / "zoo") for p in (ROOT / "agents" / "zoo").glob("*/*") if p.is_file()}
    assert {p for p in shipped if not any(p.match(pattern) for pattern in patterns)} == set()
