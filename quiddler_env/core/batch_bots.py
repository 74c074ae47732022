"""The baseline bots compiled for the batched engine: `random` and `greedy`, as `quiddler_agents.simple` plays them.

They read only their seat's view: their own hand, the discard top and their legal moves
(the figures of the laid layouts and of their own candidates when they lay), as the
Python bots read their observation. Their choices come from each game's bot generator
(`rng[:, 1]`), so the cards a game deals do not depend on who plays it. `play_bots`
moves every game forward until a seat that is not a compiled bot is to move, or the
game ends; `tests/test_batch_bots.py` checks the greedy choices against `quiddler_agents.simple`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import batch_kernels as K
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
def _auto_lay(i, cards, ints, L, R):
    """The lay move of the automatic rule over the current player's candidates (not its bluff: greedy lays
    honestly, and random, which lays so without challenges, lays at random with them)."""
    nc = ints[i, K.I_CAND_N]
    if R[K.R_CHALLENGES] and ints[i, K.I_CAND_BLUFF] >= 0 and nc > 1:
        nc -= 1  # the bluff is the last candidate
    used = np.empty(nc, np.int64)
    longest = np.empty(nc, np.int64)
    words = np.empty(nc, np.int64)
    for k in range(nc):
        base = L[K.L_CAND_FIG] + k * K.FIG
        used[k] = ints[i, base + K.F_USED]
        longest[k] = ints[i, base + K.F_LONGEST]
        words[k] = ints[i, base + K.F_WORDS]
    total = ints[i, L[K.L_CAND_FIG] + K.F_USED] + ints[i, L[K.L_CAND_FIG] + K.F_UNUSED]  # (every candidate's)
    return K.LAY_BASE + K.auto_pick(used, total, longest, words, nc, cards, ints, i, L, R)


@njit(cache=True, nogil=True, inline="always")
def _held_faces(cards, base):
    """The faces of the hand at `base`, as bits (without a branch per face: whether one is held is a coin flip)."""
    held = np.int64(0)
    for f in range(K.FACES):
        held |= np.int64(cards[base + f] > 0) << f
    return held


@njit(cache=True, nogil=True, inline="always")
def _nth_face(faces, n):
    """The n-th (from 0, lowest first) face of the bit set `faces` (it has more than n)."""
    for _ in range(n):
        faces &= faces - 1
    return trailing_zeros(faces)


@njit(cache=True, nogil=True, inline="always")  # inlined: a call costs a reference count per array
def random_action(i, cards, ints, rng, go, L, R, S):
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
    if R[K.R_CHALLENGES]:
        return _uniform_legal(i, cards, ints, rng, go, L, R, S)
    ph = ints[i, K.I_PHASE]
    if ph == K.LAY:
        return _auto_lay(i, cards, ints, L, R)
    if ph == K.DRAW:
        if ints[i, K.I_DRAW_LEN] > 0 or ints[i, K.I_DISC_LEN] > 1:
            return K.DRAW_PILE if K.below(rng, i, 1, 2) == 0 else K.TAKE_DISCARD
        return K.TAKE_DISCARD
    if ph != K.DISCARD:
        return -1
    c = cards[i]
    base = L[K.L_HANDS] + ints[i, K.I_CUR] * K.FACES
    held = _held_faces(c, base)
    d = popcount(held)
    if R[K.R_FORCED]:  # discarding is legal only when going out is not: the whole search
        bits = K.go_bits(i, cards, ints, go, L, R, S)
        if bits != 0:
            return K.GO_OUT_BASE + _nth_face(bits, K.below(rng, i, 1, popcount(bits)))
        return K.DISCARD_BASE + _nth_face(held, K.below(rng, i, 1, d))
    known = go[i]
    ws = S[8]
    searching = False  # the search is readied at the first go-out pick: half the picks are discards
    struck = np.int64(0)
    n_go = d
    while True:
        k = K.below(rng, i, 1, d + n_go)
        if k < d:
            return K.DISCARD_BASE + _nth_face(held, k)
        f = _nth_face(held & ~struck, k - d)
        if known == K.GO_UNKNOWN and not searching:
            h = K.hand_of(cards, i, L, ints[i, K.I_CUR], S)
            if K.may_go_out(i, h, ints):
                ws = K.go_search(i, h, R, S)
                searching = True
            else:
                known = 0
        if known == K.GO_UNKNOWN:
            if go_out_face(f, S[2], ws):
                return K.GO_OUT_BASE + f
        elif (known >> f) & 1:
            return K.GO_OUT_BASE + f
        struck |= np.int64(1) << f
        n_go -= 1


@njit(cache=True, nogil=True)
def _uniform_legal(i, cards, ints, rng, go, L, R, S):
    """A move uniform over game i's mask, from the bot generator."""
    mask = np.zeros(K.NUM_CHALLENGE_ACTIONS, np.int8)
    K.mask_row(i, mask, cards, ints, go, L, R, S)
    k = K.below(rng, i, 1, mask.sum())
    for a in range(mask.shape[0]):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


