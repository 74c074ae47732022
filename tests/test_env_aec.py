"""The PettingZoo AEC env `quiddler_v0`: official API tests, privacy, rewards, infos, errors, options."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

import quiddler_env
from quiddler_env.core import actions as A
from quiddler_env.core import batch_kernels as K
from quiddler_env.core import observation
from quiddler_env.core.batch import StreamGenerator, game_seed
from quiddler_env.core.cards import COUNTS, FACES, POINTS, new_deck
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.observation import encode_observation, observation_layout
from quiddler_env.envs import common, quiddler_v0
from quiddler_env.envs.quiddler_v0 import env, raw_env

REPO = Path(__file__).resolve().parents[1]
DEFAULT_YAML = REPO / "configs" / "env" / "default.yaml"

# PettingZoo's api_test warns about every dict observation of an env it does not list
# (its own classic card games are listed); that is the documented classic format.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
]

SHORT = {"hand_sizes": [3, 5, 4]}  # three quick rounds for tests that play whole games
OPTION_SETS = [
    pytest.param({}, id="defaults"),
    pytest.param({"num_players": 3, "reward_mode": "relative"}, id="3p-relative"),
    pytest.param(
        {"num_players": 8, "reward_mode": "win_loss", "hand_sizes": [3, 4], "render_view": "all"}, id="8p-win_loss"
    ),
    pytest.param(
        {
            "go_out": "forced",
            "min_word_cards": 1,
            "score_floor": "none",
            "two_player_bonus": "both",
            "turn_cap": None,
            "reward_scale": 1.0,
        },
        id="rule-variants",
    ),
    pytest.param({"num_players": 3, "score_floor": "total", "bonus_value": 25, "max_cycles": 40}, id="3p-max_cycles"),
]


def random_game(aec, seed: int, rng: np.random.Generator, on_step=None):
    """Play one game with uniform random legal actions through the AEC loop."""
    aec.reset(seed=seed)
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, info = aec.last()
        if terminated or truncated:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.integers(legal.size)])
        if on_step is not None:
            on_step(agent, obs, reward, terminated, truncated, info, action)
        aec.step(action)


# -- official PettingZoo tests ---------------------------------------------------------------


@pytest.mark.parametrize("options", OPTION_SETS)
def test_api(options):
    api_test(env(**options), num_cycles=150)


@pytest.mark.parametrize("options", OPTION_SETS)
def test_seed(options):
    seed_test(lambda: env(**options), num_cycles=150)


@pytest.mark.parametrize("num_players", [2, 3, 8])
def test_render(num_players, capsys):
    def make(render_mode):
        return env(num_players=num_players, render_mode=render_mode, hand_sizes=[3, 4])

    render_test(make, custom_tests={"ansi": lambda text: text.startswith("Quiddler") and "player_0" in text})
    printed = capsys.readouterr().out
    assert "draw pile:" in printed and "last move:" in printed


def test_metadata_and_agents():
    aec = env(num_players=5)
    aec.reset(seed=0)
    assert aec.metadata["name"] == "quiddler_v0"
    assert set(aec.metadata["render_modes"]) == {"human", "ansi", "rgb_array"}
    assert aec.metadata["is_parallelizable"] is False
    assert aec.possible_agents == [f"player_{i}" for i in range(5)]
    assert aec.agent_selection == "player_0"  # the first dealer is the last seat
    space = aec.observation_space("player_3")
    assert space["observation"].shape == (observation_layout(5).size,)
    assert space["observation"].dtype == np.float32
    assert space["action_mask"].shape == (64,) and space["action_mask"].dtype == np.int8
    assert aec.action_space("player_3").n == 64
    assert quiddler_env.env is quiddler_v0.env and quiddler_env.raw_env is quiddler_v0.raw_env


def test_docstring_observation_table_is_the_encoding_table():
    names = tuple(f"| `{name}` |" for name in observation_layout(2).slices)

    def table(doc):
        return [line for line in doc.splitlines() if line.startswith(names)]

    rows = table(observation.__doc__)
    assert len(rows) == len(observation_layout(2).slices)
    assert table(quiddler_v0.__doc__) == rows
    page = (REPO / "docs" / "observations.md").read_text(encoding="utf-8")
    assert all(row in page for row in rows), "docs/observations.md lacks the observation table"


# -- observations -------------------------------------------------------------------------------


def test_mask_only_for_the_agent_to_move_and_matches_the_game():
    aec = raw_env(num_players=3)
    rng = np.random.default_rng(1)
    aec.reset(seed=3)
    for _ in range(60):
        mover = aec.agent_selection
        for agent in aec.agents:
            obs = aec.observe(agent)
            assert aec.observation_space(agent).contains(obs)
            seat = aec.agent_name_mapping[agent]
            np.testing.assert_array_equal(obs["observation"], encode_observation(aec.game, seat))
            if agent == mover:
                np.testing.assert_array_equal(obs["action_mask"], aec.game.legal_action_mask())
                assert obs["action_mask"].sum() > 0
            else:
                assert not obs["action_mask"].any()
        legal = np.flatnonzero(aec.observe(mover)["action_mask"])
        aec.step(int(legal[rng.integers(legal.size)]))


def test_returned_arrays_are_fresh():
    aec = raw_env()
    aec.reset(seed=0)
    first = aec.observe("player_0")
    first["action_mask"][:] = 0
    first["observation"][:] = -5
    second = aec.observe("player_0")
    assert second["action_mask"].sum() > 0 and second["observation"].min() >= 0


def _perturbed(game, observer: int, rng: np.random.Generator):
    """A copy of `game` in which every card the observer cannot see (other hands except the cards they
    publicly took, and the draw pile) is dealt out again at random: a state the observer cannot tell apart."""
    other = copy.copy(game)  # shares the solver; the card containers are replaced below
    other.hands = [list(h) for h in game.hands]
    hidden: list[int] = list(game.draw_pile)
    slots: list[tuple[int, int]] = []
    for seat in range(game.num_players):
        if seat == observer:
            continue
        free = [f for f in range(len(FACES)) for _ in range(game.hands[seat][f] - game.known_taken[seat][f])]
        for f in free:
            other.hands[seat][f] -= 1
        hidden += free
        slots.append((seat, len(free)))
    hidden = [int(c) for c in rng.permutation(hidden)]
    for seat, count in slots:
        for f in hidden[:count]:
            other.hands[seat][f] += 1
        hidden = hidden[count:]
    other.draw_pile = hidden
    other._go_out_bits = None
    return other


@pytest.mark.parametrize("variant", [False, True], ids=["plain", "challenges"])
@pytest.mark.parametrize("num_players", [2, 3, 8])
def test_observation_private_information_does_not_leak(num_players, variant):
    """Each seat's observation is `encode_observation` of the game (with the game's mask for the mover), and
    that encoding is the same in every state the seat cannot tell apart from the real one (the challenge
    variant's slices included: `tests/test_challenges.py` checks the referee's verdict)."""
    rules = {"challenges": True, "layout": "choose", "vocabularies": ["enable:0.5:3"]} if variant else {}
    aec = raw_env(num_players=num_players, hand_sizes=[4, 7, 10] if num_players < 8 else [4, 6], **rules)
    rng = np.random.default_rng(num_players)
    aec.reset(seed=11)
    checked = changed = 0
    for step in range(150):
        if aec.terminations[aec.agent_selection]:
            aec.reset(seed=step)  # a new game; keep checking
        if step % 3 == 0:
            real = aec.game
            for agent in aec.agents:
                seat = aec.agent_name_mapping[agent]
                before = aec.observe(agent)
                np.testing.assert_array_equal(before["observation"], encode_observation(real, seat))
                other = _perturbed(real, seat, rng)
                assert other.card_count() == 118
                changed += other.hands != real.hands or other.draw_pile != real.draw_pile
                np.testing.assert_array_equal(before["observation"], encode_observation(other, seat))
                mine = agent == aec.agent_selection
                np.testing.assert_array_equal(before["action_mask"], other.legal_action_mask() * mine)
                checked += 1
        legal = np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])
        aec.step(int(legal[rng.integers(legal.size)]))
    assert checked > 50 and changed > checked // 2  # the perturbation really changed hidden cards


def test_observation_changes_with_own_hand():
    # The privacy test above would pass for a constant observation; this one would not.
    aec = raw_env()
    aec.reset(seed=5)
    before = aec.observe("player_0")["observation"]
    hands = aec.unwrapped._engine._batch.hands()[0]  # the engine's state, in place
    hand = hands[0]
    f = next(f for f in range(len(FACES)) if hand[f])
    g = next(g for g in range(len(FACES)) if g != f and COUNTS[g] > hand[g])
    hand[f] -= 1
    hand[g] += 1
    aec._engine._view()
    assert not np.array_equal(before, aec.observe("player_0")["observation"])


def test_stacked_deck_option_deals_the_given_cards():
    order = new_deck()[::-1]  # top first: QU QU TH TH IN IN CL CL ER ER Z Z ...
    aec = raw_env(hand_sizes=[3])
    aec.reset(seed=0, options={"decks": [order]})
    hands = [aec.observe(f"player_{p}")["observation"][:31] for p in range(2)]
    # Dealt one at a time from the dealer's left (seat 0 first): seat 0 gets QU TH IN, seat 1 QU TH IN.
    expected = np.zeros(31, dtype=np.float32)
    expected[[FACES.index("QU"), FACES.index("TH"), FACES.index("IN")]] = 1
    for hand in hands:
        np.testing.assert_array_equal(hand, expected)
    layout = observation_layout(2).view(aec.observe("player_0")["observation"])
    assert layout["discard_top"][FACES.index("CL")] == 1


# -- rewards and infos --------------------------------------------------------------------------------


def _play_and_record(aec, seed):
    """Returns per agent, the rewards of each round-ending step, and the round infos each agent saw."""
    rng = np.random.default_rng(seed)
    returns = dict.fromkeys(aec.possible_agents, 0.0)
    round_rewards: list[dict[str, float]] = []
    seen_rounds = {a: [] for a in aec.possible_agents}
    aec.reset(seed=seed)
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, info = aec.last()
        returns[agent] += reward
        if "round_result" in info:
            seen_rounds[agent].append(info["round"])
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        rounds_before = len(aec.game.round_history)
        aec.step(action)
        if len(aec.game.round_history) > rounds_before:
            round_rewards.append(dict(aec.rewards))
        elif action is not None:
            assert not any(aec.rewards.values())  # rewards come only with a round end
    return returns, round_rewards, seen_rounds


@pytest.mark.parametrize("num_players", [2, 3])
def test_round_score_rewards_rebuild_from_infos(num_players):
    aec = raw_env(num_players=num_players, **SHORT)
    returns, round_rewards, seen = _play_and_record(aec, seed=21)
    history = aec.game.round_history
    assert len(history) == 3 and len(round_rewards) == 3
    totals = [0] * num_players
    for k, results in enumerate(history):
        for r in results:
            d = r.to_dict()
            # Everything a user needs to rebuild the score is in the info.
            assert d["card_points"] == sum(POINTS[FACES.index(f)] for word in d["words"] for f in word)
            assert d["unused_points"] == sum(POINTS[FACES.index(f)] for f in d["unused"])
            for faces, word in zip(d["words"], d["spelled"], strict=True):
                assert "".join(faces).lower() == word
            raw = d["card_points"] - d["unused_points"] + sum(d["bonuses"].values())
            assert d["round_score"] == max(0, raw)
            assert d["total"] == totals[d["player"]] + d["round_score"]
            assert round_rewards[k][f"player_{d['player']}"] == pytest.approx(d["round_score"] / 100)
        totals = [r.total for r in results]
    for agent, ret in returns.items():
        assert ret == pytest.approx(aec.game.totals[aec.agent_name_mapping[agent]] / 100)
    # Every agent saw every round's result in its own info, in order.
    for agent in aec.possible_agents:
        assert seen[agent] == [1, 2, 3]


def test_relative_rewards_sum_to_zero_and_match_scores():
    aec = raw_env(num_players=3, reward_mode="relative", reward_scale=1.0, **SHORT)
    returns, round_rewards, _ = _play_and_record(aec, seed=4)
    for k, results in enumerate(aec.game.round_history):
        scores = [r.round_score for r in results]
        assert sum(round_rewards[k].values()) == pytest.approx(0.0)
        for p, s in enumerate(scores):
            others = (sum(scores) - s) / 2
            assert round_rewards[k][f"player_{p}"] == pytest.approx(s - others)
    assert sum(returns.values()) == pytest.approx(0.0)


def _lead(totals, seat):
    """The seat's total minus the best other total, written out plainly."""
    return totals[seat] - max(t for q, t in enumerate(totals) if q != seat)


