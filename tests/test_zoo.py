"""The shipped policies (`zoo:NAME`): what an entry holds, how it is shipped and loaded, and that the ones in
the package play legal moves from their bundles alone (weights only)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

torch = pytest.importorskip("torch")

import quiddler_agents  # noqa: E402
from quiddler_agents import zoo  # noqa: E402
from quiddler_agents.policies import write_rllib_export  # noqa: E402
from quiddler_agents.policies.rllib import actor_network  # noqa: E402
from quiddler_env.core.config import QuiddlerConfig  # noqa: E402
from quiddler_env.core.observation import observation_layout  # noqa: E402

from .test_agents import random_states  # noqa: E402


def fake_run(folder: Path) -> Path:
    """A finished run folder as `train.py` leaves one (a small weights-only bundle in `final/`)."""
    size = observation_layout(2).size
    torch.manual_seed(0)
    net = actor_network(size, [8], "Tanh")
    write_rllib_export(
        folder / "final", net.state_dict(), observation_size=size, hidden_layers=[8], activation="Tanh",
        description={"config": QuiddlerConfig()},
    )  # fmt: skip
    (folder / "config.yaml").write_text(yaml.safe_dump({"name": "tiny", "seed": 0}), encoding="utf-8")
    (folder / "eval.csv").write_text("step,opponent,win_rate\n0,greedy,0.1\n", encoding="utf-8")
    (folder / "run.json").write_text('{"resumes": [{"overrides": ["train.total_timesteps=9"]}]}', encoding="utf-8")
    return folder


def test_ship_makes_an_entry_that_zoo_specs_load_weights_only(tmp_path, monkeypatch):
    run = fake_run(tmp_path / "run")
    shelf = tmp_path / "zoo"
    shelf.mkdir()
    monkeypatch.setattr(zoo, "ZOO_DIR", shelf)
    zoo.ship(run, "tiny-2p", "# tiny-2p: a test policy\n\n| a | b |\n")
    entry = shelf / "tiny-2p"
    assert sorted(p.name for p in entry.iterdir()) == sorted(
        ["policy.pt", "policy.json", "config.yaml", "eval.csv", "evaluation.md", "run.json"]
    )
    assert (entry / "run.json").read_bytes() == (run / "run.json").read_bytes()  # how it ran, resumes included
    assert zoo.entries() == ["tiny-2p"] and zoo.summary("tiny-2p") == "tiny-2p: a test policy"
    assert "zoo:tiny-2p: tiny-2p: a test policy" in quiddler_agents.available()
    bot = quiddler_agents.make("zoo:tiny-2p", seed=0, num_players=2)
    for _, obs, mask in random_states(QuiddlerConfig(), seed=1, count=20):
        assert mask[bot.act(obs, mask)] == 1
    assert quiddler_agents.registry.bundle_path("zoo:tiny-2p") == str(entry)
    with pytest.raises(ValueError, match="no zoo policy 'nope'; the zoo has: tiny-2p"):
        quiddler_agents.make("zoo:nope", seed=0, num_players=2)
    with pytest.raises(ValueError, match="zoo needs a name"):
        quiddler_agents.make("zoo:", seed=0, num_players=2)


def test_ship_refuses_an_unfinished_run(tmp_path):
    (tmp_path / "run").mkdir()
    with pytest.raises(ValueError, match="is not a finished run"):
        zoo.ship(tmp_path / "run", "x", "", zoo_dir=tmp_path)


@pytest.mark.parametrize("name", zoo.entries())
def test_every_shipped_policy_is_whole_and_plays_legal_moves(name):
    entry = zoo.entry_path(name)
    for file in zoo.ENTRY_FILES:
        assert (entry / file).is_file(), f"{name}: {file} missing"
    assert not (entry / "model.zip").exists()  # weights only: nothing to unpickle
    assert (entry / "policy.pt").stat().st_size < 4 << 20  # small
    cfg = yaml.safe_load((entry / "config.yaml").read_text(encoding="utf-8"))
    n = cfg["env"]["num_players"]
    bot = quiddler_agents.make(f"zoo:{name}", seed=0, num_players=n)
    for _, obs, mask in random_states(QuiddlerConfig(num_players=n), seed=2, count=30):
        action = bot.act(obs, mask)
        assert isinstance(action, int) and mask[action] == 1
    assert "evaluate.py" in (entry / "evaluation.md").read_text(encoding="utf-8")  # the command that made it


def test_the_package_ships_a_two_and_a_four_player_policy():
    names = zoo.entries()
    assert "champion-2p" in names
    tables = {yaml.safe_load((zoo.entry_path(n) / "config.yaml").read_text())["env"]["num_players"] for n in names}
    assert {2, 4} <= tables
