"""The scripted bots and the registry: legal moves only, seeded determinism, honesty, rules of play."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

import quiddler_agents
from quiddler_agents.base import SeatView, infer_num_players
from quiddler_agents.expert import _LONGEST_CDF, _WORDS_CDF, beat_probability
from quiddler_env.core import actions as A
from quiddler_env.core.cards import COUNTS, FACE_INDEX, FACES
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import Phase, QuiddlerGame
from quiddler_env.core.observation import encode_observation, observation_layout
from quiddler_env.core.scoring import bonuses_in_play

F = FACE_INDEX
BOTS = ("random", "greedy", "expert:samples=8", "search:samples=2")


def stacked_deck(hands: list[list[str]], discard_top: str, draws: list[str] = ()) -> list[str]:
    """A full 118-card order (top first) dealing `hands` in seat order from the dealer's left."""
    order = [hand[i] for i in range(len(hands[0])) for hand in hands]
    order.append(discard_top)
    order.extend(draws)
    left = Counter(dict(zip(FACES, COUNTS, strict=True)))
    left.subtract(Counter(order))
    assert all(v >= 0 for v in left.values())
    return order + [f for f in FACES for _ in range(left[f])]


def random_states(config: QuiddlerConfig, seed: int, count: int, stride: int = 3):
    """Yield (game, observation, mask) at states reached by uniform random play."""
    rng = np.random.default_rng(seed)
    game = QuiddlerGame(config)
    game.reset(seed)
    step = 0
    while count > 0:
        if game.is_over:
            game.reset(int(rng.integers(1 << 30)))
        if step % stride == 0:
            p = game.current_player
            yield game, encode_observation(game, p), game.legal_action_mask()
            count -= 1
        game.step(int(rng.choice(game.legal_actions())))
        step += 1


# -- legal moves ---------------------------------------------------------------------------


@pytest.mark.parametrize("num_players", range(2, 9))
def test_no_bot_picks_a_masked_action_in_random_states(num_players):
    config = QuiddlerConfig(num_players=num_players)
    bots = [quiddler_agents.make(spec, seed=1, num_players=num_players) for spec in BOTS]
    phases = Counter()
    for _, obs, mask in random_states(config, seed=num_players, count=60):
        phases[int(obs[observation_layout(num_players).slices["phase"]].argmax())] += 1
        for bot in bots:
            action = bot.act(obs, mask)
            assert isinstance(action, int) and mask[action] == 1, (bot, action, np.flatnonzero(mask))
    assert phases[0] > 5 and phases[1] > 5  # both phases were probed


@pytest.mark.parametrize(
    "config",
    [
        QuiddlerConfig(go_out="forced", hand_sizes=(3, 5, 8)),
        QuiddlerConfig(num_players=3, min_word_cards=1, hand_sizes=(4, 10)),
        QuiddlerConfig(num_players=8, turn_cap=None, hand_sizes=(10,)),  # long rounds: the draw pile runs out
    ],
    ids=["forced-go-out", "one-card-words", "8-players-reshuffles"],
)
def test_bots_play_whole_games_legally_under_rule_variants(config):
    n = config.num_players
    seats = [quiddler_agents.make(BOTS[i % len(BOTS)], seed=i, config=config) for i in range(n)]
    checked = []

    class Checked:
        def __init__(self, bot):
            self.bot = bot

        def act(self, obs, mask):
            action = self.bot.act(obs, mask)
            assert mask[action] == 1
            checked.append(action)
            return action

    game = QuiddlerGame(config)
    record = quiddler_agents.play_game([Checked(b) for b in seats], seed=5, game=game)
    assert record.decisions == len(checked) > 0 and game.is_over
    if config.turn_cap is None:
        assert game.reshuffles >= 0 and len(game.round_history) == config.num_rounds


def test_pettingzoo_style_dict_observation_is_accepted():
    game = QuiddlerGame(QuiddlerConfig())
    game.reset(3)
    obs = {"observation": encode_observation(game, 0), "action_mask": game.legal_action_mask()}
    for spec in BOTS:
        assert quiddler_agents.make(spec, seed=0).act(obs) in game.legal_actions()


