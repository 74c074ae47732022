"""The env version (`quiddler_env.envs.versions`): the rule that bumps it, the envs' metadata, and the bundles,
results and runs that record it."""

from __future__ import annotations

import importlib.util
import json
import re
import warnings
from pathlib import Path

import gymnasium
import pytest

import quiddler_env
from quiddler_env.core import actions as A
from quiddler_env.core import observation as observation_module
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.envs import common, versions
from quiddler_env.envs.versions import (
    ENV_FINGERPRINT,
    ENV_VERSION,
    ENV_VERSIONS,
    EnvVersionWarning,
    env_fingerprint,
    env_version_mismatch,
    env_version_of_package,
)

ROOT = Path(__file__).resolve().parents[1]


# -- the rule ---------------------------------------------------------------------------------------------------


def test_the_declared_observation_actions_and_rewards_match_the_env_version():
    assert env_fingerprint() == ENV_FINGERPRINT, (
        f"the observation layout, the action table, the reward modes or the env options changed "
        f"(fingerprint {env_fingerprint()}, stored {ENV_FINGERPRINT} for env version {ENV_VERSION}): bump ENV_VERSION "
        f"and add a row to ENV_VERSIONS in quiddler_env/envs/versions.py, then store the new ENV_FINGERPRINT"
    )


def test_a_larger_action_table_changes_the_fingerprint(monkeypatch):
    before = env_fingerprint()
    monkeypatch.setattr(A, "NUM_CHALLENGE_ACTIONS", A.NUM_CHALLENGE_ACTIONS + 1)
    assert A.num_actions("auto", True) == 159
    assert env_fingerprint() != before


def test_another_reward_scale_or_mode_changes_the_fingerprint(monkeypatch):
    before = env_fingerprint()
    monkeypatch.setattr(common, "DEFAULT_REWARD_SCALE", {**common.DEFAULT_REWARD_SCALE, "win_loss": 2.0})
    scaled = env_fingerprint()
    assert scaled != before
    monkeypatch.setattr(common, "REWARD_MODES", (*common.REWARD_MODES, "rank"))
    assert env_fingerprint() not in (before, scaled)


def test_another_observation_slice_changes_the_fingerprint(monkeypatch):
    before = env_fingerprint()
    real = observation_module.observation_layout

    def renamed(num_players, challenges=False):
        layout = real(num_players, challenges)
        slices = {("turns" if name == "turns_this_round" else name): s for name, s in layout.slices.items()}
        return type(layout)(layout.num_players, slices, layout.size, layout.challenges)

    monkeypatch.setattr(observation_module, "observation_layout", renamed)
    assert env_fingerprint() != before


def test_the_history_counts_up_to_the_env_version_and_cites_the_changelog():
    assert [row.version for row in ENV_VERSIONS] == list(range(1, ENV_VERSION + 1))
    assert quiddler_env.ENV_VERSION == ENV_VERSION == ENV_VERSIONS[-1].version
    headings = set(re.findall(r"^## \[([^\]]+)\]", (ROOT / "CHANGELOG.md").read_text(), re.M))
    assert {row.package for row in ENV_VERSIONS} <= headings
    assert env_version_of_package("0.1.0") == 1 and env_version_of_package("0.5.0") == 2
    assert env_version_of_package("0.8.12") == 4 and env_version_of_package("not a version") is None


# -- the envs ---------------------------------------------------------------------------------------------------


