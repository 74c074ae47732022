"""Run configs of train.py: the shipped files, validation errors naming the key, dotted overrides, resume rules."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from quiddler_agents.training import RunFolderError, resume_run, start_run
from quiddler_agents.training.config import (
    RunConfig,
    RunConfigError,
    Schedule,
    apply_overrides,
    dump_yaml,
    load_run_config,
    parse_override,
)
from quiddler_env.core.config import QuiddlerConfig

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))


def test_the_required_configs_ship():
    names = {p.stem for p in CONFIGS}
    assert {"quickstart", "ppo_vs_greedy", "selfplay", "ppo_4p"} <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_shipped_configs_validate_and_round_trip(path):
    cfg = load_run_config(path)
    assert cfg.name == path.stem
    assert cfg.backend == ("rllib" if path.stem.startswith("rllib") else "sb3")
    # The resolved config written to a run folder reads back to the same config.
    again = RunConfig.from_mapping(cfg.to_dict())
    assert again == cfg
    assert load_run_config(path).to_dict() == cfg.to_dict()
    assert "total_timesteps" in dump_yaml(cfg)


def test_eval_tables_mix_specs_and_seat_lists(tmp_path):
    from quiddler_agents.training.config import eval_tables

    cfg = load_run_config(
        ROOT / "configs/quickstart.yaml", ["env.num_players=4", "eval.opponents=[greedy, [expert, greedy, random]]"]
    )
    assert cfg.eval.opponents == ("greedy", ("expert", "greedy", "random"))
    assert eval_tables(cfg) == [
        ("greedy", ("greedy", "greedy", "greedy")),
        ("expert+greedy+random", ("expert", "greedy", "random")),
    ]
    # The run folder's config.yaml holds the seat list as a list, and reads back the same.
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg.to_dict()), encoding="utf-8")
    assert load_run_config(tmp_path / "run.yaml").eval.opponents == cfg.eval.opponents


def test_shipped_config_shapes():
    quick = load_run_config(ROOT / "configs/quickstart.yaml")
    assert quick.num_players == 2
    assert quick.output_dir() == Path("runs/quickstart")
    assert "random" in quick.eval.opponents
    assert load_run_config(ROOT / "configs/selfplay.yaml").league.enabled
    assert load_run_config(ROOT / "configs/ppo_4p.yaml").num_players == 4


def test_overrides_apply(tmp_path):
    cfg = load_run_config(
        ROOT / "configs/quickstart.yaml",
        [
            "train.total_timesteps=50000",
            "env.num_players=3",
            "algo.net_arch=[64, 64]",
            "algo.learning_rate=1e-3",
            "opponents=[greedy]",
            "eval.opponents=[random, expert:samples=4]",
            "seed=7",
        ],
    )
    assert cfg.train.total_timesteps == 50000
    assert cfg.num_players == 3 and cfg.rules == QuiddlerConfig(num_players=3)
    assert cfg.algo.net_arch == {"pi": (64, 64), "vf": (64, 64)}
    assert cfg.algo.learning_rate == Schedule(1e-3, 1e-3)
    assert [(o.spec, o.weight) for o in cfg.opponents] == [("greedy", 1.0)]
    assert cfg.eval.opponents == ("random", "expert:samples=4")
    assert cfg.seed == 7
    tuned = load_run_config(
        ROOT / "configs/quickstart.yaml",
        ["pretrain.teacher=null", "algo.observation_features=null", "env.layout_shaping=0.5", "train.vec_env=dummy"],
    )
    assert tuned.pretrain.teacher is None and tuned.algo.observation_features is None
    assert tuned.env["layout_shaping"] == 0.5 and tuned.backend_env == {"layout_shaping": 0.5}
    assert "layout_shaping" not in tuned.env_options
    # Sections the file does not have are created by an override.
    bare = tmp_path / "bare.yaml"
    bare.write_text("name: bare\n")
    assert load_run_config(bare, ["league.enabled=true", "league.pool_size=2"]).league.pool_size == 2


def test_parse_override_reads_values_as_yaml():
    assert parse_override("a.b=12") == (["a", "b"], 12)
    assert parse_override("a=1.5e-4") == (["a"], 1.5e-4)
    assert parse_override("a=[1, 2]") == (["a"], [1, 2])
    assert parse_override("a=null") == (["a"], None)
    assert parse_override("a=greedy") == (["a"], "greedy")
    assert parse_override("a={start: 1, end: 0}") == (["a"], {"start": 1, "end": 0})
    # YAML, never Python: this stays a plain string.
    assert parse_override("a=__import__('os')") == (["a"], "__import__('os')")


def test_defaults_and_resolved_env():
    cfg = RunConfig.from_mapping({}, default_name="x")
    assert cfg.name == "x" and cfg.backend == "sb3" and cfg.output_dir() == Path("runs/x")
    assert cfg.env["hand_sizes"] == [3, 4, 5, 6, 7, 8, 9, 10]  # every rule is written out
    assert cfg.rules == QuiddlerConfig()
    assert cfg.env_options == {
        "reward_mode": "round_score",
        "reward_scale": 0.01,  # the mode's default, resolved
        "learner_seat": "random",
        "max_cycles": None,
        "illegal_reward": -1.0,
    }


def test_schedule():
    lin = Schedule.parse("algo.learning_rate", {"start": 1e-3, "end": 1e-4})
    assert lin(1.0) == pytest.approx(1e-3) and lin(0.0) == pytest.approx(1e-4) and lin(0.5) == pytest.approx(5.5e-4)
    assert not lin.constant and lin.to_yaml() == {"start": 1e-3, "end": 1e-4}
    const = Schedule.parse("algo.learning_rate", 3e-4)
    assert const.constant and const(0.3) == pytest.approx(3e-4) and const.to_yaml() == 3e-4


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        (["algo.n_stpes=5"], "'algo.n_stpes'"),
        (["colour=red"], "'colour'"),
        (["train.n_envs=0"], "'train.n_envs'"),
        (["train.total_timesteps=1.5"], "'train.total_timesteps'"),
        (["train.vec_env=threads"], "'train.vec_env'"),
        (["train.progress_bar=maybe"], "'train.progress_bar'"),
        (["algo.gamma=1.5"], "'algo.gamma'"),
        (["algo.learning_rate=-1"], "'algo.learning_rate'"),
        (["algo.learning_rate={end: 0.1}"], "'algo.learning_rate.start'"),
        (["algo.net_arch=[64, 0]"], "'algo.net_arch'"),
        (["algo.net_arch={pi: [64]}"], "'algo.net_arch'"),
        (["algo.activation=Swish"], "'algo.activation'"),
        (["algo.batch_size=100000"], "'algo.batch_size'"),
        (["env.num_players=9"], "'env.num_players'"),
        (["env.reward_mode=points"], "'env.reward_mode'"),
        (["env.learner_seat=5"], "'env.learner_seat'"),
        (["env.render_mode=ansi"], "'env.render_mode'"),
        (["opponents=[{spec: wizard}]"], "'opponents[0].spec'"),
        (["opponents=[{spec: random, weight: 0}]"], "'opponents[0].weight'"),
        (["opponents=[random, random]"], "'opponents'"),
        (["opponents=[]"], "'opponents'"),
        (["eval.opponents=[human]"], "'eval.opponents[0]'"),
        (["eval.opponents=[greedy, [wizard]]"], "'eval.opponents[1][0]'"),
        (["eval.opponents=[[]]"], "'eval.opponents[0]'"),
        (["eval.opponents=[[greedy], [greedy]]"], "'eval.opponents'"),
        (["eval.opponents=[[greedy, random]]"], "'eval.opponents[0]'"),  # 2 players: one other seat
        (["eval.games=-3"], "'eval.games'"),
        (["league.weight=0"], "'league.weight'"),
        (["backend=jax"], "'backend'"),
        (["name=a/b"], "'name'"),
        (["seed=-1"], "'seed'"),
        (["train=5"], "'train'"),
        (["algo.observation_features=magic"], "'algo.observation_features'"),
        (["env.layout_shaping=-1"], "'env.layout_shaping'"),
        (["pretrain.teacher=wizard"], "'pretrain.teacher'"),
        (["pretrain.teacher=human"], "'pretrain.teacher'"),
        (["pretrain.games=0"], "'pretrain.games'"),
        (["pretrain.colour=1"], "'pretrain.colour'"),
    ],
)
def test_config_errors_name_the_key(overrides, named):
    with pytest.raises(RunConfigError) as err:
        load_run_config(ROOT / "configs/quickstart.yaml", overrides)
    assert named in str(err.value)
    assert "quickstart.yaml" in str(err.value)  # and the file


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train.total_timesteps", "expected dotted.key=value"),
        ("=5", "expected dotted.key=value"),
        ("train..n_envs=2", "bad dotted key"),
        ("seed.x=1", "'seed' is not a section"),
        ("algo.net_arch=[64", "not valid YAML"),
    ],
)
def test_bad_overrides(override, message):
    with pytest.raises(RunConfigError, match=message):
        apply_overrides({"seed": 0}, [override])


def test_bad_files(tmp_path):
    with pytest.raises(RunConfigError, match="does not exist"):
        load_run_config(tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("train: [1, 2\n")
    with pytest.raises(RunConfigError, match="not valid YAML"):
        load_run_config(broken)
    listed = tmp_path / "list.yaml"
    listed.write_text("- 1\n- 2\n")
    with pytest.raises(RunConfigError, match="must hold a mapping"):
        load_run_config(listed)


def test_existing_run_folder_needs_resume_or_force(tmp_path):
    cfg = load_run_config(ROOT / "configs/quickstart.yaml")
    run = tmp_path / "run"
    (run / "checkpoints" / "step_000000000").mkdir(parents=True)
    (run / "checkpoints" / "step_000000000" / "state.json").write_text("{}")
    (run / "config.yaml").write_text(dump_yaml(cfg))
    with pytest.raises(RunFolderError, match="--resume"):
        start_run(cfg, run_dir=run)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(RunFolderError, match="not a run folder"):
        start_run(cfg, run_dir=other, force=True)
    assert (other / "notes.txt").exists()  # --force never deletes a folder that is not a run


@pytest.mark.parametrize("where", ["opening the session", "training"])
def test_a_stop_once_the_run_folder_is_made_leaves_nothing(tmp_path, monkeypatch, where):
    # SIGTERM is a KeyboardInterrupt in train.py: one landing as soon as config.yaml is there (the session still
    # opening) or in the first steps leaves no run folder behind, as one before any checkpoint must.
    from quiddler_agents.training import run as run_module

    def stop(*args, **kwargs):
        assert (tmp_path / "run" / "config.yaml").is_file()  # the folder was made before the stop
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, "RunSession" if where == "opening the session" else "_train", stop)
    with pytest.raises(KeyboardInterrupt):
        start_run(load_run_config(ROOT / "configs/quickstart.yaml"), run_dir=tmp_path / "run")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_resume_only_changes_training_keys(tmp_path):
    cfg = load_run_config(ROOT / "configs/quickstart.yaml")
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(dump_yaml(cfg))
    with pytest.raises(RunConfigError, match="'env.num_players' defines the run"):
        resume_run(run, ["env.num_players=3"])
    with pytest.raises(RunFolderError, match="does not exist"):
        resume_run(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunFolderError, match="not a run folder"):
        resume_run(tmp_path / "empty")
