"""A run's rules are one `QuiddlerConfig`, built and checked when the YAML is parsed, and handed on as that object."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from quiddler_agents.training.config import RunConfig, RunConfigError, dump_yaml
from quiddler_agents.training.sb3.opponents import make_training_env
from quiddler_env.core.config import QuiddlerConfig

ROOT = Path(__file__).resolve().parent.parent


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_from_yaml_holds_the_rules_as_the_yamls_quiddlerconfig(tmp_path):
    env = {"num_players": 3, "hand_sizes": [3, 4, 5], "go_out": "forced", "turn_cap": None, "reward_mode": "win_loss"}
    cfg = RunConfig.from_yaml(_write(tmp_path, {"name": "typed", "env": env, "train": {"vec_env": "dummy"}}))
    assert isinstance(cfg.rules, QuiddlerConfig)
    assert cfg.rules == QuiddlerConfig(num_players=3, hand_sizes=(3, 4, 5), go_out="forced", turn_cap=None)
    assert cfg.num_players == 3
    # The env options and the backend's own are separate fields, every one resolved.
    assert cfg.env_options["reward_mode"] == "win_loss" and cfg.env_options["learner_seat"] == "random"
    assert cfg.env_options["reward_scale"] == 1.0  # win_loss's default, resolved by the env's check
    assert set(cfg.env_options).isdisjoint(QuiddlerConfig.field_names())
    assert cfg.backend_env == {"layout_shaping": 0.0}
    # The same path as load_run_config, overrides included.
    assert RunConfig.from_yaml(tmp_path / "run.yaml", ["env.num_players=4"]).rules.num_players == 4


def test_the_written_env_section_keeps_its_shape_and_reads_back(tmp_path):
    cfg = RunConfig.from_yaml(_write(tmp_path, {"env": {"num_players": 3, "hand_sizes": [3, 4]}}))
    env = yaml.safe_load(dump_yaml(cfg))["env"]
    # One flat mapping: every rule, then every option of Quiddler-v0, then sb3's own.
    assert list(env) == [
        *QuiddlerConfig(num_players=3).to_dict(),
        "reward_mode",
        "reward_scale",
        "max_cycles",
        "learner_seat",
        "illegal_reward",
        "layout_shaping",
    ]
    assert env["num_players"] == 3 and env["hand_sizes"] == [3, 4] and env["learner_seat"] == "random"
    again = RunConfig.from_mapping(yaml.safe_load(dump_yaml(cfg)))
    assert again == cfg and again.rules == cfg.rules


def test_a_run_folder_written_before_the_typed_rules_still_reads(tmp_path):
    # The env section of a config.yaml as runs wrote it before RunConfig held a QuiddlerConfig.
    old = {
        "name": "old",
        "env": {
            "num_players": 2,
            "hand_sizes": [3, 4, 5, 6, 7, 8, 9, 10],
            "min_word_cards": 2,
            "two_player_bonus": "longest_word",
            "bonus_value": 10,
            "score_floor": "round",
            "go_out": "optional",
            "dictionary": "enable",
            "turn_cap": 30,
            "layout": "auto",
            "reward_mode": "relative",
            "reward_scale": 0.01,
            "max_cycles": None,
            "learner_seat": "random",
            "illegal_reward": -1.0,
            "layout_shaping": 0.0,
        },
    }
    cfg = RunConfig.from_mapping(old)
    assert cfg.rules == QuiddlerConfig()
    assert cfg.to_dict()["env"] == old["env"]


@pytest.mark.parametrize(
    ("key", "value"),
    [("hand_sizes", [0]), ("go_out", "sometimes"), ("num_players", 9), ("turn_cap", 0), ("bonus_value", 10**6)],
)
def test_a_bad_rule_in_a_run_yaml_is_a_one_line_error_naming_the_key(tmp_path, key, value):
    path = _write(tmp_path, {"env": {key: value}})
    with pytest.raises(RunConfigError) as info:
        RunConfig.from_yaml(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(path)) and f"config key 'env.{key}'" in message


def test_the_training_env_gets_the_runs_config_object():
    from quiddler_agents.training.sb3.trainer import build_vec_env

    cfg = RunConfig.from_mapping({"opponents": ["random", "greedy"], "env": {"num_players": 3, "hand_sizes": [3]}})
    venv = build_vec_env(cfg, [], n_envs=1)  # DummyVecEnv: the env is made in this process
    try:
        env = venv.unwrapped.envs[0]
        assert len(env.opponents) == 2 and all(o.config is cfg.rules for o in env.opponents)
        assert env.config == cfg.rules
        venv.reset()
        venv.step(np.array([int(np.flatnonzero(env.action_masks())[0])]))
    finally:
        venv.close()


def test_the_training_env_refuses_rules_as_a_mapping():
    with pytest.raises(TypeError, match="rules must be a QuiddlerConfig"):
        make_training_env(QuiddlerConfig().to_dict(), {}, [("random", 1.0)])


def test_the_pretraining_env_gets_the_runs_config_object(monkeypatch):
    from quiddler_agents.training.sb3 import pretrain

    cfg = RunConfig.from_mapping({"env": {"hand_sizes": [3]}, "pretrain": {"teacher": "greedy", "games": 1}})
    seen = []

    def spy(rules, *args, **kwargs):
        seen.append(rules)
        return make_training_env(rules, *args, **kwargs)

    monkeypatch.setattr(pretrain, "make_training_env", spy)
    demos = pretrain.collect_demonstrations(cfg, 1, 0)
    assert seen and all(rules is cfg.rules for rules in seen)
    assert len(demos.actions) > 0


def test_the_training_evaluation_plays_by_the_runs_config_object(monkeypatch):
    from quiddler_agents import policies, registry
    from quiddler_agents.training.config import load_run_config
    from quiddler_agents.training.evaluation import evaluate_bundle

    cfg = load_run_config(ROOT / "configs/champion_4p.yaml", ["eval.games=4", "eval.opponents=[greedy]"])
    seen = []
    make, load_policy = registry.make, policies.load_policy

    def make_spy(spec, *args, **kwargs):
        seen.append(kwargs.get("config"))
        return make(spec, *args, **kwargs)

    def load_spy(path, **kwargs):
        seen.append(kwargs.get("config"))
        return load_policy(path, **kwargs)

    monkeypatch.setattr(registry, "make", make_spy)
    monkeypatch.setattr(policies, "load_policy", load_spy)
    (row,) = evaluate_bundle(ROOT / "agents" / "zoo" / "table-4p", cfg, step=1)
    assert row.games == 4
    assert len(seen) == 4 and all(rules is cfg.rules for rules in seen)  # the policy and its three greedy seats
