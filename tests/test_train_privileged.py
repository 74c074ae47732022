"""`algo.privileged_critic`: the value network reads [observation | state], the policy only the observation.

The actor must never read hidden cards (changing the state part changes the value, never the action
distribution; its first layer is as wide as the observation), a tiny training run on either vector env
must give a bundle that plays from the plain observation, and the states the learner's step carries
must be the AEC env's `state()` of that position from the learner's seat.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from quiddler_agents import play_game
from quiddler_agents.policies import load_policy, save_policy_bundle
from quiddler_agents.policies.bundle import PolicyLoadError, read_description
from quiddler_agents.policies.privileged import PrivilegedCriticPolicy
from quiddler_agents.registry import make
from quiddler_agents.training.checks import RunConfigError
from quiddler_agents.training.config import RunConfig
from quiddler_agents.training.sb3.trainer import build_model, build_vec_env
from quiddler_env.core.observation import observation_layout
from quiddler_env.envs.state import encode_state, seat_relative, state_layout

OBS = observation_layout(2).size
STATE = state_layout(2).size
TINY = {
    "name": "tiny-privileged",
    "seed": 3,
    "env": {"num_players": 2, "hand_sizes": [3, 4]},
    "opponents": [{"spec": "random", "weight": 1.0}, {"spec": "greedy", "weight": 1.0}],
    "algo": {"n_steps": 32, "batch_size": 64, "n_epochs": 1, "net_arch": [16], "privileged_critic": True},
    "train": {"total_timesteps": 256, "n_envs": 8, "vec_env": "batched", "progress_bar": False},
    "eval": {"every": 256, "games": 2, "opponents": ["random"], "at_start": False},
}


def config(**algo_and_train) -> RunConfig:
    data = json.loads(json.dumps(TINY))
    for key, value in algo_and_train.items():
        section, _, name = key.partition("__")
        data[section][name] = value
    return RunConfig.from_mapping(data)


def test_the_option_is_off_by_default_and_refused_with_a_warm_start():
    assert RunConfig.from_mapping({"name": "x"}).algo.privileged_critic is False
    with pytest.raises(RunConfigError, match="pretrain.teacher"):
        RunConfig.from_mapping({**TINY, "pretrain": {"teacher": "greedy"}})


@pytest.mark.parametrize("vec_env", ["batched", "dummy"])
def test_the_training_observation_is_the_observation_then_the_state(vec_env):
    """(c) the state the critic reads for a game is the AEC env's `state()` there, from the learner's seat."""
    venv = build_vec_env(config(train__vec_env=vec_env, train__n_envs=3), [])
    venv.seed(4)
    obs = venv.reset()
    assert obs.shape == (3, OBS + STATE) and venv.observation_space.shape == (OBS + STATE,)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(60):
        envs = venv.unwrapped
        for i in range(3):
            if vec_env == "batched":
                game, seat = envs.env.games.game(i), int(envs.env.seats[i])
            else:
                game, seat = envs.envs[i].unwrapped.game, envs.envs[i].unwrapped.seat
            np.testing.assert_allclose(obs[i, OBS:], seat_relative(encode_state(game), seat, 2), atol=1e-6)
        masks = np.stack(venv.env_method("action_masks"))
        obs, _, dones, infos = venv.step(np.argmax(rng.random(masks.shape) * masks + masks, axis=1))
        for done, info in zip(dones, infos, strict=True):
            if done:  # the final observation carries the final state: the game is over in it
                terminal = info["terminal_observation"]
                assert terminal.shape == (OBS + STATE,)
                assert state_layout(2).view(terminal[OBS:])["phase"][2] == 1.0
                ended += 1
    assert ended > 0
    venv.close()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny MaskablePPO with the privileged critic, trained on the batched env, and its bundle."""
    torch.manual_seed(0)
    cfg = config()
    venv = build_vec_env(cfg, [])
    model = build_model(cfg, venv)
    model.learn(256)
    folder = save_policy_bundle(model, tmp_path_factory.mktemp("bundle") / "policy", {"config": cfg.rules})
    venv.close()
    return model, folder