@pytest.mark.parametrize("seed", [0, 7])
def test_lead_rewards_follow_each_seats_lead_over_the_best_other_total(seed):
    aec = raw_env(num_players=4, reward_mode="lead", reward_scale=1.0, **SHORT)
    returns, round_rewards, _ = _play_and_record(aec, seed=seed)
    before = [0, 0, 0, 0]
    for k, results in enumerate(aec.game.round_history):
        after = [r.total for r in results]
        for p in range(4):
            assert round_rewards[k][f"player_{p}"] == pytest.approx(_lead(after, p) - _lead(before, p))
        before = after
    totals = aec.game.totals
    for p in range(4):
        # The game's rewards add up to the final lead: positive exactly for a sole winner.
        assert returns[f"player_{p}"] == pytest.approx(_lead(totals, p))
        assert (returns[f"player_{p}"] > 0) == (totals[p] > max(t for q, t in enumerate(totals) if q != p))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_win_loss_rewards_only_at_the_end(seed):
    aec = raw_env(num_players=3, reward_mode="win_loss", **SHORT)
    returns, round_rewards, _ = _play_and_record(aec, seed=seed)
    assert all(v == 0 for r in round_rewards[:-1] for v in r.values())
    totals = aec.game.totals
    best = max(totals)
    winners = [p for p, t in enumerate(totals) if t == best]
    for p in range(3):
        expected = (1.0 if len(winners) == 1 else 0.0) if p in winners else -1.0
        assert returns[f"player_{p}"] == expected


