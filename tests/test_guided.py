"""The `guided` bot: search whose candidates and rollouts a trained policy guides."""

from __future__ import annotations

import numpy as np
import pytest

import quiddler_agents
from quiddler_agents.base import SeatView
from quiddler_agents.evaluation.tournament import Tournament, play_all
from quiddler_agents.guided import GuidedSearchAgent
from quiddler_agents.search import SearchAgent
from quiddler_env.core.config import QuiddlerConfig

from .test_agents import random_states

pytestmark = [
    pytest.mark.filterwarnings("ignore::UserWarning"),  # the zoo's bundles were made for env version 4
    pytest.mark.usefixtures("one_torch_thread"),
]

RULES = QuiddlerConfig(num_players=2)


def _discards(count: int, seed: int):
    """Discard phases of rounds in play (not final turns), from random play."""
    for _, obs, mask in random_states(RULES, seed=seed, count=400):
        seat = SeatView.decode(obs, 2)
        if seat.phase == "discard" and not seat.final_turn:
            yield obs, mask
            count -= 1
            if count == 0:
                return


def test_without_its_policy_it_is_search_move_for_move():
    """prior=0 and greedy rollouts: the same decisions as `search` from the same seed (the hook is faithful)."""
    guided = GuidedSearchAgent(7, RULES, prior=0, policy_rollouts=False, samples=8)
    search = SearchAgent(7, RULES, samples=8)
    moves = 0
    for _, obs, mask in random_states(RULES, seed=11, count=60):
        assert guided.act(obs, mask) == search.act(obs, mask)
        moves += 1
    assert moves == 60 and guided._guide is None  # never loaded the policy


def test_the_policys_favourites_join_the_candidates_in_its_order():
    bot = GuidedSearchAgent(3, RULES, prior=3, samples=8)
    plain = SearchAgent(3, RULES, samples=8)
    grew = 0
    for obs, mask in _discards(12, seed=5):
        legal = [int(a) for a in np.flatnonzero(mask)]
        probs = bot.guide().probabilities(obs, mask)
        favourites = [a for a in np.argsort(-probs, kind="stable").tolist() if probs[a] > 0][:3]
        bot.weigh(obs, mask)
        weighed = bot.last_values[0]
        assert set(favourites) <= set(weighed)
        assert set(plain._candidates(SeatView.decode(obs, 2), legal)) <= set(weighed)
        assert [probs[a] for a in weighed] == sorted((probs[a] for a in weighed), reverse=True)
        grew += len(weighed) > len(plain._candidates(SeatView.decode(obs, 2), legal))
    assert grew > 0  # the policy did add moves search would not have weighed


def test_policy_rollouts_move_by_the_policy_and_end_every_round():
    bot = GuidedSearchAgent(1, RULES, samples=8)
    obs, mask = next(_discards(1, seed=9))
    seat = SeatView.decode(obs, 2)
    candidates = bot._candidates(seat, [int(a) for a in np.flatnonzero(mask)])
    rows_moved = []
    real = GuidedSearchAgent._rollout_policy

    def spy(self, batch):
        policy = real(self, batch)
        act_batch = policy.act_batch
        if not getattr(act_batch, "spied", False):

            def counted(obs, masks):
                rows_moved.append(len(obs))
                return act_batch(obs, masks)

            counted.spied = True
            policy.act_batch = counted
        return policy

    GuidedSearchAgent._rollout_policy = spy
    try:
        values = bot.rollout_values(seat, obs, candidates)
    finally:
        GuidedSearchAgent._rollout_policy = real
    assert values.shape == (len(candidates),) and np.isfinite(values).all()
    assert sum(rows_moved) > 0
    batch = bot._batch(seat.hand_size)
    assert batch.is_over[: 8 * len(candidates)].all()  # every rollout row played its round to the end


def test_the_same_seed_plays_the_same_legal_games():
    tournament = Tournament(("guided:samples=4", "greedy"), games=2, seed=3, rules=RULES)

    def play():
        players = [quiddler_agents.make("guided:samples=4", config=RULES), quiddler_agents.make("greedy", config=RULES)]
        return [(g.totals, g.actions) for g in play_all(tournament, players)]

    first = play()  # the engine refuses an illegal move: both games were played to their end
    assert first == play()


def test_specs_and_errors():
    bot = quiddler_agents.make("guided:policy=champion-2p:prior=3:samples=16", config=RULES)
    assert (bot.policy, bot.prior, bot.samples) == ("champion-2p", 3, 16)
    with pytest.raises(ValueError, match="guided: prior must be"):
        quiddler_agents.make("guided:prior=65", config=RULES)
    with pytest.raises(ValueError, match="guided: policy must be"):
        GuidedSearchAgent(0, RULES, policy="  ")
    with pytest.raises(ValueError, match="policy bundle no-such-entry does not exist"):
        GuidedSearchAgent(0, RULES, policy="no-such-entry").guide()
    three = QuiddlerConfig(num_players=3)
    with pytest.raises(ValueError, match="no policy for a table of 3") as err:
        quiddler_agents.make("guided", config=three)  # refused before any game starts
    assert "\n" not in str(err.value)
    obs, mask = next((o, m) for _, o, m in random_states(three, seed=1, count=50) if m.sum() > 1)
    with pytest.raises(ValueError, match="no policy for a table of 3"):
        GuidedSearchAgent(0).act(obs, mask)  # the table read from the first observation


def test_at_four_players_the_4_player_policy_guides_it():
    rules = QuiddlerConfig(num_players=4, hand_sizes=(3, 4))
    bot = quiddler_agents.make("guided:samples=2", config=rules)
    players = [bot, *(quiddler_agents.make("greedy", config=rules) for _ in range(3))]
    record = quiddler_agents.play_game(players, seed=2, config=rules)
    assert len(record.totals) == 4
    assert bot.guide().num_players == 4 and bot._rollout_guides  # the 4-player entry guided its rollouts


def test_a_run_checks_a_guided_teacher_as_its_warm_start_plays_it():
    """In a warm start `guided` without `policy=` is guided by the learner: a 3-player run may name it, while a
    policy it names must load."""
    from quiddler_agents.training.checks import RunConfigError
    from quiddler_agents.training.config import RunConfig
    from quiddler_agents.training.run import preflight

    def run(**pretrain):
        return RunConfig.from_mapping(
            {"env": {"num_players": 3}, "opponents": ["greedy"], "pretrain": {"teacher": "greedy", **pretrain}}
        )

    preflight(run(dagger_teacher="guided:samples=8", dagger_rounds=1))
    with pytest.raises(RunConfigError, match="pretrain.dagger_teacher.*does not exist"):
        preflight(run(dagger_teacher="guided:policy=runs/nothing-here", dagger_rounds=1))
    with pytest.raises(RunConfigError, match="'opponents\\[0\\].spec'.*no policy for a table of 3"):
        preflight(RunConfig.from_mapping({"env": {"num_players": 3}, "opponents": ["guided"]}))
