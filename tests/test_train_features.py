"""Observation features, the layout shaping of the training env, and the imitation warm start."""

from __future__ import annotations

import json

import numpy as np
import pytest

from quiddler_agents import make
from quiddler_agents.policies import PolicyLoadError, load_policy, save_policy_bundle
from quiddler_agents.training.config import RunConfig
from quiddler_agents.training.sb3.opponents import TrainingEnv
from quiddler_agents.training.sb3.pretrain import Demonstrations, behaviour_clone, collect_demonstrations, imitate
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.game import Phase
from quiddler_env.core.observation import observation_layout
from quiddler_env.core.solver import get_solver
from quiddler_env.features import FEATURE_SETS, ObservationFeatures, feature_set

RULES = QuiddlerConfig(num_players=2)
BASE = observation_layout(2).size


def _play(env, seed, choose):
    """Play one episode; `choose(obs, mask)` picks the learner's moves. Returns (observations, rewards, infos)."""
    obs, _ = env.reset(seed=seed)
    seen, rewards, infos = [obs], [], []
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(choose(obs, env.action_masks()))
        seen.append(obs)
        rewards.append(reward)
        infos.append(info)
        done = terminated or truncated
    return seen, rewards, infos


def test_solver_features_say_what_the_solver_says():
    solver = get_solver(load_dictionary("enable"), 2)
    env = TrainingEnv(RULES, opponents=make("greedy", config=RULES), features="solver_v1", learner_seat=0)
    assert env.observation_space.shape == (BASE + 132,)
    rng = np.random.default_rng(0)
    checked = {"draw": 0, "discard": 0}
    obs, _ = env.reset(seed=1)
    for _ in range(60):
        assert env.observation_space.contains(obs)
        f = obs[BASE:]
        hand = list(env.game.hands[env.seat])
        if env.game.phase == Phase.DRAW:
            now = solver.best_layout(hand, counts=True)
            assert f[0] == pytest.approx(now.score / 50) and f[1] == pytest.approx(now.n_words / 5)
            top = env.game.discard_pile[-1]
            taken = list(hand)
            taken[top] += 1
            best = max(o.score for o in solver.discard_options(taken))
            assert f[4] == pytest.approx((best - now.score) / 50)
            assert not f[8:].any()
            checked["draw"] += 1
        else:
            options = {o.face: o for o in solver.discard_options(hand)}
            for face in range(31):
                block = f[8 + 4 * face : 12 + 4 * face]
                if face in options:
                    o = options[face]
                    assert block == pytest.approx([o.score / 50, o.n_words / 5, o.longest / 10, float(o.goes_out)])
                else:
                    assert not block.any()
            assert not f[:8].any()
            checked["discard"] += 1
        obs, _, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated:
            obs, _ = env.reset(seed=2)
    assert min(checked.values()) > 10


def test_feature_greedy_is_what_the_features_make_easy():
    # Taking the discard when it gains, and the discard with the best score left, is the greedy bot's play.
    env = TrainingEnv(RULES, opponents=make("random", config=RULES), features="solver_v1", learner_seat="random")

    def feature_greedy(obs, mask):
        f = obs[BASE:]
        if mask[0]:
            return 1 if mask[1] and f[4] > 0 else 0
        legal = np.flatnonzero(mask)
        pool = [a for a in legal if a >= 33] or list(legal)
        return int(max(pool, key=lambda a: f[8 + 4 * ((a - 33) if a >= 33 else (a - 2))]))

    margins = []
    for seed in range(16):  # 16 games: one game's margin spreads widely (about 45 points)
        _, _, infos = _play(env, seed, feature_greedy)
        totals = [r["total"] for r in infos[-1]["round_result"]]
        margins.append(totals[infos[-1]["seat"]] - totals[1 - infos[-1]["seat"]])
    assert np.mean(margins) > 40  # greedy play beats random by far


def test_feature_set_errors():
    assert set(FEATURE_SETS) == {"solver_v1", "solver_v2"}
    with pytest.raises(ValueError, match="unknown observation feature set 'magic'; known: solver_v1, solver_v2"):
        feature_set("magic")
    features = ObservationFeatures("solver_v1", RULES)
    with pytest.raises(ValueError, match="has 5 entries"):
        features(np.zeros(5, dtype=np.float32))
    with pytest.raises(ValueError, match="layout_shaping"):
        TrainingEnv(RULES, layout_shaping=-1.0)


