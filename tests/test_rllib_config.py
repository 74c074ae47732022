"""Run configs with `backend: rllib`: the `ray`/`rllib` sections and the translation to RLlib (no Ray needed).

Runs in both virtual envs: with Ray (`.venv-rllib`) and without (`.venv`), where the
config still validates and train.py says in one line that the backend is unavailable.
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from quiddler_agents.extras import MissingExtra
from quiddler_agents.training import RunFolderError, resume_run
from quiddler_agents.training.backends import backend_part
from quiddler_agents.training.config import RunConfig, RunConfigError, dump_yaml, load_run_config
from quiddler_agents.training.rllib.config import AEC_OPTIONS, RLLIB_DEFAULTS, check_rllib_run
from quiddler_env.core.config import QuiddlerConfig

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "rllib_selfplay.yaml"


def _cfg(overrides=()):
    return load_run_config(CONFIG, list(overrides))


def test_shipped_config_resolves_and_translates():
    cfg = _cfg()
    assert cfg.backend == "rllib" and cfg.sections["rllib"]["self_play"] is True
    assert cfg.sections["ray"]["address"] is None
    plan = check_rllib_run(cfg)
    assert plan.train_batch_size == cfg.algo.n_steps * cfg.train.n_envs
    assert plan.minibatch_size == cfg.algo.batch_size and plan.num_epochs == cfg.algo.n_epochs
    assert plan.fcnet_hiddens == list(cfg.algo.net_arch["pi"]) and plan.fcnet_activation == cfg.algo.activation
    # A learning-rate schedule becomes RLlib's piecewise-linear [[step, value], ...] over the run.
    assert plan.lr == [[0, 3.0e-4], [cfg.train.total_timesteps, 5.0e-5]]
    assert plan.env_config["self_play"] is True and plan.env_config["env"]["reward_mode"] == "relative"
    assert "learner_seat" not in plan.env_config["env"]  # an option of the adapter, not of the AEC env
    # The rules travel as the run's own QuiddlerConfig object, not as fields of the env mapping.
    assert plan.env_config["rules"] is cfg.rules
    assert not set(plan.env_config["env"]) & set(QuiddlerConfig.field_names())


def test_resolved_config_reads_back_equal():
    cfg = _cfg(["rllib.num_env_runners=3", "ray.address=auto"])
    import yaml

    again = RunConfig.from_mapping(yaml.safe_load(dump_yaml(cfg)))
    assert again == cfg and again.sections["rllib"]["num_env_runners"] == 3
    assert again.sections["ray"]["address"] == "auto"
    assert set(cfg.sections["rllib"]) == set(RLLIB_DEFAULTS) and set(cfg.sections) == {"ray", "rllib"}


def test_vs_bots_translation_carries_the_opponents():
    cfg = _cfg(["rllib.self_play=false", "env.learner_seat=1", "opponents=[{spec: greedy, weight: 2}, random]"])
    plan = check_rllib_run(cfg)
    assert plan.env_config["opponents"] == [["greedy", 2.0], ["random", 1.0]]
    assert plan.env_config["learner_seat"] == 1 and plan.env_config["self_play"] is False


def test_explicit_train_batch_size_wins():
    plan = check_rllib_run(_cfg(["rllib.train_batch_size=1234", "algo.batch_size=100"]))
    assert plan.train_batch_size == 1234


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("rllib.num_env_runners=-1", "rllib.num_env_runners"),
        ("rllib.num_envs_per_env_runner=0", "rllib.num_envs_per_env_runner"),
        ("rllib.bogus=1", "rllib.bogus"),
        ("rllib.self_play=maybe", "rllib.self_play"),
        ("rllib.rollout_fragment_length=sometimes", "rllib.rollout_fragment_length"),
        ("ray.address=''", "ray.address"),
        ("ray.object_store_memory_mb=10", "ray.object_store_memory_mb"),
        ("ray.port=1", "ray.port"),
        ("league.enabled=true", "league.enabled"),
        ("algo.target_kl=0.02", "algo.target_kl"),
        ("algo.clip_range={start: 0.2, end: 0.1}", "algo.clip_range"),
        ("algo.normalize_advantage=false", "algo.normalize_advantage"),
        ("algo.ortho_init=false", "algo.ortho_init"),
        ("algo.device=cuda", "algo.device"),
        ("algo.net_arch={pi: [64], vf: [32]}", "algo.net_arch"),
        ("algo.batch_size=100000", "algo.batch_size"),
        ("env.layout_shaping=0.5", "env.layout_shaping"),  # the sb3 training env's option: not a key here
        ("env.illegal_reward=-2", "env.illegal_reward"),  # Quiddler-v0's, not the AEC env's
        ("env.learner_seat=true", "env.learner_seat"),
        ("env.learner_seat=2", "env.learner_seat"),
        ("env.reward_mode=points", "env.reward_mode"),
        ("algo.observation_features=solver_v1", "algo.observation_features"),
    ],
)
def test_bad_rllib_settings_name_the_key(override, key):
    with pytest.raises(RunConfigError, match=key.replace(".", r"\.")):
        _cfg([override])


def test_the_aec_options_come_from_the_envs_own_table():
    from quiddler_env.envs.common import env_option_names

    assert AEC_OPTIONS == ("reward_mode", "reward_scale", "max_cycles")
    assert set(AEC_OPTIONS) <= set(env_option_names("aec"))
    cfg = _cfg(["env.max_cycles=50", "env.reward_mode=win_loss"])
    env = check_rllib_run(cfg).env_config["env"]
    assert env["max_cycles"] == 50 and env["reward_scale"] == 1.0  # resolved by the env's check


def test_sb3_runs_refuse_the_rllib_sections():
    with pytest.raises(RunConfigError, match="'rllib': not a section of backend 'sb3'"):
        load_run_config(ROOT / "configs" / "quickstart.yaml", ["rllib.num_env_runners=2"])
    sb3 = load_run_config(ROOT / "configs" / "quickstart.yaml")
    assert "rllib" not in sb3.to_dict() and "ray" not in sb3.to_dict() and sb3.sections == {}


def test_the_config_module_imports_no_ray_and_no_trainer():
    """`rllib/__init__` and `rllib/config` validate configs where Ray is missing, and form no import cycle."""
    package = ROOT / "agents" / "training" / "rllib"
    for name in ("__init__.py", "config.py"):
        tree = ast.parse((package / name).read_text())
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add("." * node.level + (node.module or ""))
        assert not {m for m in imported if m == "ray" or m.startswith("ray.")}, name
        assert not {m for m in imported if "trainer" in m or m in (".env", ".module")}, name
        assert ".." not in imported, f"{name} imports quiddler_agents.training's __init__"
    assert backend_part("rllib", "config").SECTIONS == ("ray", "rllib")


def test_resume_may_change_where_and_how_wide_but_not_the_run(tmp_path):
    text = dump_yaml(_cfg())
    (tmp_path / "config.yaml").write_text(text)
    with pytest.raises(RunConfigError, match="rllib.self_play"):
        resume_run(tmp_path, ["rllib.self_play=false"])
    # Allowed overrides pass the check and reach the run layer, which finds no checkpoint here (or, without Ray,
    # says which extra the backend needs): both are the clean errors train.py reports.
    with pytest.raises((RunFolderError, MissingExtra), match="has no checkpoint|needs the rllib extra"):
        resume_run(tmp_path, ["rllib.num_env_runners=4", "ray.address=auto"], quiet=True)
    assert (tmp_path / "config.yaml").read_text() == text  # a resume that did not start changes nothing


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ray") is not None, reason="Ray is installed here (tests/test_rllib.py)")
def test_train_py_without_ray_says_the_backend_is_unavailable(tmp_path):
    run = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "train.py", "--config", str(CONFIG), "--run-dir", str(run)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert (
        lines[0]
        == 'train.py: error: training with backend rllib needs the rllib extra: pip install -e ".[rllib]" (missing: ray)'
    )
    assert not run.exists()  # checked before a run folder is made
    # The config itself validates here.
    proc = subprocess.run(
        [sys.executable, "train.py", "--config", str(CONFIG), "--print-config"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0 and "backend: rllib" in proc.stdout, proc.stderr
