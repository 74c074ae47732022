"""Trained policies: the saved bundle, the safe (weights-only) load, trusted loads, and refusals."""

from __future__ import annotations

import base64
import json
import pickle
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")

import quiddler_agents  # noqa: E402
from quiddler_agents.policies import (  # noqa: E402
    DESCRIPTION_FILE,
    MODEL_FILE,
    WEIGHTS_FILE,
    PolicyLoadError,
    load_policy,
    read_description,
    save_policy_bundle,
)
from quiddler_env.core.config import QuiddlerConfig  # noqa: E402
from quiddler_env.core.observation import observation_layout  # noqa: E402
from quiddler_env.envs.gym_env import QuiddlerEnv  # noqa: E402
from tests.test_agents import random_states  # noqa: E402

CONFIG = QuiddlerConfig(hand_sizes=(3, 4))

SIZE2, SIZE3 = observation_layout(2).size, observation_layout(3).size  # the observation of 2 and 3 players


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny real MaskablePPO model trained a few steps on Quiddler-v0, and its bundle."""
    torch.manual_seed(0)
    env = QuiddlerEnv(CONFIG)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=32,
        batch_size=16,
        n_epochs=1,
        policy_kwargs={"net_arch": {"pi": [16], "vf": [8]}, "activation_fn": torch.nn.ReLU},
        seed=0,
        device="cpu",
    )
    model.learn(64)
    folder = tmp_path_factory.mktemp("bundle") / "run"
    written = save_policy_bundle(model, folder, {"config": CONFIG, "total_timesteps": 64})
    return model, written


def copy_bundle(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def states(n=40):
    return [(o, m) for _, o, m in random_states(CONFIG, seed=4, count=n, stride=1)]


def test_bundle_files_and_description(trained):
    model, folder = trained
    assert sorted(p.name for p in folder.iterdir()) == sorted([MODEL_FILE, WEIGHTS_FILE, DESCRIPTION_FILE])
    desc = json.loads((folder / DESCRIPTION_FILE).read_text())
    assert desc["observation_size"] == observation_layout(2).size and desc["action_size"] == 64
    assert desc["net_arch"] == {"pi": [16], "vf": [8]} and desc["activation"] == "ReLU"
    assert desc["policy_class"] == "MaskableActorCriticPolicy" and desc["format"] == 1
    assert desc["config"] == CONFIG.to_dict() and desc["total_timesteps"] == 64
    assert desc["quiddler_env_version"] and len(desc["weights_sha256"]) == 64
    weights = torch.load(folder / WEIGHTS_FILE, weights_only=True)
    assert set(weights) == set(model.policy.state_dict())
    assert not list(folder.glob("*.tmp")) and not list(folder.glob(".*"))  # atomic writes left nothing behind


def test_safe_load_reproduces_the_trained_policy(trained):
    model, folder = trained
    agent = load_policy(folder, num_players=2)
    trusted = load_policy(folder / MODEL_FILE, num_players=2, trusted=True)
    for obs, mask in states():
        expected, _ = model.predict(obs, action_masks=mask.astype(bool), deterministic=True)
        assert agent.act(obs, mask) == int(expected) == trusted.act(obs, mask)
        assert mask[agent.act(obs, mask)] == 1
        np.testing.assert_allclose(agent.probabilities(obs, mask), trusted.probabilities(obs, mask), atol=1e-6)


def test_registry_policy_spec_deterministic_and_sampled(trained):
    _, folder = trained
    greedy_policy = quiddler_agents.make(f"policy:{folder}", seed=0, num_players=2)
    assert greedy_policy.deterministic
    sampled = [quiddler_agents.make(f"policy:{folder}:deterministic=false", seed=s, num_players=2) for s in (5, 5, 6)]
    assert not sampled[0].deterministic
    runs = [[bot.act(o, m) for o, m in states(200)] for bot in sampled]
    assert runs[0] == runs[1] and runs[0] != runs[2]  # seeded sampling, from the agent's own generator
    for (_, m), a in zip(states(200), runs[2], strict=True):
        assert m[a] == 1
    record = quiddler_agents.play_game([greedy_policy, quiddler_agents.make("random", seed=1)], seed=3, config=CONFIG)
    assert record.decisions > 0


def test_size_mismatch_names_both_sizes(trained):
    _, folder = trained
    with pytest.raises(
        PolicyLoadError, match=rf"observations of size {SIZE2}, but the env's observation size is {SIZE3}"
    ):
        load_policy(folder, num_players=3)
    with pytest.raises(PolicyLoadError, match=rf"size {SIZE2}, but the env's observation size is {SIZE3}"):
        load_policy(folder, num_players=3, trusted=True)
    with pytest.raises(PolicyLoadError, match=rf"size {SIZE2}, but the env's observation size is 10"):
        load_policy(folder, observation_size=10)


def test_action_size_mismatch(trained, tmp_path):
    folder = copy_bundle(trained[1], tmp_path / "b")
    desc = json.loads((folder / DESCRIPTION_FILE).read_text())
    desc["action_size"] = 65
    (folder / DESCRIPTION_FILE).write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match="65 actions, but the env's action size is 64"):
        load_policy(folder, num_players=2)


@pytest.mark.parametrize("missing", [WEIGHTS_FILE, DESCRIPTION_FILE])
def test_missing_file_is_named(trained, tmp_path, missing):
    folder = copy_bundle(trained[1], tmp_path / "b")
    (folder / missing).unlink()
    with pytest.raises(PolicyLoadError, match=rf"{folder / missing}.* missing|missing.*{missing}"):
        load_policy(folder, num_players=2)


def test_missing_bundle_and_model_are_named(trained, tmp_path):
    with pytest.raises(PolicyLoadError, match="does not exist"):
        load_policy(tmp_path / "nowhere")
    folder = copy_bundle(trained[1], tmp_path / "b")
    (folder / MODEL_FILE).unlink()
    with pytest.raises(PolicyLoadError, match=f"model file {folder / MODEL_FILE} is missing"):
        load_policy(folder, trusted=True)
    assert load_policy(folder, num_players=2).observation_size == SIZE2  # the safe load never needs model.zip


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"format": 1}', "field 'observation_size' must be a positive integer"),
    ],
)
def test_corrupt_description_is_named(trained, tmp_path, content, message):
    folder = copy_bundle(trained[1], tmp_path / "b")
    (folder / DESCRIPTION_FILE).write_text(content)
    with pytest.raises(PolicyLoadError, match=message) as info:
        load_policy(folder)
    assert str(folder / DESCRIPTION_FILE) in str(info.value)


@pytest.mark.parametrize("field", ["activation", "policy_class", "features_extractor"])
def test_description_names_only_known_classes(trained, tmp_path, field):
    folder = copy_bundle(trained[1], tmp_path / "b")
    desc = json.loads((folder / DESCRIPTION_FILE).read_text())
    desc[field] = "os.system"
    (folder / DESCRIPTION_FILE).write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match=f"field '{field}'"):
        read_description(folder)


def test_corrupt_weights_are_named(trained, tmp_path):
    folder = copy_bundle(trained[1], tmp_path / "b")
    data = (folder / WEIGHTS_FILE).read_bytes()
    (folder / WEIGHTS_FILE).write_bytes(data[: len(data) // 2])
    with pytest.raises(PolicyLoadError, match=f"{folder / WEIGHTS_FILE} does not match the sha256"):
        load_policy(folder)
    desc = json.loads((folder / DESCRIPTION_FILE).read_text())
    desc["weights_sha256"] = _sha256(folder / WEIGHTS_FILE)  # with a matching checksum it still fails, by name
    (folder / DESCRIPTION_FILE).write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match=f"{folder / WEIGHTS_FILE} are unreadable or corrupt"):
        load_policy(folder)


def test_weights_for_another_network_are_refused(trained, tmp_path):
    folder = copy_bundle(trained[1], tmp_path / "b")
    desc = json.loads((folder / DESCRIPTION_FILE).read_text())
    desc["net_arch"] = {"pi": [32], "vf": [8]}
    (folder / DESCRIPTION_FILE).write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match="do not fit the network"):
        load_policy(folder)


class Payload:
    """Unpickling this opens (creates) a marker file: proof that code from the file ran."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_malicious_weights_are_not_unpickled(trained, tmp_path):
    folder = copy_bundle(trained[1], tmp_path / "b")
    marker = tmp_path / "pwned"
    state = dict(torch.load(folder / WEIGHTS_FILE, weights_only=True))
    state["evil"] = Payload(marker)
    torch.save(state, folder / WEIGHTS_FILE)
    desc = json.loads((folder / DESCRIPTION_FILE).read_text())
    desc["weights_sha256"] = _sha256(folder / WEIGHTS_FILE)  # an attacker controls the JSON too
    (folder / DESCRIPTION_FILE).write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match="refusing to unpickle") as info:
        load_policy(folder, num_players=2)
    assert str(folder / WEIGHTS_FILE) in str(info.value)
    assert not marker.exists()
    # The file really is malicious: a plain unpickling load runs its code.
    torch.load(folder / WEIGHTS_FILE, weights_only=False)
    assert marker.exists()


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_plain_pickle_weights_are_refused(trained, tmp_path):
    folder = copy_bundle(trained[1], tmp_path / "b")
    marker = tmp_path / "pwned"
    (folder / WEIGHTS_FILE).write_bytes(pickle.dumps(Payload(marker)))
    desc = json.loads((folder / DESCRIPTION_FILE).read_text())
    desc["weights_sha256"] = _sha256(folder / WEIGHTS_FILE)
    (folder / DESCRIPTION_FILE).write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match=str(folder / WEIGHTS_FILE)):
        load_policy(folder)
    assert not marker.exists()


