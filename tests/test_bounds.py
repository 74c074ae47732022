"""Bounds on what the user may ask for: rule options and agent-spec parameters out of range are a one-line
`ValueError` naming them and their bounds (never a traceback, an allocation of 745 GiB, or bonuses that vanish
from int32 totals), and the envs' `reset` options and actions take only what they can mean."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import quiddler_agents
import quiddler_env  # noqa: F401  (registers the ids)
from quiddler_agents.registry import REGISTRY
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.envs.common import IllegalActionError
from quiddler_env.envs.gym_env import QuiddlerEnv
from quiddler_env.envs.quiddler_v0 import env, raw_env
from quiddler_env.envs.solitaire_env import QuiddlerSolitaireEnv

from .batch_parity import replay

ROOT = Path(__file__).resolve().parents[1]
BOUNDED = {o.name: o for o in QuiddlerConfig.rule_options() if getattr(o, "bounds", None) is not None}
"""The rule options that declare bounds (empty before they did: the tests below then fail)."""


def bounds(name: str) -> tuple[int, int]:
    assert name in BOUNDED, f"rule option {name} declares no bounds"
    return BOUNDED[name].bounds


def evaluate(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    """The one line of a refused evaluate.py run (exit code 2, no traceback)."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evaluate.py: error: "), proc.stderr
    return lines[0]


# -- A: rule options -------------------------------------------------------------------------------------------


def test_every_integer_rule_option_declares_its_bounds():
    # Each number of the rules reaches the batched engine's int32/int64 arrays; the table size and the hand
    # sizes are bounded by their own checks (2..8 players, 1..11 cards).
    numeric = [o.name for o in QuiddlerConfig.rule_options() if o.kind in ("int", "int_or_none")]
    assert {"bonus_value", "turn_cap", "failed_go_out_penalty"} <= set(numeric)
    for name in numeric:
        if name != "min_word_cards":  # its choices, 1 or 2, bound it
            low, high = bounds(name)
            assert low < high


@pytest.mark.parametrize("name", ["bonus_value", "turn_cap", "failed_go_out_penalty"])
def test_rule_options_out_of_bounds_are_one_line_errors_naming_field_and_bound(name):
    low, high = bounds(name)
    variant = {"challenges": True} if name == "failed_go_out_penalty" else {}
    for value in (high + 1, low - 1, 2**62, -(2**63), 10**20):
        with pytest.raises(ValueError) as err:
            QuiddlerConfig(**variant, **{name: value})
        message = str(err.value)
        assert "\n" not in message and repr(name) in message and str(high) in message, message
    for value in (low, high):  # the bounds themselves are allowed
        assert getattr(QuiddlerConfig(**variant, **{name: value}), name) == value


def test_huge_bonus_value_is_refused_by_every_entry():
    with pytest.raises(ValueError, match="'bonus_value'"):
        QuiddlerConfig(bonus_value=2**62)
    with pytest.raises(ValueError, match="'bonus_value'"):
        gym.make_vec("Quiddler-v0", num_envs=2, vectorization_mode="vector_entry_point", bonus_value=2**62)
    with pytest.raises(ValueError, match="'bonus_value'"):
        raw_env(bonus_value=2**63 - 1)


@pytest.mark.parametrize("edge", ["low", "high"])
def test_engines_agree_with_the_largest_bonus_values(edge):
    low, high = bounds("bonus_value")
    value = high if edge == "high" else low
    for rules in ({"two_player_bonus": "both", "score_floor": "none"}, {"num_players": 3, "score_floor": "total"}):
        config = QuiddlerConfig(bonus_value=value, hand_sizes=(3, 5, 4), **rules)
        report = replay(config, seed=3, games=6)  # move by move: masks, observations, round results, totals
        assert report.rounds == 6 * config.num_rounds


def test_vector_env_pays_the_largest_bonus_in_its_rewards():
    high = bounds("bonus_value")[1]
    envs = gym.make_vec(
        "Quiddler-v0",
        num_envs=8,
        vectorization_mode="vector_entry_point",
        bonus_value=high,
        reward_mode="round_score",
        reward_scale=1,
        hand_sizes=[3, 4],
    )
    rng = np.random.default_rng(0)
    _, infos = envs.reset(seed=0)
    won = 0
    for _ in range(400):
        masks = infos["action_mask"]
        actions = np.argmax(rng.random(masks.shape) * masks + masks, axis=1)
        _, rewards, _, _, infos = envs.step(actions)
        if "round_scores" not in infos:
            continue
        for i in np.flatnonzero(infos["_round_scores"]):
            seat = infos["seat"][i]
            bonus = infos["round_bonuses"][i, seat]
            assert bonus in (0, high, 2 * high)
            # The round score is its card points (at most 11 cards of 15 points either way) plus its bonuses,
            # and with the round floor that is the reward at scale 1.
            assert rewards[i] == max(infos["round_scores"][i, seat], 0)
            if bonus:
                assert rewards[i] >= bonus - 11 * 15
                won += 1
    assert won > 10  # the learners won bonuses, and were paid them


@pytest.mark.slow
@pytest.mark.parametrize("value", ["99999999999999999999", "9223372036854775807", "-1001"])
def test_evaluate_refuses_a_bonus_value_out_of_bounds_in_one_line(value, tmp_path):
    out = tmp_path / "out"
    proc = evaluate("--players", "random", "greedy", "--games", 2, "--workers", 1, "--bonus-value", value, "--out", out)
    line = one_line_error(proc)
    assert "bonus_value" in line and str(bounds("bonus_value")[1]) in line, line
    assert not out.exists()


# -- B: agent-spec parameters ----------------------------------------------------------------------------------