def test_every_quiddler_env_carries_the_env_version_in_its_metadata():
    from quiddler_env.envs.selfplay import SelfPlayEnv

    aec = quiddler_env.env()
    assert aec.metadata["env_version"] == ENV_VERSION
    assert quiddler_env.raw_env.metadata["env_version"] == ENV_VERSION
    gym_env = gymnasium.make("Quiddler-v0")
    assert gym_env.metadata["env_version"] == ENV_VERSION
    vector = gymnasium.make_vec("Quiddler-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert vector.metadata["env_version"] == ENV_VERSION
    assert SelfPlayEnv.metadata["env_version"] == ENV_VERSION
    for env in (aec, gym_env, vector):
        env.close()


# -- bundles ----------------------------------------------------------------------------------------------------


def _export(folder: Path) -> Path:
    torch = pytest.importorskip("torch")
    from quiddler_agents.policies import write_rllib_export
    from quiddler_agents.policies.rllib import actor_network

    size = observation_module.observation_layout(2).size
    torch.manual_seed(0)
    net = actor_network(size, [8], "Tanh")
    return write_rllib_export(
        folder,
        net.state_dict(),
        observation_size=size,
        hidden_layers=[8],
        activation="Tanh",
        description={"config": QuiddlerConfig()},
    )


def _edit_description(folder: Path, **fields) -> None:
    file = folder / "policy.json"
    desc = json.loads(file.read_text())
    for key, value in fields.items():
        if value is None:
            desc.pop(key, None)
        else:
            desc[key] = value
    file.write_text(json.dumps(desc))


def test_a_saved_bundle_records_the_env_version_and_loads_without_a_warning(tmp_path):
    folder = _export(tmp_path / "b")
    from quiddler_agents.policies import load_policy, read_description

    assert read_description(folder)["env_version"] == ENV_VERSION
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_policy(folder, num_players=2)


def test_a_bundle_of_another_env_version_loads_with_a_one_line_warning(tmp_path):
    folder = _export(tmp_path / "b")
    from quiddler_agents.policies import load_policy

    _edit_description(folder, env_version=ENV_VERSION - 1)
    with pytest.warns(EnvVersionWarning) as caught:
        agent = load_policy(folder, num_players=2)
    assert agent is not None  # a warning, not a refusal
    (w,) = caught
    message = str(w.message)
    assert "\n" not in message
    # As Python prints it on stderr: one line, no source line under it.
    shown = warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
    assert shown.count("\n") == 1 and shown.endswith(f"EnvVersionWarning: {message}\n")
    assert message == (
        f"policy {folder}: made for env version {ENV_VERSION - 1}, this is env version {ENV_VERSION} "
        f"(see docs/observations.md#versions); its observations may differ"
    )


def test_a_bundle_without_env_version_counts_as_its_package_versions_env_version(tmp_path):
    folder = _export(tmp_path / "b")
    from quiddler_agents.policies import load_policy

    _edit_description(folder, env_version=None, quiddler_env_version="0.7.0")
    with pytest.warns(
        EnvVersionWarning, match=r"made for env version 4 \(no env_version; quiddler_env_version 0.7.0\)"
    ):
        load_policy(folder, num_players=2)
    # Without a package version either: the last version before versions were recorded.
    assert versions.recorded_env_version({}) == (versions.FIRST_RECORDED_VERSION - 1, " (no env_version)")
    assert env_version_mismatch({}, "x").startswith("policy x: made for env version 4 (no env_version), this is")
    assert env_version_mismatch({"env_version": ENV_VERSION}, "x") is None


@pytest.mark.parametrize("entry", ["champion-2p", "table-4p"])
def test_the_zoo_bundles_record_the_env_version_they_were_trained_on(entry):
    desc = json.loads((ROOT / "agents" / "zoo" / entry / "policy.json").read_text())
    # Both were trained before the last change (turns_this_round capped at 1), so loading them warns.
    assert desc["env_version"] == env_version_of_package(desc["quiddler_env_version"]) == 4
    assert "made for env version 4" in env_version_mismatch(desc, f"zoo:{entry}")


def test_a_zoo_entry_trained_on_this_env_version_loads_without_a_warning():
    from quiddler_agents.policies import load_policy

    entry = ROOT / "agents" / "zoo" / "challenger-2p"
    desc = json.loads((entry / "policy.json").read_text())
    assert desc["env_version"] == ENV_VERSION and env_version_mismatch(desc, "zoo:challenger-2p") is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", EnvVersionWarning)
        load_policy(entry, num_players=2)


# -- results and runs -------------------------------------------------------------------------------------------


def test_results_and_runs_record_the_env_version(tmp_path):
    from quiddler_agents.evaluation.report import results_document
    from quiddler_agents.evaluation.summary import summarize
    from quiddler_agents.evaluation.tournament import Tournament, run_tournament
    from quiddler_agents.training.runfiles import run_metadata

    t = Tournament(("greedy", "random"), games=1, seed=2, duplicate=False, rules=QuiddlerConfig(hand_sizes=(3,)))
    played = run_tournament(t)
    document = results_document(t, summarize(t, played), {"workers": 1})
    assert document["env_version"] == ENV_VERSION
    assert run_metadata(["train.py"], "enable")["env_version"] == ENV_VERSION


# -- docs -------------------------------------------------------------------------------------------------------


def test_the_docs_list_every_env_version_from_the_declaration():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    table = hooks.on_page_markdown("<!-- table:env-versions -->", None, None, None).splitlines()
    assert [int(line.split("|")[1]) for line in table[2:]] == [row.version for row in reversed(ENV_VERSIONS)]
    page = (ROOT / "docs" / "observations.md").read_text()
    assert "## Versions" in page and "<!-- table:env-versions -->" in page
