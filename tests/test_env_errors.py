"""Every env: the one option table, the one illegal-action error, call-order errors, refused actions and seeds."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.utils.env_logger import EnvLogger

import quiddler_env  # registers the Gymnasium ids
from quiddler_env.core import actions as A
from quiddler_env.core import game as core_game
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.solitaire import word_action
from quiddler_env.envs import common, gym_env, solitaire_env
from quiddler_env.envs.common import IllegalActionError
from quiddler_env.envs.gym_env import QuiddlerEnv
from quiddler_env.envs.quiddler_v0 import env, raw_env
from quiddler_env.envs.selfplay import SelfPlayEnv
from quiddler_env.envs.solitaire_env import QuiddlerSolitaireEnv
from tests.test_solitaire import WIN_PILES

pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
]

DEFAULT_YAML = Path(__file__).resolve().parents[1] / "configs" / "env" / "default.yaml"
SHORT = {"hand_sizes": [3]}
RULES = QuiddlerConfig(num_players=3)


def finish_aec(aec, seed=0):
    """Play `aec` (raw or wrapped) to the end with the first legal action, then step every done agent with None."""
    aec.reset(seed=seed)
    for _ in aec.agent_iter():
        obs, _, terminated, truncated, _ = aec.last()
        aec.step(None if terminated or truncated else int(np.flatnonzero(obs["action_mask"])[0]))
    assert not aec.agents


# -- the option table -----------------------------------------------------------------------------------


def test_every_option_is_declared_once_with_a_default_a_doc_and_a_check():
    names = [o.name for o in common.ENV_OPTIONS]
    assert len(names) == len(set(names))
    assert not set(names) & set(QuiddlerConfig.field_names())
    for option in common.ENV_OPTIONS:
        assert option.doc and "\n" not in option.doc and set(option.kinds) <= set(common.ENV_KINDS)
    assert common.env_option_names("aec") == (
        "reward_mode",
        "reward_scale",
        "render_mode",
        "render_view",
        "max_cycles",
        "infos",
    )
    assert common.env_option_names("gym") == common.env_option_names("aec")[:-1] + (
        "learner_seat",
        "opponents",
        "illegal_reward",
        "infos",
    )
    assert common.env_option_names("solitaire") == ("render_mode", "illegal_action")
    assert common.env_option_names("vector") == (
        "reward_mode",
        "reward_scale",
        "max_cycles",
        "learner_seat",
        "opponents",
        "slot_offset",
        "autoreset_mode",
        "illegal_reward",
        "infos",
    )
    assert common.env_option_defaults("aec") == common.ENV_OPTION_DEFAULTS
    assert common.env_option_defaults("gym") == gym_env.GYM_OPTION_DEFAULTS
    # The default YAML lists every rule and every AEC option, nothing else.
    keys = set(re.findall(r"^(\w+):", DEFAULT_YAML.read_text(), flags=re.M))
    assert keys == set(QuiddlerConfig.field_names()) | set(common.env_option_names("aec"))
    with pytest.raises(ValueError, match="unknown env kind 'pz'; known: aec, gym, solitaire, vector"):
        common.env_option_names("pz")


def test_check_env_options_fills_defaults_and_resolves_values():
    got = common.check_env_options("gym", {"reward_mode": "win_loss", "render_view": "player_2"}, RULES)
    assert got == {
        "reward_mode": "win_loss",
        "reward_scale": 1.0,
        "render_mode": None,
        "render_view": 2,
        "max_cycles": None,
        "learner_seat": 0,
        "opponents": None,
        "illegal_reward": -1.0,
        "infos": "full",
    }
    assert common.check_env_options("solitaire", {}, QuiddlerConfig()) == {
        "render_mode": None,
        "illegal_action": "terminate",
    }
    policy = gym_env.UniformRandomPolicy()
    assert common.check_env_options("gym", {"opponents": policy}, RULES)["opponents"] == [policy, policy]
    assert common.check_env_options("gym", {"opponents": "greedy"}, RULES)["opponents"] == ["greedy", "greedy"]
    with pytest.raises(
        ValueError, match=r"unknown option\(s\) 'learner_seat' of a aec env; known options: reward_mode"
    ):
        common.check_env_options("aec", {"learner_seat": 1}, RULES)
    with pytest.raises(ValueError, match="option 'reward_scale': bad value -1"):
        common.check_env_options("aec", {"reward_scale": -1}, RULES)
    with pytest.raises(ValueError, match="option 'illegal_action': bad value 'ignore'; allowed: terminate, raise"):
        common.check_env_options("solitaire", {"illegal_action": "ignore"}, RULES)


@pytest.mark.parametrize(
    ("seat", "expected"), [(0, 0), (2, 2), (np.int64(1), 1), ("random", "random")], ids=["0", "2", "np1", "random"]
)
def test_check_learner_seat_accepts(seat, expected):
    got = common.check_learner_seat(seat, 3)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("seat", [True, False, np.True_, 1.0, 3, -1, "0", "Random", None])
def test_check_learner_seat_refuses(seat):
    with pytest.raises(ValueError, match=re.escape(f"option 'learner_seat': bad value {seat!r}; allowed: 'random'")):
        common.check_learner_seat(seat, 3)
    with pytest.raises(ValueError, match="option 'learner_seat'"):
        QuiddlerEnv(RULES, learner_seat=seat)


def test_learner_seat_message_is_exact():
    with pytest.raises(ValueError) as caught:
        common.check_learner_seat(True, 2)
    assert str(caught.value) == "option 'learner_seat': bad value True; allowed: 'random' or a seat 0..1"


def test_the_envs_resolve_through_the_table(monkeypatch):
    calls = []
    original = common.check_env_options

    def spy(kind, options, config):
        calls.append((kind, dict(options)))
        return original(kind, options, config)

    monkeypatch.setattr(common, "check_env_options", spy)
    raw_env(reward_mode="relative")
    QuiddlerEnv(learner_seat="random")
    QuiddlerSolitaireEnv(illegal_action="raise")
    assert calls == [
        ("aec", {"reward_mode": "relative"}),
        ("gym", {"learner_seat": "random"}),
        ("solitaire", {"illegal_action": "raise"}),
    ]


def test_resolve_options_keeps_the_mapping_form():
    config, opts = common.resolve_options({"num_players": 3}, {"reward_scale": None}, common.ENV_OPTION_DEFAULTS)
    assert config.num_players == 3 and opts == common.ENV_OPTION_DEFAULTS  # unchecked, defaults filled
    with pytest.raises(ValueError, match=r"unknown option\(s\) 'learner_seat'; known options: num_players"):
        common.resolve_options(None, {"learner_seat": 0}, "aec")


def test_solitaire_config_file_is_read_as_the_others(tmp_path):
    path = tmp_path / "solitaire.yaml"
    path.write_text("min_word_cards: 1\nillegal_action: raise\nrender_mode: ansi\n")
    env_ = QuiddlerSolitaireEnv(config=path)
    assert (env_.config.min_word_cards, env_.illegal_action, env_.render_mode) == (1, "raise", "ansi")
    assert QuiddlerSolitaireEnv(config=path, illegal_action="terminate").illegal_action == "terminate"
    path.write_text("reward_mode: relative\n")
    with pytest.raises(ValueError, match=r"unknown option\(s\) 'reward_mode'"):
        QuiddlerSolitaireEnv(config=path)
    path.write_text("[1, 2]\n")
    with pytest.raises(ValueError, match="env config file .* must hold a mapping"):
        QuiddlerSolitaireEnv(config=path)
    assert solitaire_env.RenderModeError is common.RenderModeError
    with pytest.raises(common.RenderModeError):
        QuiddlerSolitaireEnv(render_mode="rgb_array")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_a_fifo_as_env_config_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "env.yaml"
    os.mkfifo(fifo)
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("error", _error_of(raw_env, config=fifo)), daemon=True)
    thread.start()
    thread.join(60)
    if thread.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # release the blocked reader
        pytest.fail("raw_env(config=<fifo>) blocked")
    assert isinstance(out["error"], ValueError) and "not a regular file" in str(out["error"])


def _error_of(fn, **kwargs):
    try:
        fn(**kwargs)
    except Exception as exc:  # noqa: BLE001
        return exc
    return None


# -- one illegal-action error ------------------------------------------------------------------------------


def test_one_illegal_action_error_in_the_engine_and_every_env():
    assert common.IllegalActionError is core_game.IllegalActionError and issubclass(IllegalActionError, ValueError)
    assert quiddler_env.IllegalActionError is IllegalActionError
    aec = raw_env()
    aec.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"illegal action 5 \(discard D\) for player_0; legal actions: 0"):
        aec.step(A.discard(3))

    class Cheater:
        def act(self, observation, action_mask):
            return A.go_out(0)

    single = QuiddlerEnv(opponents=Cheater(), learner_seat=1)
    with pytest.raises(IllegalActionError, match="chose illegal action 33"):
        single.reset(seed=0)
    strict = QuiddlerSolitaireEnv(illegal_action="raise")
    strict.reset(options={"piles": WIN_PILES})
    with pytest.raises(IllegalActionError, match=r"action 0 \(word from piles 0\) is illegal here; legal actions"):
        strict.step(word_action(0b1))


# -- call order -----------------------------------------------------------------------------------------------


def test_raw_env_before_reset_says_so():
    aec = raw_env()
    for call in (lambda: aec.step(0), aec.last, lambda: aec.observe("player_0")):
        with pytest.raises(RuntimeError, match=r"before reset\(\): there is no game yet"):
            call()


def test_raw_env_after_the_game_ended_says_so():
    aec = raw_env(**SHORT)
    aec.reset(seed=1)
    while not all(aec.terminations.values()):
        aec.step(int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0]))
    # Done agents step once with None (PettingZoo's convention); a real action for one is refused by name.
    done = aec.agent_selection
    with pytest.raises(IllegalActionError, match=f"illegal action 0 for {done}: the agent is done"):
        aec.step(0)
    assert aec.last()[2] is True  # terminated, still observable
    while aec.agents:
        aec.step(None)
    for call, name in ((lambda: aec.step(None), "step"), (lambda: aec.step(0), "step"), (aec.last, "last")):
        with pytest.raises(RuntimeError, match=rf"{name}\(\) after the game ended: every agent is done"):
            call()
    assert aec.observe("player_0")["action_mask"].sum() == 0  # observing stays allowed
    aec.reset(seed=2)
    assert aec.agents == aec.possible_agents


def test_wrapped_env_keeps_pettingzoos_order_checks():
    aec = env(**SHORT)
    with pytest.raises(Exception, match="reset"):
        aec.step(0)
    with pytest.raises(Exception, match="reset"):
        aec.observe("player_0")
    finish_aec(aec)
    EnvLogger.flush()
    aec.step(None)  # PettingZoo's warning for a step with no agents left, not an exception
    assert any("step() called after all agents are terminated" in str(m) for m in EnvLogger.mqueue)


def test_single_agent_envs_before_reset_and_after_the_end():
    for make in (lambda: QuiddlerEnv(**SHORT), lambda: SelfPlayEnv(**SHORT), QuiddlerSolitaireEnv):
        e = make()
        with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\)"):
            e.step(0)
    single = QuiddlerEnv(**SHORT)
    single.reset(seed=0)
    single.step(99)  # illegal: the episode ends
    with pytest.raises(RuntimeError, match=r"step\(\) after the episode ended"):
        single.step(0)
    selfplay = SelfPlayEnv(**SHORT)
    selfplay.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = selfplay.step(int(np.flatnonzero(selfplay.action_masks())[0]))
        done = terminated or truncated
    with pytest.raises(RuntimeError, match=r"step\(\) after the episode ended"):
        selfplay.step(0)
    ansi = QuiddlerSolitaireEnv(render_mode="ansi")
    with pytest.raises(RuntimeError, match=r"render\(\) before reset\(\)"):
        ansi.render()


# -- actions that are not action ids -----------------------------------------------------------------------


@pytest.mark.parametrize("action", [True, False, np.True_, 1.5, "1", [1]], ids=repr)
def test_non_actions_are_refused_by_name(action):
    aec = raw_env()
    aec.reset(seed=0)
    with pytest.raises(IllegalActionError, match=re.escape(f"illegal action {action!r} (")):
        aec.step(action)
    single = QuiddlerEnv()
    single.reset(seed=0)
    with pytest.raises(IllegalActionError, match=re.escape(f"action {action!r} for the learner")):
        single.step(action)
    solitaire = QuiddlerSolitaireEnv()
    solitaire.reset(options={"piles": WIN_PILES})
    with pytest.raises(IllegalActionError, match=re.escape(f"action {action!r} is not an integer")):
        solitaire.step(action)


@pytest.mark.parametrize("action", [True, np.False_])
def test_wrapped_env_refuses_bools(action):
    aec = env()
    aec.reset(seed=0)
    with pytest.raises(IllegalActionError, match=re.escape(f"illegal action {action!r} for player_0: a bool")):
        aec.step(action)


def test_numpy_integers_are_actions():
    aec = env()
    aec.reset(seed=0)
    aec.step(np.int64(A.TAKE_DISCARD))
    assert aec.unwrapped.game.phase == core_game.Phase.DISCARD
    raw = raw_env()
    raw.reset(seed=0)
    raw.step(np.int32(A.DRAW_PILE))
    single = QuiddlerEnv()
    _, info = single.reset(seed=0)
    assert not single.step(np.uint8(np.flatnonzero(info["action_mask"])[0]))[4].get("illegal_action")
    solitaire = QuiddlerSolitaireEnv()
    solitaire.reset(options={"piles": WIN_PILES})
    assert solitaire.step(np.int16(word_action(0x0F)))[1] == 22


def test_bool_from_an_opponent_is_an_illegal_action():
    class Truthy:
        def act(self, observation, action_mask):
            return True  # would be "take discard" if bools counted as 1

    with pytest.raises(IllegalActionError, match="chose illegal action True"):
        QuiddlerEnv(opponents=Truthy(), learner_seat=1).reset(seed=0)


# -- seeds ----------------------------------------------------------------------------------------------------


def _resets():
    return {
        "raw_env": lambda seed: raw_env().reset(seed=seed),
        "env": lambda seed: env().reset(seed=seed),
        "Quiddler-v0": lambda seed: gym.make("Quiddler-v0").reset(seed=seed),
        "QuiddlerSolitaire-v0": lambda seed: QuiddlerSolitaireEnv().reset(seed=seed),
        "SelfPlayEnv": lambda seed: SelfPlayEnv().reset(seed=seed),
    }


@pytest.mark.parametrize("name", list(_resets()))
@pytest.mark.parametrize("seed", [-1, 1.5, 2.0, True, "3", np.int64(-2), [1]], ids=repr)
def test_bad_seeds_are_refused_before_numpy(name, seed):
    with pytest.raises(ValueError) as caught:
        _resets()[name](seed)
    assert str(caught.value) == f"seed must be a non-negative integer or None, got {seed!r}"


def test_numpy_integer_seeds_give_the_seeded_game():
    for make in (raw_env, lambda: QuiddlerEnv()):
        a, b = make(), make()
        a.reset(seed=np.int64(7))
        b.reset(seed=7)
        assert a.game.hands == b.game.hands and a.game.draw_pile == b.game.draw_pile
    a, b = QuiddlerSolitaireEnv(), QuiddlerSolitaireEnv()
    np.testing.assert_array_equal(a.reset(seed=np.uint32(5))[0], b.reset(seed=5)[0])
    assert common.check_seed(np.int8(3)) == 3 and type(common.check_seed(np.int8(3))) is int