def test_bad_inputs_to_act_are_clear_errors():
    bot = quiddler_agents.make("greedy", seed=0, num_players=2)
    game = QuiddlerGame(QuiddlerConfig())
    game.reset(0)
    obs = encode_observation(game, 0)
    with pytest.raises(ValueError, match="no action"):
        bot.act(obs, np.zeros(64, dtype=np.int8))
    with pytest.raises(ValueError, match="64 or 80 or 158 entries"):
        bot.act(obs, np.ones(10, dtype=np.int8))
    with pytest.raises(ValueError, match="3-player table"):
        quiddler_agents.make("random", num_players=3).act(obs, game.legal_action_mask())
    with pytest.raises(ValueError, match="matches no table size"):
        infer_num_players(7)


# -- determinism -----------------------------------------------------------------------------


def _actions_of_game(specs, seed_agents, seed_game, n=2):
    log = []
    seats = [quiddler_agents.make(s, seed=seed_agents + i, num_players=n) for i, s in enumerate(specs)]

    class Logged:
        def __init__(self, bot):
            self.bot = bot

        def act(self, obs, mask):
            a = self.bot.act(obs, mask)
            log.append(a)
            return a

    record = quiddler_agents.play_game([Logged(b) for b in seats], seed=seed_game)
    return log, record.totals


@pytest.mark.parametrize("spec", BOTS)
def test_same_seed_same_game_whatever_the_global_rngs(spec):
    random.seed(1)
    np.random.seed(1)
    first = _actions_of_game([spec, "random"], 11, 4)
    random.seed(2)
    np.random.seed(2)
    np.random.random(100)
    second = _actions_of_game([spec, "random"], 11, 4)
    assert first == second


def test_reset_restores_the_decisions():
    bot = quiddler_agents.make("random", seed=0, num_players=2)
    states = list(random_states(QuiddlerConfig(), seed=0, count=30, stride=1))
    first = [bot.act(obs, mask) for _, obs, mask in states]
    bot.reset(0)
    assert [bot.act(obs, mask) for _, obs, mask in states] == first
    bot.reset(1)
    assert [bot.act(obs, mask) for _, obs, mask in states] != first


def test_expert_seed_drives_its_sampling():
    """Same seed: same decisions; with few samples, another seed decides some states differently."""
    states = [(o, m) for _, o, m in random_states(QuiddlerConfig(), seed=9, count=80, stride=1) if m.sum() > 1]
    runs = {}
    for seed in (0, 0, 1):
        expert = quiddler_agents.make("expert:samples=1", seed=seed, num_players=2)
        runs.setdefault(seed, []).append([expert.act(o, m) for o, m in states])
    assert runs[0][0] == runs[0][1]
    assert runs[0][0] != runs[1][0]


# -- honesty: the expert sees only its observation ----------------------------------------


def _rehide(game: QuiddlerGame, seat: int, rng: np.random.Generator) -> None:
    """Deal the cards `seat` cannot see (opponents' hidden cards, the draw pile) anew, keeping all it sees."""
    pool: list[int] = list(game.draw_pile)
    hidden = []
    for p in range(game.num_players):
        if p == seat:
            continue
        h = [game.hands[p][f] - game.known_taken[p][f] for f in range(31)]
        hidden.append((p, sum(h)))
        for f, c in enumerate(h):
            pool.extend([f] * c)
            game.hands[p][f] -= c
    pool = [int(c) for c in rng.permutation(pool)]
    for p, count in hidden:
        for f in pool[:count]:
            game.hands[p][f] += 1
        pool = pool[count:]
    game.draw_pile = pool
    game._go_out_bits = None  # the engine's cache of the current player's go-out mask