NUMERIC_PARAMS = [
    (agent, key)
    for agent, spec in REGISTRY.items()
    for key, param in spec.params.items()
    if getattr(param, "kind", param) in (int, float)  # the declaration, or (before bounds) the bare type
]


def declared(agent: str, key: str):
    param = REGISTRY[agent].params[key]
    assert getattr(param, "high", None) is not None, f"{agent}: {key} declares no upper bound"
    return param


def test_expert_samples_past_the_bound_is_refused_before_anything_is_allocated():
    high = declared("expert", "samples").high
    with pytest.raises(ValueError) as err:
        quiddler_agents.make("expert:samples=100000000000", seed=0, num_players=2)
    message = str(err.value)
    assert "\n" not in message and "expert" in message and "samples" in message and str(high) in message


@pytest.mark.parametrize(("agent", "key"), NUMERIC_PARAMS, ids=[f"{a}:{k}" for a, k in NUMERIC_PARAMS])
def test_every_numeric_agent_parameter_is_bounded_in_specs_and_constructors(agent, key):
    param = declared(agent, key)
    high = param.high
    past = high + 1 if param.kind is int else high * 2 + 1
    text = str(int(high)) if float(high).is_integer() else str(high)
    for build in (
        lambda v: quiddler_agents.make(f"{agent}:{key}={v}", seed=0, num_players=2),
        lambda v: REGISTRY[agent].build(seed=0, config=QuiddlerConfig(num_players=2), **{key: v}),
    ):
        with pytest.raises(ValueError) as err:
            build(past)
        message = str(err.value)
        assert "\n" not in message and agent in message and key in message and text in message, message
        bot = build(param.kind(high))  # the bound itself is allowed
        assert getattr(bot, key) == high


@pytest.mark.slow
def test_evaluate_refuses_a_huge_expert_sample_count_in_one_line(tmp_path):
    out = tmp_path / "out"
    proc = evaluate("--players", "expert:samples=100000000000", "random", "--games", 1, "--workers", 1, "--out", out)
    line = one_line_error(proc)
    assert "samples" in line and str(declared("expert", "samples").high) in line, line
    assert not out.exists()


# -- D: reset options and actions ------------------------------------------------------------------------------


def _vector():
    return gym.make_vec("Quiddler-v0", num_envs=2, vectorization_mode="vector_entry_point", hand_sizes=[3])


ENVS = {
    "raw_env": lambda: raw_env(hand_sizes=[3]),
    "env": lambda: env(hand_sizes=[3]),
    "Quiddler-v0": lambda: gym.make("Quiddler-v0", hand_sizes=[3]),
    "QuiddlerEnv": lambda: QuiddlerEnv(hand_sizes=[3]),
    "vector": _vector,
    "solitaire": QuiddlerSolitaireEnv,
}


@pytest.mark.parametrize("name", list(ENVS))
@pytest.mark.parametrize("options", ["garbage", 3, ["decks"], ("decks", None)], ids=repr)
def test_reset_refuses_options_that_are_not_a_mapping(name, options):
    e = ENVS[name]()
    with pytest.raises((ValueError, TypeError)) as err:
        e.reset(seed=0, options=options)
    message = str(err.value)
    assert "options" in message and "\n" not in message, message
    e.reset(seed=0, options={})  # a mapping, and None, still do
    e.reset(seed=0, options=None)


def _legal(mask) -> int:
    return int(np.flatnonzero(mask)[0])


def non_integers(move: int) -> list:
    """Values that are no action id although they may equal one: floats (integral too) and bools."""
    return [float(move), np.float32(move), np.float64(move), np.array(float(move)), move + 0.5, True, np.True_]


def test_quiddler_v0_step_takes_only_integers():
    e = gym.make("Quiddler-v0", hand_sizes=[3, 4])
    _, info = e.reset(seed=0)
    move = _legal(info["action_mask"])
    for action in non_integers(move):
        with pytest.raises(IllegalActionError, match=re.escape(f"action {action!r}")):
            e.step(action)
    _, _, terminated, _, info = e.step(move)  # nothing moved: the refused values ended nothing
    assert not terminated and not info.get("illegal_action")
    for action in (np.int64(move), np.uint8(move), np.array(move), np.array(move, dtype=np.int16)):
        e.reset(seed=0)
        _, _, terminated, _, info = e.step(action)  # each integer form of an action id plays it
        assert not terminated and not info.get("illegal_action")


@pytest.mark.parametrize("wrapped", [False, True], ids=["raw_env", "env"])
def test_aec_step_takes_only_integers(wrapped):
    aec = (env if wrapped else raw_env)(hand_sizes=[3, 4])
    aec.reset(seed=0)
    move = _legal(aec.observe(aec.agent_selection)["action_mask"])
    for action in non_integers(move):
        with pytest.raises(IllegalActionError, match=re.escape(f"illegal action {action!r}")):
            aec.step(action)
    assert aec.unwrapped.game.phase == 0 and not any(aec.terminations.values())  # nothing moved
    aec.step(np.array(move))  # a 0-d integer array is an action id
    assert aec.unwrapped.game.phase == 1


def test_vector_env_refuses_float_actions_by_name():
    envs = _vector()
    _, infos = envs.reset(seed=0)
    moves = infos["action_mask"].argmax(axis=1)
    for actions in (moves.astype(np.float64), moves.astype(np.float32), moves.astype(bool), [float(m) for m in moves]):
        with pytest.raises(IllegalActionError, match="actions must be 2 integer action ids"):
            envs.step(actions)
    _, _, terminated, _, infos = envs.step(moves)
    assert not terminated.any() and "illegal_action" not in infos
