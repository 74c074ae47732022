"""The bundle format of `quiddler_agents.policies.bundle`: one save per folder, kills, required checksums, bounded sizes, paths."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import quiddler_agents  # noqa: E402
from quiddler_agents.policies import (  # noqa: E402
    DESCRIPTION_FILE,
    MODEL_FILE,
    WEIGHTS_FILE,
    PolicyLoadError,
    bundle,  # noqa: E402
    bundle_dir,
    bundle_identity,
    load_policy,
    read_description,
    write_bundle,
    write_rllib_export,
)
from quiddler_agents.policies.rllib import RLlibPolicyAgent, actor_network  # noqa: E402
from quiddler_env.core import files  # noqa: E402
from quiddler_env.core.config import QuiddlerConfig  # noqa: E402
from quiddler_env.core.observation import observation_layout  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = [8]
SIZE = observation_layout(2).size


def export(folder: Path, seed: int = 0, **extra) -> Path:
    torch.manual_seed(seed)
    net = actor_network(SIZE, HIDDEN, "Tanh")
    return write_rllib_export(
        folder,
        net.state_dict(),
        observation_size=SIZE,
        hidden_layers=HIDDEN,
        activation="Tanh",
        description={"config": QuiddlerConfig(), **extra},
    )


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def edit(folder: Path, **fields) -> None:
    file = folder / DESCRIPTION_FILE
    desc = json.loads(file.read_text())
    for key, value in fields.items():
        if value is ...:
            desc.pop(key, None)
        else:
            desc[key] = value
    file.write_text(json.dumps(desc))


# -- one save per folder ----------------------------------------------------------------------------------


def fake_files(step: int, model: bool = True, extra: str | None = None):
    def write(tmp: Path) -> None:
        (tmp / WEIGHTS_FILE).write_bytes(f"weights {step}".encode())
        if model:
            (tmp / MODEL_FILE).write_bytes(f"model {step}".encode())
        if extra:
            (tmp / extra).write_text(str(step))

    return write


def description(step: int) -> dict:
    return {"format": 1, "framework": "sb3", "observation_size": SIZE, "action_size": 64, "step": step}


def test_a_second_save_replaces_the_whole_folder(tmp_path):
    folder = tmp_path / "b"
    write_bundle(folder, fake_files(1, model=True, extra="optimizer.pt"), description(1))
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [MODEL_FILE, WEIGHTS_FILE, DESCRIPTION_FILE, "optimizer.pt"]
    )
    first = json.loads((folder / DESCRIPTION_FILE).read_text())
    assert first["model_sha256"] == sha(folder / MODEL_FILE) and first["weights_sha256"] == sha(folder / WEIGHTS_FILE)
    write_bundle(folder, fake_files(2, model=False), description(2))
    assert sorted(p.name for p in folder.iterdir()) == [DESCRIPTION_FILE, WEIGHTS_FILE]  # nothing of save 1
    second = bundle.read_description(folder)
    assert second["step"] == 2 and "model_sha256" not in second
    assert (folder / WEIGHTS_FILE).read_bytes() == b"weights 2"
    assert not [p for p in tmp_path.iterdir() if p.name != "b"]  # no temporaries beside it


def test_an_rllib_export_over_an_sb3_bundle_leaves_no_model_zip(tmp_path):
    folder = tmp_path / "b"
    write_bundle(folder, fake_files(1), description(1))
    export(folder)
    assert sorted(p.name for p in folder.iterdir()) == [DESCRIPTION_FILE, WEIGHTS_FILE]
    assert isinstance(load_policy(folder, num_players=2), RLlibPolicyAgent)


def test_a_failed_save_leaves_the_old_bundle(tmp_path):
    folder = tmp_path / "b"
    write_bundle(folder, fake_files(1), description(1))
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    def broken(tmp: Path) -> None:
        (tmp / WEIGHTS_FILE).write_bytes(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_bundle(folder, broken, description(2))
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    with pytest.raises(ValueError, match=f"wrote no {WEIGHTS_FILE}"):
        write_bundle(folder, lambda tmp: None, description(3))
    with pytest.raises(ValueError, match="observation_size"):  # never writes what read_description refuses
        write_bundle(folder, fake_files(4), {**description(4), "observation_size": 10**12})
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


def test_a_save_never_replaces_a_run_folder_or_other_folder(tmp_path):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("name: x\n")
    with pytest.raises(ValueError, match="run folder"):
        write_bundle(run, fake_files(1), description(1))
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("keep me")
    with pytest.raises(ValueError, match="not a policy bundle"):
        export(other)
    assert (run / "config.yaml").is_file() and (other / "todo.txt").read_text() == "keep me"


# -- kill -9 during saves ---------------------------------------------------------------------------------

FAKE_SAVER = """
import os, sys
from pathlib import Path
from quiddler_agents.policies.bundle import write_bundle, WEIGHTS_FILE, MODEL_FILE
folder = Path(sys.argv[1])
step = 0
print("ready", flush=True)
while True:
    step += 1
    def write(tmp, step=step):
        (tmp / MODEL_FILE).write_bytes(b"model %d " % step + os.urandom(1 << 19))
        (tmp / WEIGHTS_FILE).write_bytes(b"weights %d " % step + os.urandom(1 << 18))
    write_bundle(folder, write, {"format": 1, "observation_size": 168, "action_size": 64, "step": step})