@pytest.mark.parametrize("num_players", [2, 4])
def test_expert_decision_ignores_hidden_cards(num_players):
    """Changing opponents' hands and the draw pile, but not the observation, never changes the decision."""
    config = QuiddlerConfig(num_players=num_players)
    expert = quiddler_agents.make("expert:samples=16", seed=3, num_players=num_players)
    rng = np.random.default_rng(num_players)
    game = QuiddlerGame(config)
    game.reset(21)
    checked = changed = 0
    while checked < 30:
        if game.is_over:
            game.reset(int(rng.integers(1000)))
        p = game.current_player
        obs, mask = encode_observation(game, p), game.legal_action_mask()
        if p == 0 and mask.sum() > 1:
            saved = expert.rng.bit_generator.state
            real = expert.act(obs, mask)
            hands = [list(h) for h in game.hands]
            pile = list(game.draw_pile)
            for _ in range(2):
                expert.rng.bit_generator.state = saved
                _rehide(game, p, rng)
                changed += game.hands != hands or game.draw_pile != pile
                assert np.array_equal(encode_observation(game, p), obs)
                assert np.array_equal(game.legal_action_mask(), mask)
                assert expert.act(encode_observation(game, p), game.legal_action_mask()) == real
            action = real
            checked += 1
        else:
            action = int(rng.choice(game.legal_actions()))
        game.step(action)
    assert changed >= checked  # the hidden cards really moved


def test_expert_observation_has_no_hidden_information():
    """The card-counting input is the observation's `unseen`, equal across re-dealt hidden cards."""
    game = QuiddlerGame(QuiddlerConfig(num_players=3))
    game.reset(8)
    for _ in range(7):
        game.step(game.legal_actions()[0])
    seat = SeatView.decode(encode_observation(game, game.current_player), 3)
    known_hidden = sum(seat.unseen)
    assert known_hidden == len(game.draw_pile) + sum(
        sum(game.hands[p]) - sum(game.known_taken[p]) for p in range(3) if p != game.current_player
    )


# -- how the bots play ----------------------------------------------------------------------


def _game_at(hands, top, draws=(), config=None):
    game = QuiddlerGame(config or QuiddlerConfig(hand_sizes=(len(hands[0]),)))
    game.reset(decks=[stacked_deck(hands, top, list(draws))])
    return game


def test_seat_view_decodes_the_observation():
    game = _game_at([["T", "O", "P"], ["Q", "X", "Z"]], "S", ["E"])
    game.step(A.DRAW_PILE)
    game.step(A.discard(F["P"]))  # seat 0: TOE; discard top P
    game.step(A.TAKE_DISCARD)  # seat 1 takes P (public)
    game.step(A.discard(F["X"]))
    view = SeatView.decode(encode_observation(game, 0), 2)
    assert view.hand[F["T"]] == view.hand[F["O"]] == view.hand[F["E"]] == 1 and sum(view.hand) == 3
    assert view.phase == "draw" and view.hand_size == 3 and not view.final_turn and view.went_out == -1
    assert view.opponent_taken[0][F["P"]] == 1 and view.discard_top == F["X"]
    assert view.discard_pile[F["S"]] == view.discard_pile[F["X"]] == 1 and sum(view.discard_pile) == 2
    assert view.draw_pile_size == len(game.draw_pile) and view.totals == (0, 0)
    assert view.unseen[F["Q"]] == 2 and view.unseen[F["S"]] == COUNTS[F["S"]] - 1
    assert view.unseen[F["P"]] == COUNTS[F["P"]] - 1 and view.unseen[F["X"]] == COUNTS[F["X"]] - 1
    assert view.seat_from_dealer == 1 and view.round_fraction == 1.0


def test_greedy_takes_a_useful_discard_and_draws_otherwise():
    greedy = quiddler_agents.make("greedy", seed=0, num_players=2)
    game = _game_at([["T", "O", "Q"], ["X", "Z", "J"]], "P")  # P makes TOP and lets Q go
    assert greedy.act(encode_observation(game, 0), game.legal_action_mask()) == A.TAKE_DISCARD
    game = _game_at([["T", "O", "P"], ["X", "Z", "J"]], "Q")  # TOP already; Q cannot help
    assert greedy.act(encode_observation(game, 0), game.legal_action_mask()) == A.DRAW_PILE


def test_greedy_and_expert_go_out_when_they_can():
    game = _game_at([["T", "O", "P"], ["X", "Z", "J"]], "S", ["V"])
    game.step(A.DRAW_PILE)  # seat 0 holds T O P V: go out discarding V keeps TOP
    for spec in ("greedy", "expert:samples=8"):
        bot = quiddler_agents.make(spec, seed=0, num_players=2)
        assert bot.act(encode_observation(game, 0), game.legal_action_mask()) == A.go_out(F["V"])