def test_malicious_model_zip_is_never_opened_by_default(trained, tmp_path):
    folder = copy_bundle(trained[1], tmp_path / "b")
    marker = tmp_path / "pwned"
    blob = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    with zipfile.ZipFile(folder / MODEL_FILE, "w") as archive:  # SB3 unpickles ":serialized:" entries of "data"
        archive.writestr("data", json.dumps({"policy_class": {":type:": "<class>", ":serialized:": blob}}))
    desc = json.loads((folder / DESCRIPTION_FILE).read_text())
    desc["model_sha256"] = _sha256(folder / MODEL_FILE)  # an attacker controls the JSON too
    (folder / DESCRIPTION_FILE).write_text(json.dumps(desc))
    agent = load_policy(folder, num_players=2)
    obs, mask = states(1)[0]
    assert mask[agent.act(obs, mask)] == 1
    assert not marker.exists()


def test_save_refuses_what_it_cannot_describe(trained):
    model, _ = trained

    class Other:
        policy = object()

    with pytest.raises(ValueError, match="MaskableActorCriticPolicy"):
        save_policy_bundle(Other(), "unused")
    assert model.policy is not None


def test_bundle_records_both_checksums_and_its_framework(trained):
    _, folder = trained
    desc = json.loads((folder / DESCRIPTION_FILE).read_text())
    assert desc["framework"] == "sb3"
    assert desc["weights_sha256"] == _sha256(folder / WEIGHTS_FILE)
    assert desc["model_sha256"] == _sha256(folder / MODEL_FILE)
    from quiddler_agents.policies import bundle_identity

    assert bundle_identity(folder / MODEL_FILE) == {
        "path": str(folder.resolve()),
        "framework": "sb3",
        "weights_sha256": desc["weights_sha256"],
        "model_sha256": desc["model_sha256"],
    }