def test_game_rewards_ties():
    assert common.game_rewards([50, 50, 10], "win_loss", 1.0) == [0.0, 0.0, -1.0]
    assert common.game_rewards([50, 60, 10], "win_loss", 2.0) == [-2.0, 2.0, -2.0]
    assert common.game_rewards([50, 60], "round_score", 0.01) == [0.0, 0.0]


def test_game_end_info_and_termination():
    aec = raw_env(num_players=2, hand_sizes=[3])
    random_game(aec, seed=8, rng=np.random.default_rng(8))
    assert not aec.agents  # every agent stepped with None and left
    aec.reset(seed=8)
    rng = np.random.default_rng(8)
    while not any(aec.terminations.values()):
        aec.step(int(rng.choice(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"]))))
    info = aec.infos["player_0"]
    assert info["winners"] == [f"player_{p}" for p in aec.game.winners()]
    assert info is aec.infos["player_1"] and info["round"] == 1
    assert all(aec.terminations.values()) and not any(aec.truncations.values())
    assert not aec.observe(aec.agent_selection)["action_mask"].any()


def test_max_cycles_truncates_everyone():
    aec = raw_env(num_players=3, max_cycles=4)
    aec.reset(seed=0)
    steps = 0
    while not any(aec.truncations.values()):
        aec.step(int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0]))
        steps += 1
    assert steps == 12 and all(aec.truncations.values()) and not any(aec.terminations.values())


# -- errors ---------------------------------------------------------------------------------------


def test_raw_env_illegal_action_names_action_and_legal_ones():
    aec = raw_env()
    aec.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action 5 \(discard D\) for player_0; legal actions: 0 \(draw\)"):
        aec.step(5)
    with pytest.raises(ValueError, match=r"illegal action 64 \(out of range 0\.\.63\)"):
        aec.step(64)
    with pytest.raises(ValueError, match=r"illegal action None for player_0"):
        aec.step(None)
    with pytest.raises(ValueError, match=r"illegal action 1\.5"):
        aec.step(1.5)
    aec.step(np.int64(A.DRAW_PILE))  # numpy integers are fine
    assert aec.game.phase == 1


def test_env_illegal_action_is_a_loss_for_the_mover():
    aec = env(num_players=3)
    aec.reset(seed=0)
    aec.step(A.DRAW_PILE)
    EnvLogger.flush()
    aec.step(A.DRAW_PILE)  # drawing twice
    assert any("Illegal move" in str(m) for m in EnvLogger.mqueue)
    assert all(aec.terminations.values())
    _, reward, terminated, _, _ = aec.last()
    assert terminated
    assert aec._cumulative_rewards == {"player_0": -1, "player_1": 0, "player_2": 0}


def test_env_asserts_out_of_bounds_and_order():
    aec = env()
    with pytest.raises(Exception, match="reset"):
        aec.step(0)
    aec.reset(seed=0)
    with pytest.raises(AssertionError, match="action space"):
        aec.step(64)


# -- options ----------------------------------------------------------------------------------------


def test_default_yaml_matches_the_defaults():
    aec = raw_env(config=DEFAULT_YAML)
    plain = raw_env()
    assert aec.config == plain.config == QuiddlerConfig()
    assert (aec.reward_mode, aec.reward_scale, aec.render_mode, aec.render_view, aec.max_cycles) == (
        "round_score",
        0.01,
        None,
        "current",
        None,
    )
    assert set(common.ENV_OPTION_DEFAULTS) | set(QuiddlerConfig.field_names()) == set(
        re.findall(r"^(\w+):", DEFAULT_YAML.read_text(), flags=re.M)
    )


def test_keyword_options_override_the_file(tmp_path):
    path = tmp_path / "env.yaml"
    path.write_text("num_players: 4\nreward_mode: relative\nhand_sizes: [3, 4]\n")
    aec = raw_env(config=str(path), num_players=3)
    assert aec.config.num_players == 3 and aec.config.hand_sizes == (3, 4) and aec.reward_mode == "relative"
    assert aec.possible_agents == ["player_0", "player_1", "player_2"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"reward_mode": "points"}, "'reward_mode': bad value 'points'"),
        ({"reward_scale": 0}, "'reward_scale': bad value 0"),
        ({"render_mode": "rgb"}, "'render_mode': bad value 'rgb'"),
        ({"render_view": "player_9"}, "'render_view': bad value 'player_9'"),
        ({"max_cycles": 0}, "'max_cycles': bad value 0"),
        ({"num_players": 9}, "'num_players': bad value 9"),
        ({"players": 3}, "unknown option\\(s\\) 'players'"),
    ],
)
def test_bad_options_name_the_key(options, message):
    with pytest.raises(ValueError, match=message):
        raw_env(**options)


