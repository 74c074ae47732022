"""The baseline bots compiled for the batched engine: `random` and `greedy`, as `quiddler_agents.simple` plays them.

They read only their seat's view: their own hand, the discard top and their legal moves
(the figures of the laid layouts and of their own candidates when they lay), as the
Python bots read their observation. Their choices come from each game's bot generator
(`rng[:, 1]`), so the cards a game deals do not depend on who plays it. `play_bots`
moves every game forward until a seat that is not a compiled bot is to move, or the
game ends; `tests/test_batch_bots.py` checks the greedy choices against `quiddler_agents.simple`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from . import batch_kernels as kernels
from .borrow import borrow
from .solver_kernel import best_layout_hand, discard_table, go_out_face, popcount, trailing_zeros

NOT_A_BOT = -1
"""Bot code of a seat the kernels do not play (the learner, or a Python policy)."""
RANDOM, GREEDY = 0, 1
BOT_CODES = {"random": RANDOM, "greedy": GREEDY}
"""The agent specs the batched engine plays itself."""
RESET_ACTION = 0
"""The one action the vector env's mask allows in a game whose episode ended in the step: under next-step
autoreset its next action is ignored while it resets, and a mask with a legal action keeps every masked sampler
(and `np.flatnonzero(mask)[0]`) working."""


@njit(cache=True, nogil=True)
def _auto_lay(i, cards, ints, offsets, rules):
    """The lay move of the automatic rule over the current player's candidates (not its bluff: greedy lays
    honestly, and random, which lays so without challenges, lays at random with them)."""
    nc = ints[i, kernels.I_CAND_N]
    if rules[kernels.R_CHALLENGES] and ints[i, kernels.I_CAND_BLUFF] >= 0 and nc > 1:
        nc -= 1  # the bluff is the last candidate
    used = np.empty(nc, np.int64)
    longest = np.empty(nc, np.int64)
    words = np.empty(nc, np.int64)
    for k in range(nc):
        base = offsets[kernels.L_CAND_FIG] + k * kernels.FIG
        used[k] = ints[i, base + kernels.F_USED]
        longest[k] = ints[i, base + kernels.F_LONGEST]
        words[k] = ints[i, base + kernels.F_WORDS]
    total = (
        ints[i, offsets[kernels.L_CAND_FIG] + kernels.F_USED] + ints[i, offsets[kernels.L_CAND_FIG] + kernels.F_UNUSED]
    )  # (every candidate's)
    return kernels.LAY_BASE + kernels.auto_pick(used, total, longest, words, nc, cards, ints, i, offsets, rules)


@njit(cache=True, nogil=True, inline="always")
def _held_faces(cards, base):
    """The faces of the hand at `base`, as bits (without a branch per face: whether one is held is a coin flip)."""
    held = np.int64(0)
    for f in range(kernels.FACES):
        held |= np.int64(cards[base + f] > 0) << f
    return held


@njit(cache=True, nogil=True, inline="always")
def _nth_face(faces, n):
    """The n-th (from 0, lowest first) face of the bit set `faces` (it has more than n)."""
    for _ in range(n):
        faces &= faces - 1
    return trailing_zeros(faces)


@njit(cache=True, nogil=True, inline="always")  # inlined: a call costs a reference count per array
def random_action(i, cards, ints, rng, go, offsets, rules, tables):
    """Uniform over the legal moves (`quiddler_agents.simple.RandomAgent`); lays by the automatic rule.

    In the discard phase the pick lands uniformly on one of 2d moves (d: the faces in the hand): a
    discard of each face, always legal, and going out with each. A go-out pick is checked for that face
    alone (`solver_kernel.go_out_face`); if it does not go out, it is struck and the pick is made again
    over the moves left. So every legal move is equally likely, as over the whole mask, but most moves
    search no discard, and half of them (a discard picked first) list no words either; the mask
    (`go_bits`) searches every one. Where the mask's search has run (`go`), its answers are read
    instead: they are the same, and so is the pick.

    In the challenge variant it picks over the whole mask (it lays, bluffs and challenges at random).
    """
    if kernels.challenges_on(rules, tables):
        return _uniform_legal(i, cards, ints, rng, go, offsets, rules, tables)
    ph = ints[i, kernels.I_PHASE]
    if ph == kernels.LAY:
        return _auto_lay(i, cards, ints, offsets, rules)
    if ph == kernels.DRAW:
        if ints[i, kernels.I_DRAW_LEN] > 0 or ints[i, kernels.I_DISC_LEN] > 1:
            return kernels.DRAW_PILE if kernels.below(rng, i, 1, 2) == 0 else kernels.TAKE_DISCARD
        return kernels.TAKE_DISCARD
    if ph != kernels.DISCARD:
        return -1
    c = cards[i]
    base = offsets[kernels.L_HANDS] + ints[i, kernels.I_CUR] * kernels.FACES
    held = _held_faces(c, base)
    d = popcount(held)
    if rules[kernels.R_FORCED]:  # discarding is legal only when going out is not: the whole search
        bits = kernels.go_bits(i, cards, ints, go, offsets, rules, tables)
        if bits != 0:
            return kernels.GO_OUT_BASE + _nth_face(bits, kernels.below(rng, i, 1, popcount(bits)))
        return kernels.DISCARD_BASE + _nth_face(held, kernels.below(rng, i, 1, d))
    known = go[i]
    scratch = tables[8]
    p = ints[i, kernels.I_CUR]
    searching = False  # the search is readied at the first go-out pick: half the picks are discards
    struck = np.int64(0)
    n_go = d
    while True:
        k = kernels.below(rng, i, 1, d + n_go)
        if k < d:
            return kernels.DISCARD_BASE + _nth_face(held, k)
        f = _nth_face(held & ~struck, k - d)
        if known == kernels.GO_UNKNOWN and not searching:
            h = kernels.hand_of(cards, i, offsets, p, tables)
            if kernels.may_go_out(i, h, ints):
                scratch = kernels.go_search(i, h, rules, tables, p)  # by the seat's own words
                searching = True
            else:
                known = 0
        if known == kernels.GO_UNKNOWN:
            if go_out_face(f, kernels.own_tables(tables, rules, p)[2], scratch):
                return kernels.GO_OUT_BASE + f
        elif (known >> f) & 1:
            return kernels.GO_OUT_BASE + f
        struck |= np.int64(1) << f
        n_go -= 1


@njit(cache=True, nogil=True)
def _uniform_legal(i, cards, ints, rng, go, offsets, rules, tables):
    """A move uniform over game i's mask, from the bot generator."""
    mask = np.zeros(kernels.NUM_CHALLENGE_ACTIONS, np.int8)
    kernels.mask_row(i, mask, cards, ints, go, offsets, rules, tables)
    k = kernels.below(rng, i, 1, mask.sum())
    for a in range(mask.shape[0]):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


