"""Laying as the table lays (RULES.md section 6): the laying moments and order, the laid words in view, the
round results that record them, `layout: choose` as a lay decision in the engine and in every env."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import quiddler_agents
from quiddler_env.core import QuiddlerConfig, QuiddlerGame
from quiddler_env.core import actions as A
from quiddler_env.core.cards import COUNTS, FACE_INDEX, FACES, POINTS
from quiddler_env.core.game import Phase
from quiddler_env.core.laying import MAX_CANDIDATES
from quiddler_env.core.observation import encode_observation, observation_layout
from quiddler_env.envs import quiddler_v0
from tests.test_game import stacked_deck

F = FACE_INDEX


def _ether_round(layout: str = "auto") -> QuiddlerGame:
    """Seat 0 holds T H E R E and goes out; seat 1 holds B E A D Q."""
    game = QuiddlerGame(QuiddlerConfig(hand_sizes=(5,), layout=layout))
    game.reset(decks=[stacked_deck([list("THERE"), list("BEADQ")], "Z", ["X", "V"])])
    game.step(A.DRAW_PILE)  # X
    game.step(A.go_out(F["X"]))
    return game


def test_the_goer_lays_at_once_and_its_words_are_in_view():
    game = _ether_round()
    laid = game.laid[0]
    # ETHER (or another 5-letter word of these cards), not EH RET: same points, and the longest word.
    assert laid.score == 3 + 7 + 2 + 5 + 2 == 19 and laid.longest == 5 and laid.n_words == 1
    assert game.laid[1] is None and game.lay_order == [0] and game.current_player == 1
    view = observation_layout(2).view(encode_observation(game, 1))
    assert view["laid"].tolist() == [0.0, 1.0]  # own first: seat 1 has not laid, seat 0 (relative 1) has
    assert {FACES[f]: int(c) for f, c in enumerate(view["laid_cards"][1]) if c} == {"T": 1, "H": 1, "E": 2, "R": 1}
    assert not view["laid_cards"][0].any() and not view["laid_figures"][0].any()
    assert np.allclose(view["laid_figures"][1], [19 / 100, 5 / 22, 1 / 11])
    # The laid cards are public: they leave the observer's unseen count.
    assert view["unseen"][F["H"]] == 2 - 1 and view["unseen"][F["T"]] == 6 - 1


def test_round_result_records_the_laid_layouts_and_their_order():
    game = _ether_round()
    game.step(A.DRAW_PILE)  # V
    results = game.step(A.discard(F["Q"]))  # B E A D V: every card in words
    assert results is not None
    goer, other = results
    assert goer.went_out and goer.lay_position == 0 and other.lay_position == 1
    assert goer.bonuses == {"longest_word": 10} and goer.round_score == 29
    assert other.spelled == game.round_history[-1][1].spelled
    assert other.card_points == sum(POINTS[F[f]] for f in "BEADV") and other.unused == ()
    assert max(len(w) for w in other.spelled) < 5 and other.bonuses == {}
    assert other.to_dict()["lay_position"] == 1


def test_bonus_aware_laying_against_what_is_laid():
    """B E A D against a laid 3-letter word: BEAD (17 + the longest-word bonus), not AB DE (17)."""
    game = QuiddlerGame(QuiddlerConfig(hand_sizes=(4,)))
    game.reset(decks=[stacked_deck([["TH", "E", "O", "X"], list("BEAD")], "Z", ["Q", "V"])])
    game.step(A.DRAW_PILE)  # Q
    game.step(A.go_out(F["Q"]))  # TH E O X: THE + OX (or THO + EX), every card, longest 3 letters
    assert game.laid[0].goes_out and game.laid[0].longest == 3
    game.step(A.DRAW_PILE)  # V
    results = game.step(A.discard(F["V"]))
    bead = results[1]
    # One 4-letter word of B E A D (BEAD or ABED: the same cards), not AB DE.
    assert len(bead.words) == 1 and sorted(bead.words[0]) == sorted("BEAD") and bead.bonuses == {"longest_word": 10}
    assert bead.round_score == 8 + 2 + 2 + 5 + 10 == 27 and results[0].bonuses == {}


def test_after_a_turn_cap_everyone_lays_from_the_rounds_first_player():
    game = QuiddlerGame(QuiddlerConfig(num_players=3, hand_sizes=(3, 3), turn_cap=1, go_out="optional"))
    game.reset(seed=4)
    rng = np.random.default_rng(0)
    while game.rounds_completed == 0:
        legal = [a for a in game.legal_actions() if a < A.GO_OUT_BASE]  # nobody goes out
        game.step(int(rng.choice(legal)))
    dealer_round1 = 2  # seat n-1 deals the first round, so seat 0 plays first and lays first
    positions = [r.lay_position for r in game.round_history[0]]
    assert positions == [(seat - (dealer_round1 + 1)) % 3 for seat in range(3)]
    assert not any(r.went_out for r in game.round_history[0])


def test_choose_is_a_lay_decision_among_the_candidates():
    game = _ether_round("choose")
    assert game.phase == Phase.LAY and game.current_player == 0 and game.laid[0] is None
    mask = game.legal_action_mask()
    assert mask.shape == (A.NUM_ACTIONS + MAX_CANDIDATES,)
    k = len(game.candidates)
    assert k >= 1 and np.flatnonzero(mask).tolist() == [A.lay(i) for i in range(k)]
    assert all(c.goes_out for c in game.candidates)  # the goer lays every card
    obs = observation_layout(2).view(encode_observation(game, 0))
    assert obs["laying"][0] == 1 and obs["candidates"][:k].any(axis=1).all() and not obs["candidates"][k:].any()
    other = observation_layout(2).view(encode_observation(game, 1))
    assert other["laying"][0] == 0 and not other["candidates"].any() and not other["laid"].any()  # nothing leaks
    chosen = game.candidates[k - 1]
    game.step(A.lay(k - 1))
    assert game.laid[0] is chosen and game.phase == Phase.DRAW and game.current_player == 1
    with pytest.raises(ValueError, match="illegal action 64"):
        game.step(A.lay(0))  # not the lay phase any more


@pytest.mark.parametrize("num_players", [2, 3])
def test_greedy_and_random_lay_by_the_automatic_rule_when_they_choose(num_players):
    """Reading only their observation, the bots make exactly the lay moves the engine's automatic rule makes."""
    for seed in range(3):
        rounds = {}
        for layout in ("auto", "choose"):
            cfg = QuiddlerConfig(num_players=num_players, layout=layout)
            specs = ["greedy", "random", "greedy"][:num_players]
            bots = [quiddler_agents.make(s, seed=i, config=cfg) for i, s in enumerate(specs)]
            game = QuiddlerGame(cfg)
            game.reset(seed=seed)
            while not game.is_over:
                p = game.current_player
                game.step(bots[p].act(encode_observation(game, p), game.legal_action_mask()))
            rounds[layout] = [[r.to_dict() for r in results] for results in game.round_history]
        assert rounds["auto"] == rounds["choose"]


