"""The base install (issue 43), as an env user gets it: `pip install quiddler-env` with no extra (no torch).

Run by `.ci/base` with the base venv's Python, from an empty folder outside the checkout: builds each env and
plays random legal moves in it, plays games of the bots, evaluates bots with the console script (no plots:
one line names the eval extra), and checks that what needs an extra stops with one line naming it
(`quiddler-train`, a `zoo:` policy). Usage: `python base_install.py` (in the folder it may write into).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pettingzoo

import quiddler_env
from quiddler_agents.arena import play_game
from quiddler_agents.registry import make
from quiddler_env.core.config import QuiddlerConfig

BIN = Path(sys.executable).parent
EXTRAS = ("torch", "stable_baselines3", "sb3_contrib", "tensorboard", "matplotlib", "openskill", "tqdm")

assert "site-packages" in quiddler_env.__file__, quiddler_env.__file__
assert importlib.util.find_spec("agents") is None, "the package installed a top-level 'agents'"
present = [name for name in EXTRAS if importlib.util.find_spec(name) is not None]
assert not present, f"the base install brought {present}: they belong to the extras"
rng = np.random.default_rng(0)


def legal(mask) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


# -- the envs: a few random legal steps in each ---------------------------------------------------------------

aec = quiddler_env.env(num_players=3)
aec.reset(seed=0)
for _ in zip(range(30), aec.agent_iter(), strict=False):
    obs, reward, terminated, truncated, info = aec.last()
    aec.step(None if terminated or truncated else legal(obs["action_mask"]))
registered = pettingzoo.make("aec", "quiddler/quiddler-v0", num_players=2)
registered.reset(seed=1)

single = gym.make("Quiddler-v0")
obs, info = single.reset(seed=0)
for _ in range(30):
    obs, reward, terminated, truncated, info = single.step(legal(info["action_mask"]))
    if terminated or truncated:
        obs, info = single.reset()
assert single.observation_space.contains(obs)

solitaire = gym.make("QuiddlerSolitaire-v0")
obs, info = solitaire.reset(seed=0)
for _ in range(10):
    obs, reward, terminated, truncated, info = solitaire.step(legal(info["action_mask"]))
    if terminated or truncated:
        break

vector = gym.make_vec("Quiddler-v0", num_envs=4, vectorization_mode="vector_entry_point")
obs, infos = vector.reset(seed=0)
for _ in range(30):
    obs, rewards, terminated, truncated, infos = vector.step(np.asarray([legal(m) for m in infos["action_mask"]]))
assert obs.shape[0] == 4
print("base install: the AEC, Gymnasium, solitaire and vector envs step")

# -- the bots -------------------------------------------------------------------------------------------------

rules = QuiddlerConfig(num_players=3, hand_sizes=(3, 4))
bots = [
    make(spec, seed=i, num_players=3, config=rules) for i, spec in enumerate(("greedy", "expert", "search:samples=2"))
]
record = play_game(bots, seed=0, config=rules)
print(f"base install: greedy, expert and search played a game: totals {list(record.totals)}")


# -- the commands ---------------------------------------------------------------------------------------------


def command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, timeout=600, check=False)


def one_line(proc: subprocess.CompletedProcess, prefix: str, *needles: str) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith(prefix), proc.stderr
    assert all(needle in lines[0] for needle in needles), (needles, lines[0])
    return lines[0]


assert command("quiddler", "solve", "C", "A", "T").returncode == 0
proc = command(
    "quiddler-evaluate", "--players", "greedy", "random", "--games", "2", "--workers", "1", "--out", "results"
)
assert proc.returncode == 0, proc.stderr
written = sorted(p.name for p in Path("results").iterdir())
assert written == ["games.csv", "report.md", "results.json"], written  # no plots without matplotlib
assert json.loads(Path("results/results.json").read_text())["summary"]["games"] == 2
notes = [line for line in proc.stderr.splitlines() if line.startswith("quiddler-evaluate: no plots")]
assert len(notes) == 1 and 'pip install "quiddler-env[eval]"' in notes[0], proc.stderr
print(f"base install: quiddler-evaluate plays bots and writes {', '.join(written)}; it says: {notes[0]}")

extra = 'pip install "quiddler-env[train]"'
line = one_line(
    command("quiddler-train", "--config", "quickstart", "--run-dir", "run"), "quiddler-train: error: ", extra
)
assert line.startswith("quiddler-train: error: training needs the train extra: "), line
assert not Path("run").exists()  # said before a run folder is made
print(f"base install: {line}")
proc = command("quiddler-evaluate", "--players", "zoo:champion-2p", "greedy", "--games", "2", "--out", "zoo")
print(f"base install: {one_line(proc, 'quiddler-evaluate: error: ', extra, 'trained policy')}")
assert not Path("zoo").exists()
print(f"base install: checked in {os.getcwd()}")