def test_unknown_key_in_yaml_is_named(tmp_path):
    path = tmp_path / "env.yaml"
    path.write_text("num_players: 2\nrewards: relative\n")
    with pytest.raises(ValueError, match="unknown option\\(s\\) 'rewards'"):
        raw_env(config=path)
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="must hold a mapping"):
        raw_env(config=path)
    with pytest.raises(ValueError, match=r"env config file .*missing\.yaml does not exist"):
        raw_env(config=tmp_path / "missing.yaml")


def test_seeded_games_repeat_and_unseeded_ones_continue():
    def trace(aec, seed):
        out = []
        random_game(aec, seed, np.random.default_rng(0), lambda *args: out.append(args[-1]))
        return out, list(aec.unwrapped.game.totals)

    a = trace(env(**SHORT), 7)
    assert a == trace(env(**SHORT), 7)
    assert a != trace(env(**SHORT), 8)
    aec = raw_env(**SHORT)
    aec.reset(seed=3)
    first = aec.observe("player_0")["observation"]
    aec.reset()
    assert not np.array_equal(first, aec.observe("player_0")["observation"])


# -- the one-hop wrappers behave as PettingZoo's own ------------------------------------------------


def standard_env(**options):
    aec = raw_env(**options)
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=-1)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    return wrappers.OrderEnforcingWrapper(aec)


