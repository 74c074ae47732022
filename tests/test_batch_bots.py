"""The compiled bots of `batch_bots` play as `quiddler_agents.simple`'s: greedy's choices against `GreedyAgent`'s
on the same observations, random's legality, uniformity and lay rule, and their generator apart from the deal's.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from quiddler_agents.registry import make
from quiddler_env.core import actions as A
from quiddler_env.core import batch_kernels as K
from quiddler_env.core.batch import BatchGame
from quiddler_env.core.batch_bots import GREEDY, NOT_A_BOT, RANDOM
from quiddler_env.core.config import QuiddlerConfig

CONFIGS = {
    "two_auto": {},
    "three_auto": {"num_players": 3},
    "two_choose": {"layout": "choose"},
    "three_choose": {"num_players": 3, "layout": "choose"},
}
GAMES = 160
STRIDE = 8
"""Every STRIDE-th game (a different offset each move) is checked against the Python bot."""
SEEDS, MORE_SEEDS = 6, 64
"""GreedyAgent seeds asked at each decision; when the compiled pick is not among their picks (a tie
the first seeds did not all find), up to MORE_SEEDS before calling it a mismatch."""


def bot_picks(batch: BatchGame, games: np.ndarray, code: int) -> np.ndarray:
    """The action the compiled bot `code` picks in each of `games` (nothing moves)."""
    return batch.bot_actions(games, np.full(games.shape[0], code, dtype=np.int64))


def walk(config: QuiddlerConfig, seed: int, games: int, go_out_chance: float = 0.05):
    """Play `games` games to their end, yielding (batch, live games, masks, compiled greedy's picks) before every
    move. Each move is greedy's pick or, half the time, a random legal move shy of going out (so rounds last)."""
    batch = BatchGame(config, num_games=games)
    batch.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while True:
        live = np.flatnonzero(~batch.is_over)
        if not live.size:
            return
        masks = batch.action_masks(live)
        greedy = bot_picks(batch, live, GREEDY)
        yield batch, live, masks, greedy
        actions = greedy.copy()
        for j in np.flatnonzero(rng.random(live.size) < 0.5):
            legal = np.flatnonzero(masks[j])
            plain = legal[legal < A.GO_OUT_BASE]
            if plain.size and rng.random() > go_out_chance:
                legal = plain
            actions[j] = legal[rng.integers(legal.size)]
        batch.step(actions, live)


# -- greedy ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(CONFIGS))
def test_compiled_greedy_picks_what_greedy_agent_picks(name):
    config = QuiddlerConfig(**CONFIGS[name])
    python = [make("greedy", seed=s, config=config) for s in range(MORE_SEEDS)]
    seen = Counter()
    for step, (batch, live, masks, greedy) in enumerate(walk(config, seed=3, games=GAMES)):
        checked = [j for j in range(step % STRIDE, live.size, STRIDE) if masks[j].sum() > 1]
        if not checked:
            continue
        obs = batch.observe(games=live[checked])
        for o, j in zip(obs, checked, strict=True):
            picks = {agent.act(o, masks[j]) for agent in python[:SEEDS]}
            if greedy[j] not in picks:
                picks |= {agent.act(o, masks[j]) for agent in python[SEEDS:]}
            phase = int(batch.phase[live[j]])
            assert greedy[j] in picks, (
                f"{name}: game {live[j]} move {step} phase {phase}: compiled greedy picks {greedy[j]}, "
                f"GreedyAgent {sorted(picks)} (legal {np.flatnonzero(masks[j]).tolist()})"
            )
            if phase == K.DRAW:
                seen["take discard" if greedy[j] == A.TAKE_DISCARD else "draw pile"] += 1
            elif phase == K.LAY:
                seen["lay"] += 1
            elif masks[j, A.GO_OUT_BASE : A.LAY_BASE].any():
                seen["go out"] += 1
                assert greedy[j] >= A.GO_OUT_BASE  # greedy goes out whenever it can
            else:
                seen["discard"] += 1
            if len(picks) > 1:
                seen["tie"] += 1
                seen["tie, not the first"] += greedy[j] != min(picks)
    assert batch.num_players == config.num_players
    for kind in ("take discard", "draw pile", "discard", "go out"):
        assert seen[kind] >= 100, (kind, seen)
    if config.layout == "choose":
        assert seen["lay"] >= 100, seen
    else:
        assert seen["lay"] == 0, seen  # the engine lays for everyone
    # Ties come up, and the compiled bot breaks them from its generator, not always to the first move.
    assert seen["tie"] >= 100 and seen["tie, not the first"] >= 30, seen


# -- random ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["two_auto", "three_choose"])
def test_compiled_random_moves_are_legal_and_lay_by_the_automatic_rule(name):
    config = QuiddlerConfig(**CONFIGS[name])
    python = make("random", seed=0, config=config)
    decisions = lays = 0
    for batch, live, masks, _ in walk(config, seed=5, games=GAMES):
        picks = bot_picks(batch, live, RANDOM)
        assert masks[np.arange(live.size), picks].all(), "the compiled random bot left the mask"
        decisions += live.size
        laying = np.flatnonzero((batch.phase[live] == K.LAY) & (masks.sum(axis=1) > 1))
        if laying.size:
            obs = batch.observe(games=live[laying])
            for o, j in zip(obs, laying, strict=True):
                assert picks[j] == python.act(o, masks[j]), f"game {live[j]}: lays {picks[j]}"
                lays += 1
    assert decisions > 5_000
    assert lays >= (30 if config.layout == "choose" else 0)


def _uniform_picks(batch: BatchGame, i: int, searched: bool, draws_per_move: int = 2000) -> None:
    """Many random picks in game i's current state: every legal move, about equally often, and nothing moves.

    `searched`: the engine has searched the go-out moves (as for a mask); else the bot searches the ones
    its picks land on."""
    mask = batch.action_masks(np.asarray([i]))[0]
    found = batch.go[i]  # the search's answers (`go_out: forced` makes the bot search them all)
    if not searched:
        batch.go[i] = K.GO_UNKNOWN
    legal = np.flatnonzero(mask)
    m = legal.size
    before = batch.cards.copy(), batch.ints.copy(), batch.rng.copy(), batch.go.copy()
    picks = bot_picks(batch, np.full(draws_per_move * m, i, dtype=np.int64), RANDOM)
    assert np.array_equal(batch.cards, before[0]) and np.array_equal(batch.ints, before[1])
    others = np.arange(batch.num_games) != i
    assert np.array_equal(batch.go[others], before[3][others]) and batch.go[i] in (before[3][i], found)
    assert np.array_equal(batch.rng[:, 0], before[2][:, 0])  # the deal generator is untouched
    assert batch.rng[i, 1] != before[2][i, 1]
    counts = np.bincount(picks, minlength=mask.size)
    assert np.flatnonzero(counts).tolist() == legal.tolist()
    got = counts[legal]
    chi2 = float(((got - draws_per_move) ** 2 / draws_per_move).sum())
    df = m - 1
    assert chi2 < df + 6 * np.sqrt(2 * df), (chi2, got.tolist())
    assert got.min() / got.max() > 0.85, got.tolist()


@pytest.mark.parametrize("go_out", ["optional", "forced"])
@pytest.mark.parametrize("searched", [True, False], ids=["searched", "unsearched"])
def test_compiled_random_is_uniform_over_the_legal_moves(go_out, searched):
    wanted = {"draw": None, "many discards": None, "go out": None}
    least = {"draw": 2, "many discards": 8, "go out": 4 if go_out == "optional" else 2}
    for batch, live, masks, _ in walk(QuiddlerConfig(num_players=3, go_out=go_out), seed=8, games=64):
        counts = masks.sum(axis=1)
        phase = batch.phase[live]
        for j in range(live.size):
            if wanted["draw"] is None and phase[j] == K.DRAW and counts[j] == least["draw"]:
                wanted["draw"] = int(live[j])
            if wanted["many discards"] is None and phase[j] == K.DISCARD and counts[j] >= least["many discards"]:
                wanted["many discards"] = int(live[j])
            going_out = masks[j, A.GO_OUT_BASE : A.LAY_BASE].any()
            if wanted["go out"] is None and going_out and counts[j] >= least["go out"]:
                wanted["go out"] = int(live[j])
        if all(i is not None for i in wanted.values()):
            break
    assert all(i is not None for i in wanted.values()), wanted
    for i in wanted.values():
        _uniform_picks(batch, i, searched)


# -- the generators ----------------------------------------------------------------------------


def test_bot_choices_draw_nothing_from_the_deal_generator():
    config, n = QuiddlerConfig(), 200
    batches = {code: BatchGame(config, num_games=n) for code in (GREEDY, RANDOM)}
    for batch in batches.values():
        batch.reset(seed=9)
    assert np.array_equal(batches[GREEDY].hands(), batches[RANDOM].hands())
    assert np.array_equal(batches[GREEDY].rng, batches[RANDOM].rng)
    after, quiet_moves = {}, 0
    for code, batch in batches.items():
        reshuffled = np.zeros(n, dtype=bool)
        bot_moves = 0
        while (live := np.flatnonzero(batch.round == 0)).size:
            deal, bots = batch.rng[:, 0].copy(), batch.rng[:, 1].copy()
            picks = bot_picks(batch, live, code)
            assert np.array_equal(batch.rng[:, 0], deal), "choosing a move drew from the deal generator"
            shuffles = batch.reshuffles[live].copy()
            batch.step(picks, live)
            same_round = batch.round[live] == 0
            shuffled = same_round & (batch.reshuffles[live] > shuffles)
            reshuffled[live[shuffled]] = True
            quiet = live[same_round & ~shuffled]
            assert np.array_equal(batch.rng[quiet, 0], deal[quiet]), "a move within a round drew from the deal"
            quiet_moves += quiet.size
            bot_moves += int((batch.rng[live, 1] != bots[live]).sum())
        assert bot_moves > 30  # the bots did draw, from their own generator
        after[code] = batch.hands().copy(), batch.rng[:, 0].copy(), reshuffled, batch.totals.copy()
    assert quiet_moves > 2_000
    # Where round 0 reshuffled in neither batch, round 1 deals the same cards, however differently it was played.
    same = ~after[GREEDY][2] & ~after[RANDOM][2]
    assert same.sum() > n // 2
    assert np.array_equal(after[GREEDY][0][same], after[RANDOM][0][same])
    assert np.array_equal(after[GREEDY][1][same], after[RANDOM][1][same])
    assert (after[GREEDY][3] != after[RANDOM][3]).any(axis=1).sum() > n // 2  # and it was played differently


# -- play_bots ---------------------------------------------------------------------------------


def _play(batch: BatchGame, bots: np.ndarray) -> np.ndarray:
    moves = np.zeros(batch.num_games, dtype=np.int64)
    batch.play_bots(batch.all_games, bots, moves)
    return moves


def test_play_bots_plays_the_moves_bot_actions_picks():
    config, n = QuiddlerConfig(num_players=3, layout="choose"), 60
    bots = np.tile(np.asarray([GREEDY, RANDOM, GREEDY], dtype=np.int64), (n, 1))
    played, stepped = BatchGame(config, num_games=n), BatchGame(config, num_games=n)
    played.reset(seed=4)
    stepped.reset(seed=4)
    moves = _play(played, bots)
    assert played.is_over.all()
    count = np.zeros(n, dtype=np.int64)
    b = stepped
    while (live := np.flatnonzero(~b.is_over)).size:
        out = b.bot_actions(live, bots[live, b.current_player[live]])
        b.step(out, live)
        count[live] += 1
    assert np.array_equal(moves, count)
    for name in ("cards", "ints", "rng"):
        assert np.array_equal(getattr(played, name), getattr(stepped, name)), name


def test_play_bots_stops_at_a_seat_it_does_not_play():
    n = 80
    batch = BatchGame(QuiddlerConfig(), num_games=n)
    batch.reset(seed=6)
    bots = np.tile(np.asarray([GREEDY, NOT_A_BOT], dtype=np.int64), (n, 1))
    rng = np.random.default_rng(6)
    moved = 0
    for _ in range(40):
        moves = _play(batch, bots)
        moved += moves.sum()
        live = np.flatnonzero(~batch.is_over)
        assert (batch.current_player[live] == 1).all() and (batch.phase[live] == K.DRAW).all()
        if not live.size:
            break
        for _ in range(2):  # seat 1's turn: random legal moves until seat 0 is to move
            live = live[(batch.current_player[live] == 1) & ~batch.is_over[live]]
            legal = batch.action_masks(live)
            batch.step(np.asarray([rng.choice(np.flatnonzero(row)) for row in legal], dtype=np.int64), live)
    assert batch.is_over.all() and moved > n * 10


def test_greedy_reads_the_go_out_faces_off_its_discard_table_exactly():
    """Where greedy is to discard, the engine takes the go-out faces from greedy's discard table instead of its
    own search: they must be the solver's go-out faces of the hand (and none in a final turn)."""
    config = QuiddlerConfig(num_players=3)
    batch = BatchGame(config, num_games=40)
    batch.reset(seed=12)
    solver = batch.solver
    checked = 0
    rng = np.random.default_rng(3)
    while (live := np.flatnonzero(~batch.is_over)).size:
        picks = batch.bot_actions(live, np.full(live.size, GREEDY))
        for i in live[batch.phase[live] == K.DISCARD].tolist():
            hand = batch.hands()[i, batch.current_player[i]].tolist()
            want = 0 if batch.went_out[i] >= 0 else solver.go_out_faces(hand)
            assert int(batch.go[i]) == want
            checked += 1
        masks = batch.action_masks(live)
        random_moves = np.argmax(rng.random(masks.shape) * masks + masks, axis=1)
        batch.step(np.where(rng.random(live.size) < 0.5, picks, random_moves), live)
    assert checked > 500


# -- the challenge variant -----------------------------------------------------------------------

VARIANTS = {
    "two_auto_challenges": {"vocabularies": ["referee", "enable:0.3:1"]},
    "three_choose_challenges": {
        "num_players": 3,
        "layout": "choose",
        "vocabularies": ["enable:0.3:1", "enable:0.6:4", "referee"],
        "failed_go_out_penalty": 5,
    },
}
"""The challenge variant's rule sets (over short rounds): seats of different vocabularies, bluffs with choose."""


def _variant(name: str) -> QuiddlerConfig:
    return QuiddlerConfig(challenges=True, hand_sizes=[3, 5, 4], **VARIANTS[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(VARIANTS))
def test_compiled_greedy_plays_the_challenge_variant_as_greedy_agent(name):
    """By its seat's vocabulary, honestly (no bluff), challenging by `BaseAgent.challenge_move`."""
    config = _variant(name)
    python = [make("greedy", seed=s, config=config) for s in range(MORE_SEEDS)]
    seen = Counter()
    for step, (batch, live, masks, greedy) in enumerate(walk(config, seed=3, games=40, go_out_chance=0.3)):
        checked = [j for j in range(live.size) if masks[j].sum() > 1]
        if not checked:
            continue
        obs = batch.observe(games=live[checked])
        for o, j in zip(obs, checked, strict=True):
            picks = {agent.act(o, masks[j]) for agent in python[:SEEDS]}
            if greedy[j] not in picks:
                picks |= {agent.act(o, masks[j]) for agent in python[SEEDS:]}
            phase = int(batch.phase[live[j]])
            assert greedy[j] in picks, (
                f"{name}: game {live[j]} move {step} phase {phase}: compiled greedy picks {greedy[j]}, "
                f"GreedyAgent {sorted(picks)} (legal {np.flatnonzero(masks[j]).tolist()})"
            )
            seen[phase] += 1
            if phase == K.CHALLENGE:
                seen["challenge" if greedy[j] >= A.CHALLENGE_BASE else "pass"] += 1
    assert seen[K.DRAW] > 100 and seen[K.DISCARD] > 100 and seen["pass"] > 20, seen
    if config.layout == "choose":  # (under auto its seats' words are all the referee's: it never challenges)
        assert seen["challenge"] > 10, seen
    assert seen[K.LAY] > (20 if config.layout == "choose" else -1), seen


@pytest.mark.slow
def test_compiled_random_is_uniform_over_the_challenge_variant_moves():
    """Every legal move, lays and challenges too, about equally often; and the bots play whole games."""
    config = _variant("three_choose_challenges")
    wanted = {K.LAY: None, K.CHALLENGE: None, K.DISCARD: None}
    for batch, live, masks, _ in walk(config, seed=8, games=32, go_out_chance=0.3):
        for j in range(live.size):
            phase = int(batch.phase[live[j]])
            if wanted.get(phase, 0) is None and masks[j].sum() >= 3:
                wanted[phase] = int(live[j])
        if all(i is not None for i in wanted.values()):
            break
    assert all(i is not None for i in wanted.values()), wanted
    for i in wanted.values():
        _uniform_picks(batch, i, searched=True)
    games = BatchGame(config, num_games=8)
    games.reset(seed=1)
    bots = np.tile(np.asarray([RANDOM, GREEDY, GREEDY], dtype=np.int8), (8, 1))
    games.play_bots(np.arange(8), bots, np.zeros(8, np.int64))
    assert games.is_over.all()