INVALID_PRIOR_AUTO, INVALID_PRIOR_CHOOSE = 0.05, 0.25
"""Greedy's prior that a laid word is invalid (`quiddler_agents.base.INVALID_PRIOR`, by `layout`)."""


@njit(cache=True, nogil=True)
def _challenge_move(i, mask, cards, ints, L, R, S):
    """Greedy's challenge (`BaseAgent.challenge_move`): the word its vocabulary does not know with the largest
    positive expected gain, else pass."""
    p = ints[i, K.I_CUR]
    b = INVALID_PRIOR_CHOOSE if R[K.R_CHOOSE] else INVALID_PRIOR_AUTO
    c = min(max(np.float64(np.float32(K.seat_coverage(S, p))), 0.0), 1.0)  # as its observation shows it
    p_invalid = b / (b + (1.0 - b) * (1.0 - c))
    T = K.seat_tables(S, p)
    best, best_gain = K.PASS, 0.0
    for a in range(K.CHALLENGE_BASE, mask.shape[0]):
        if mask[a]:
            q = (p + (a - K.CHALLENGE_BASE) // K.WORDS + 1) % R[K.R_PLAYERS]
            key = K.word_key(i, q, (a - K.CHALLENGE_BASE) % K.WORDS, cards, ints, L, S)
            if K.key_term(key, T[2], T[4]) >= 0:
                continue  # a word it knows
            points = K.key_points(key)
            gain = p_invalid * 2 * points - (1.0 - p_invalid) * points
            if gain > best_gain + 1e-9:
                best, best_gain = a, gain
    return best


@njit(cache=True, nogil=True)
def _best_score(h, R, S, p):
    """The score of the best layout of h by seat p's vocabulary."""
    T = K.own_tables(S, R, p)
    used, _, _ = best_layout_hand(h, T[0], R[K.R_MIN_CARDS], T[1], T[2], T[3], T[4], T[5], T[6], T[7])
    return 2 * np.int64(used) - K.hand_points(h)


@njit(cache=True, nogil=True)
def _discard_scores(h, R, S, p):
    """For each face in the hand: the score of the best layout of the hand without one of it (-1e9 if absent);
    then, at index 31, the faces whose discard leaves a hand laid out completely (bit f: the go-out faces); by
    seat p's vocabulary."""
    T = K.own_tables(S, R, p)
    faces, used, _, _, cover = discard_table(h, T[0], R[K.R_MIN_CARDS], T[1], T[2], T[3], T[4], T[5], T[6], T[7])
    total = K.hand_points(h)
    out = np.full(K.FACES + 1, np.int64(-(10**9)))
    bits = np.int64(0)
    for j in range(faces.shape[0]):
        f = faces[j]
        rest = total - K._POINTS[f]
        out[f] = 2 * np.int64(used[j]) - rest
        if cover[j] and rest > 0:
            bits |= np.int64(1) << f
    out[K.FACES] = bits
    return out


@njit(cache=True, nogil=True)
def _prime_greedy(i, cards, ints, go, L, R, S, table_memo):
    """Before greedy's discard: its discard table (which it needs anyway) also answers the engine's go-out
    question for the hand, so the go-out search is not run a second time."""
    if ints[i, K.I_PHASE] != K.DISCARD or go[i] != K.GO_UNKNOWN:
        return
    h = K.hand_of(cards, i, L, ints[i, K.I_CUR], S)
    if ints[i, K.I_WENT_OUT] >= 0 or h.sum() <= 1:
        go[i] = 0
        return
    go[i] = _table(h, table_memo[i], R, S, ints[i, K.I_CUR])[K.FACES]


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
    for f in range(16, K.FACES):
        k1 |= np.int64(h[f]) << (4 * (f - 16))
    return k0, k1


@njit(cache=True, nogil=True)
def _table(h, row, R, S, p):
    """`_discard_scores`, remembered in `row` for the last hand asked (taking the discard asks twice)."""
    k0, k1 = _key(h)
    k1 |= K.seat_vocabulary(S, p) << 60  # (the hand's key leaves these bits free; seats' vocabularies differ)
    if row[2] == 1 and row[0] == k0 and row[1] == k1:
        return row[3:].copy()
    scores = _discard_scores(h, R, S, p)
    row[0] = k0
    row[1] = k1
    row[2] = 1
    row[3:] = scores
    return scores


@njit(cache=True, nogil=True)
def greedy_action(i, mask, cards, ints, rng, L, R, S, best_memo, table_memo):
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
    ph = ints[i, K.I_PHASE]
    if ph == K.LAY:
        return _auto_lay(i, cards, ints, L, R)
    if ph == K.CHALLENGE:
        return _challenge_move(i, mask, cards, ints, L, R, S)
    p = ints[i, K.I_CUR]
    h = K.hand_of(cards, i, L, p, S)
    if ph == K.DRAW:
        if mask[K.TAKE_DISCARD] and mask[K.DRAW_PILE] and ints[i, K.I_DISC_LEN] > 0:
            k0, k1 = _key(h)
            kept = best_memo[i, p]
            if kept[2] == 1 and kept[0] == k0 and kept[1] == k1:
                now = kept[3]
            else:
                now = _best_score(h, R, S, p)
            h[cards[i, L[K.L_DISC] + ints[i, K.I_DISC_LEN] - 1]] += 1
            scores = _table(h, table_memo[i], R, S, p)
            if scores[: K.FACES].max() > now:
                return K.TAKE_DISCARD
            return K.DRAW_PILE
        return first
    scores = _table(h, table_memo[i], R, S, p)
    base = K.DISCARD_BASE
    # With bluffing the mask may go out discarding any face: greedy goes out honestly, by its table's faces.
    honest = scores[K.FACES] if R[K.R_BLUFF] else np.int64(K.FACE_BITS)
    for f in range(K.FACES):
        if mask[K.GO_OUT_BASE + f] and scores[f] > -(10**9) and (honest >> f) & 1:
            base = K.GO_OUT_BASE  # going out beats every plain discard
            break
    if base == K.DISCARD_BASE:
        honest = np.int64(K.FACE_BITS)
    best = -(10**9) - 1
    ties = 0
    for f in range(K.FACES):
        if mask[base + f] and scores[f] > -(10**9) and (honest >> f) & 1:
            if scores[f] > best:
                best = scores[f]
                ties = 1
            elif scores[f] == best:
                ties += 1
    k = K.below(rng, i, 1, ties) if ties > 1 else 0
    for f in range(K.FACES):
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


@njit(cache=True, nogil=True)
def bot_action(code, i, mask, cards, ints, rng, go, L, R, S, best_memo, table_memo):
    """The move bot `code` picks in game i (mask: the legal moves, which greedy reads; random needs none)."""
    if code == GREEDY:
        return greedy_action(i, mask, cards, ints, rng, L, R, S, best_memo, table_memo)
    return random_action(i, cards, ints, rng, go, L, R, S)


@njit(cache=True, nogil=True, inline="always")  # inlined: a call costs a reference count per array
def _play_game(i, bots, moves, mask, cards, ints, rng, go, L, R, sizes, S, best_memo, table_memo):
    """Move game i while its current seat is a compiled bot and it is not over (mask: scratch for greedy)."""
    while ints[i, K.I_PHASE] != K.GAME_OVER:
        code = bots[i, ints[i, K.I_CUR]]
        if code < 0:
            break
        # Each bot called directly, not through `bot_action`: a random bot needs few arrays.
        if code == GREEDY:
            _prime_greedy(i, cards, ints, go, L, R, S, table_memo)
            K.mask_row(i, mask, cards, ints, go, L, R, S)
            a = greedy_action(i, mask, cards, ints, rng, L, R, S, best_memo, table_memo)
        else:
            a = random_action(i, cards, ints, rng, go, L, R, S)
        K.step_one(i, a, cards, ints, rng, go, L, R, sizes, S)
        moves[i] += 1


@njit(cache=True, nogil=True)
def play_bots(games, bots, moves, cards, ints, rng, go, L, R, sizes, S, num_actions, best_memo, table_memo):
    """Move each of `games` while its current seat is a compiled bot (`bots[i, seat] >= 0`) and it is not over.

    `moves[i]` counts the moves played."""
    cards, ints, rng, go, L, R, sizes, S, best_memo, table_memo = borrow(
        cards, ints, rng, go, L, R, sizes, S, best_memo, table_memo
    )
    mask = np.zeros(num_actions, np.int8)
    for j in range(games.shape[0]):
        _play_game(games[j], bots, moves, mask, cards, ints, rng, go, L, R, sizes, S, best_memo, table_memo)


@njit(cache=True, nogil=True)
def vector_step(
    actions, restart, seed, slot_offset, episodes, seat_option, opponent_codes, seats, bots, moves, steps,
    max_cycles, reward_mode, reward_scale, illegal_reward,
    masks, obs, rewards, terminated, truncated, illegal, round_ended, over, figures, waiting,
    cards, ints, rng, go, L, R, sizes, S, SL, num_actions, best_memo, table_memo,
):  # fmt: skip
    """The vector env's step, in one call, game by game (its rows stay in the cache from its move to its view).
    Game i with restart[i] 1 starts its next episode (`_start_episode`, its action ignored), with restart[i] 2
    is left as it is (the caller deals its next episode). In any other game i, learner seat seats[i]:
    actions[i] is illegal unless masks[i] allows it (then the game does not move: illegal, terminated and
    illegal_reward); else it is played, then the compiled bots up to the learner's next move (`play_bots`).
    A game that then waits on a seat no bot plays (a Python policy's) gets waiting[i] = its rounds completed
    before the learner's move (else -1): the caller plays those seats, then `finish_steps` ends its step.
    Every other game's step ends here (`_finish_step`)."""
    seats, bots, moves, steps, masks, obs, rewards, terminated, truncated, illegal, round_ended, over = borrow(
        seats, bots, moves, steps, masks, obs, rewards, terminated, truncated, illegal, round_ended, over
    )
    episodes, opponent_codes, waiting = borrow(episodes, opponent_codes, waiting)
    scores, bonuses, totals, winners = borrow(*figures)
    cards, ints, rng, go, L, R, sizes, S, SL, best_memo, table_memo = borrow(
        cards, ints, rng, go, L, R, sizes, S, SL, best_memo, table_memo
    )
    mask = np.zeros(num_actions, np.int8)
    for i in range(actions.shape[0]):
        a = actions[i]
        waiting[i] = -1
        rounds_before = -1  # -1: the learner did not move (a new episode, or an illegal action)
        if restart[i] == 2:  # (its next episode is dealt by the caller)
            continue
        if restart[i] == 1:
            _start_episode(
                i, seed, slot_offset, episodes, seat_option, opponent_codes, seats, bots, moves, steps, mask,
                cards, ints, rng, go, L, R, sizes, S, best_memo, table_memo,
            )  # fmt: skip
        elif a < 0 or a >= num_actions or masks[i, a] == 0:
            illegal[i] = True
            terminated[i] = True
            rewards[i] = illegal_reward
        else:
            rounds_before = ints[i, K.I_ROUNDS_DONE]
            K.step_one(i, a, cards, ints, rng, go, L, R, sizes, S)
            moves[i] += 1
            steps[i] += 1
            _play_game(i, bots, moves, mask, cards, ints, rng, go, L, R, sizes, S, best_memo, table_memo)
            if ints[i, K.I_PHASE] != K.GAME_OVER and ints[i, K.I_CUR] != seats[i]:
                waiting[i] = rounds_before
                continue
        _finish_step(
            i, rounds_before, seats, steps, max_cycles, reward_mode, reward_scale, masks, obs, rewards, terminated,
            truncated, round_ended, over, scores, bonuses, totals, winners, cards, ints, go, L, R, S, SL,
        )  # fmt: skip


@njit(cache=True, nogil=True, inline="always")  # inlined: a call costs a reference count per array
def _finish_step(
    i, rounds_before, seats, steps, max_cycles, reward_mode, reward_scale, masks, obs, rewards, terminated,
    truncated, round_ended, over, scores, bonuses, totals, winners, cards, ints, go, L, R, S, SL,
):  # fmt: skip
    """The end of game i's step once it is at its learner's move or over. If the learner moved (rounds_before
    >= 0: the rounds completed before its move): rewards[i] is its `learner_reward`, terminated[i] whether
    the game is over, truncated[i] whether it reached `max_cycles` steps (0: no cap), round_ended[i] whether
    a round ended and over[i] whether the game ended; the infos' figures (`K.figures_row`). Then the game's
    mask goes into masks[i] (if its episode ended: only `RESET_ACTION`) and the learner's observation into
    obs[i]."""
    if rounds_before >= 0:
        rewards[i] = K.learner_reward(i, seats[i], reward_mode, reward_scale, ints, L, R)
        if ints[i, K.I_PHASE] == K.GAME_OVER:
            terminated[i] = True
            over[i] = True
        elif max_cycles > 0 and steps[i] >= max_cycles:
            truncated[i] = True
        round_ended[i] = ints[i, K.I_ROUNDS_DONE] != rounds_before
        K.figures_row(i, round_ended[i], over[i], scores, bonuses, totals, winners, ints, L, R)
    K.mask_row(i, masks[i], cards, ints, go, L, R, S)
    if terminated[i] or truncated[i]:
        masks[i, :] = 0
        masks[i, RESET_ACTION] = 1
    K.observe_row(i, seats[i], obs[i], cards, ints, L, R, SL, S)


@njit(cache=True, nogil=True)
def finish_steps(
    games, rounds_before, seats, steps, max_cycles, reward_mode, reward_scale, masks, obs, rewards, terminated,
    truncated, round_ended, over, figures, cards, ints, go, L, R, S, SL,
):  # fmt: skip
    """`_finish_step` of each of `games` (that waited on Python policies in `vector_step`; rounds_before: its
    `waiting` values)."""
    seats, steps, masks, obs, rewards, terminated, truncated, round_ended, over = borrow(
        seats, steps, masks, obs, rewards, terminated, truncated, round_ended, over
    )
    scores, bonuses, totals, winners = borrow(*figures)
    cards, ints, go, L, R, S, SL = borrow(cards, ints, go, L, R, S, SL)
    for j in range(games.shape[0]):
        _finish_step(
            games[j], rounds_before[j], seats, steps, max_cycles, reward_mode, reward_scale, masks, obs, rewards,
            terminated, truncated, round_ended, over, scores, bonuses, totals, winners, cards, ints, go, L, R, S, SL,
        )  # fmt: skip


@njit(cache=True, nogil=True)
def _start_episode(
    i, seed, slot_offset, episodes, seat_option, opponent_codes, seats, bots, moves, steps, mask,
    cards, ints, rng, go, L, R, sizes, S, best_memo, table_memo,
):  # fmt: skip
    """Game i deals episode episodes[i] of slot i + slot_offset of a batch seeded `seed` (`K.game_stream`),
    seats its learner (`seat_option`, or drawn from the game's seed when it is negative: `K.seat_draw`) and
    the bots (`opponent_codes[k - 1]` k seats after it) and plays them up to the learner's move
    (`play_bots`, mask: scratch for greedy); episodes[i] counts on, steps and moves start again, the gains
    are taken."""
    n = R[K.R_PLAYERS]
    game_seed = K.game_stream(seed, np.uint64(i + slot_offset), np.uint64(episodes[i]))
    K.reset_game(i, game_seed, 0, cards, ints, rng, go, L, R, sizes)
    seat = K.seat_draw(game_seed, n) if seat_option < 0 else seat_option
    seats[i] = seat
    bots[i, seat] = NOT_A_BOT
    for k in range(1, n):
        bots[i, (seat + k) % n] = opponent_codes[k - 1]
    episodes[i] += 1
    steps[i] = 0
    moves[i] = 0
    for p in range(n):
        ints[i, L[K.L_GAIN] + p] = 0
    _play_game(i, bots, moves, mask, cards, ints, rng, go, L, R, sizes, S, best_memo, table_memo)


@njit(cache=True, nogil=True)
def start_episodes(
    games, seed, slot_offset, episodes, seat_option, opponent_codes, seats, bots, moves, steps, masks, obs,
    cards, ints, rng, go, L, R, sizes, S, SL, num_actions, best_memo, table_memo,
):  # fmt: skip
    """The vector env's new episodes where every other seat is a compiled bot, in one call: `_start_episode`
    of each game i of games, then its mask into masks[i] and the learner's observation into obs[i]."""
    episodes, seats, bots, moves, steps, masks, obs = borrow(episodes, seats, bots, moves, steps, masks, obs)
    opponent_codes = borrow(opponent_codes)[0]
    cards, ints, rng, go, L, R, sizes, S, SL, best_memo, table_memo = borrow(
        cards, ints, rng, go, L, R, sizes, S, SL, best_memo, table_memo
    )
    mask = np.zeros(num_actions, np.int8)
    for j in range(games.shape[0]):
        i = games[j]
        _start_episode(
            i, seed, slot_offset, episodes, seat_option, opponent_codes, seats, bots, moves, steps, mask,
            cards, ints, rng, go, L, R, sizes, S, best_memo, table_memo,
        )  # fmt: skip
        K.mask_row(i, masks[i], cards, ints, go, L, R, S)
        K.observe_row(i, seats[i], obs[i], cards, ints, L, R, SL, S)


@njit(cache=True, nogil=True)
def bot_actions(games, codes, out, cards, ints, rng, go, L, R, S, num_actions, best_memo, table_memo):
    """The action bot `codes[j]` picks in game games[j] now, into out[j] (nothing moves)."""
    cards, ints, rng, go, L, R, S, best_memo, table_memo = borrow(cards, ints, rng, go, L, R, S, best_memo, table_memo)
    mask = np.zeros(num_actions, np.int8)
    for j in range(games.shape[0]):
        i = games[j]
        if codes[j] == GREEDY:
            _prime_greedy(i, cards, ints, go, L, R, S, table_memo)
            K.mask_row(i, mask, cards, ints, go, L, R, S)
        out[j] = bot_action(codes[j], i, mask, cards, ints, rng, go, L, R, S, best_memo, table_memo)