def test_policy_bundle_with_features_loads_safely_and_plays(tmp_path):
    from sb3_contrib import MaskablePPO

    env = TrainingEnv(RULES, features="solver_v1")
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, policy_kwargs={"net_arch": [16]}, seed=0)
    save_policy_bundle(model, tmp_path / "b", {"config": RULES.to_dict(), "observation_features": "solver_v1"})
    agent = load_policy(tmp_path / "b", num_players=2)
    assert agent.features == "solver_v1" and agent.observation_size == BASE + 132
    rng_env = TrainingEnv(RULES, learner_seat=0)
    obs, _ = rng_env.reset(seed=0)
    for _ in range(20):
        mask = rng_env.action_masks().astype(np.int8)
        action = agent.act(obs, mask)
        assert mask[action]
        obs, _, terminated, _, _ = rng_env.step(action)
        assert not terminated
    # The features are part of the network's input: without them the sizes do not fit.
    desc = json.loads((tmp_path / "b" / "policy.json").read_text())
    desc["observation_features"] = None
    (tmp_path / "b" / "policy.json").write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match="size"):
        load_policy(tmp_path / "b", num_players=2)
    desc["observation_features"] = "magic"
    (tmp_path / "b" / "policy.json").write_text(json.dumps(desc))
    with pytest.raises(PolicyLoadError, match="unknown observation feature set 'magic'"):
        load_policy(tmp_path / "b", num_players=2)


def test_layout_shaping_only_moves_credit_within_each_round():
    """Per round the shaping adds up to minus the potential of the learner's first decision: no action changes it."""
    scale = 0.01
    plain = TrainingEnv(RULES, opponents=make("greedy", config=RULES), learner_seat=1, reward_mode="relative")
    shaped = TrainingEnv(
        RULES, opponents=make("greedy", config=RULES), learner_seat=1, reward_mode="relative", layout_shaping=2.0
    )
    for seed in (0, 1):
        rng = np.random.default_rng(seed)
        moves = []

        def pick(obs, mask, rng=rng, moves=moves):
            moves.append(int(rng.choice(np.flatnonzero(mask))))
            return moves[-1]

        _, plain_rewards, _ = _play(plain, seed, pick)
        replay = iter(moves)
        firsts = [None]
        shaped_rewards = []
        shaped.reset(seed=seed)
        firsts[0] = shaped.layout_potential()
        done = False
        while not done:
            _, reward, terminated, truncated, info = shaped.step(next(replay))
            shaped_rewards.append(reward)
            done = terminated or truncated
            if "round_result" in info and not done:
                firsts.append(shaped.layout_potential())
        extra = np.asarray(shaped_rewards) - np.asarray(plain_rewards)
        assert np.abs(extra).max() > 0  # the shaping does pay out along the way
        assert extra.sum() == pytest.approx(-2.0 * scale * sum(firsts), abs=1e-6)


@pytest.mark.slow
def test_imitation_warm_start_copies_the_teacher():
    from sb3_contrib import MaskablePPO

    cfg = RunConfig.from_mapping(
        {
            "opponents": ["random"],
            "algo": {"observation_features": "solver_v1", "net_arch": [64]},
            "pretrain": {"teacher": "greedy", "games": 60, "epochs": 15, "batch_size": 64},
        }
    )
    data = collect_demonstrations(cfg, 60, seed=0)
    n = len(data.actions)
    assert data.observations.shape == (n, BASE + 132) and data.masks.shape == (n, 64)
    assert data.masks[np.arange(n), data.actions].all()  # the teacher's moves are legal
    again = collect_demonstrations(cfg, 60, seed=0)
    assert np.array_equal(again.actions, data.actions) and np.array_equal(again.returns, data.returns)
    env = TrainingEnv(cfg.rules, features="solver_v1")
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [64]}, seed=0)
    figures = behaviour_clone(model, data, cfg, seed=0)
    # Far above a uniform pick among the legal moves (about 0.3); 60 games of data, as 30 spread from 0.61 to 0.68
    assert figures["decisions"] == n and figures["held_out_accuracy"] > 0.65