def test_greedy_discards_the_card_that_hurts_least():
    game = _game_at([["T", "O", "P", "Q"], ["X", "Z", "J", "K"]], "S", ["E"])
    game.step(A.DRAW_PILE)  # T O P Q E: TOPE? (POET/TOPE) no go-out without Q... discard Q
    greedy = quiddler_agents.make("greedy", seed=0, num_players=2)
    action = greedy.act(encode_observation(game, 0), game.legal_action_mask())
    assert A.discarded_face(action) == F["Q"]


def test_expert_keeps_cards_that_combine_with_the_unseen():
    """Two discards that score the same now: the expert keeps the card that more draws complete."""
    expert = quiddler_agents.make("expert:samples=256", seed=0, num_players=2)
    # Hand after drawing: Q Z E D S. Best now keeps no word with Q or Z; E D S ... the expert
    # must not throw away a card that forms words with many unseen cards for a dead one.
    game = _game_at([["Q", "Z", "E", "D"], ["X", "J", "K", "V"]], "W", ["S"])
    game.step(A.DRAW_PILE)
    action = expert.act(encode_observation(game, 0), game.legal_action_mask())
    assert A.discarded_face(action) in (F["Q"], F["Z"])  # never the flexible E, D or S


def _written_value(config, num_players, option, hand_size, final, go_out_value):
    """The expert's worth of keeping one option's hand, written out one option at a time."""
    value = float(option.score)
    if config.bonus_value:
        for bonus in bonuses_in_play(config, num_players):
            table, mine = (_LONGEST_CDF, option.longest) if bonus == "longest_word" else (_WORDS_CDF, option.n_words)
            value += config.bonus_value * beat_probability(table, hand_size, mine, num_players - 1)
    if config.score_floor == "round":
        value = max(value, 0.0)
    if option.goes_out and not final:
        value += go_out_value
    return value


@pytest.mark.parametrize(
    "num_players, rules",
    [(2, {}), (2, {"two_player_bonus": "both"}), (3, {"score_floor": "none"}), (4, {}), (4, {"bonus_value": 0})],
)
def test_expert_values_match_the_formula_written_out(num_players, rules):
    """The expert values every discard and every draw at once (arrays); each figure equals the plain formula."""
    config = QuiddlerConfig(num_players=num_players, **rules)
    expert = quiddler_agents.ExpertAgent(seed=0, config=config, go_out_value=7.5)
    solver = expert.solver
    rng = np.random.default_rng(num_players)
    deck = [f for f, c in enumerate(COUNTS) for _ in range(c)]
    for _ in range(60):
        size = int(rng.integers(3, 11))
        hand = [0] * len(FACES)
        for f in rng.choice(deck, size, replace=False):
            hand[f] += 1
        drawn = np.unique(rng.choice(len(FACES), size=6))
        for final in (False, True):
            best = expert._best_kept(hand, drawn, final)
            for d, got in zip(drawn.tolist(), best.tolist(), strict=True):
                after = list(hand)
                after[d] += 1
                options = solver.discard_options(after)
                values = expert._values(solver.discard_figures(after), size, final).tolist()
                want = [_written_value(config, num_players, o, size, final, 7.5) for o in options]
                assert values == want
                assert got == max(want)


def test_bonus_odds_rise_with_the_longest_word():
    for hand_size in range(3, 11):
        odds = [beat_probability(_LONGEST_CDF, hand_size, k, 1) for k in range(0, 10)]
        assert odds[0] == 0 and all(a <= b for a, b in zip(odds, odds[1:], strict=False)) and odds[-1] == 1.0
        assert beat_probability(_LONGEST_CDF, hand_size, 5, 3) <= beat_probability(_LONGEST_CDF, hand_size, 5, 1)
        words = [beat_probability(_WORDS_CDF, hand_size, k, 1) for k in range(0, 7)]
        assert all(a <= b for a, b in zip(words, words[1:], strict=False))
    assert beat_probability(_LONGEST_CDF, 1, 3, 1) == beat_probability(_LONGEST_CDF, 3, 3, 1)  # clamped


# -- the registry ---------------------------------------------------------------------------


