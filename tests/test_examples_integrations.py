"""The integration examples (issue 14) run as scripts with tiny budgets: SB3 through PettingZoo's action-mask
tutorial pattern, TorchRL's PettingZooWrapper, Tianshou's multi-agent algorithm, a CleanRL-style PPO on the vector
env. (RLlib's PettingZooEnv example runs in the RLlib venv: tests/test_rllib.py.)"""

from __future__ import annotations

import pytest

from tests.test_examples_env import run_example

pytestmark = pytest.mark.slow


def test_sb3_through_the_tutorial_wrapper_on_the_registry_id():
    summary, _ = run_example("sb3_pettingzoo.py", "--timesteps", "600", "--eval-games", "2", "--seed", "3")
    assert summary["env"] == "quiddler/quiddler-v0" and summary["timesteps"] >= 600
    assert summary["observation_size"] == 287 and summary["games"] == 2
    assert 0.0 <= summary["model_win_rate"] <= 1.0 and summary["model_mean_total"] > 0


def test_sb3_example_with_the_solver_features():
    summary, _ = run_example("sb3_pettingzoo.py", "--timesteps", "300", "--eval-games", "1", "--features")
    assert summary["features"] and summary["observation_size"] == 287 + 132


def test_torchrl_plays_whole_games_through_its_pettingzoo_wrapper():
    pytest.importorskip("torchrl")
    summary, _ = run_example("torchrl_aec.py", "--games", "2", "--eval-games", "2")
    assert summary["games"] == 2 and summary["agent_steps"] > 2 * 20  # two whole games, both seats moving
    assert len(summary["mean_return"]) == 2 and summary["eval_games"] == 2


def test_tianshou_trains_a_dqn_seat_against_a_random_seat():
    pytest.importorskip("tianshou")
    summary, _ = run_example(
        "tianshou_marl.py", "--epochs", "1", "--epoch-steps", "150", "--envs", "2", "--eval-games", "2"
    )
    assert summary["env_steps"] >= 150 and summary["gradient_steps"] > 0 and summary["eval_games"] == 2


def test_cleanrl_style_ppo_on_the_vector_env():
    summary, _ = run_example(
        "cleanrl_ppo.py", "--total-timesteps", "2048", "--num-envs", "16", "--num-steps", "64", "--opponents", "greedy"
    )
    assert summary["updates"] == 2 and summary["steps"] == 2048 and summary["games"] > 0
    assert 0.0 <= summary["last_quarter"]["win_rate"] <= 1.0