def test_dagger_plays_the_actor_and_labels_with_the_teacher():
    cfg = RunConfig.from_mapping({"opponents": ["random"], "pretrain": {"teacher": "greedy", "games": 4}})
    teacher_games = collect_demonstrations(cfg, 4, seed=3)
    again = collect_demonstrations(cfg, 4, seed=3)
    assert teacher_games.agreement is None and np.array_equal(again.actions, teacher_games.actions)
    # A random actor leads to other positions; the labels there are the teacher's legal moves.
    rng = np.random.default_rng(0)
    played = []

    def wild_actor(obs, mask):
        played.append(int(rng.choice(np.flatnonzero(mask))))
        return played[-1]

    wild = collect_demonstrations(cfg, 4, seed=3, actor=wild_actor)
    n = len(wild.actions)
    assert len(played) == n and wild.masks[np.arange(n), wild.actions].all()
    assert wild.agreement == pytest.approx(np.mean(np.asarray(played) == wild.actions))
    assert 0.0 < wild.agreement < 1.0
    # The actor's moves were played, not the labels: the games left the teacher's.
    same = min(n, len(teacher_games.actions))
    assert not np.array_equal(wild.observations[:same], teacher_games.observations[:same])
    # Another round's stream deals other games.
    other = collect_demonstrations(cfg, 4, seed=3, stream=1)
    assert not np.array_equal(other.observations[0], teacher_games.observations[0])
    both = Demonstrations.concatenate([teacher_games, wild])
    assert len(both.actions) == len(teacher_games.actions) + n and both.games == 8


@pytest.mark.slow
def test_dagger_rounds_refit_on_the_gathered_decisions():
    from sb3_contrib import MaskablePPO

    cfg = RunConfig.from_mapping(
        {
            "opponents": ["random"],
            "algo": {"net_arch": [32]},
            "pretrain": {
                "teacher": "greedy",
                "games": 6,
                "epochs": 3,
                "batch_size": 64,
                "dagger_rounds": 2,
                "dagger_games": 3,
            },
        }
    )
    env = TrainingEnv(cfg.rules)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [32]}, seed=0)
    lines = []
    figures = imitate(model, cfg, seed=0, say=lines.append)
    rounds = figures["dagger"]
    assert [r["round"] for r in rounds] == [1, 2]
    assert [line.split(":")[0] for line in lines if line.startswith(("imitation of", "DAgger round"))] == [
        "imitation of greedy",
        "DAgger round 1",
        "DAgger round 1",
        "DAgger round 2",
        "DAgger round 2",
    ]  # each round: its start, then its figures
    assert rounds[0]["decisions"] > figures["decisions"] and rounds[1]["decisions"] > rounds[0]["decisions"]
    assert all(0.0 <= r["agreement"] <= 1.0 for r in rounds)


def test_soft_labels_are_the_teachers_values_through_a_softmax_and_the_fit_follows_them():
    from sb3_contrib import MaskablePPO

    from quiddler_agents.training.sb3.pretrain import soft_target

    class Weighed:
        last_values = ([3, 5, 40], np.asarray([2.0, 4.0, 0.0]))

    target = soft_target(Weighed(), 5, 64, temperature=2.0)
    # softmax((2, 4, 0) / 2) = e^1, e^2, e^0 over their sum, worked out by hand.
    expected = np.exp([1.0, 2.0, 0.0]) / np.exp([1.0, 2.0, 0.0]).sum()
    np.testing.assert_allclose(target[[3, 5, 40]], expected, rtol=1e-6)
    assert target.sum() == pytest.approx(1.0) and np.count_nonzero(target) == 3

    class Unweighed:
        last_values = None

    assert np.flatnonzero(soft_target(Unweighed(), 7, 64, 2.0)).tolist() == [7]

    cfg = RunConfig.from_mapping(
        {
            "opponents": ["random"],
            "algo": {"net_arch": [32]},
            "pretrain": {"teacher": "search:samples=4", "games": 3, "epochs": 20, "batch_size": 64, "soft_labels": 3.0},
        }
    )
    data = collect_demonstrations(cfg, 3, seed=1)
    n = len(data.actions)
    assert data.targets.shape == (n, 64) and np.allclose(data.targets.sum(axis=1), 1.0)
    assert (data.targets[~data.masks] == 0).all()  # nothing on illegal moves
    soft = (data.targets > 0).sum(axis=1) > 1
    assert soft.any() and not soft.all()  # weighed decisions are soft, the others one-hot
    # The teacher's move is the most probable target wherever it weighed its moves.
    assert (data.targets[np.arange(n), data.actions] == data.targets.max(axis=1)).all()
    env = TrainingEnv(cfg.rules)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [32]}, seed=0)
    figures = behaviour_clone(model, data, cfg, seed=0)
    assert figures["soft_labels"] == 3.0 and figures["decisions"] == n


