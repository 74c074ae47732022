"""PettingZoo's tutorial "SB3: Action Masked PPO for Connect Four" (`sb3_connect_four_action_mask.py`) on Quiddler.

Its code is inlined below with the least change that runs it here: `SB3ActionMaskWrapper` is also a
`gymnasium.Env` (Gymnasium 1.x wrappers such as `ActionMasker` accept nothing else; the tutorial itself
refuses Gymnasium > 0.29.1), and the budgets are tiny (the PPO rollout `n_steps=128`, 256 steps, a few games).
The tutorial counts a win from `env.rewards` at the game's end, which is ±1 in a classic game. With
Quiddler's default reward those are the last round's scores; with `reward_mode="win_loss"` they are the
game's result, and the win rate it prints is the true one (docs/coming-from.md).
"""

from __future__ import annotations

import glob
import os
import re
import time
import types

import gymnasium
import pettingzoo.utils
import pytest
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from sb3_contrib.common.wrappers import ActionMasker

from quiddler_env.envs import quiddler_v0

# ---- the tutorial's code (PettingZoo tutorials/SB3/connect_four/sb3_connect_four_action_mask.py) ----------------


class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):  # gymnasium.Env: added (Gymnasium 1.x)
    """Wrapper to allow PettingZoo environments to be used with SB3 illegal action masking."""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        self.observation_space = super().observation_space(self.possible_agents[0])["observation"]
        self.action_space = super().action_space(self.possible_agents[0])
        return self.observe(self.agent_selection), {}

    def step(self, action):
        current_agent = self.agent_selection
        super().step(action)
        next_agent = self.agent_selection
        return (
            self.observe(next_agent),
            self._cumulative_rewards[current_agent],
            self.terminations[current_agent],
            self.truncations[current_agent],
            self.infos[current_agent],
        )

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_mask(self):
        return super().observe(self.agent_selection)["action_mask"]


def mask_fn(env):
    return env.action_mask()


def train_action_mask(env_fn, steps=10_000, seed=0, **env_kwargs):
    env = env_fn.env(**env_kwargs)
    print(f"Starting training on {str(env.metadata['name'])}.")
    env = SB3ActionMaskWrapper(env)
    env.reset(seed=seed)
    env = ActionMasker(env, mask_fn)
    model = MaskablePPO(MaskableActorCriticPolicy, env, verbose=1, n_steps=128, batch_size=64)  # budget: added
    model.set_random_seed(seed)
    model.learn(total_timesteps=steps)
    model.save(f"{env.unwrapped.metadata.get('name')}_{time.strftime('%Y%m%d-%H%M%S')}")
    print("Model has been saved.")
    print(f"Finished training on {str(env.unwrapped.metadata['name'])}.\n")
    env.close()


def eval_action_mask(env_fn, num_games=100, render_mode=None, **env_kwargs):
    env = env_fn.env(render_mode=render_mode, **env_kwargs)
    print(f"Starting evaluation vs a random agent. Trained agent will play as {env.possible_agents[1]}.")
    try:
        latest_policy = max(glob.glob(f"{env.metadata['name']}*.zip"), key=os.path.getctime)
    except ValueError:
        print("Policy not found.")
        exit(0)
    model = MaskablePPO.load(latest_policy)
    scores = {agent: 0 for agent in env.possible_agents}
    total_rewards = {agent: 0 for agent in env.possible_agents}
    round_rewards = []
    for i in range(num_games):
        env.reset(seed=i)
        env.action_space(env.possible_agents[0]).seed(i)
        for agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            observation, action_mask = obs.values()
            if termination or truncation:
                if env.rewards[env.possible_agents[0]] != env.rewards[env.possible_agents[1]]:
                    winner = max(env.rewards, key=env.rewards.get)
                    scores[winner] += env.rewards[winner]
                for a in env.possible_agents:
                    total_rewards[a] += env.rewards[a]
                round_rewards.append(env.rewards)
                break
            else:
                if agent == env.possible_agents[0]:
                    act = env.action_space(agent).sample(action_mask)
                else:
                    act = int(model.predict(observation, action_masks=action_mask, deterministic=True)[0])
            env.step(act)
    env.close()
    if sum(scores.values()) == 0:
        winrate = 0
    else:
        winrate = scores[env.possible_agents[1]] / sum(scores.values())
    print("Rewards by round: ", round_rewards)
    print("Total rewards (incl. negative rewards): ", total_rewards)
    print("Winrate: ", winrate)
    print("Final scores: ", scores)
    return round_rewards, total_rewards, winrate, scores


