"""The native vector env (`gymnasium.make_vec("Quiddler-v0", vectorization_mode="vector_entry_point")`)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import quiddler_env  # noqa: F401  (registers the ids)
from quiddler_env.core.batch import StreamGenerator, game_seed, learner_seats
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.observation import encode_observation, observation_layout
from quiddler_env.envs.common import IllegalActionError
from quiddler_env.envs.vector_env import RESET_ACTION, OpponentMix, QuiddlerVectorEnv


def make(num_envs=4, **options):
    return gym.make_vec("Quiddler-v0", num_envs=num_envs, vectorization_mode="vector_entry_point", **options)


def first_legal(masks):
    return np.argmax(masks, axis=1)


def random_legal(rng, masks):
    return np.argmax(rng.random(masks.shape) * masks + masks, axis=1)


def play(envs, steps, seed=0, choose=None):
    """Steps of random legal actions (from a fixed generator); returns the per-step records."""
    rng = np.random.default_rng(99)
    obs, infos = envs.reset(seed=seed)
    records = [(obs, None, None, None, infos)]
    for _ in range(steps):
        masks = infos["action_mask"]
        actions = choose(masks) if choose else random_legal(rng, masks)
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        records.append((obs, rewards, terminated, truncated, infos))
    return records


def test_make_vec_builds_the_native_vector_env():
    envs = make(3, num_players=3)
    assert isinstance(envs, QuiddlerVectorEnv)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert envs.single_observation_space.shape == (observation_layout(3).size,)
    assert envs.single_action_space.n == 64
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (3, observation_layout(3).size) and obs.dtype == np.float32
    assert all(envs.single_observation_space.contains(o) for o in obs)
    assert infos["action_mask"].shape == (3, 64)
    assert np.array_equal(envs.action_masks(), infos["action_mask"].astype(bool))


def test_the_first_deal_is_the_single_engines_from_the_same_game_seed():
    envs = make(3, learner_seat=0)
    obs, _ = envs.reset(seed=21)
    for i in range(3):
        game = QuiddlerGame()
        game.reset(rng=StreamGenerator(game_seed(21, i, 0)))  # seat 0 moves first: no opponent moved yet
        assert np.array_equal(encode_observation(game, 0), obs[i])


def test_same_seed_same_games_whatever_the_number_of_envs():
    small = play(make(2, learner_seat="random", opponents="greedy"), 120, seed=4, choose=first_legal)
    large = play(make(5, learner_seat="random", opponents="greedy"), 120, seed=4, choose=first_legal)
    for (o2, r2, t2, _, i2), (o5, r5, t5, _, i5) in zip(small, large, strict=True):
        assert np.array_equal(o2, o5[:2])
        assert np.array_equal(i2["seat"], i5["seat"][:2])
        if r2 is not None:
            assert np.array_equal(r2, r5[:2]) and np.array_equal(t2, t5[:2])
    again = play(make(2, learner_seat="random", opponents="greedy"), 120, seed=4, choose=first_legal)
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(small, again, strict=True))
    other = play(make(2, learner_seat="random", opponents="greedy"), 5, seed=5, choose=first_legal)
    assert not np.array_equal(other[0][0], small[0][0])


@pytest.mark.parametrize("num_players", [2, 3, 5, 8])
def test_drawn_learner_seats_are_uniform_and_each_games_own(num_players):
    seeds = game_seed(11, np.arange(40_000), 3)
    seats = learner_seats(seeds, num_players)
    assert seats.min() == 0 and seats.max() == num_players - 1
    expected = seeds.size / num_players
    chi2 = ((np.bincount(seats, minlength=num_players) - expected) ** 2 / expected).sum()
    assert chi2 < 30  # far beyond the 99.9% point of chi-square with 7 degrees of freedom (24.3)
    assert [int(learner_seats(seeds[j : j + 1], num_players)[0]) for j in range(50)] == seats[:50].tolist()
    # consecutive slots' seats are independent: equal as often as chance says (1 / players; 8 sigma)
    assert abs(np.mean(seats[1:] == seats[:-1]) - 1 / num_players) < 0.02


def test_the_vector_env_seats_the_learner_by_learner_seats():
    envs = make(6, num_players=3, learner_seat="random")
    _, infos = envs.reset(seed=5)
    assert np.array_equal(infos["seat"], learner_seats(game_seed(5, np.arange(6), 0), 3))


def test_workers_with_slot_offsets_play_the_games_of_one_env():
    whole = play(make(6, opponents="greedy"), 80, seed=8, choose=first_legal)
    parts = [play(make(3, opponents="greedy", slot_offset=k), 80, seed=8, choose=first_legal) for k in (0, 3)]
    for step, record in enumerate(whole):
        assert np.array_equal(record[0], np.concatenate([parts[0][step][0], parts[1][step][0]]))
    with pytest.raises(ValueError, match="option 'slot_offset'"):
        make(2, slot_offset=-1)


def test_round_score_rewards_add_up_to_the_final_totals():
    envs = make(3, reward_mode="round_score", learner_seat="random")
    records = play(envs, 400)
    summed = np.zeros(3)
    finished = 0
    for _, rewards, terminated, _, infos in records[1:]:
        summed += rewards
        for i in np.flatnonzero(terminated):
            total = infos["totals"][i][infos["seat"][i]]
            assert summed[i] == pytest.approx(total * 0.01)
            summed[i] = 0.0
            finished += 1
    assert finished >= 3


def test_relative_and_win_loss_rewards():
    records = play(make(4, reward_mode="win_loss"), 300)
    finals = []
    for _, rewards, terminated, _, infos in records[1:]:
        assert np.all(rewards[~terminated] == 0.0)
        for i in np.flatnonzero(terminated):
            totals, seat = infos["totals"][i], infos["seat"][i]
            expected = -1.0 if totals[seat] < totals.max() else (1.0 if infos["winner_count"][i] == 1 else 0.0)
            assert rewards[i] == expected
            finals.append(expected)
    assert finals and set(finals) <= {-1.0, 0.0, 1.0}
    rel = play(make(2, reward_mode="relative", reward_scale=1.0, num_players=3), 200)
    for _, rewards, _, _, infos in rel[1:]:
        if "round_scores" in infos:  # a round ended: the reward is own gain minus the others' mean
            for i in np.flatnonzero(infos["_round_scores"]):
                scores, seat = infos["round_scores"][i], infos["seat"][i]
                assert rewards[i] == pytest.approx(scores[seat] - (scores.sum() - scores[seat]) / 2)


def test_lead_rewards_add_up_to_each_games_final_lead():
    records = play(make(3, reward_mode="lead", reward_scale=1.0, num_players=4, learner_seat="random"), 600)
    summed = np.zeros(3)
    finished = 0
    for _, rewards, terminated, _, infos in records[1:]:
        summed += rewards
        for i in np.flatnonzero(terminated):
            totals, seat = infos["totals"][i], infos["seat"][i]
            assert summed[i] == pytest.approx(totals[seat] - np.delete(totals, seat).max())
            summed[i] = 0.0
            finished += 1
    assert finished >= 3


def test_next_step_autoreset_resets_on_the_step_after_the_end():
    envs = make(2)
    records = play(envs, 300)
    seen = 0
    for (_, _, terminated, _, infos), (obs, rewards, term2, trunc2, infos2) in zip(
        records[1:], records[2:], strict=False
    ):
        for i in np.flatnonzero(terminated):
            assert np.flatnonzero(infos["action_mask"][i]).tolist() == [RESET_ACTION]  # the reset mask
            assert rewards[i] == 0.0 and not term2[i] and not trunc2[i]
            v = observation_layout(2).view(obs[i])
            assert v["round"][0] == pytest.approx(1 / 8) and v["totals"].sum() == 0  # a new game
            assert infos2["action_mask"][i].any()
            seen += 1
    assert seen >= 2


def test_same_step_autoreset_returns_the_final_observation_in_infos():
    envs = make(2, autoreset_mode="SameStep")
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    records = play(envs, 300)
    seen = 0
    for obs, _, terminated, _, infos in records[1:]:
        for i in np.flatnonzero(terminated):
            final = observation_layout(2).view(infos["final_obs"][i])
            assert final["round"][0] == pytest.approx(1.0)  # the last round
            assert observation_layout(2).view(obs[i])["round"][0] == pytest.approx(1 / 8)
            assert infos["final_info"]["_totals"][i]
            assert not infos["final_info"]["action_mask"][i].any()  # the ended game has no legal move
            assert infos["action_mask"][i].any()
            seen += 1
    assert seen >= 2


def test_an_illegal_action_ends_that_episode_only():
    envs = make(3, illegal_reward=-2.5)
    _, infos = envs.reset(seed=0)
    actions = first_legal(infos["action_mask"])
    actions[1] = 63 if not infos["action_mask"][1, 63] else 62
    obs, rewards, terminated, truncated, infos = envs.step(actions)
    assert terminated.tolist() == [False, True, False]
    assert (
        rewards[1] == -2.5 and infos["illegal_action"][1] and infos["_illegal_action"].tolist() == [False, True, False]
    )
    for bad in (np.array([0.5, 1, 1]), np.array([True, False, True]), np.array([1, 1])):
        with pytest.raises(IllegalActionError, match="actions must be 3 integer action ids"):
            envs.step(bad)


def test_step_before_reset_and_bad_options_are_refused():
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\)"):
        make(2).step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="'expert' is not a compiled bot"):
        make(2, opponents="expert")
    with pytest.raises(ValueError, match="unknown option"):
        make(2, render_view="all")
    with pytest.raises(ValueError, match="num_envs must be a positive integer"):
        QuiddlerVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="autoreset_mode"):
        make(2, autoreset_mode="Disabled")


class Recorder:
    """A Python opponent: plays the lowest legal move, checks what it is given, counts its calls."""

    def __init__(self, batched: bool):
        self.calls = 0
        self.decisions = 0
        if batched:
            self.act_batch = self._act_batch

    def act(self, observation, action_mask):
        assert observation.shape == (observation_layout(2).size,) and action_mask.any()
        self.calls += 1
        self.decisions += 1
        return int(np.flatnonzero(action_mask)[0])

    def _act_batch(self, observations, masks):
        assert observations.shape[0] == masks.shape[0] and masks.any(axis=1).all()
        self.calls += 1
        self.decisions += masks.shape[0]
        return np.argmax(masks, axis=1)


def test_python_opponents_play_one_call_per_step_when_batched():
    batched, single = Recorder(True), Recorder(False)
    a = play(make(8, opponents=batched), 60, choose=first_legal)
    b = play(make(8, opponents=single), 60, choose=first_legal)
    assert batched.decisions == single.decisions > 0
    assert batched.calls < single.calls
    # The same moves, so the same games, either way.
    assert all(np.array_equal(x[0], y[0]) for x, y in zip(a, b, strict=True))


def test_an_illegal_opponent_move_raises():
    class Cheat:
        def act(self, observation, action_mask):
            return 63 if not action_mask[63] else 62

    envs = make(2, opponents=Cheat(), learner_seat=1)
    with pytest.raises(IllegalActionError, match="opponent policy .* chose illegal action"):
        envs.reset(seed=0)


def test_opponent_mixes_draw_per_episode_from_the_episode_seed():
    mix = OpponentMix([("random", 1.0), ("greedy", 1.0)])
    envs = make(16, opponents=mix)
    envs.reset(seed=3)
    drawn = [row[1] for row in envs.unwrapped.policies]
    assert set(drawn) == {"random", "greedy"}
    again = make(16, opponents=mix)
    again.reset(seed=3)
    assert [row[1] for row in again.unwrapped.policies] == drawn
    with pytest.raises(ValueError, match="weight of 'random' must be a positive number"):
        OpponentMix([("random", 0)])


def test_max_cycles_truncates_and_reset_mask_resets_some():
    envs = make(3, max_cycles=5)
    records = play(envs, 5)
    assert records[-1][3].all() and not records[-1][2].any()
    obs, _ = envs.reset(options={"reset_mask": np.array([True, False, False])})
    assert observation_layout(2).view(obs[0])["round"][0] == pytest.approx(1 / 8)


def test_returned_observations_and_masks_stay_the_callers():
    envs = make(3)
    obs0, infos0 = envs.reset(seed=5)
    kept = [(obs0, obs0.copy(), infos0["action_mask"], infos0["action_mask"].copy())]
    for _ in range(6):
        obs, _, _, _, infos = envs.step(first_legal(infos0["action_mask"]))
        assert not any(np.shares_memory(obs, o) for o, *_ in kept)
        kept.append((obs, obs.copy(), infos["action_mask"], infos["action_mask"].copy()))
        infos0 = infos
    obs, infos = envs.reset(options={"reset_mask": np.array([False, True, False])})
    assert not np.array_equal(obs[1], kept[-1][1][1]) and np.array_equal(obs[0], kept[-1][1][0])
    for obs_then, copy_then, mask_then, mask_copy in kept:  # nothing later wrote into them
        assert np.array_equal(obs_then, copy_then) and np.array_equal(mask_then, mask_copy)
    obs[:] = -1.0  # and writing into them changes nothing the env reads
    infos["action_mask"][:] = 0
    obs2, _, _, _, infos2 = envs.step(first_legal(envs.action_masks()))
    assert (obs2 >= 0).all() and infos2["action_mask"].any()


class FirstLegal:
    """A Python opponent (not compiled): the first legal move."""

    def act(self, observation, action_mask):
        return int(np.argmax(action_mask))


@pytest.mark.parametrize("opponents", ["random", FirstLegal()], ids=["compiled", "python"])
def test_step_infos_hold_each_games_round_figures_where_flagged_and_zeros_elsewhere(opponents):
    envs = make(16, opponents=opponents)
    g = envs.games
    rng = np.random.default_rng(5)
    _, infos = envs.reset(seed=3)
    rounds = finals = 0
    for _ in range(400):
        _, _, terminated, truncated, infos = envs.step(random_legal(rng, infos["action_mask"]))
        ended = infos.get("_round_scores", np.zeros(16, dtype=bool))
        over = infos.get("_totals", np.zeros(16, dtype=bool))
        assert np.array_equal(over, terminated & g.is_over)  # (next-step autoreset: the ended games stay)
        if ended.any():
            rounds += ended.sum()
            assert np.array_equal(infos["round_scores"][ended], g.round_scores[ended])
            assert np.array_equal(infos["round_bonuses"][ended], g.bonuses[ended])
            assert not infos["round_scores"][~ended].any() and not infos["round_bonuses"][~ended].any()
        if over.any():
            finals += over.sum()
            totals = g.totals[over]
            assert np.array_equal(infos["totals"][over], totals)
            assert np.array_equal(infos["winner_count"][over], (totals == totals.max(axis=1, keepdims=True)).sum(1))
            assert not infos["totals"][~over].any() and not infos["winner_count"][~over].any()
    assert rounds > 50 and finals > 2


class FirstLegalBatched:
    """A Python opponent with `act_batch`: the first legal move of each game, in one call."""

    def act(self, observation, action_mask):
        return int(np.argmax(action_mask))

    def act_batch(self, observations, masks):
        return np.argmax(masks, axis=1)


@pytest.mark.parametrize(
    "opponents",
    ["greedy", [OpponentMix([("random", 1), ("greedy", 1)])], FirstLegalBatched()],
    ids=["compiled", "compiled-mix", "python"],
)
def test_no_mask_row_is_ever_all_zero_and_the_reset_rows_ignore_their_action(opponents):
    """N=256 games of random play: every row of every mask allows a move (the rows of the games that just ended
    only `RESET_ACTION`), a uniform sampler over the legal moves never fails, and on the reset step any action,
    even an illegal one, changes nothing: a twin env given 63 on those rows plays exactly the same."""
    n_envs, steps = 256, 300
    envs, twin = (make(n_envs, opponents=opponents, hand_sizes=[3, 4]) for _ in range(2))
    _, infos = envs.reset(seed=11)
    _, twin_infos = twin.reset(seed=11)
    rng = np.random.default_rng(0)
    ended = np.zeros(n_envs, dtype=bool)
    resets = 0
    for _ in range(steps):
        masks = infos["action_mask"]
        assert masks.any(axis=1).all() and envs.action_masks().any(axis=1).all()
        assert np.array_equal(masks, twin_infos["action_mask"])
        rows = np.flatnonzero(ended)
        assert (masks[rows, RESET_ACTION] == 1).all() and (masks[rows].sum(axis=1) == 1).all()
        actions = np.array([np.flatnonzero(m)[rng.integers(np.count_nonzero(m))] for m in masks])  # uniform, legal
        twin_actions = actions.copy()
        twin_actions[rows] = 63  # never legal at a game's start: ignored all the same
        obs, rewards, terminated, truncated, infos = envs.step(actions)
        twin_obs, twin_rewards, twin_term, twin_trunc, twin_infos = twin.step(twin_actions)
        assert np.array_equal(obs, twin_obs) and np.array_equal(rewards, twin_rewards)
        assert np.array_equal(terminated, twin_term) and np.array_equal(truncated, twin_trunc)
        assert not infos.get("illegal_action", np.zeros(n_envs, bool)).any()
        assert not twin_infos.get("illegal_action", np.zeros(n_envs, bool)).any()
        assert not rewards[rows].any() and not terminated[rows].any()  # the reset step: a new game, no reward
        resets += rows.size
        ended = terminated | truncated
    assert resets > n_envs  # every game ended at least once on average


@pytest.mark.parametrize("opponents", ["random", FirstLegal()], ids=["compiled", "python"])
def test_flat_infos_keep_every_key_in_every_step(opponents):
    envs = make(8, opponents=opponents, hand_sizes=[3, 4], infos="flat")
    full = make(8, opponents=opponents, hand_sizes=[3, 4])
    records, plain = play(envs, 120), play(full, 120)
    keys = set(records[0][-1])
    assert {"round_scores", "totals", "winner_count", "illegal_action", "_illegal_action"} <= keys
    for (_, _, _, _, infos), (_, _, _, _, same) in zip(records, plain, strict=True):
        assert set(infos) == keys and {k: np.shape(v) for k, v in infos.items()} == {
            k: np.shape(v) for k, v in records[0][-1].items()
        }
        for key, value in same.items():  # where the full infos have a key, the flat ones agree
            assert np.array_equal(infos[key], value), key
        for key in set(infos) - set(same):  # and where they do not, nothing happened
            assert not np.asarray(infos[key]).any(), key
