"""`algo.action_features`: a policy head that reads each move's own solver features (`policies.action_head`).

The head must read the right features for each move (checked against the feature set's own row-by-row
function), equal the plain head while its weights are zero (so a plain bundle is its exact start through
`algo.init_policy`), compute what its formula says, never read a privileged critic's state, and round-trip
through a weights-only bundle. Bad combinations are one-line config errors.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import numpy as np
import pytest
import torch

from quiddler_agents import play_game, zoo
from quiddler_agents.policies import load_policy, save_policy_bundle
from quiddler_agents.policies.action_head import GAIN, KINDS, PER_MOVE, UNITS, ActionFeaturePolicy, move_feature_index
from quiddler_agents.policies.bundle import read_description
from quiddler_agents.registry import make
from quiddler_agents.training.checks import RunConfigError
from quiddler_agents.training.config import RunConfig
from quiddler_agents.training.sb3.trainer import build_model, build_vec_env, init_weights
from quiddler_env.core import actions as A
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.observation import observation_layout
from quiddler_env.core.solver import get_solver
from quiddler_env.envs.state import state_layout
from quiddler_env.features import ObservationFeatures, feature_set

from .test_agents import random_states

OBS = observation_layout(2).size
FEATURES = feature_set("solver_v1").size
TINY = {
    "name": "tiny-head",
    "seed": 3,
    "env": {"num_players": 2, "hand_sizes": [3, 4]},
    "opponents": [{"spec": "random", "weight": 1.0}, {"spec": "greedy", "weight": 1.0}],
    "algo": {
        "n_steps": 32,
        "batch_size": 64,
        "n_epochs": 1,
        "net_arch": [16],
        "observation_features": "solver_v1",
        "action_features": True,
    },
    "train": {"total_timesteps": 256, "n_envs": 8, "vec_env": "batched", "progress_bar": False},
    "eval": {"every": 256, "games": 2, "opponents": ["random"], "at_start": False},
}
CHAMPION = {"env": {"num_players": 2}, "algo": {"observation_features": "solver_v1"}}


def config(data=TINY, **algo) -> RunConfig:
    data = json.loads(json.dumps(data))
    data.setdefault("algo", {}).update(algo)
    return RunConfig.from_mapping({"name": "x", **data})


def observations(count=200, seed=4):
    """Observations with their solver features, and masks, of random positions of a default 2-player game."""
    rules = QuiddlerConfig()
    rows = [(obs, mask) for _, obs, mask in random_states(rules, seed=seed, count=count)]
    obs = ObservationFeatures("solver_v1", rules).batch(np.stack([o for o, _ in rows]).astype(np.float32))
    return torch.as_tensor(obs), np.stack([m for _, m in rows]).astype(bool)


def test_each_move_reads_its_own_solver_features():
    index, kind = move_feature_index(OBS, A.NUM_ACTIONS)
    obs, masks = observations()
    compute = feature_set("solver_v1").compute
    solver = get_solver()  # the default rules' words
    checked = 0
    for row, mask in zip(obs.numpy(), masks, strict=True):
        own = compute(row[:OBS], 2, solver)  # the set's row-by-row function
        for a in np.flatnonzero(mask[: A.NUM_ACTIONS]):
            if a == A.DRAW_PILE:
                assert (index[a] == -1).all() and kind[a] == -1
                continue
            face = None if a == A.TAKE_DISCARD else A.discarded_face(int(a))
            start = 4 if face is None else 8 + 4 * face
            np.testing.assert_array_equal(row[index[a]], own[start : start + PER_MOVE])
            assert kind[a] == (0 if a == A.TAKE_DISCARD else 1 if a < A.GO_OUT_BASE else 2)
            checked += 1
    assert checked > 300


@pytest.fixture(scope="module")
def champion_with_head():
    """An `ActionFeaturePolicy` shaped as zoo:champion-2p, filled from its weights (the head at zero)."""
    torch.manual_seed(0)
    cfg = config(CHAMPION, net_arch={"pi": [256, 256], "vf": [256, 256]}, action_features=True)
    venv = build_vec_env(config(TINY, net_arch=[16]), [])  # only its spaces are read: the same as the run's
    model = build_model(cfg, venv)
    venv.close()
    new = init_weights(model, "zoo:champion-2p")
    return model, new


def test_with_zero_weights_the_head_is_the_plain_head_it_extends(champion_with_head):
    model, new = champion_with_head
    assert isinstance(model.policy, ActionFeaturePolicy)
    assert new == ["action_net.feature_weights.weight", "action_net.feature_weights.bias"]
    champion = load_policy(zoo.entry_path("champion-2p")).policy
    obs, masks = observations()
    with torch.no_grad():
        ours = model.policy.get_distribution(obs, action_masks=masks).distribution.probs
        theirs = champion.get_distribution(obs, action_masks=masks).distribution.probs
    torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=0)


def test_the_head_adds_each_move_features_weighed_by_the_latent(champion_with_head):
    """The head against its formula, written out move by move in plain numpy."""
    model, _ = champion_with_head
    head = model.policy.action_net
    g = torch.Generator().manual_seed(5)
    with torch.no_grad():
        head.feature_weights.weight.copy_(torch.randn(head.feature_weights.weight.shape, generator=g) * 0.01)
        head.feature_weights.bias.copy_(torch.randn(head.feature_weights.bias.shape, generator=g) * 0.1)
    try:
        obs, _ = observations(count=40)
        with torch.no_grad():
            latent = model.policy.mlp_extractor.policy_net(obs).numpy()
            logits = model.policy.action_net(model.policy.mlp_extractor.forward_actor(obs)).numpy()
        index, kind = move_feature_index(OBS, A.NUM_ACTIONS)
        W = head.feature_weights.weight.detach().numpy()
        b = head.feature_weights.bias.detach().numpy()
        plain = latent @ head.weight.detach().numpy().T + head.bias.detach().numpy()
        inputs = obs.numpy()
        for r in range(len(inputs)):
            w = (W @ latent[r] + b).reshape(KINDS, PER_MOVE)
            for a in range(A.NUM_ACTIONS):
                extra = 0.0 if kind[a] < 0 else GAIN * float(w[kind[a]] @ (inputs[r, index[a]] * np.asarray(UNITS)))
                assert logits[r, a] == pytest.approx(plain[r, a] + extra, abs=1e-4)
    finally:
        with torch.no_grad():
            head.feature_weights.weight.zero_()
            head.feature_weights.bias.zero_()


def test_the_bundle_round_trips_and_plays(tmp_path):
    torch.manual_seed(1)
    cfg = config()
    venv = build_vec_env(cfg, [])
    model = build_model(cfg, venv)
    model.learn(256)
    venv.seed(2)
    obs = venv.reset()
    masks = np.stack(venv.env_method("action_masks"))
    venv.close()
    weights = model.policy.action_net.feature_weights.weight
    assert weights.abs().sum() > 0  # PPO moved the head's own weights
    folder = save_policy_bundle(model, tmp_path / "policy", {"config": cfg.rules, "observation_features": "solver_v1"})
    desc = read_description(folder)
    assert desc["policy_class"] == "ActionFeaturePolicy" and desc["state_size"] == 0
    agent = load_policy(folder, config=cfg.rules)
    with torch.no_grad():
        expected = model.policy.get_distribution(torch.as_tensor(obs), action_masks=masks).distribution.probs
    for i in range(len(obs)):
        np.testing.assert_allclose(agent.probabilities(obs[i, :OBS], masks[i]), expected[i].numpy(), atol=1e-5)
    record = play_game(
        [make("random", config=cfg.rules), make(f"policy:{folder}", config=cfg.rules)], seed=1, config=cfg.rules
    )
    assert len(record.totals) == 2


def test_with_a_privileged_critic_the_head_never_reads_the_state():
    torch.manual_seed(2)
    cfg = config(privileged_critic=True)
    venv = build_vec_env(cfg, [])
    model = build_model(cfg, venv)
    venv.seed(3)
    obs = torch.as_tensor(venv.reset())
    masks = np.stack(venv.env_method("action_masks"))
    venv.close()
    state = state_layout(2).size
    actor = OBS + FEATURES
    assert obs.shape[1] == actor + state and model.policy.observation_size == actor
    with torch.no_grad():
        model.policy.action_net.feature_weights.weight.normal_()
    changed = obs.clone()
    changed[:, actor:] = torch.rand(changed[:, actor:].shape) * 4
    with torch.no_grad():
        before = model.policy.get_distribution(obs, action_masks=masks).distribution.probs
        after = model.policy.get_distribution(changed, action_masks=masks).distribution.probs
    assert torch.equal(before, after)


def test_bad_combinations_are_one_line_errors():
    with pytest.raises(RunConfigError, match="algo.action_features.*solver_v1 or solver_v2, got None"):
        config(observation_features=None)
    with pytest.raises(RunConfigError, match="algo.action_features"):
        RunConfig.from_mapping({"name": "x", "backend": "rllib", "algo": {"action_features": True}})
    with pytest.raises(RunConfigError, match="algo.init_policy"):
        RunConfig.from_mapping({"name": "x", "backend": "rllib", "algo": {"init_policy": "zoo:champion-2p"}})
    venv = build_vec_env(config(), [])
    model = build_model(config(), venv)
    venv.close()
    with pytest.raises(RunConfigError, match=r"algo.init_policy.*no zoo entry 'nope'"):
        init_weights(model, "zoo:nope")
    with pytest.raises(RunConfigError, match=r"algo.init_policy.*\(another net_arch, observation_features or table\)"):
        init_weights(model, "zoo:champion-2p")  # 256-wide layers into a 16-wide network
    with pytest.raises(RunConfigError, match="algo.init_policy"):
        init_weights(model, "/no/such/bundle")


@pytest.mark.slow  # train.py records the platform (a uname process)
def test_a_run_starts_from_the_bundle_it_names_and_resumes(tmp_path, capsys):
    """Through train.py: `algo.init_policy` fills the new run's network from a plain bundle (at a learning rate
    too small to move it, the final weights are the bundle's), and a resume does not load it again."""
    import importlib.util

    import yaml

    from quiddler_agents.policies.bundle import load_weights

    plain = config(action_features=False)
    torch.manual_seed(4)
    venv = build_vec_env(plain, [])
    source = save_policy_bundle(
        build_model(plain, venv), tmp_path / "source", {"config": plain.rules, "observation_features": "solver_v1"}
    )
    venv.close()
    spec = importlib.util.spec_from_file_location("train_script", Path(__file__).resolve().parent.parent / "train.py")
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    data = json.loads(json.dumps(TINY))
    data["algo"].update(init_policy=str(source), learning_rate=1e-12)
    data["train"].update(checkpoint_every=256)
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data))
    run = tmp_path / "run"
    assert train.main(["--config", str(path), "--run-dir", str(run)]) == 0
    said = capsys.readouterr().err  # the run's progress lines
    assert f"weights from {source}; new, at their initial values: action_net.feature_weights" in said
    start, final = load_weights(source / "policy.pt"), load_weights(run / "final" / "policy.pt")
    for key, value in start.items():
        torch.testing.assert_close(final[key], value, atol=1e-6, rtol=0)
    assert read_description(run / "final")["policy_class"] == "ActionFeaturePolicy"
    assert train.main(["--resume", str(run), "train.total_timesteps=512"]) == 0
    assert "weights from" not in capsys.readouterr().err


def test_last_turns_counts_the_solver_best_layout_as_greedy_keeps_it():
    """benchmarks/last_turns.py: greedy discards the card whose loss hurts its best layout least, so it keeps a
    best layout at every last turn; a random player does not."""
    figures = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks" / "last_turns.py"))[
        "last_turn_figures"
    ]
    greedy = figures("greedy", "random", games=12, seed=3)
    assert greedy["decisions"] > 20 and greedy["best"] == 1.0 and greedy["points_given_up"] == 0.0
    random = figures("random", "greedy", games=12, seed=3)
    assert random["decisions"] > 20 and random["best"] < 0.6 and random["points_given_up"] > 2.0