# ---- the test ---------------------------------------------------------------------------------------------------


class GameRecorder(pettingzoo.utils.BaseWrapper):
    """Keeps each game's end as the env itself reports it (the `winners` info, the final totals), read when the
    next game is dealt or the env is closed: the tutorial's loop is not touched."""

    def __init__(self, env):
        super().__init__(env)
        self.games = []

    def _keep(self):
        raw = self.unwrapped
        if raw._has_game and all(raw.terminations.values()):
            winners = {tuple(info["winners"]) for info in raw.infos.values()}
            assert len(winners) == 1  # every agent's info names the same winners
            last_round = [r["round_score"] for r in raw.infos[raw.possible_agents[0]]["round_result"]]
            self.games.append((list(winners.pop()), list(raw.game.totals), last_round))

    def reset(self, seed=None, options=None):
        self._keep()
        super().reset(seed, options)

    def close(self):
        self._keep()
        super().close()


RULES = {"num_players": 2, "hand_sizes": [3, 4]}
NUM_GAMES = 6


def _evaluate(reward_mode, capsys):
    made = []

    def make(**kwargs):
        made.append(GameRecorder(quiddler_v0.env(**kwargs)))
        return made[-1]

    env_fn = types.SimpleNamespace(env=make)
    options = {} if reward_mode is None else {"reward_mode": reward_mode}
    capsys.readouterr()
    round_rewards, total_rewards, winrate, scores = eval_action_mask(env_fn, num_games=NUM_GAMES, **RULES, **options)
    printed = capsys.readouterr().out
    (recorder,) = made
    assert len(recorder.games) == NUM_GAMES == len(round_rewards)
    return round_rewards, winrate, scores, printed, recorder.games


def test_the_tutorial_prints_the_true_win_rate_with_win_loss_rewards_and_not_without(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the tutorial saves and loads its model in the working folder
    train_action_mask(quiddler_v0, steps=256, seed=0, **RULES)
    assert glob.glob("quiddler_v0_*.zip")

    # reward_mode="win_loss": what the tutorial reads at the game's end is the game's result.
    round_rewards, winrate, scores, printed, games = _evaluate("win_loss", capsys)
    for rewards, (winners, totals, _) in zip(round_rewards, games, strict=True):
        assert set(rewards.values()) <= {-1.0, 0.0, 1.0}
        assert sum(rewards.values()) <= 0  # zero-sum here; never more than one +1
        best = max(totals)
        assert winners == [f"player_{p}" for p, t in enumerate(totals) if t == best]
        for agent, reward in rewards.items():
            if len(winners) == 1:
                assert reward == (1.0 if agent in winners else -1.0)
            else:
                assert reward == (0.0 if agent in winners else -1.0)
    sole = [winners[0] for winners, _, _ in games if len(winners) == 1]
    assert scores == {agent: sole.count(agent) for agent in ("player_0", "player_1")}
    true_rate = sole.count("player_1") / len(sole) if sole else 0
    assert winrate == true_rate
    assert float(re.search(r"Winrate:\s+(\S+)", printed).group(1)) == pytest.approx(true_rate)

    # The default reward: the figures read at the end are the last round's scores x 0.01, not a game's ±1, so
    # the tutorial's count says who won the last round. The games are the same (same seeds, same moves).
    round_rewards, _, _, _, same_games = _evaluate(None, capsys)
    assert same_games == games
    values = [v for rewards in round_rewards for v in rewards.values()]
    assert not set(values) <= {-1.0, 0.0, 1.0}
    assert any(0 < abs(v) < 1 for v in values)
    for rewards, (_, _, last_round) in zip(round_rewards, games, strict=True):
        assert [rewards[f"player_{p}"] for p in range(2)] == pytest.approx([0.01 * s for s in last_round])
