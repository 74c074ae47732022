"""The installable package: every package folder goes into the wheel under its installed name, and the shipped
run configs are found by name."""

from __future__ import annotations

from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

from quiddler_agents.training.checks import RunConfigError
from quiddler_agents.training.config import load_run_config, resolve_config_path, shipped_configs

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


def test_the_shipped_env_configs_are_found_by_name_from_any_folder(tmp_path, monkeypatch):
    import quiddler_env
    from quiddler_env.core.config import QuiddlerConfig
    from quiddler_env.envs import common
    from quiddler_env.envs.gym_env import QuiddlerEnv

    monkeypatch.chdir(tmp_path)  # outside the checkout
    assert common.shipped_env_configs() == sorted(p.stem for p in (ROOT / "configs" / "env").glob("*.yaml"))
    assert common.env_config_path("default") == ROOT / "configs" / "env" / "default.yaml"
    assert common.env_config_path("default.yaml") == ROOT / "configs" / "env" / "default.yaml"
    plain = QuiddlerEnv().config
    assert QuiddlerEnv(config="default").config == plain == QuiddlerConfig()
    assert quiddler_env.env(config="default", num_players=3).unwrapped.config.num_players == 3
    assert QuiddlerEnv(config="default.yaml").config == plain
    # A name that is no shipped config: one line naming the shipped ones; a missing path names them too.
    with pytest.raises(ValueError, match=r"^env config 'defualt': no such file, .* \(shipped: default\)$"):
        QuiddlerEnv(config="defualt")
    with pytest.raises(ValueError, match=r"env config file configs/env/default\.yaml does not exist .*'default'"):
        QuiddlerEnv(config="configs/env/default.yaml")
    # A path that exists is used as a path: a local file wins over the shipped one of its name.
    (tmp_path / "default.yaml").write_text("num_players: 4\n")
    assert QuiddlerEnv(config="default.yaml").config.num_players == 4
    assert QuiddlerEnv(config=tmp_path / "default.yaml").config.num_players == 4
    assert QuiddlerEnv(config="default").config.num_players == 2  # a bare name without .yaml: the shipped one


def test_the_env_configs_ship_in_the_wheel_where_the_env_finds_them(tmp_path, monkeypatch):
    """The wheel installs `configs/` as `quiddler_agents/configs` beside `quiddler_env/` (pyproject's package-dir and
    package-data): the env finds `env/*.yaml` there by its own location, importing nothing of quiddler_agents."""
    from quiddler_env.envs import common

    assert "env/*.yaml" in PYPROJECT["tool"]["setuptools"]["package-data"]["quiddler_agents.configs"]
    site = tmp_path / "site-packages"
    (site / "quiddler_env" / "envs").mkdir(parents=True)
    (site / "quiddler_agents" / "configs" / "env").mkdir(parents=True)
    (site / "quiddler_agents" / "configs" / "env" / "default.yaml").write_text("num_players: 5\n")
    monkeypatch.setattr(common, "__file__", str(site / "quiddler_env" / "envs" / "common.py"))
    monkeypatch.chdir(tmp_path)
    assert common.env_config_path("default") == site / "quiddler_agents" / "configs" / "env" / "default.yaml"
    assert common.resolve_options("default", {}, "gym")[0].num_players == 5