"""

SB3_SAVER = """
import sys
import torch
from pathlib import Path
from sb3_contrib import MaskablePPO
from quiddler_agents.policies import save_policy_bundle
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.envs.gym_env import QuiddlerEnv
config = QuiddlerConfig(hand_sizes=(3,))
model = MaskablePPO("MlpPolicy", QuiddlerEnv(config), n_steps=16, batch_size=16, seed=0, device="cpu",
                    policy_kwargs={"net_arch": [64, 64]})
folder = Path(sys.argv[1])
print("ready", flush=True)
step = 0
while True:
    step += 1
    model.num_timesteps = step
    with torch.no_grad():
        for p in model.policy.parameters():
            p.add_(0.01)
    save_policy_bundle(model, folder, {"config": config, "step": step})
"""


def _kill_during_saves(script: str, folder: Path, delay: float) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script, str(folder)], stdout=subprocess.PIPE, env=env, cwd=ROOT)
    try:
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(delay)
        assert proc.poll() is None, "the saver died on its own"
    finally:
        proc.kill()  # SIGKILL
        proc.wait()


def _assert_absent_or_one_save(folder: Path) -> int | None:
    """The folder is absent, or one complete bundle whose files all come from one save; returns its step."""
    if not folder.exists():
        return None
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted([MODEL_FILE, WEIGHTS_FILE, DESCRIPTION_FILE]), names
    desc = bundle.read_description(folder)
    assert sha(folder / WEIGHTS_FILE) == desc["weights_sha256"]
    assert sha(folder / MODEL_FILE) == desc["model_sha256"]
    bundle.verify_weights(folder, desc)
    return desc["step"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_kill_9_during_bundle_writes_leaves_one_complete_save(tmp_path, seed):
    folder = tmp_path / "final"
    delay = random.Random(seed).uniform(0.0, 0.6)
    _kill_during_saves(textwrap.dedent(FAKE_SAVER), folder, delay)
    step = _assert_absent_or_one_save(folder)
    if step is not None:
        assert (folder / MODEL_FILE).read_bytes().startswith(b"model %d " % step)
        assert (folder / WEIGHTS_FILE).read_bytes().startswith(b"weights %d " % step)
    # What the kill left beside the folder is a temporary, and a new save starts clean after removing it.
    assert all(files.is_temporary(p.name) for p in tmp_path.iterdir() if p != folder)
    files.remove_stale_temporaries(tmp_path)
    write_bundle(folder, fake_files(0), description(0))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_kill_9_during_sb3_saves_leaves_a_bundle_of_one_step(tmp_path, seed):
    """The reported case: model.zip of one step beside policy.pt/policy.json of another must not happen."""
    pytest.importorskip("sb3_contrib")
    import zipfile

    folder = tmp_path / "final"
    _kill_during_saves(textwrap.dedent(SB3_SAVER), folder, random.Random(100 + seed).uniform(0.2, 1.5))
    step = _assert_absent_or_one_save(folder)
    if step is not None:
        with zipfile.ZipFile(folder / MODEL_FILE) as archive:
            assert json.loads(archive.read("data"))["num_timesteps"] == step
        agent = load_policy(folder, num_players=2)
        assert agent.observation_size == SIZE


# -- required and bounded fields --------------------------------------------------------------------------


@pytest.mark.parametrize("value", [..., None, 5, "abc", "A" * 64, ["0" * 64]])
def test_weights_sha256_is_required_and_named(tmp_path, value):
    folder = export(tmp_path / "b")
    edit(folder, weights_sha256=value)
    with pytest.raises(PolicyLoadError, match="field 'weights_sha256'"):
        load_policy(folder, num_players=2)
    with pytest.raises(PolicyLoadError, match="field 'weights_sha256'"):
        quiddler_agents.make(f"policy:{folder}", num_players=2)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("observation_size", 10**12),
        ("observation_size", 0),
        ("observation_size", True),
        ("action_size", 10**9),
        ("hidden_layers", [10**9]),
        ("hidden_layers", [4] * 17),
        ("framework", "tensorflow"),
        ("model_sha256", "nope"),
    ],
)
def test_sizes_are_bounded_and_the_field_is_named(tmp_path, field, value):
    folder = export(tmp_path / "b")
    edit(folder, **{field: value})
    with pytest.raises(PolicyLoadError, match=f"field '{field}'") as info:
        load_policy(folder)  # no MemoryError: nothing is built from an unchecked size
    assert str(folder / DESCRIPTION_FILE) in str(info.value)


def test_a_fifo_description_does_not_hang(tmp_path):
    folder = export(tmp_path / "b")
    (folder / DESCRIPTION_FILE).unlink()
    os.mkfifo(folder / DESCRIPTION_FILE)
    with pytest.raises(PolicyLoadError, match="not a regular file"):
        load_policy(folder)


def test_weights_from_another_save_are_refused(tmp_path):
    a, b = export(tmp_path / "a", seed=1), export(tmp_path / "b", seed=2)
    (a / WEIGHTS_FILE).write_bytes((b / WEIGHTS_FILE).read_bytes())
    with pytest.raises(PolicyLoadError, match="does not match the sha256"):
        load_policy(a)


# -- paths ------------------------------------------------------------------------------------------------


def test_a_run_folder_means_its_final_bundle(tmp_path):
    run = tmp_path / "runs" / "x"
    export(run / "final", step=7)
    (run / "config.yaml").write_text("name: x\n")
    assert bundle_dir(run) == run / "final"
    assert bundle_dir(run / MODEL_FILE) == run / "final"  # the old `policy:runs/x/model.zip`
    assert bundle_dir(run / "final" / WEIGHTS_FILE) == run / "final"
    assert bundle_dir(run / "final") == run / "final"
    for spec in (f"policy:{run}", f"policy:{run / MODEL_FILE}", f"policy:{run / 'final'}"):
        assert isinstance(quiddler_agents.make(spec, num_players=2), RLlibPolicyAgent)
    assert read_description(run)["step"] == 7
    identity = bundle_identity(f"{run}/model.zip")
    assert identity == {
        "path": str((run / "final").resolve()),
        "framework": "rllib",
        "weights_sha256": sha(run / "final" / WEIGHTS_FILE),
    }
    (run / "final" / WEIGHTS_FILE).write_bytes(b"changed")
    with pytest.raises(PolicyLoadError, match="does not match the sha256"):
        bundle_identity(run)


def test_an_unfinished_run_folder_is_named(tmp_path):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "config.yaml").write_text("name: x\n")
    with pytest.raises(PolicyLoadError, match="run folder without a final/ bundle"):
        load_policy(run)


# -- the package's structure ------------------------------------------------------------------------------


def _imports(module: Path) -> set[str]:
    """Modules a file imports at its top level (relative imports resolved inside quiddler_agents.policies)."""
    out = set()
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level == 1:
                base = f"quiddler_agents.policies.{base}" if base else "quiddler_agents.policies"
                out |= {f"{base}.{a.name}" if not node.module else base for a in node.names}
            elif node.level == 2:
                out.add(f"quiddler_agents.{base}")
            else:
                out.add(base)
    return out


def test_bundle_is_neutral_and_the_loaders_never_import_each_other():
    folder = ROOT / "agents" / "policies"
    heavy = {"torch", "ray", "sb3_contrib", "stable_baselines3"}
    bundle_imports = _imports(folder / "bundle.py")
    assert not {m.split(".")[0] for m in bundle_imports} & heavy
    assert not {m for m in bundle_imports if m.startswith("quiddler_agents.")}
    sb3_imports, rllib_imports = _imports(folder / "sb3.py"), _imports(folder / "rllib.py")
    assert "quiddler_agents.policies.rllib" not in sb3_imports and "quiddler_agents.policies.sb3" not in rllib_imports
    assert not {m.split(".")[0] for m in sb3_imports | rllib_imports} & heavy  # imported lazily, inside functions
    assert not (ROOT / "agents" / "policy.py").exists() and not (ROOT / "agents" / "rllib_policy.py").exists()