def test_the_actor_reads_the_observation_only(trained):
    """(a) other seats' hands and the draw pile change the value, never the action distribution."""
    model, _ = trained
    policy = model.policy
    assert isinstance(policy, PrivilegedCriticPolicy)
    assert policy.mlp_extractor.policy_net[0].in_features == OBS  # the actor's first layer: the observation
    assert policy.mlp_extractor.value_net[0].in_features == OBS + STATE  # the critic's: everything
    venv = build_vec_env(config(train__n_envs=4), [])
    venv.seed(9)
    obs = torch.as_tensor(venv.reset())
    masks = np.stack(venv.env_method("action_masks"))
    venv.close()
    changed = obs.clone()
    view = state_layout(2).slices
    g = torch.Generator().manual_seed(1)
    for name in ("hands", "draw_pile", "known_taken"):  # what no seat sees, and more
        s = view[name]
        changed[:, OBS + s.start : OBS + s.stop] = torch.randint(0, 4, (4, s.stop - s.start), generator=g).float()
    with torch.no_grad():
        before = policy.get_distribution(obs, action_masks=masks).distribution.probs
        after = policy.get_distribution(changed, action_masks=masks).distribution.probs
        assert torch.equal(before, after)
        assert not torch.allclose(policy.predict_values(obs), policy.predict_values(changed))
        # The actor gives the same moves from the plain observation (what the bundle plays from).
        plain = policy.get_distribution(obs[:, :OBS], action_masks=masks).distribution.probs
        assert torch.equal(before, plain)


def test_the_bundle_plays_from_the_plain_observation(trained):
    """(b) the bundle records the actor's input and the critic's state; `load_policy` plays a game with it."""
    model, folder = trained
    desc = read_description(folder)
    assert desc["policy_class"] == "PrivilegedCriticPolicy"
    assert desc["observation_size"] == OBS and desc["state_size"] == STATE
    cfg = config()
    for trusted in (False, True):
        agent = load_policy(folder, config=cfg.rules, trusted=trusted)
        assert agent.observation_size == OBS
        record = play_game([agent, make("greedy", config=cfg.rules)], seed=7, config=cfg.rules)
        assert len(record.totals) == 2
    agent = make(f"policy:{folder}", config=cfg.rules)  # as evaluate.py and the zoo name a bundle
    assert agent.observation_size == OBS
    record = play_game([make("random", config=cfg.rules), agent], seed=8, config=cfg.rules)
    assert len(record.totals) == 2
    # The weights-only load is the trained network: the same move probabilities as the model's policy.
    agent = load_policy(folder, config=cfg.rules)
    venv = build_vec_env(config(train__n_envs=2), [])
    venv.seed(2)
    obs = venv.reset()
    masks = np.stack(venv.env_method("action_masks"))
    venv.close()
    with torch.no_grad():
        expected = model.policy.get_distribution(torch.as_tensor(obs), action_masks=masks).distribution.probs
    for i in range(2):
        np.testing.assert_allclose(agent.probabilities(obs[i, :OBS], masks[i]), expected[i].numpy(), atol=1e-5)


def test_a_privileged_bundle_needs_its_state_size(trained, tmp_path):
    _, folder = trained
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in folder.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    desc = json.loads((copy / "policy.json").read_text())
    del desc["state_size"]
    (copy / "policy.json").write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match="state_size"):
        load_policy(copy)


def test_the_per_game_env_trains_with_it_too(tmp_path):
    """(b) on `TrainingEnv`s (vec_env dummy), with observation features before the state."""
    cfg = config(train__vec_env="dummy", train__n_envs=2, algo__observation_features="solver_v1", algo__n_steps=64)
    venv = build_vec_env(cfg, [])
    model = build_model(cfg, venv)
    size = venv.observation_space.shape[0] - STATE
    assert model.policy.mlp_extractor.policy_net[0].in_features == size > OBS  # the observation and its features
    model.learn(128)
    folder = save_policy_bundle(model, tmp_path / "policy", {"config": cfg.rules, "observation_features": "solver_v1"})
    venv.close()
    agent = load_policy(folder, config=cfg.rules)
    record = play_game([make("random", config=cfg.rules), agent], seed=1, config=cfg.rules)
    assert len(record.totals) == 2


