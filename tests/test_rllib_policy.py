"""The RLlib export format and its loader (no Ray needed: an export is a plain actor MLP + JSON)."""

from __future__ import annotations

import hashlib
import json
import pickle

import numpy as np
import pytest
import torch

import quiddler_agents
from quiddler_agents.arena import play_game
from quiddler_agents.policies import PolicyLoadError, load_policy
from quiddler_agents.policies.rllib import (
    RLlibPolicyAgent,
    actor_network,
    is_rllib_export,
    load_rllib_policy,
    read_rllib_description,
    write_rllib_export,
)
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.observation import encode_observation, observation_layout

HIDDEN = [16, 8]


def _export(folder, num_players=2, seed=0, activation="Tanh"):
    torch.manual_seed(seed)  # only the test's network init; the agents never touch torch's generator
    size = observation_layout(num_players).size
    net = actor_network(size, HIDDEN, activation)
    write_rllib_export(
        folder,
        net.state_dict(),
        observation_size=size,
        hidden_layers=HIDDEN,
        activation=activation,
        description={"config": QuiddlerConfig(num_players=num_players), "step": 123},
    )
    return net


def _states(num_players=2, n=40, seed=0):
    """Observation/mask pairs from random legal play."""
    rng = np.random.default_rng(seed)
    game = QuiddlerGame(QuiddlerConfig(num_players=num_players))
    game.reset(seed)
    out = []
    while len(out) < n:
        if game.is_over:
            game.reset(int(rng.integers(1 << 30)))
        p = game.current_player
        mask = game.legal_action_mask()
        out.append((encode_observation(game, p), mask.copy()))
        game.step(int(rng.choice(np.flatnonzero(mask))))
    return out


def test_export_files_and_description(tmp_path):
    _export(tmp_path / "pol")
    assert sorted(p.name for p in (tmp_path / "pol").iterdir()) == ["policy.json", "policy.pt"]
    desc = read_rllib_description(tmp_path / "pol")
    assert desc["framework"] == "rllib" and desc["hidden_layers"] == HIDDEN and desc["activation"] == "Tanh"
    assert desc["observation_size"] == observation_layout(2).size and desc["action_size"] == 64
    assert desc["config"]["num_players"] == 2 and desc["step"] == 123
    assert is_rllib_export(tmp_path / "pol") and is_rllib_export(tmp_path / "pol" / "policy.json")
    assert not is_rllib_export(tmp_path / "missing")


def test_loaded_agent_is_the_masked_argmax_of_the_network(tmp_path):
    net = _export(tmp_path / "pol")
    agent = quiddler_agents.make(f"policy:{tmp_path / 'pol'}", seed=0, num_players=2)
    assert isinstance(agent, RLlibPolicyAgent)
    for obs, mask in _states():
        with torch.no_grad():
            logits = net(torch.as_tensor(obs).reshape(1, -1))[0].numpy()
        expected = int(np.argmax(np.where(mask > 0, logits, -np.inf)))
        assert agent.act(obs, mask) == expected
        probs = agent.probabilities(obs, mask)
        assert probs[mask == 0].sum() == 0 and abs(probs.sum() - 1) < 1e-9
        assert int(np.argmax(probs)) == expected


def test_sampling_is_seeded_and_legal(tmp_path):
    _export(tmp_path / "pol")
    spec = f"policy:{tmp_path / 'pol'}:deterministic=false"
    a, b = quiddler_agents.make(spec, seed=7, num_players=2), quiddler_agents.make(spec, seed=7, num_players=2)
    states = _states(n=60, seed=3)
    acts_a = [a.act(o, m) for o, m in states]
    assert acts_a == [b.act(o, m) for o, m in states]
    assert all(m[x] for x, (_, m) in zip(acts_a, states, strict=True))
    torch.manual_seed(999)  # torch's global generator plays no part
    c = quiddler_agents.make(spec, seed=7, num_players=2)
    assert [c.act(o, m) for o, m in states] == acts_a