def transcript(aec, seed, illegal_at=None):
    out = []
    rng = np.random.default_rng(seed)
    aec.reset(seed=seed)
    for i, agent in enumerate(aec.agent_iter()):
        obs, reward, terminated, truncated, info = aec.last()
        out.append((agent, obs["observation"].tolist(), obs["action_mask"].tolist(), reward, terminated, truncated))
        out.append(sorted(info))
        if terminated or truncated:
            action = None
        elif i == illegal_at:
            action = int(np.flatnonzero(obs["action_mask"] == 0)[0])
        else:
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        aec.step(action)
        out.append((dict(aec.rewards), dict(aec.terminations), dict(aec.truncations), list(aec.agents)))
    return out


@pytest.mark.parametrize("illegal_at", [None, 7])
def test_env_matches_the_standard_wrapper_stack(illegal_at):
    options = {"num_players": 3, "hand_sizes": [3, 4]}
    assert transcript(env(**options), 5, illegal_at) == transcript(standard_env(**options), 5, illegal_at)


def test_env_wrappers_are_pettingzoos_and_keep_their_errors():
    ours, theirs = env(), standard_env()
    assert isinstance(ours, wrappers.OrderEnforcingWrapper)
    assert isinstance(ours.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(ours.env.env, wrappers.TerminateIllegalWrapper)
    assert str(ours) == str(theirs) == "quiddler_v0"
    for name in ("agents", "agent_selection", "terminations", "rewards", "infos", "num_agents"):
        with pytest.raises(AttributeError) as mine:
            getattr(ours, name)
        with pytest.raises(AttributeError) as standard:
            getattr(theirs, name)
        assert str(mine.value) == str(standard.value) == f"{name} cannot be accessed before reset"
    ours.reset(seed=0)
    ours.agent_selection = "player_1"  # shadows on the wrapper, as with PettingZoo's classes
    assert ours.agent_selection == "player_1" and ours.unwrapped.agent_selection == "player_0"


def test_cached_draw_phase_masks_agree_with_the_game():
    game = raw_env().game
    game.reset(seed=2)
    np.testing.assert_array_equal(common.legal_action_mask(game), game.legal_action_mask())
    game.draw_pile, game.discard_pile = [], game.discard_pile[-1:]  # nothing left to draw or reshuffle
    np.testing.assert_array_equal(common.legal_action_mask(game), game.legal_action_mask())
    assert game.legal_action_mask().tolist()[:2] == [0, 1]


def test_an_empty_draw_pile_with_nothing_to_reshuffle_leaves_only_the_discard():
    aec = raw_env()
    aec.reset(seed=2)
    batch = aec._engine._batch
    batch.ints[0, K.I_DRAW_LEN], batch.ints[0, K.I_DISC_LEN] = 0, 1  # nothing left to draw or reshuffle
    aec._engine._view()
    assert aec.observe("player_0")["action_mask"].tolist()[:2] == [0, 1]
    assert aec.game.legal_action_mask().tolist()[:2] == [0, 1]
    with pytest.raises(ValueError, match="legal actions: 1 \\(take discard\\)$"):
        aec.step(A.DRAW_PILE)


@pytest.mark.parametrize("rules", [{}, {"num_players": 3, "layout": "choose"}, {"turn_cap": 2, "num_players": 4}])
def test_the_env_plays_as_the_single_game_engine(rules):
    """The env runs in the batched engine; the readable `QuiddlerGame`, dealt from the same game seed and
    given the same moves, shows every seat the same observation and mask and scores the same rounds."""
    aec = env(**rules, reward_mode="relative")
    single = QuiddlerGame(QuiddlerConfig(**rules))
    rng = np.random.default_rng(4)
    for episode, seed in enumerate([21, None, 5]):
        aec.reset(seed=seed)
        first = 21 if seed is None else seed
        single.reset(rng=StreamGenerator(game_seed(first, 0, episode if seed is None else 0)))
        rounds = 0
        for agent in aec.agent_iter():
            obs, reward, term, trunc, info = aec.last()
            if term or trunc:
                assert single.is_over
                aec.step(None)
                continue
            assert agent == f"player_{single.current_player}"
            for other in aec.agents:
                seat = aec.agent_name_mapping[other]
                seen = aec.observe(other) if other != agent else obs
                np.testing.assert_array_equal(seen["observation"], encode_observation(single, seat))
                want = single.legal_action_mask() if other == agent else np.zeros(aec.action_space(other).n)
                np.testing.assert_array_equal(seen["action_mask"], want)
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            results = single.step(action)
            aec.step(action)
            if results is not None:
                rounds += 1
                shown = aec.unwrapped.infos[next(iter(aec.unwrapped.infos))]
                assert shown["round"] == rounds
                assert shown["round_result"] == [r.to_dict() for r in results]
        assert rounds == len(single.config.hand_sizes)


def test_a_seed_deals_slot_0_of_a_batch_seeded_alike_and_later_resets_its_next_episodes():
    from quiddler_env.core.batch import BatchGame

    aec = raw_env(num_players=3)
    batch = BatchGame(QuiddlerConfig(num_players=3), num_games=4)
    aec.reset(seed=5)
    batch.reset(seed=5)
    assert aec.game.hands == batch.hands()[0].tolist()
    for episode in (1, 2):
        aec.reset()
        batch.reset(seeds=game_seed(5, [0], [episode]), games=np.asarray([0]))
        assert aec.game.hands == batch.hands()[0].tolist()


def test_pettingzoos_registry_makes_the_env_with_its_options():
    import pettingzoo

    if not hasattr(pettingzoo, "register"):
        pytest.skip("PettingZoo before 1.27 has no registry")
    made = pettingzoo.make("aec", "quiddler/quiddler-v0", num_players=3, hand_sizes=[3, 4], max_cycles=50)
    direct = env(num_players=3, hand_sizes=[3, 4], max_cycles=50)
    assert type(made) is type(direct) and made.unwrapped.max_cycles == 50
    assert transcript(made, 3) == transcript(direct, 3)
    api_test(pettingzoo.make("aec", "quiddler/quiddler-v0"), num_cycles=200)
    seed_test(lambda: pettingzoo.make("aec", "quiddler/quiddler-v0", num_players=2), num_cycles=100)
    with pytest.raises(ValueError, match="num_players"):
        pettingzoo.make("aec", "quiddler/quiddler-v0", num_players=9)
    import contextlib
    import io

    listing = io.StringIO()
    with contextlib.redirect_stdout(listing):
        pettingzoo.pprint_registry()
    assert "  quiddler/quiddler-v0" in listing.getvalue().splitlines()