@pytest.mark.slow  # train.py records the platform (a uname process)
def test_a_run_resumes_and_its_final_bundle_plays(tmp_path, capsys):
    """Through the run layer: checkpoints hold the privileged network and resume it; the final bundle (and the
    evaluation in the run) plays from the plain observation."""
    spec = importlib.util.spec_from_file_location("train_script", Path(__file__).resolve().parent.parent / "train.py")
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    data = {
        **TINY,
        "train": {**TINY["train"], "checkpoint_every": 256, "keep_checkpoints": 5},
        "league": {"enabled": True, "snapshot_every": 128, "pool_size": 2},  # its members play plain observations
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data))
    run = tmp_path / "run"
    assert train.main(["--config", str(path), "--run-dir", str(run), "--quiet"]) == 0
    assert train.main(["--resume", str(run), "--quiet", "train.total_timesteps=512"]) == 0, capsys.readouterr().err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["resumed_from"] == 256 and summary["num_timesteps"] == 512
    members = sorted((run / "league").iterdir())
    assert members and read_description(members[-1])["policy_class"] == "PrivilegedCriticPolicy"
    assert read_description(run / "final")["policy_class"] == "PrivilegedCriticPolicy"
    assert (run / "eval.csv").read_text().count("\n") >= 2  # evaluated from the bundle during the run
    rules = config().rules
    record = play_game([load_policy(run, config=rules), make("random", config=rules)], seed=3, config=rules)
    assert len(record.winners) >= 1


def test_a_privileged_critic_starts_from_a_plain_bundle_as_the_bundle_values(tmp_path):
    """`algo.init_policy` with a plain bundle: the actor plays the bundle's moves, the critic values every position
    as the bundle's critic did (its state columns start at zero), and training moves those columns."""
    from quiddler_agents.training.sb3.trainer import CRITIC_INPUT, init_weights

    torch.manual_seed(5)
    plain_cfg = config(algo__privileged_critic=False)
    venv = build_vec_env(plain_cfg, [])
    plain = build_model(plain_cfg, venv)
    with torch.no_grad():  # a critic that is not its initial one, so a copy is told from a fresh layer
        for p in plain.policy.mlp_extractor.value_net.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    source = save_policy_bundle(plain, tmp_path / "plain", {"config": plain_cfg.rules})
    venv.close()

    cfg = config()
    venv = build_vec_env(cfg, [])
    model = build_model(cfg, venv)
    assert init_weights(model, str(source)) == [f"{CRITIC_INPUT}'s state columns (zero)"]
    venv.seed(6)
    obs = torch.as_tensor(venv.reset())
    masks = np.stack(venv.env_method("action_masks"))
    assert obs.shape[1] == OBS + STATE
    changed = obs.clone()
    changed[:, OBS:] = torch.rand(changed[:, OBS:].shape) * 3  # any state: the values do not read it yet
    with torch.no_grad():
        expected = plain.policy.predict_values(obs[:, :OBS])
        torch.testing.assert_close(model.policy.predict_values(obs), expected)
        torch.testing.assert_close(model.policy.predict_values(changed), expected)
        torch.testing.assert_close(
            model.policy.get_distribution(obs, action_masks=masks).distribution.probs,
            plain.policy.get_distribution(obs[:, :OBS], action_masks=masks).distribution.probs,
        )
    layer = model.policy.mlp_extractor.value_net[0].weight
    assert torch.count_nonzero(layer[:, OBS:]) == 0
    model.learn(256)
    venv.close()
    assert torch.count_nonzero(model.policy.mlp_extractor.value_net[0].weight[:, OBS:]) > 0