INVALID_PRIOR_AUTO, INVALID_PRIOR_CHOOSE = 0.05, 0.25
"""Greedy's prior that a laid word is invalid (`quiddler_agents.base.INVALID_PRIOR`, by `layout`)."""


@njit(cache=True, nogil=True)
def _challenge_move(i, mask, cards, ints, offsets, rules, tables):
    """Greedy's challenge (`BaseAgent.challenge_move`): the word its vocabulary does not know with the largest
    positive expected gain, else pass."""
    p = ints[i, kernels.I_CUR]
    b = INVALID_PRIOR_CHOOSE if rules[kernels.R_CHOOSE] else INVALID_PRIOR_AUTO
    c = min(max(np.float64(np.float32(kernels.seat_coverage(tables, p))), 0.0), 1.0)  # as its observation shows it
    p_invalid = b / (b + (1.0 - b) * (1.0 - c))
    vocab = kernels.seat_tables(tables, p)
    best, best_gain = kernels.PASS, 0.0
    for a in range(kernels.CHALLENGE_BASE, mask.shape[0]):
        if mask[a]:
            q = (p + (a - kernels.CHALLENGE_BASE) // kernels.WORDS + 1) % rules[kernels.R_PLAYERS]
            key = kernels.word_key(i, q, (a - kernels.CHALLENGE_BASE) % kernels.WORDS, cards, ints, offsets, tables)
            if kernels.key_term(key, vocab[2], vocab[4]) >= 0:
                continue  # a word it knows
            points = kernels.key_points(key)
            gain = p_invalid * 2 * points - (1.0 - p_invalid) * points
            if gain > best_gain + 1e-9:
                best, best_gain = a, gain
    return best


@njit(cache=True, nogil=True)
def _best_score(h, rules, tables, p):
    """The score of the best layout of h by seat p's vocabulary."""
    vocab = kernels.own_tables(tables, rules, p)
    used, _, _ = best_layout_hand(
        h, vocab[0], rules[kernels.R_MIN_CARDS], vocab[1], vocab[2], vocab[3], vocab[4], vocab[5], vocab[6], vocab[7]
    )
    return 2 * np.int64(used) - kernels.hand_points(h)


@njit(cache=True, nogil=True)
def _discard_scores(h, rules, tables, p):
    """For each face in the hand: the score of the best layout of the hand without one of it (-1e9 if absent);
    then, at index 31, the faces whose discard leaves a hand laid out completely (bit f: the go-out faces); by
    seat p's vocabulary."""
    vocab = kernels.own_tables(tables, rules, p)
    faces, used, _, _, cover = discard_table(
        h, vocab[0], rules[kernels.R_MIN_CARDS], vocab[1], vocab[2], vocab[3], vocab[4], vocab[5], vocab[6], vocab[7]
    )
    total = kernels.hand_points(h)
    out = np.full(kernels.FACES + 1, np.int64(-(10**9)))
    bits = np.int64(0)
    for j in range(faces.shape[0]):
        f = faces[j]
        rest = total - kernels._POINTS[f]
        out[f] = 2 * np.int64(used[j]) - rest
        if cover[j] and rest > 0:
            bits |= np.int64(1) << f
    out[kernels.FACES] = bits
    return out


@njit(cache=True, nogil=True)
def _prime_greedy(i, cards, ints, go, offsets, rules, tables, table_memo):
    """Before greedy's discard: its discard table (which it needs anyway) also answers the engine's go-out
    question for the hand, so the go-out search is not run a second time."""
    if ints[i, kernels.I_PHASE] != kernels.DISCARD or go[i] != kernels.GO_UNKNOWN:
        return
    h = kernels.hand_of(cards, i, offsets, ints[i, kernels.I_CUR], tables)
    if ints[i, kernels.I_WENT_OUT] >= 0 or h.sum() <= 1:
        go[i] = 0
        return
    go[i] = _table(h, table_memo[i], rules, tables, ints[i, kernels.I_CUR])[kernels.FACES]


MEMO_WIDTH = 3 + 31 + 1
"""A memo row: the hand's key (two int64), 1 if filled, then the figure(s) remembered for that hand (a discard
table: 31 scores and the go-out faces)."""


def new_memo(num_games: int, num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """Greedy's memo of a batch: per seat its last hand's best score, per game the last discard table."""
    return np.zeros((num_games, num_players, MEMO_WIDTH), np.int64), np.zeros((num_games, MEMO_WIDTH), np.int64)


@njit(cache=True, nogil=True)
def _key(h):
    """A hand's exact key: 4 bits per face count (a count is at most 12), faces 0-15 and 16-30."""
    k0 = np.int64(0)
    k1 = np.int64(0)
    for f in range(16):
        k0 |= np.int64(h[f]) << (4 * f)
    for f in range(16, kernels.FACES):
        k1 |= np.int64(h[f]) << (4 * (f - 16))
    return k0, k1


@njit(cache=True, nogil=True)
def _table(h, row, rules, tables, p):
    """`_discard_scores`, remembered in `row` for the last hand asked (taking the discard asks twice)."""
    k0, k1 = _key(h)
    k1 |= (
        kernels.seat_vocabulary(tables, p) << 60
    )  # (the hand's key leaves these bits free; seats' vocabularies differ)
    if row[2] == 1 and row[0] == k0 and row[1] == k1:
        return row[3:].copy()
    scores = _discard_scores(h, rules, tables, p)
    row[0] = k0
    row[1] = k1
    row[2] = 1
    row[3:] = scores
    return scores


@njit(cache=True, nogil=True)
def greedy_action(i, mask, cards, ints, rng, offsets, rules, tables, best_memo, table_memo):
    """`quiddler_agents.simple.GreedyAgent`: take the discard when it raises the best score it can keep, go out
    whenever it can, else discard what hurts its best layout least; ties from the bot generator.

    Memos (exact, keyed by the hand): the best score of the hand a seat kept after its discard
    is the discard table's entry for that discard, so its next draw need not search it again;
    the discard table of hand + the discard top serves the discard after taking it."""
    count = 0
    first = -1
    for a in range(mask.shape[0]):
        if mask[a]:
            count += 1
            if first < 0:
                first = a
    if count == 1:
        return first
    ph = ints[i, kernels.I_PHASE]
    if ph == kernels.LAY:
        return _auto_lay(i, cards, ints, offsets, rules)
    if ph == kernels.CHALLENGE:
        return _challenge_move(i, mask, cards, ints, offsets, rules, tables)
    p = ints[i, kernels.I_CUR]
    h = kernels.hand_of(cards, i, offsets, p, tables)
    if ph == kernels.DRAW:
        if mask[kernels.TAKE_DISCARD] and mask[kernels.DRAW_PILE] and ints[i, kernels.I_DISC_LEN] > 0:
            k0, k1 = _key(h)
            kept = best_memo[i, p]
            if kept[2] == 1 and kept[0] == k0 and kept[1] == k1:
                now = kept[3]
            else:
                now = _best_score(h, rules, tables, p)
            h[cards[i, offsets[kernels.L_DISC] + ints[i, kernels.I_DISC_LEN] - 1]] += 1
            scores = _table(h, table_memo[i], rules, tables, p)
            if scores[: kernels.FACES].max() > now:
                return kernels.TAKE_DISCARD
            return kernels.DRAW_PILE
        return first
    scores = _table(h, table_memo[i], rules, tables, p)
    base = kernels.DISCARD_BASE
    # With bluffing the mask may go out discarding any face: greedy goes out honestly, by its table's faces.
    honest = scores[kernels.FACES] if rules[kernels.R_BLUFF] else np.int64(kernels.FACE_BITS)
    for f in range(kernels.FACES):
        if mask[kernels.GO_OUT_BASE + f] and scores[f] > -(10**9) and (honest >> f) & 1:
            base = kernels.GO_OUT_BASE  # going out beats every plain discard
            break
    if base == kernels.DISCARD_BASE:
        honest = np.int64(kernels.FACE_BITS)
    best = -(10**9) - 1
    ties = 0
    for f in range(kernels.FACES):
        if mask[base + f] and scores[f] > -(10**9) and (honest >> f) & 1:
            if scores[f] > best:
                best = scores[f]
                ties = 1
            elif scores[f] == best:
                ties += 1
    k = kernels.below(rng, i, 1, ties) if ties > 1 else 0
    for f in range(kernels.FACES):
        if mask[base + f] and scores[f] == best and (honest >> f) & 1:
            if k == 0:
                h[f] -= 1
                k0, k1 = _key(h)
                kept = best_memo[i, p]
                kept[0] = k0
                kept[1] = k1
                kept[2] = 1
                kept[3] = best
                return base + f
            k -= 1
    return first


# -- the named structures the vector env's kernels take ---------------------------------------------------------
# A named tuple of arrays is one argument, read by field where it is used, and borrowed as a whole
# (`borrow(arrays)`); inside compiled code it costs nothing over the arrays one by one. From Python the kernels
# take each as a plain tuple (`tuple(arrays)`) and name it again on entry (`GameArrays(*arrays)`): numba's
# dispatcher types a plain tuple in C and a named tuple in Python, 2-3 us more a call
# (`benchmarks/dispatch_cost.py`), a tenth of a vector step of 16 games.


class GameArrays(NamedTuple):
    """The batched games' arrays and tables, as `batch_kernels` names them (`batch.BatchGame.arrays`)."""

    cards: np.ndarray
    ints: np.ndarray
    rng: np.ndarray
    go: np.ndarray
    offsets: np.ndarray
    rules: np.ndarray
    sizes: np.ndarray
    tables: tuple
    obs_starts: np.ndarray
    best_memo: np.ndarray
    """Greedy's memo of its best layout's score (`new_memo`)."""
    table_memo: np.ndarray
    """Greedy's memo of its discard table (`new_memo`)."""
    num_actions: np.int64
    """The size of the action table (`actions.num_actions`)."""


class Learners(NamedTuple):
    """Each game's learner, by game (`engine.LearnerGames` owns the arrays)."""

    seats: np.ndarray
    """The learner's seat."""
    bots: np.ndarray
    """(games, players): each seat's compiled bot code, `NOT_A_BOT` for the learner's and Python policies'."""
    moves: np.ndarray
    """Every seat's moves this episode."""
    steps: np.ndarray
    """The learner's steps this episode."""
    episodes: np.ndarray
    """The episodes dealt so far."""
    masks: np.ndarray
    """The learner's legal moves now (int8, games x actions)."""
    observations: np.ndarray
    """The learner's observation now (float32, games x observation size)."""


class LearnerSetting(NamedTuple):
    """The numbers that set up the learners' episodes and steps (`engine.LearnerGames`'s options)."""

    seed: np.uint64
    """The batch's seed: slot s's episode e is dealt from `game_stream(seed, s, e)`."""
    slot_offset: np.int64
    """Added to a game's index to make its slot (the games of several workers stay distinct)."""
    seat_option: np.int64
    """The learner's seat, or -1: drawn from each episode's seed (`seat_draw`)."""
    max_cycles: np.int64
    """The learner's steps before an episode is truncated (0: never)."""
    reward_mode: np.int64
    """`engine.REWARD_CODES`' code of the reward (`learner_reward`)."""
    reward_scale: np.float64
    illegal_reward: np.float64


class StepResults(NamedTuple):
    """What a vector step writes per game, besides the learners' masks and observations."""

    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    illegal: np.ndarray
    round_ended: np.ndarray
    over: np.ndarray
    """Whether the game ended in the step."""
    scores: np.ndarray
    """(games, players): the round scores, where a round ended (`figures_row`)."""
    bonuses: np.ndarray
    totals: np.ndarray
    winners: np.ndarray
    waiting: np.ndarray
    """Per game: -1, or the rounds completed before the learner's move of a game now waiting on a Python policy."""


# -- the bots' kernels --------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def bot_action(code, i, mask, arrays):
    """The move bot `code` picks in game i (mask: the legal moves, which greedy reads; random needs none)."""
    cards, ints, rng, go, offsets, rules, sizes, tables, obs_starts, best_memo, table_memo, num_actions = arrays
    if code == GREEDY:
        return greedy_action(i, mask, cards, ints, rng, offsets, rules, tables, best_memo, table_memo)
    return random_action(i, cards, ints, rng, go, offsets, rules, tables)


@njit(cache=True, nogil=True, inline="always")  # inlined: a call costs a reference count per array
def _play_game(i, bots, moves, mask, arrays):
    """Move game i while its current seat is a compiled bot and it is not over (mask: scratch for greedy)."""
    cards, ints, rng, go, offsets, rules, sizes, tables, obs_starts, best_memo, table_memo, num_actions = arrays
    while ints[i, kernels.I_PHASE] != kernels.GAME_OVER:
        code = bots[i, ints[i, kernels.I_CUR]]
        if code < 0:
            break
        # Each bot called directly, not through `bot_action`: a random bot needs few arrays.
        if code == GREEDY:
            _prime_greedy(i, cards, ints, go, offsets, rules, tables, table_memo)
            kernels.mask_row(i, mask, cards, ints, go, offsets, rules, tables)
            a = greedy_action(i, mask, cards, ints, rng, offsets, rules, tables, best_memo, table_memo)
        else:
            a = random_action(i, cards, ints, rng, go, offsets, rules, tables)
        kernels.step_one(i, a, cards, ints, rng, go, offsets, rules, sizes, tables)
        moves[i] += 1


@njit(cache=True, nogil=True)
def play_bots(slots, bots, moves, arrays):
    """Move each game of `slots` while its current seat is a compiled bot (`bots[i, seat] >= 0`) and it is not
    over. `moves[i]` counts the moves played. (`arrays`: a `GameArrays` as a plain tuple, as for the kernels
    below.)"""
    bots, moves, arrays = borrow(bots, moves, GameArrays(*arrays))
    mask = np.zeros(arrays.num_actions, np.int8)
    for j in range(slots.shape[0]):
        _play_game(slots[j], bots, moves, mask, arrays)


@njit(cache=True, nogil=True)
def bot_actions(slots, codes, out, arrays):
    """The action bot `codes[j]` picks in game slots[j] now, into out[j] (nothing moves)."""
    arrays = borrow(GameArrays(*arrays))[0]
    cards, ints, rng, go, offsets, rules, sizes, tables, obs_starts, best_memo, table_memo, num_actions = arrays
    mask = np.zeros(arrays.num_actions, np.int8)
    for j in range(slots.shape[0]):
        i = slots[j]
        if codes[j] == GREEDY:
            _prime_greedy(i, cards, ints, go, offsets, rules, tables, table_memo)
            kernels.mask_row(i, mask, cards, ints, go, offsets, rules, tables)
        out[j] = bot_action(codes[j], i, mask, arrays)


# -- the vector env's kernels -------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def vector_step(actions, restart, opponent_codes, setting, learners, results, arrays):
    """The vector env's step, in one call, game by game (its rows stay in the cache from its move to its view).
    Game i with restart[i] 1 starts its next episode (`_start_episode` with the bots `opponent_codes`, its
    action ignored), with restart[i] 2 is left as it is (the caller deals its next episode). In any other game
    i, learner seat `learners.seats[i]`: actions[i] is illegal unless its mask allows it (then the game does not
    move: illegal, terminated and the setting's illegal_reward); else it is played, then the compiled bots up to
    the learner's next move (`play_bots`). A game that then waits on a seat no bot plays (a Python policy's)
    gets `results.waiting[i]` = its rounds completed before the learner's move (else -1): the caller plays those
    seats, then `finish_steps` ends its step. Every other game's step ends here (`_finish_step`)."""
    setting, learners, results = LearnerSetting(*setting), Learners(*learners), StepResults(*results)
    opponent_codes, learners, results, arrays = borrow(opponent_codes, learners, results, GameArrays(*arrays))
    cards, ints, rng, go, offsets, rules, sizes, tables, obs_starts, best_memo, table_memo, num_actions = arrays
    mask = np.zeros(learners.masks.shape[1], np.int8)
    for i in range(actions.shape[0]):
        a = actions[i]
        results.waiting[i] = -1
        rounds_before = -1  # -1: the learner did not move (a new episode, or an illegal action)
        if restart[i] == 2:  # (its next episode is dealt by the caller)
            continue
        if restart[i] == 1:
            _start_episode(i, opponent_codes, setting, learners, mask, arrays)
        elif a < 0 or a >= learners.masks.shape[1] or learners.masks[i, a] == 0:
            results.illegal[i] = True
            results.terminated[i] = True
            results.rewards[i] = setting.illegal_reward
        else:
            rounds_before = ints[i, kernels.I_ROUNDS_DONE]
            kernels.step_one(i, a, cards, ints, rng, go, offsets, rules, sizes, tables)
            learners.moves[i] += 1
            learners.steps[i] += 1
            _play_game(i, learners.bots, learners.moves, mask, arrays)
            if ints[i, kernels.I_PHASE] != kernels.GAME_OVER and ints[i, kernels.I_CUR] != learners.seats[i]:
                results.waiting[i] = rounds_before
                continue
        _finish_step(i, rounds_before, setting, learners, results, arrays)


@njit(cache=True, nogil=True, inline="always")  # inlined: a call costs a reference count per array
def _finish_step(i, rounds_before, setting, learners, results, arrays):
    """The end of game i's step once it is at its learner's move or over. If the learner moved (rounds_before
    >= 0: the rounds completed before its move): its reward (`learner_reward`), terminated if the game is over,
    truncated if it reached the setting's `max_cycles` steps (0: no cap), round_ended if a round ended and over
    if the game ended; the infos' figures (`kernels.figures_row`). Then the game's mask goes into the learners'
    masks (if its episode ended: only `RESET_ACTION`) and the learner's observation into their observations."""
    cards, ints, rng, go, offsets, rules, sizes, tables, obs_starts, best_memo, table_memo, num_actions = arrays
    seat = learners.seats[i]
    if rounds_before >= 0:
        results.rewards[i] = kernels.learner_reward(
            i, seat, setting.reward_mode, setting.reward_scale, ints, offsets, rules
        )
        if ints[i, kernels.I_PHASE] == kernels.GAME_OVER:
            results.terminated[i] = True
            results.over[i] = True
        elif setting.max_cycles > 0 and learners.steps[i] >= setting.max_cycles:
            results.truncated[i] = True
        results.round_ended[i] = ints[i, kernels.I_ROUNDS_DONE] != rounds_before
        kernels.figures_row(
            i, results.round_ended[i], results.over[i], results.scores, results.bonuses, results.totals,
            results.winners, ints, offsets, rules,
        )  # fmt: skip
    kernels.mask_row(i, learners.masks[i], cards, ints, go, offsets, rules, tables)
    if results.terminated[i] or results.truncated[i]:
        learners.masks[i, :] = 0
        learners.masks[i, RESET_ACTION] = 1
    kernels.observe_row(i, seat, learners.observations[i], cards, ints, offsets, rules, obs_starts, tables)


@njit(cache=True, nogil=True)
def finish_steps(slots, rounds_before, setting, learners, results, arrays):
    """`_finish_step` of each game of `slots` (that waited on Python policies in `vector_step`; rounds_before:
    its `waiting` values)."""
    setting, learners, results = LearnerSetting(*setting), Learners(*learners), StepResults(*results)
    learners, results, arrays = borrow(learners, results, GameArrays(*arrays))
    for j in range(slots.shape[0]):
        _finish_step(slots[j], rounds_before[j], setting, learners, results, arrays)


@njit(cache=True, nogil=True)
def _start_episode(i, opponent_codes, setting, learners, mask, arrays):
    """Game i deals episode `learners.episodes[i]` of slot i + slot_offset of a batch seeded `setting.seed`
    (`kernels.game_stream`), seats its learner (the setting's `seat_option`, or drawn from the game's seed when
    it is negative: `kernels.seat_draw`) and the bots (`opponent_codes[k - 1]` k seats after it) and plays them
    up to the learner's move (`play_bots`, mask: scratch for greedy); its episodes count on, its steps and moves
    start again, the gains are taken."""
    cards, ints, rng, go, offsets, rules, sizes, tables, obs_starts, best_memo, table_memo, num_actions = arrays
    n = rules[kernels.R_PLAYERS]
    game_seed = kernels.game_stream(setting.seed, np.uint64(i + setting.slot_offset), np.uint64(learners.episodes[i]))
    kernels.reset_game(i, game_seed, 0, cards, ints, rng, go, offsets, rules, sizes)
    seat = kernels.seat_draw(game_seed, n) if setting.seat_option < 0 else setting.seat_option
    learners.seats[i] = seat
    learners.bots[i, seat] = NOT_A_BOT
    for k in range(1, n):
        learners.bots[i, (seat + k) % n] = opponent_codes[k - 1]
    learners.episodes[i] += 1
    learners.steps[i] = 0
    learners.moves[i] = 0
    for p in range(n):
        ints[i, offsets[kernels.L_GAIN] + p] = 0
    _play_game(i, learners.bots, learners.moves, mask, arrays)


@njit(cache=True, nogil=True)
def start_episodes(slots, opponent_codes, setting, learners, arrays):
    """The vector env's new episodes where every other seat is a compiled bot, in one call: `_start_episode`
    of each game i of slots, then its mask and the learner's observation into the learners' arrays."""
    setting, learners = LearnerSetting(*setting), Learners(*learners)
    opponent_codes, learners, arrays = borrow(opponent_codes, learners, GameArrays(*arrays))
    cards, ints, rng, go, offsets, rules, sizes, tables, obs_starts, best_memo, table_memo, num_actions = arrays
    mask = np.zeros(learners.masks.shape[1], np.int8)
    for j in range(slots.shape[0]):
        i = slots[j]
        _start_episode(i, opponent_codes, setting, learners, mask, arrays)
        kernels.mask_row(i, learners.masks[i], cards, ints, go, offsets, rules, tables)
        kernels.observe_row(
            i, learners.seats[i], learners.observations[i], cards, ints, offsets, rules, obs_starts, tables
        )