def _iteration_config(**pretrain):
    return RunConfig.from_mapping(
        {
            "opponents": ["random"],
            "env": {"num_players": 2, "hand_sizes": [3]},
            "algo": {"net_arch": [32]},
            "pretrain": {
                "teacher": "greedy",
                "games": 4,
                "epochs": 2,
                "batch_size": 64,
                "dagger_rounds": 2,
                "dagger_games": 2,
                "dagger_teacher": "guided:samples=2",
                **pretrain,
            },
        }
    )


def _model(cfg, seed):
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", TrainingEnv(cfg.rules), policy_kwargs={"net_arch": [32]}, seed=seed)


@pytest.mark.usefixtures("one_torch_thread")
def test_expert_iteration_labels_with_search_guided_by_the_learners_own_network():
    from quiddler_agents.guided import GuidedSearchAgent
    from quiddler_agents.training.sb3.pretrain import make_teacher

    cfg = _iteration_config()
    model = _model(cfg, 0)
    teacher = make_teacher("guided:samples=2", cfg, model)
    assert isinstance(teacher, GuidedSearchAgent) and teacher.samples == 2
    assert teacher.guide().policy is model.policy  # the network in training, not a zoo entry
    assert make_teacher("guided:policy=champion-2p", cfg, model).policy == "champion-2p"
    assert type(make_teacher("greedy", cfg, model)).__name__ == "GreedyAgent"
    # Its labels follow the network: a change of weights changes what it plays somewhere.
    first = collect_demonstrations(cfg, 4, seed=4, teacher=teacher)
    with __import__("torch").no_grad():
        for p in model.policy.parameters():
            p.add_(__import__("torch").randn_like(p) * 2.0)
    again = collect_demonstrations(cfg, 4, seed=4, teacher=make_teacher("guided:samples=2", cfg, model))
    assert first.masks[np.arange(len(first.actions)), first.actions].all()
    assert len(first.actions) != len(again.actions) or not np.array_equal(first.actions, again.actions)


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_a_cut_warm_start_resumes_after_its_last_stage_with_the_same_result(tmp_path):
    import torch

    from quiddler_agents.training.sb3.pretrain import PretrainStore

    cfg = _iteration_config()
    whole = _model(cfg, 0)
    figures = imitate(whole, cfg, seed=0, say=lambda _: None, store=PretrainStore(tmp_path / "whole", whole))
    assert [r["round"] for r in figures["dagger"]] == [1, 2]
    assert all(r["teacher"] == "guided:samples=2" for r in figures["dagger"])

    class Cut(Exception):
        pass

    def cut_at_round_2(line):
        if line.startswith("DAgger round 2:"):
            raise Cut

    cut = _model(cfg, 0)
    with pytest.raises(Cut):
        imitate(cut, cfg, seed=0, say=cut_at_round_2, store=PretrainStore(tmp_path / "cut", cut))
    fresh = _model(cfg, 99)  # other initial weights: the store's are loaded
    lines = []
    resumed = imitate(fresh, cfg, seed=0, say=lines.append, store=PretrainStore(tmp_path / "cut", fresh))
    assert lines[0] == "imitation: resuming after DAgger round 1"
    assert not any(line.startswith("imitation of") for line in lines)  # the first fit was not done again
    assert [r["round"] for r in resumed["dagger"]] == [1, 2]
    assert [r["decisions"] for r in resumed["dagger"]] == [r["decisions"] for r in figures["dagger"]]
    for a, b in zip(whole.policy.state_dict().values(), fresh.policy.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b)
