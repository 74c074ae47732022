"""`QuiddlerSolitaire-v0`: API checks, spaces, masks, rewards, options, SB3, and the example script."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import quiddler_env  # noqa: F401  (registers the ids)
from quiddler_env.core.cards import COUNTS, FACES, POINTS
from quiddler_env.core.solitaire import NUM_ACTIONS, restart_action, word_action
from quiddler_env.envs.common import IllegalActionError
from quiddler_env.envs.solitaire_env import (
    OBSERVATION_SIZE,
    SOLITAIRE_SLICES,
    QuiddlerSolitaireEnv,
    view_observation,
)
from tests.test_solitaire import DIG_PILES, WIN_MOVES, WIN_PILES

ROOT = Path(__file__).resolve().parents[1]


def _user_warnings(check, env) -> list[str]:
    """Run an env checker; the UserWarnings it raises (the checkers' complaints), as text."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check(env)
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def test_gymnasium_check_env():
    assert _user_warnings(lambda e: check_env(e, skip_render_check=True), QuiddlerSolitaireEnv()) == []
    check_env(gym.make("QuiddlerSolitaire-v0").unwrapped)  # with the spec: renders every mode


def test_sb3_check_env():
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    assert _user_warnings(lambda e: sb3_check_env(e, warn=True), QuiddlerSolitaireEnv()) == []


def test_registered_and_spaces():
    env = gym.make("QuiddlerSolitaire-v0")
    assert env.spec.id == "QuiddlerSolitaire-v0"
    assert isinstance(env.unwrapped, QuiddlerSolitaireEnv)
    assert env.action_space == gym.spaces.Discrete(NUM_ACTIONS)
    assert env.observation_space.shape == (OBSERVATION_SIZE,) == (329,)
    assert sum(s.stop - s.start for s in SOLITAIRE_SLICES.values()) == OBSERVATION_SIZE


def test_observation_slices_at_reset_and_after_moves():
    env = QuiddlerSolitaireEnv()
    obs, info = env.reset(options={"piles": DIG_PILES})
    parts = view_observation(obs)
    assert [FACES[int(row.argmax())] for row in parts["tops"]] == [p[0] for p in DIG_PILES]
    assert (parts["tops"].sum(axis=1) == 1).all()
    assert np.allclose(parts["face_down"], 1.0) and not parts["empty"].any()
    assert not parts["laid"].any() and parts["cards_laid"][0] == 0 and parts["score"][0] == 0
    visible = np.zeros(len(FACES))
    for p in DIG_PILES:
        visible[FACES.index(p[0])] += 1
    assert np.allclose(parts["unseen"], (np.asarray(COUNTS) - visible) / np.asarray(COUNTS))
    # Lay AT, OX, EM, AD, NO, IF: pile 0 runs out.
    for k in range(1, 7):
        obs, reward, terminated, truncated, info = env.step(word_action(1 | 1 << k))
        assert reward > 0 and not terminated and not truncated
    parts = view_observation(obs)
    assert parts["empty"].tolist() == [1, 0, 0, 0, 0, 0, 0, 0]
    assert not parts["tops"][0].any()
    assert np.allclose(parts["face_down"], [0, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 1.0])
    assert parts["laid"][FACES.index("A")] == pytest.approx(2 / 10)
    assert parts["cards_laid"][0] == pytest.approx(12 / 48)
    assert parts["score"][0] == pytest.approx(48 / 394)
    assert parts["moves"][0] == pytest.approx(6 / 88)
    assert env.observation_space.contains(obs)
    # Only restarts into pile 0 are legal: the mask says so, in both places.
    expected = np.zeros(NUM_ACTIONS, dtype=bool)
    expected[[restart_action(src, 0) for src in range(1, 8)]] = True
    assert (env.action_masks() == expected).all()
    assert (info["action_mask"].astype(bool) == expected).all() and info["action_mask"].dtype == np.int8
    obs, reward, terminated, _, info = env.step(restart_action(1, 0))
    assert reward == 0.0 and terminated and not info["won"] and info["score"] == 48
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(restart_action(2, 0))


def test_winning_episode_rewards_sum_to_the_score():
    env = gym.make("QuiddlerSolitaire-v0")
    _, info = env.reset(seed=0, options={"piles": WIN_PILES})
    total, words = 0.0, []
    for i, piles_mask in enumerate(WIN_MOVES):
        assert info["action_mask"][word_action(piles_mask)] == 1
        _, reward, terminated, truncated, info = env.step(word_action(piles_mask))
        total += reward
        words.append(info["word"])
        assert reward == sum(POINTS[FACES.index(f)] for f in info["word_faces"])
        assert terminated == (i == len(WIN_MOVES) - 1) and not truncated
    assert info["won"] and info["cards_laid"] == 48 and info["cards_left"] == 0
    assert total == info["score"] == 254
    assert words[2] == "quiz"


def test_masks_agree_with_the_game_during_random_play():
    env = QuiddlerSolitaireEnv()
    rng = np.random.default_rng(3)
    for seed in range(20):
        obs, info = env.reset(seed=seed)
        terminated, ret = False, 0.0
        while not terminated:
            mask = env.action_masks()
            assert (mask == info["action_mask"].astype(bool)).all()
            assert (mask == env.game.legal_action_mask().astype(bool)).all()
            assert mask.any()  # a live episode always has a move
            assert env.observation_space.contains(obs)
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            ret += reward
            assert not truncated
        assert ret == info["score"] and info["won"] == (info["cards_laid"] == 48)


def test_same_seed_same_episode():
    def run(seed):
        env = QuiddlerSolitaireEnv()
        obs, info = env.reset(seed=seed)
        out = [obs]
        while info["action_mask"].any():
            obs, reward, terminated, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            out.append(obs)
            if terminated:
                break
        return np.stack(out)

    a, b, c = run(42), run(42), run(43)
    assert a.shape == b.shape and (a == b).all()
    assert a.shape != c.shape or (a != c).any()


def test_dead_deals_are_dealt_again():
    env = QuiddlerSolitaireEnv()
    redealt = None
    for seed in range(3000):
        _, info = env.reset(seed=seed)
        if info["redeals"]:
            redealt = seed
            break
    assert redealt is not None, "about one deal in 200 has no word; 3000 seeds should show one"
    assert env.action_masks().any()
    dead = [
        ["Z", "A", "A", "A", "A", "A"],
        ["X", "A", "A", "A", "A", "A"],
        ["J", "E", "E", "E", "E", "E"],
        ["Q", "E", "E", "E", "E", "E"],
        ["V", "I", "I", "I", "I", "E"],
        ["K", "I", "I", "I", "I", "E"],
        ["C", "O", "O", "O", "O", "U"],
        ["B", "O", "O", "O", "O", "U"],
    ]
    with pytest.raises(ValueError, match="no legal move"):
        env.reset(options={"piles": dead})


def test_illegal_and_out_of_range_actions():
    env = QuiddlerSolitaireEnv()
    _, info = env.reset(options={"piles": WIN_PILES})
    illegal = word_action(0b1)  # W alone
    assert info["action_mask"][illegal] == 0
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == 0.0 and info["illegal_action"] and not info["action_mask"].any()

    strict = QuiddlerSolitaireEnv(illegal_action="raise")
    strict.reset(options={"piles": WIN_PILES})
    with pytest.raises(IllegalActionError, match=r"action 0 \(word from piles 0\) is illegal.*legal actions"):
        strict.step(illegal)
    for bad in (NUM_ACTIONS, -1, 2.5, "3", True, np.bool_(False), None):
        with pytest.raises(IllegalActionError, match="not an integer in 0..310"):
            strict.step(bad)
    obs, reward, terminated, _, info = strict.step(np.int64(word_action(0x0F)))
    assert reward == 22 and info["word"] == "word" and not terminated


def test_options_and_config():
    loose = QuiddlerSolitaireEnv(min_word_cards=1)
    piles = [["IN", *["A"] * 5], *WIN_PILES[1:]]
    _, info = loose.reset(options={"piles": piles})
    assert info["action_mask"][word_action(0b1)] == 1  # a lone IN is a word with min_word_cards=1
    strict = QuiddlerSolitaireEnv()
    _, info = strict.reset(options={"piles": piles})
    assert info["action_mask"][word_action(0b1)] == 0
    assert QuiddlerSolitaireEnv(config={"min_word_cards": 1}).config.min_word_cards == 1
    with pytest.raises(ValueError, match="'num_players'"):
        QuiddlerSolitaireEnv(num_players=3)
    with pytest.raises(ValueError, match="min_word_cards"):
        QuiddlerSolitaireEnv(min_word_cards=3)
    with pytest.raises(ValueError, match="illegal_action"):
        QuiddlerSolitaireEnv(illegal_action="ignore")
    with pytest.raises(ValueError, match="render_mode"):
        QuiddlerSolitaireEnv(render_mode="rgb_array")
    with pytest.raises(ValueError, match="'deck'"):
        strict.reset(options={"deck": []})


def test_config_from_yaml(tmp_path):
    path = tmp_path / "solitaire.yaml"
    path.write_text("min_word_cards: 1\n")
    assert QuiddlerSolitaireEnv(config=str(path)).config.min_word_cards == 1


def test_render_modes(capsys):
    env = QuiddlerSolitaireEnv(render_mode="ansi")
    env.reset(options={"piles": WIN_PILES})
    text = env.render()
    lines = text.splitlines()
    assert lines[2].split() == ["top", "W", "O", "R", "D", "G", "A", "M", "E"]
    assert lines[3].split() == ["down", *["5"] * 8]
    assert "words possible, best: " in text
    env.step(word_action(0x0F))
    assert "-> WORD (W-O-R-D)" in env.render()
    human = QuiddlerSolitaireEnv(render_mode="human")
    human.reset(options={"piles": WIN_PILES})
    assert "score 0" in capsys.readouterr().out


@pytest.mark.slow
def test_maskable_ppo_learns_a_few_steps_through_subprocesses():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    # "module:id" makes each worker process import quiddler_env (which registers the id) first.
    vec = make_vec_env("quiddler_env:QuiddlerSolitaire-v0", n_envs=2, seed=0, vec_env_cls=SubprocVecEnv)
    vec.reset()
    masks = np.stack(vec.env_method("action_masks"))
    assert masks.shape == (2, NUM_ACTIONS) and masks.any(axis=1).all()
    model = MaskablePPO("MlpPolicy", vec, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    env = QuiddlerSolitaireEnv()
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]  # the masked policy only picks legal moves
    vec.close()


@pytest.mark.slow
def test_example_script_runs():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "solitaire_random.py"), "--episodes", "5", "--seed", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "policy=random episodes=5 mean_score=" in proc.stdout and "win_rate=" in proc.stdout
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "solitaire_random.py"), "--episodes", "1", "--policy", "greedy"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "policy=greedy episodes=1" in proc.stdout