def test_no_laid_information_before_a_player_lays():
    """In random games, a seat that has not laid shows nothing in the laid slices of any observation."""
    rng = np.random.default_rng(5)
    for layout in ("auto", "choose"):
        game = QuiddlerGame(QuiddlerConfig(num_players=3, hand_sizes=(4, 5), layout=layout))
        game.reset(seed=11)
        while not game.is_over:
            for observer in range(3):
                view = observation_layout(3).view(encode_observation(game, observer))
                for k in range(3):
                    seat = (observer + k) % 3
                    shown = view["laid_cards"][k].any() or view["laid_figures"][k].any() or view["laid"][k]
                    assert bool(shown) == (game.laid[seat] is not None)
                in_lay = game.phase == Phase.LAY and game.current_player == observer
                assert bool(view["candidates"].any()) == in_lay
            game.step(int(rng.choice(game.legal_actions())))


@pytest.mark.parametrize("num_players", [2, 3, 8])
def test_choose_passes_pettingzoo_api_and_seed_tests(num_players):
    def make():
        return quiddler_v0.env(num_players=num_players, layout="choose", hand_sizes=[3, 4])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(make(), num_cycles=300)
        seed_test(make, num_cycles=200)
    env = make()
    env.reset(seed=0)
    assert env.action_space("player_0").n == A.NUM_ACTIONS + MAX_CANDIDATES


def test_choose_passes_gymnasium_check_env_and_the_learner_lays():
    env = gym.make("Quiddler-v0", layout="choose", hand_sizes=[3, 4]).unwrapped
    check_env(env, skip_render_check=True)
    assert env.action_space.n == A.NUM_ACTIONS + MAX_CANDIDATES
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(3)
    lays = 0
    done = False
    while not done:
        mask = info["action_mask"]
        action = int(rng.choice(np.flatnonzero(mask)))
        lays += action >= A.LAY_BASE
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    assert lays >= 1  # the learner laid at least once (a round ends with every player laying)


@pytest.mark.slow
def test_a_policy_trained_with_choose_loads_and_plays_in_evaluate(tmp_path):
    import importlib.util
    import json
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parent.parent

    def script(name: str):
        spec = importlib.util.spec_from_file_location(f"{name}_script", root / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    config = tmp_path / "choose.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "choose",
                "env": {"num_players": 2, "hand_sizes": [3, 4], "layout": "choose"},
                "opponents": ["greedy"],
                "algo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "net_arch": [16]},
                "train": {"total_timesteps": 256, "n_envs": 2, "vec_env": "dummy", "progress_bar": False},
                "eval": {"every": 256, "games": 2, "opponents": ["greedy"]},
            }
        )
    )
    run = tmp_path / "run"
    assert script("train").main(["--config", str(config), "--run-dir", str(run), "--quiet"]) == 0
    desc = json.loads((run / "final" / "policy.json").read_text())
    assert desc["action_size"] == A.NUM_ACTIONS + MAX_CANDIDATES and desc["config"]["layout"] == "choose"

    evaluate = script("evaluate")
    out = tmp_path / "eval"
    args = ["--players", f"policy:{run}", "greedy", "--games", "4", "--hand-sizes", "3", "4", "--workers", "1"]
    assert evaluate.main([*args, "--layout", "choose", "--save-games", "--quiet", "--out", str(out)]) == 0
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert games and all(any(a >= A.LAY_BASE for _, a in g["actions"]) for g in games)
    # Under the automatic rule the table has no lay moves: the policy's 80 actions do not fit, said in one line.
    assert evaluate.main([*args, "--quiet", "--out", str(tmp_path / "auto")]) == 2


def test_front_figures_are_the_front_layouts_figures():
    """The cheap figures the automatic rule weighs are those of the layouts it then builds."""
    from quiddler_env.core.solver import get_solver

    solver = get_solver()
    rng = np.random.default_rng(8)
    deck = [f for f, c in enumerate(COUNTS) for _ in range(c)]
    for _ in range(150):
        hand = [0] * len(FACES)
        for f in rng.choice(deck, size=int(rng.integers(1, 12)), replace=False):
            hand[f] += 1
        for full_only in (False, True):
            figures = solver.front_figures(hand, full_only=full_only)
            front = solver.layout_front(hand, full_only=full_only)
            assert figures == tuple((lay.score, lay.longest, lay.n_words) for lay in front)
            for i, lay in enumerate(front):
                assert solver.front_layout(hand, i, full_only=full_only) == lay