def test_plays_whole_games_against_greedy(tmp_path):
    _export(tmp_path / "pol", num_players=3)
    table = [
        quiddler_agents.make(f"policy:{tmp_path / 'pol'}", seed=0, num_players=3),
        quiddler_agents.make("greedy", seed=1, num_players=3),
        quiddler_agents.make("random", seed=2, num_players=3),
    ]
    record = play_game(table, seed=5)
    assert len(record.totals) == 3 and record.decisions > 0


def test_size_mismatch_names_both_sizes(tmp_path):
    _export(tmp_path / "pol", num_players=2)
    with pytest.raises(PolicyLoadError, match=rf"{observation_layout(2).size}.*{observation_layout(3).size}"):
        load_policy(tmp_path / "pol", num_players=3)


def test_tampered_weights_are_refused(tmp_path):
    _export(tmp_path / "pol")
    other = actor_network(observation_layout(2).size, HIDDEN, "Tanh")
    torch.save(other.state_dict(), tmp_path / "pol" / "policy.pt")
    with pytest.raises(PolicyLoadError, match="sha256"):
        load_rllib_policy(tmp_path / "pol")


def test_malicious_pickle_is_never_executed(tmp_path):
    _export(tmp_path / "pol")
    marker = tmp_path / "pwned"

    class Boom:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    weights = tmp_path / "pol" / "policy.pt"
    weights.write_bytes(pickle.dumps({"x": Boom()}, protocol=2))
    desc = json.loads((tmp_path / "pol" / "policy.json").read_text())
    desc["weights_sha256"] = hashlib.sha256(weights.read_bytes()).hexdigest()
    (tmp_path / "pol" / "policy.json").write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match="policy.pt"):
        quiddler_agents.make(f"policy:{tmp_path / 'pol'}", trusted=True, num_players=2)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("activation", "Hardtanh", "activation"),
        ("hidden_layers", [16, -1], "hidden_layers"),
        ("policy_class", "MaskableActorCriticPolicy", "policy_class"),
        ("format", 99, "format"),
    ],
)
def test_bad_descriptions_name_the_field(tmp_path, field, value, message):
    _export(tmp_path / "pol")
    file = tmp_path / "pol" / "policy.json"
    desc = json.loads(file.read_text())
    desc[field] = value
    file.write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match=message):
        load_rllib_policy(tmp_path / "pol")


def test_a_description_without_the_rllib_framework_goes_to_the_sb3_loader(tmp_path):
    _export(tmp_path / "pol")
    file = tmp_path / "pol" / "policy.json"
    desc = json.loads(file.read_text())
    del desc["framework"]
    file.write_text(json.dumps(desc))
    assert not is_rllib_export(tmp_path / "pol")
    with pytest.raises(PolicyLoadError, match="net_arch"):  # the SB3 bundle reader's complaint
        load_policy(tmp_path / "pol")


def test_weights_that_do_not_fit_the_description(tmp_path):
    with pytest.raises(ValueError, match="do not fit"):
        write_rllib_export(
            tmp_path / "pol",
            actor_network(observation_layout(2).size, [4], "Tanh").state_dict(),
            observation_size=observation_layout(2).size,
            hidden_layers=HIDDEN,
            activation="Tanh",
        )
    assert not (tmp_path / "pol" / "policy.json").exists()


def test_missing_folder_and_missing_weights(tmp_path):
    with pytest.raises(PolicyLoadError, match="does not exist"):
        load_policy(tmp_path / "nowhere")
    _export(tmp_path / "pol")
    (tmp_path / "pol" / "policy.pt").unlink()
    with pytest.raises(PolicyLoadError, match="policy.pt"):
        load_policy(tmp_path / "pol")


def test_read_description_and_evaluate_table_size_understand_exports(tmp_path):
    from quiddler_agents.evaluation.tournament import policy_table_size
    from quiddler_agents.policies import read_description

    _export(tmp_path / "pol", num_players=3)
    desc = read_description(tmp_path / "pol")
    assert desc["framework"] == "rllib" and desc["observation_size"] == observation_layout(3).size
    assert policy_table_size([f"policy:{tmp_path / 'pol'}", "greedy", "random", "random"]) == 3
