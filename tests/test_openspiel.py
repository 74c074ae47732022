"""Quiddler as an OpenSpiel game (`quiddler_env.envs.openspiel`): OpenSpiel's own checks, the rules against
`QuiddlerGame`, and the resampler's use of what a seat knows only."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="the OpenSpiel game needs the openspiel extra (open_spiel)")

from quiddler_env.core import actions as A  # noqa: E402
from quiddler_env.core.cards import COUNTS, NUM_FACES, new_deck  # noqa: E402
from quiddler_env.core.config import QuiddlerConfig  # noqa: E402
from quiddler_env.core.game import QuiddlerGame  # noqa: E402
from quiddler_env.core.observation import encode_observation, observation_layout  # noqa: E402
from quiddler_env.envs import openspiel as O  # noqa: E402


def load(players: int, **params) -> pyspiel.Game:
    return pyspiel.load_game(O.SHORT_NAME, {"players": players, **params})


def random_step(state, rng: np.random.Generator) -> None:
    if state.is_chance_node():
        outcomes, probs = zip(*state.chance_outcomes(), strict=True)
        state.apply_action(int(rng.choice(outcomes, p=probs)))
    else:
        state.apply_action(int(rng.choice(state.legal_actions())))


@pytest.mark.parametrize("players", [2, 3, 8])
def test_openspiel_random_simulation_and_serialization_checks(players):
    # Two short rounds (the second at a 10-card hand for 2 and 3 players) keep the C++ checks quick.
    first = 3 if players == 8 else 9
    game = load(players, rounds=2, first_hand_size=first)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 8])
def test_openspiel_checks_on_the_whole_default_game(players):
    pyspiel.random_sim_test(load(players), num_sims=1, serialize=True, verbose=False)


def test_game_facts_and_parameters():
    game = load(3, rounds=2, first_hand_size=4, bonus_value=5, turn_cap=10)
    assert game.num_players() == 3
    assert game.num_distinct_actions() == A.NUM_ACTIONS == 64
    assert game.max_chance_outcomes() == NUM_FACES
    assert game.config.hand_sizes == (4, 5) and game.config.bonus_value == 5 and game.config.turn_cap == 10
    assert game.observation_tensor_size() == observation_layout(3).size
    assert game.information_state_tensor_size() == observation_layout(3).size + O.max_moves(game.config) * 64
    state = game.new_initial_state()
    assert state.is_chance_node() and sum(p for _, p in state.chance_outcomes()) == pytest.approx(1.0)
    assert dict(state.chance_outcomes())[A.DRAW_PILE] == pytest.approx(COUNTS[0] / 118)


def test_the_challenge_variant_and_bad_parameters_are_refused_in_one_line():
    with pytest.raises(Exception, match="does not play the challenge variant"):
        load(2, challenges=True)
    with pytest.raises(Exception, match="turn_cap must be at least 1"):
        load(2, turn_cap=0)
    with pytest.raises(Exception, match="num_players"):
        load(9)


def test_serialized_state_comes_back_the_same():
    game = load(3, rounds=3)
    state = game.new_initial_state()
    rng = np.random.default_rng(3)
    for _ in range(60):
        random_step(state, rng)
    assert not state.is_terminal()
    text = pyspiel.serialize_game_and_state(game, state)
    _, back = pyspiel.deserialize_game_and_state(text)
    assert back.history() == state.history()
    assert back.rules.hands == state.rules.hands and back.rules.discard_pile == state.rules.discard_pile
    for p in range(3):
        assert back.information_state_string(p) == state.information_state_string(p)
        np.testing.assert_array_equal(back.observation_tensor(p), state.observation_tensor(p))


def play_reference(
    config: QuiddlerConfig, seed: int, go_out: float = 0.5
) -> tuple[QuiddlerGame, list[list[int]], list[tuple[int, int]], int]:
    """A random game of the reference engine on stacked decks: (the game, the decks, the moves with the face each
    draw from the pile gave, -1 for other moves, the reshuffles). It goes out with probability `go_out` when it
    may."""
    rng = np.random.default_rng(seed)
    decks = [rng.permutation(new_deck()).tolist() for _ in config.hand_sizes]
    game = QuiddlerGame(config)
    game.reset(seed=seed, decks=decks)
    moves = []
    reshuffles = 0
    while not game.is_over:
        legal = game.legal_actions()
        # Mostly draws from the pile (so it runs out and is reshuffled), out with probability `go_out` when it may.
        go = [a for a in legal if a >= A.GO_OUT_BASE]
        rest = [a for a in legal if a < A.GO_OUT_BASE]
        if go and (rng.random() < go_out or not rest):
            action = int(go[0])
        elif A.DRAW_PILE in rest and rng.random() < 0.9:
            action = A.DRAW_PILE
        else:
            action = int(rng.choice(rest))
        p = game.current_player
        reshuffles += action == A.DRAW_PILE and not game.draw_pile
        before = list(game.hands[p])
        game.step(action)
        drawn = -1
        if action == A.DRAW_PILE:
            drawn = next(f for f in range(NUM_FACES) if game.hands[p][f] > before[f])
        moves.append((action, drawn))
    return game, decks, moves, reshuffles


@pytest.mark.parametrize(("players", "seed", "turn_cap", "go_out"), [(2, 0, 70, 0.0), (3, 1, 12, 0.5), (8, 2, 12, 0.0)])
def test_a_game_replayed_with_the_reference_deals_ends_with_the_same_totals(players, seed, turn_cap, go_out):
    config = QuiddlerConfig(num_players=players, hand_sizes=(3, 4, 5, 6), turn_cap=turn_cap)
    reference, decks, moves, reshuffles = play_reference(config, seed, go_out)
    assert reshuffles > 0 or players == 3  # the draws after a reshuffle are chance outcomes too
    game = load(players, rounds=4, first_hand_size=3, turn_cap=turn_cap)
    state = game.new_initial_state()
    rounds = iter(decks)
    for action, drawn in moves:
        if state.is_chance_node():  # a round starts: deal its stacked deck, one card at a time
            deck = next(rounds)
            for face in deck[: state.deal_left]:
                state.apply_action(face)
        assert state.current_player() == state.rules.current_player
        state.apply_action(action)
        if action == A.DRAW_PILE:
            assert state.is_chance_node() and drawn in dict(state.chance_outcomes())
            state.apply_action(drawn)
    assert state.is_terminal()
    assert state.rules.totals == reference.totals
    assert [[r.round_score for r in rs] for rs in state.rules.round_history] == [
        [r.round_score for r in rs] for rs in reference.round_history
    ]
    mean = sum(reference.totals) / players
    assert state.returns() == pytest.approx([t - mean for t in reference.totals])


def resample_checks(state, player: int, rng: np.random.Generator) -> None:
    """A resample for `player` keeps what it knows and deals only cards it has not seen."""
    g = state.rules
    n = g.num_players
    seen_obs = encode_observation(g, player)
    unseen = observation_layout(n).view(seen_obs)["unseen"].astype(int)
    must = O.must_hold(g, player)
    new = state.resample(player, rng.random)
    r = new.rules
    assert r.hands[player] == g.hands[player]
    assert r.discard_pile == g.discard_pile and r.known_taken == g.known_taken and r.laid == g.laid
    assert new.information_state_string(player) == state.information_state_string(player)
    np.testing.assert_array_equal(encode_observation(r, player), seen_obs)
    dealt = np.zeros(NUM_FACES, dtype=int)  # the cards the resample placed: opponents' free slots and the stock
    for k in range(1, n):
        q = (player + k) % n
        assert sum(r.hands[q]) == sum(g.hands[q])
        assert all(h >= m for h, m in zip(r.hands[q], must[q], strict=True)), "an opponent lost a card it surely holds"
        dealt += np.subtract(r.hands[q], must[q])
    stock = np.bincount(r.draw_pile, minlength=NUM_FACES)
    assert list(stock) == new.stock and len(r.draw_pile) == len(g.draw_pile)
    dealt += stock
    # Only cards the seat has not seen: exactly its `unseen` counts, none of its hand or the discard pile.
    np.testing.assert_array_equal(dealt, unseen)
    total = np.sum(r.hands, axis=0) + stock + np.bincount(r.discard_pile, minlength=NUM_FACES)
    np.testing.assert_array_equal(total, COUNTS)


@pytest.mark.parametrize("players", [2, 3, 8])
def test_the_resampler_uses_only_what_the_seat_knows(players):
    game = load(players, rounds=3, first_hand_size=5 if players < 8 else 3, turn_cap=8)
    rng = np.random.default_rng(players)
    checked = 0
    for _ in range(3):
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node() and rng.random() < 0.3:
                for player in range(players):
                    resample_checks(state, player, rng)
                    checked += 1
            random_step(state, rng)
    assert checked > 20


def test_the_resample_depends_on_the_seat_s_information_only():
    # Two states the seat cannot tell apart, resampled with the same random numbers, give the same state.
    game = load(3, rounds=1, first_hand_size=6)
    rng = np.random.default_rng(7)
    state = game.new_initial_state()
    for _ in range(25):  # the deal (19 cards) and a few moves
        random_step(state, rng)
    while state.is_chance_node():
        random_step(state, rng)
    player = state.current_player()
    other = state.resample(player, np.random.default_rng(1).random)
    assert other.rules.hands != state.rules.hands  # the hidden cards differ
    a = state.resample(player, np.random.default_rng(2).random)
    b = other.resample(player, np.random.default_rng(2).random)
    assert a.rules.hands == b.rules.hands and a.rules.draw_pile == b.rules.draw_pile


def test_resampling_keeps_taken_and_laid_cards_with_their_holders():
    # A hand-made position: p1 took a Q and a Z from the discard pile; resamples for p0 always leave them with p1.
    game = load(2, rounds=1, first_hand_size=5)
    hands = [[0] * NUM_FACES for _ in range(2)]
    for f in (0, 4, 8, 14, 17):  # A E I O R
        hands[0][f] += 1
    for f in (16, 25, 1, 2, 3):  # Q Z B C D
        hands[1][f] += 1
    taken = [[0] * NUM_FACES, [0] * NUM_FACES]
    taken[1][16] = taken[1][25] = 1
    state = O.QuiddlerState.position(
        game,
        hands=hands,
        discard_pile=[19],
        known_taken=taken,
        totals=[10, 20],
        dealer=1,
        current_player=0,
        phase="draw",
    )
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        new = state.resample(0, rng.random)
        h = new.rules.hands[1]
        assert h[16] >= 1 and h[25] >= 1 and sum(h) == 5 and new.rules.hands[0] == hands[0]
        assert h[19] <= COUNTS[19] - 1
        seen.add(tuple(h))
    assert len(seen) > 50  # the other three cards really are dealt again


def test_openspiel_ismcts_plays_the_python_game():
    from open_spiel.python.algorithms import ismcts, mcts

    game = load(2, rounds=1, first_hand_size=3, turn_cap=4)
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    bot = ismcts.ISMCTSBot(game, evaluator, 2.0, 20, random_state=np.random.RandomState(0))
    bot.set_resampler(lambda s, p: s.resample(p, rng.random))
    while not state.is_terminal():
        if state.is_chance_node():
            random_step(state, rng)
        else:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
    assert sum(state.returns()) == pytest.approx(0.0)
    # Without a resampler of its own the bot calls the state's resample_from_infostate with OpenSpiel's sampler.
    state = game.new_initial_state()
    while state.is_chance_node():
        random_step(state, rng)
    plain = ismcts.ISMCTSBot(game, evaluator, 2.0, 10, random_state=np.random.RandomState(1))
    assert plain.step(state) in state.legal_actions()


def test_the_ismcts_spec_plays_a_tournament_through_the_evaluation_api():
    from quiddler_agents.evaluation.schedule import Tournament
    from quiddler_agents.evaluation.tournament import run_tournament

    rules = QuiddlerConfig(hand_sizes=(3, 4))
    specs = ("openspiel-ismcts:simulations=8", "openspiel-ismcts:simulations=8:greedy=false", "greedy")
    tournament = Tournament(specs, games=3, seed=1, rules=rules, table_size=3)
    played = run_tournament(tournament, workers=1, engine="single")
    assert len(played) == 3
    assert played == run_tournament(tournament, workers=1, engine="single")  # seeded: the same games again


def test_the_ismcts_spec_declares_bounded_parameters_and_refuses_challenges():
    from quiddler_agents.registry import make, parse_spec

    assert parse_spec("openspiel-ismcts:simulations=16:uct_c=2.5:rollouts=1:greedy=false")[2] == {
        "simulations": 16,
        "uct_c": 2.5,
        "rollouts": 1,
        "greedy": False,
    }
    with pytest.raises(ValueError, match="simulations must be a positive integer"):
        parse_spec("openspiel-ismcts:simulations=0")
    with pytest.raises(ValueError, match="does not play the challenge variant"):
        make("openspiel-ismcts", config=QuiddlerConfig(challenges=True))
    agent = make("openspiel-ismcts:rollouts=2")
    assert agent.rollouts == 2 and agent.greedy  # random rollouts replace the greedy playout


def test_the_ismcts_agent_s_position_is_what_its_seat_sees():
    from quiddler_agents.ismcts import ISMCTSAgent

    config = QuiddlerConfig(num_players=3, hand_sizes=(5,))
    reference = QuiddlerGame(config)
    reference.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(9):
        reference.step(int(rng.choice(reference.legal_actions())))
    seat = reference.current_player
    agent = ISMCTSAgent(seed=0, config=config, simulations=4, greedy=False)
    obs = encode_observation(reference, seat)
    agent._prepare(obs, reference.legal_action_mask())
    state = agent.position(agent.view(obs), agent._turns(obs))
    # Seat 0 of the position is the agent's: it sees there what it sees at the table.
    np.testing.assert_array_equal(state.observation_tensor(0), obs)
    assert state.legal_actions() == reference.legal_actions()
    action = agent.act(obs, reference.legal_action_mask())
    assert action in reference.legal_actions()


def test_the_tensors_from_python_match_openspiel_s_observers():
    from open_spiel.python.observation import make_observation

    game = load(3, rounds=2, first_hand_size=4)
    observation = make_observation(game)
    recall = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    state = game.new_initial_state()
    rng = np.random.default_rng(5)
    steps = 0
    while not state.is_terminal() and steps < 80:
        random_step(state, rng)
        steps += 1
        for player in range(3):
            observation.set_from(state, player)
            recall.set_from(state, player)
            np.testing.assert_array_equal(state.observation_tensor(player), observation.tensor)
            np.testing.assert_array_equal(state.information_state_tensor(player), recall.tensor)
            assert state.information_state_string(player) == recall.string_from(state, player)
            assert state.observation_string(player) == observation.string_from(state, player)
    with pytest.raises(ValueError, match="no seat 3"):
        state.observation_tensor(3)


def test_an_observer_of_another_kind_is_refused_rather_than_shown_a_seat_s_cards():
    from open_spiel.python.observation import make_observation

    game = load(2)
    public = pyspiel.IIGObservationType(
        perfect_recall=False, public_info=True, private_info=pyspiel.PrivateInfoType.NONE
    )
    with pytest.raises(ValueError, match="one seat's view only"):
        make_observation(game, public)


@pytest.mark.slow
def test_the_base_install_never_imports_pyspiel_and_a_missing_extra_is_one_line():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import quiddler_env, quiddler_agents.registry, quiddler_agents.ismcts\n"
        "assert 'pyspiel' not in sys.modules, 'imported pyspiel'\n"
        "sys.modules['pyspiel'] = None  # as if the extra were not installed\n"
        "for attempt in (lambda: __import__('quiddler_env.envs.openspiel'),\n"
        "                lambda: quiddler_agents.registry.make('openspiel-ismcts')):\n"
        "    try:\n"
        "        attempt()\n"
        "    except ImportError as err:\n"
        "        print(err)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 2 and all("openspiel extra" in line and "pyspiel" in line for line in lines), lines