def _save_at(model, folder, steps: int) -> Path:
    """The fixture's model saved as if at `steps` timesteps (model.zip records them), then restored."""
    old = model.num_timesteps
    model.num_timesteps = steps
    try:
        return save_policy_bundle(model, folder, {"config": CONFIG, "total_timesteps": steps})
    finally:
        model.num_timesteps = old


def test_a_bundle_mixing_two_saves_is_refused(trained, tmp_path):
    """The reported case: model.zip of one save beside policy.pt/policy.json of another was played silently."""
    model, folder = trained
    other = _save_at(model, tmp_path / "other", 128)
    mixed = copy_bundle(folder, tmp_path / "mixed")
    shutil.copyfile(other / MODEL_FILE, mixed / MODEL_FILE)
    for trusted in (False, True):
        with pytest.raises(PolicyLoadError, match=f"{mixed / MODEL_FILE} does not match the sha256"):
            load_policy(mixed, num_players=2, trusted=trusted)


def test_saving_twice_keeps_only_the_second_save(trained, tmp_path):
    model, _ = trained
    folder = tmp_path / "b"
    _save_at(model, folder, 1)
    first = _sha256(folder / MODEL_FILE)
    _save_at(model, folder / MODEL_FILE, 2)  # a file path: its folder
    desc = read_description(folder)
    assert desc["total_timesteps"] == 2 and desc["model_sha256"] == _sha256(folder / MODEL_FILE) != first
    assert sorted(p.name for p in folder.iterdir()) == sorted([MODEL_FILE, WEIGHTS_FILE, DESCRIPTION_FILE])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


@pytest.mark.parametrize("value", [..., None, 12, "f" * 63])
def test_sb3_weights_sha256_is_required(trained, tmp_path, value):
    folder = copy_bundle(trained[1], tmp_path / "b")
    desc = json.loads((folder / DESCRIPTION_FILE).read_text())
    if value is ...:
        del desc["weights_sha256"]
    else:
        desc["weights_sha256"] = value
    (folder / DESCRIPTION_FILE).write_text(json.dumps(desc))
    for trusted in (False, True):
        with pytest.raises(PolicyLoadError, match="field 'weights_sha256'"):
            load_policy(folder, num_players=2, trusted=trusted)


@pytest.mark.parametrize(
    ("field", "value"),
    [("observation_size", 10**12), ("net_arch", {"pi": [10**9], "vf": [8]}), ("net_arch", [8] * 17)],
)
def test_sb3_sizes_are_bounded(trained, tmp_path, field, value):
    folder = copy_bundle(trained[1], tmp_path / "b")
    desc = json.loads((folder / DESCRIPTION_FILE).read_text())
    desc[field] = value
    (folder / DESCRIPTION_FILE).write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match=f"field '{field}'"):
        load_policy(folder)


def test_sb3_loader_alone_refuses_an_rllib_export(tmp_path):
    from quiddler_agents.policies import sb3, write_rllib_export
    from quiddler_agents.policies.rllib import actor_network

    size = observation_layout(2).size
    write_rllib_export(
        tmp_path / "r",
        actor_network(size, [4], "Tanh").state_dict(),
        observation_size=size,
        hidden_layers=[4],
        activation="Tanh",
    )
    with pytest.raises(PolicyLoadError, match="rllib export, not an SB3 bundle"):
        sb3.load_policy(tmp_path / "r")
