"""The installable package: every package folder goes into the wheel under its installed name, and the shipped
run configs are found by name."""

from __future__ import annotations

from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

from agents.training.checks import RunConfigError
from agents.training.config import load_run_config, resolve_config_path, shipped_configs

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
INSTALLED_AS = {"quiddler_env": "quiddler_env", "agents": "quiddler_agents"}


def test_every_package_folder_is_in_the_wheel_under_its_installed_name():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = set()
    for folder, name in INSTALLED_AS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name, *parts)))
    assert found <= listed, f"package folders missing from pyproject's packages: {sorted(found - listed)}"
    data = {"quiddler_env.data", "quiddler_agents.configs"}
    assert listed - found == data
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {
        "quiddler_agents": "agents",
        "quiddler_agents.configs": "configs",
    }
    assert "agents" not in listed  # the import name of the OpenAI Agents SDK stays free


def test_the_console_scripts_name_the_commands():
    scripts = PYPROJECT["project"]["scripts"]
    assert scripts["quiddler-train"] == "quiddler_agents.cli.train:console"
    assert scripts["quiddler-evaluate"] == "quiddler_agents.cli.evaluate:console"
    assert scripts["quiddler-play"] == "quiddler_agents.cli.play:main"
    for target in scripts.values():
        module, _, function = target.partition(":")
        path = ROOT / Path(*module.replace("quiddler_agents", "agents", 1).split("."))
        assert f"def {function}(" in path.with_suffix(".py").read_text()


def test_a_shipped_config_is_found_by_name():
    names = shipped_configs()
    assert {"quickstart", "champion_2p", "champion_4p"} <= set(names)
    assert names == sorted(p.stem for p in (ROOT / "configs").glob("*.yaml"))
    assert resolve_config_path("quickstart") == ROOT / "configs" / "quickstart.yaml"
    assert resolve_config_path("quickstart.yaml") == ROOT / "configs" / "quickstart.yaml"
    assert load_run_config("quickstart") == load_run_config(str(ROOT / "configs" / "quickstart.yaml"))


def test_a_path_or_an_unknown_name_is_not_looked_up(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        RunConfigError,
        match=r"config 'quickstrat': no such file, and no shipped config of that name \(shipped: challenges, champion_2p",
    ):
        resolve_config_path("quickstrat")
    # A path with a folder is taken as given: a missing file is the file reader's error, not a lookup.
    assert resolve_config_path("configs/quickstart.yaml") == Path("configs/quickstart.yaml")
    (tmp_path / "quickstart.yaml").write_text("name: mine\n")
    assert resolve_config_path("quickstart.yaml") == Path("quickstart.yaml")  # a local file wins