def test_registry_builds_every_kind():
    assert isinstance(quiddler_agents.make("random", seed=0), quiddler_agents.RandomAgent)
    assert isinstance(quiddler_agents.make("greedy", seed=0), quiddler_agents.GreedyAgent)
    expert = quiddler_agents.make("expert:samples=64", seed=0, num_players=3)
    assert isinstance(expert, quiddler_agents.ExpertAgent) and expert.samples == 64 and expert.num_players == 3
    expert = quiddler_agents.make("expert:samples=8,top=2:go_out_value=1.5", seed=0)
    assert (expert.samples, expert.top, expert.go_out_value) == (8, 2, 1.5)
    assert isinstance(quiddler_agents.make("human"), quiddler_agents.HumanAgent)
    search = quiddler_agents.make("search:samples=16:ms=50:top=3", seed=0, num_players=2)
    assert isinstance(search, quiddler_agents.SearchAgent) and (search.samples, search.ms, search.top) == (16, 50.0, 3)
    for spec in ("random", "greedy", "expert", "search", "human"):
        assert isinstance(quiddler_agents.make(spec), quiddler_agents.Agent)
    assert quiddler_agents.parse_spec("policy:runs/a b/model.zip:deterministic=false") == (
        "policy",
        "runs/a b/model.zip",
        {"deterministic": False},
    )
    assert quiddler_agents.parse_spec("policy:C:/runs/x") == ("policy", "C:/runs/x", {})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("alphazero", "(?s)unknown agent 'alphazero'.*random.*greedy.*expert.*human.*policy"),
        ("expert:sample=3", "unknown parameter 'sample' for expert; known: samples, top, go_out_value, level"),
        ("expert:samples=many", "samples='many' is not a valid int"),
        ("expert:samples=0", "samples must be a positive integer"),
        ("expert:top=-1", "top must be a positive integer"),
        ("expert:go_out_value=nan", "go_out_value must be a finite number"),
        ("expert:samples", "parameters are key=value"),
        ("greedy:samples=3", "unknown parameter 'samples' for greedy; known: level"),
        ("search:samples=0", "search: samples must be a positive integer"),
        ("search:ms=-1", "search: ms must be a number >= 0"),
        ("search:top=0", "search: top must be a positive integer"),
        ("search:budget=3", "unknown parameter 'budget' for search; known: samples, ms, top, level, reads"),
        ("policy:", "policy needs a path"),
        ("policy:x:deterministic=maybe", "not a valid bool"),
        ("", "non-empty string"),
    ],
)
def test_registry_errors_list_what_exists(spec, message):
    with pytest.raises(ValueError, match=message):
        quiddler_agents.make(spec, seed=0, num_players=2)


def test_registry_takes_the_table_from_the_config_and_refuses_trust_for_bots():
    # The table size is the config's: num_players is only the short form of QuiddlerConfig(num_players=...),
    # and beside a config (as Quiddler-v0 passes its string opponents) it must name the same table.
    with pytest.raises(ValueError, match="disagrees"):
        quiddler_agents.make("random", num_players=3, config=QuiddlerConfig(num_players=2))
    rules = QuiddlerConfig(num_players=3, hand_sizes=(3, 4))
    bot = quiddler_agents.make("expert:samples=4", seed=0, config=rules)
    assert bot.config is rules and bot.num_players == 3
    assert quiddler_agents.make("greedy", num_players=3, config=rules).config is rules
    short = quiddler_agents.make("greedy", num_players=4)
    assert short.config == QuiddlerConfig(num_players=4) and short.num_players == 4
    assert quiddler_agents.make("random").num_players is None  # read from the first observation
    with pytest.raises(TypeError, match="no num_players argument"):
        quiddler_agents.ExpertAgent(0, 2)  # the old positional (seed, num_players)
    with pytest.raises(ValueError, match="trusted=True only applies"):
        quiddler_agents.make("greedy", trusted=True)


def test_available_lists_every_spec():
    text = quiddler_agents.available()
    for name in ("random", "greedy", "expert", "search", "human", "policy:PATH"):
        assert name in text


def test_phase_constants_match_the_engine():
    assert int(Phase.DRAW) == 0 and int(Phase.DISCARD) == 1
