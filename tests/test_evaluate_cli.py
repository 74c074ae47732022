"""evaluate.py end to end, as a subprocess (marked slow): files, determinism across workers, duplicate deals, replay, bad input."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from quiddler_env.core.cards import FACE_INDEX, NUM_FACES
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.observation import observation_layout

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "evaluate.py"
FILES = {"results.json", "games.csv", "report.md", "win_rate.png", "final_scores.png", "round_scores.png"}


def evaluate(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def figures(out: Path) -> str:
    """results.json without its `run` section (workers, time, folder), as text."""
    doc = json.loads((out / "results.json").read_text())
    doc.pop("run")
    return json.dumps(doc, indent=2)


def make_bundle(folder: Path) -> Path:
    """An untrained two-player MaskablePPO policy saved as a bundle (its play does not matter here)."""
    from sb3_contrib import MaskablePPO

    from quiddler_agents.policies import save_policy_bundle
    from quiddler_env.envs.gym_env import QuiddlerEnv

    model = MaskablePPO(
        "MlpPolicy", QuiddlerEnv(num_players=2), policy_kwargs={"net_arch": [8]}, n_steps=32, seed=0, device="cpu"
    )
    return save_policy_bundle(model, folder, {"config": QuiddlerConfig()})


def describe_two_player_policy(folder: Path) -> Path:
    """A policy.json of a two-player bundle (weights: any bytes): enough for the loader to refuse a three-player table."""
    folder.mkdir()
    (folder / "policy.pt").write_bytes(b"not read")
    description = {
        "format": 1,
        "observation_size": observation_layout(2).size,
        "action_size": 64,
        "net_arch": [8],
        "activation": "Tanh",
        "policy_class": "MaskableActorCriticPolicy",
        "features_extractor": "FlattenExtractor",
        "share_features_extractor": True,
        "weights_sha256": hashlib.sha256(b"not read").hexdigest(),
    }
    (folder / "policy.json").write_text(json.dumps(description))
    return folder


@pytest.fixture(scope="module")
def pair_of_runs(tmp_path_factory):
    """The same small three-player tournament with 1 and with 2 workers, games saved.

    Made once per test session, whichever xdist worker comes first (pytest-xdist's
    documented shared-fixture pattern: a file lock in the session's base folder).
    """
    from filelock import FileLock

    session = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # under xdist each worker's base folder sits in the session's
        session = session.parent
    base = session / "evaluate_pair_of_runs"
    outs = [base / "w1", base / "w2"]
    with FileLock(str(base) + ".lock"):
        if not all((out / "results.json").exists() for out in outs):
            for workers, out in zip((1, 2), outs, strict=True):
                args = ["--players", "greedy", "random", "greedy", "--games", 6, "--seed", 11, "--hand-sizes", 3, 4]
                proc = evaluate(*args, "--workers", workers, "--save-games", "--quiet", "--out", out)
                assert proc.returncode == 0, proc.stderr
    return outs


@pytest.mark.slow
def test_policy_tournament_writes_every_file(tmp_path):
    # The README quick start's shape: a two-player policy with two bots takes turns at two-player tables.
    bundle = make_bundle(tmp_path / "bundle")
    out = tmp_path / "res"
    label = f"policy:{bundle}/model.zip"
    proc = evaluate(
        "--players", label, "random", "greedy", "--games", 5, "--hand-sizes", 3, 4, "--workers", 1, "--out", out
    )
    assert proc.returncode == 0, proc.stderr
    assert "the policies play 2-player tables, so the 3 players take turns" in proc.stderr
    assert "playing 6 games (3 whole duplicate deals" in proc.stderr  # 5 rounded up to whole deals
    assert {p.name for p in out.iterdir()} >= FILES
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary files left
    doc = json.loads((out / "results.json").read_text())
    t = doc["tournament"]
    assert (doc["seed"], t["table_size"], t["games"], t["games_requested"], t["deals"]) == (0, 2, 6, 5, 3)
    assert t["rules"]["hand_sizes"] == [3, 4] and t["rules"]["num_players"] == 2
    assert len(doc["dictionary"]["identity"]) == 64 and doc["versions"]["openskill"]
    # The bundle that was played: its folder and the checksum of its weights, as its policy.json has it.
    description = json.loads((bundle / "policy.json").read_text())
    weights = hashlib.sha256((bundle / "policy.pt").read_bytes()).hexdigest()
    assert description["weights_sha256"] == weights
    assert doc["policies"] == {
        label: {
            "spec": label,
            "bundle": str(bundle.resolve()),
            "framework": "sb3",
            "weights_sha256": weights,
            **({"model_sha256": description["model_sha256"]} if "model_sha256" in description else {}),
        }
    }
    players = doc["summary"]["players"]
    assert list(players) == [label, "random", "greedy"]
    for p in players.values():
        assert p["games"] == 4 and p["wins"] + p["ties"] + p["losses"] == 4  # two of the three matchups each
        assert 0 <= p["win_rate"]["low"] <= p["win_rate"]["estimate"] <= p["win_rate"]["high"] <= 1
        assert p["final_score"]["low"] <= p["final_score"]["estimate"] <= p["final_score"]["high"]
        assert set(p["round_score_by_hand_size"]) == {"3", "4"}
        assert 0 <= p["go_out_rate"]["estimate"] <= 1 and p["words_per_round"] >= 0
    pairs = doc["summary"]["pairs"]
    assert [(q["a"], q["b"], q["games"]) for q in pairs] == [
        (label, "random", 2),
        (label, "greedy", 2),
        ("random", "greedy", 2),
    ]
    assert all(set(q["score_difference"]) == {"raw", "paired"} for q in pairs)
    assert set(doc["summary"]["ratings"]["players"]) == set(players)  # a pool of three is rated
    rows = list(csv.DictReader((out / "games.csv").open()))
    assert len(rows) == 12 and {r["player"] for r in rows} == set(players)
    totals = defaultdict(int)
    for r in rows:
        assert sum(int(x) for x in r["round_scores"].split()) == int(r["total"])
        totals[r["player"]] += int(r["total"])
    assert totals["greedy"] / 4 == pytest.approx(players["greedy"]["final_score"]["estimate"], abs=1e-6)
    report = (out / "report.md").read_text()
    assert "## Head to head" in report and "## Ratings" in report and f"`{label}`" in report
    assert "](win_rate.png)" in report
    for name in ("win_rate.png", "final_scores.png", "round_scores.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wrote " in proc.stdout and "greedy" in proc.stdout

    # Weights changed after the save: refused in one line, and the earlier run's folder stays as it was.
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with (bundle / "policy.pt").open("ab") as fh:
        fh.write(b"\0")
    proc = evaluate("--players", label, "random", "--games", 2, "--hand-sizes", 3, "--workers", 1, "--out", out)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "does not match the sha256" in proc.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.slow
def test_results_identical_for_one_and_two_workers(pair_of_runs):
    one, two = pair_of_runs
    assert figures(one) == figures(two)
    assert json.loads((two / "results.json").read_text())["run"]["workers"] == 2
    for name in ("games.csv", "games.jsonl"):
        assert (one / name).read_bytes() == (two / name).read_bytes()
    ratings = json.loads((one / "results.json").read_text())["summary"]["ratings"]
    assert set(ratings["players"]) == {"greedy", "random", "greedy#2"}  # a pool of three is rated


def _dealt(deck: list[str], n: int, hand_size: int, dealer: int) -> list[tuple[int, ...]]:
    """The rule book's deal from a deck listed top first: one card at a time from the dealer's left."""
    hands = [[0] * NUM_FACES for _ in range(n)]
    for i in range(n * hand_size):
        hands[(dealer + 1 + i) % n][FACE_INDEX[deck[i]]] += 1
    return [tuple(h) for h in hands]


@pytest.mark.slow
def test_saved_games_show_duplicate_deals_replay_the_same_shuffles(pair_of_runs):
    games = [json.loads(line) for line in (pair_of_runs[0] / "games.jsonl").read_text().splitlines()]
    assert [g["game"] for g in games] == list(range(6))
    by_deal = defaultdict(list)
    for g in games:
        by_deal[g["deal"]].append(g)
    assert sorted(by_deal) == [0, 1] and all(len(v) == 3 for v in by_deal.values())
    assert by_deal[0][0]["decks"] != by_deal[1][0]["decks"]
    for deal in by_deal.values():
        # The same shuffles (every round's deck, and the reshuffle seed) in every game of the deal...
        assert all(g["decks"] == deal[0]["decks"] and g["deal_seed"] == deal[0]["deal_seed"] for g in deal)
        assert len(deal[0]["decks"]) == 2 and all(sorted(d) == sorted(deal[0]["decks"][0]) for d in deal[0]["decks"])
        # ...with the seats rotated, so every player was dealt every seat's cards in every round.
        for r, hand_size in enumerate((3, 4)):
            hands = _dealt(deal[0]["decks"][r], 3, hand_size, dealer=(2 + r) % 3)
            for player in ("greedy", "random", "greedy#2"):
                got = sorted(hands[g["seats"].index(player)] for g in deal)
                assert got == sorted(hands)
        # The saved rounds agree with the totals.
        for g in deal:
            assert [sum(r["results"][s]["round_score"] for r in g["rounds"]) for s in range(3)] == g["totals"]


@pytest.mark.slow
def test_replay_prints_the_game_turn_by_turn(pair_of_runs):
    saved = pair_of_runs[0] / "games.jsonl"
    record = json.loads(saved.read_text().splitlines()[4])
    proc = evaluate("--replay", saved, "--game", 4)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    moves = [a for _, a in record["actions"]]
    turns = sum(1 for a in moves if a >= 2)
    assert text.count("\n-- turn ") == turns
    assert "Quiddler round 1/2 (3 cards)" in text and "game over after 2 round(s)" in text
    names = [f"{s}:{label}" for s, label in enumerate(record["seats"])]
    final = ", ".join(f"{n} {t}" for n, t in zip(names, record["totals"], strict=True))
    assert f"final totals: {final}" in text

    proc = evaluate("--replay", saved, "--game", 99)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"evaluate.py: error: game 99 is not in {saved} (6 games saved there)"
    ]


@pytest.mark.slow
def test_replay_detects_a_tampered_game(pair_of_runs, tmp_path):
    lines = (pair_of_runs[0] / "games.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["totals"][0] += 1
    bad = tmp_path / "games.jsonl"
    bad.write_text(json.dumps(record) + "\n")
    proc = evaluate("--replay", bad, "--game", 0)
    assert proc.returncode == 2 and "the replay ends with totals" in proc.stderr
    assert proc.stdout == ""


@pytest.mark.slow
def test_config_file_and_command_line_override(tmp_path):
    config = tmp_path / "eval.yaml"
    out = tmp_path / "from_yaml"
    config.write_text(
        f"players: [greedy, random]\ngames: 2\nseed: 5\nduplicate: false\nquiet: true\nworkers: 1\nout: {out}\n"
        "rules:\n  hand_sizes: [3]\n  bonus_value: 5\n"
    )
    proc = evaluate("--config", config, "--games", 3, "--bonus-value", 7)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # quiet from the file
    t = json.loads((out / "results.json").read_text())["tournament"]
    assert (t["games"], t["seed"], t["duplicate"]) == (3, 5, False)
    assert t["rules"]["hand_sizes"] == [3] and t["rules"]["bonus_value"] == 7


def test_default_config_file_parses_and_covers_every_rule():
    import yaml

    data = yaml.safe_load((ROOT / "configs/eval/default.yaml").read_text())
    assert set(data["rules"]) == set(QuiddlerConfig.field_names()) - {"num_players"}
    assert QuiddlerConfig.from_mapping(data["rules"]) == QuiddlerConfig()


def test_help_offers_every_rule_option():
    from quiddler_agents.cli import evaluate as cli

    text = cli.build_parser().format_help()
    for name in set(QuiddlerConfig.field_names()) - {"num_players"}:
        assert f"--{name.replace('_', '-')}" in text


BAD_INPUTS = [
    (["--players", "greedy", "alphazero"], "unknown agent 'alphazero'"),
    (["--players", "greedy", "human"], "cannot play a tournament"),
    (["--players", "greedy", "policy:{missing}/model.zip"], "does not exist"),
    (
        ["--players", "greedy", "random", "policy:{bundle}/model.zip", "--table-size", "3"],
        f"size is {observation_layout(3).size} (3 players)",
    ),
    (["--players", "greedy", "random", "--min-word-cards", "3"], "config key 'min_word_cards': bad value 3"),
    (["--players", "greedy", "random", "--hand-sizes", "12"], "config key 'hand_sizes'"),
    (["--players", "greedy", "random", "--two-player-bonus", "all"], "config key 'two_player_bonus'"),
    (["--players", "greedy", "random", "--table-size", "3"], "table size 3 cannot be filled by 2 players"),
    (["--players", "greedy"], "at least 2 players"),
    (["--players", "greedy", "random", "--games", "0"], "games must be a positive integer"),
    (["--players", "greedy", "random", "--games", "many"], "argument --games: invalid int value"),
    (["--players", "greedy", "random", "--dictionary", "{missing}/words.txt"], "word list not found"),
    (["--players", "greedy", "random", "--out", "{file}/sub"], "is a file, not a folder"),
    (["--players", "greedy", "random", "--out", "{file}"], "is not a folder"),
    (["--config", "{missing}/eval.yaml"], "eval.yaml does not exist"),
    (["--config", "{yaml_unknown}"], "unknown key(s) gmaes"),
    ([], "no players"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("args", "message"), BAD_INPUTS, ids=[m for _, m in BAD_INPUTS])
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path):
    file = tmp_path / "a_file"
    file.write_text("not a folder")
    yaml_unknown = tmp_path / "unknown.yaml"
    yaml_unknown.write_text("players: [greedy, random]\ngmaes: 3\n")
    bundle = describe_two_player_policy(tmp_path / "bundle") if "{bundle}" in " ".join(args) else None
    fill = {"missing": tmp_path / "missing", "bundle": bundle, "file": file, "yaml_unknown": yaml_unknown}
    args = [a.format(**fill) for a in args]
    out = tmp_path / "out"
    if "--out" not in args:
        args += ["--out", str(out)]
    proc = evaluate(*args, "--workers", 1, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evaluate.py: error: "), proc.stderr
    assert message in lines[0]
    assert proc.stdout == ""
    assert not out.exists()  # nothing written, not even the folder
    assert file.read_text() == "not a folder"


@pytest.mark.slow
def test_a_reader_that_stops_early_ends_the_command_quietly():
    # `evaluate.py --list-agents | grep -q zoo:` closes the pipe as soon as grep has seen a match: the command
    # must not print a BrokenPipeError traceback, and it ends with the status a shell gives SIGPIPE (141).
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the command writes a byte
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--list-agents"],
        cwd=ROOT,
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == 141
