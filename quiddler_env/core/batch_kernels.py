"""The batched engine's compiled kernels (numba): N games of Quiddler in arrays, stepped in one call.

The rules are those of `game.QuiddlerGame` (the single-game engine, the readable
reference), move for move; `tests/test_batch_parity.py` replays random games in both
and compares masks, observations, round results and totals after every move.

State of N games, one row per game (`batch.BatchGame` owns the arrays and names them):

- `cards` int8 (N, W): every card-sized field of a game side by side, at the offsets
  of the int64 table `offsets` (hands, cards known taken, discard counts, the draw pile,
  the discard pile, the laid cards, the laying order, the laying queue, the
  candidates' cards). The draw pile's top is its last card, as in the single engine.
- `ints` int32 (N, V): the scalars (round, dealer, current player, phase, ...) and the
  per-player numbers (totals, round scores, laid figures, candidate figures), also at
  offsets of `offsets` (indices `L_*`).
- `rng` uint64 (N, 2): each game's generators, the deal's and its built-in bots'
  (splitmix64; `game_stream`), so a game's cards do not depend on which bots play it.
- `go` int64 (N): the current player's go-out faces (bit f), searched when first asked after a draw.

The challenge variant (`R_CHALLENGES`) keeps its state in the same rows (the fields `L_WORD_BY` ... and the
scalars `I_CAND_BLUFF` ..., empty or unused without it), so a copy of a game's rows copies it too. A laid word
is read back from its layout's record: a term of the seat's vocabulary, or the bluff's claimed cards.

The rule options come as the int64 array `rules` (indices `R_*`) and the round hand sizes `sizes`.
The word tables `tables` are the dictionary's trie and term arrays, as the solver has them, then the
searches' scratch space (`solver_kernel.new_scratch`: the engine's searches allocate less), then, with seat
vocabularies only (the rules' `vocabularies`, or the challenge variant), the seats' vocabularies
(`batch.Vocabularies`; `seat_tables` picks a seat's, `vocab` in the kernels).
`obs_starts` holds the observation's slice starts (`observation_slices.observation_layout`).
Each kernel that Python calls borrows its arrays first (`borrow.borrow`): numba counts references
to every array a compiled call takes and to every view it makes, two atomic calls each, and a
borrowed array and its views count none. The kernels index a game's fields as `ints[i, x]` and
`cards[i, x]` rather than through a row view (`ints[i]`): a view, even uncounted, is a struct to build.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload

from .borrow import borrow
from .cards import COUNTS, DECK_SIZE, NUM_FACES, POINTS, new_deck
from .cards import FACES as FACE_NAMES
from .config import MAX_HAND_SIZE
from .dictionary import KEY_ORDER
from .observation_slices import LETTERS_SCALE, TOTAL_SCALE, WORDS_SCALE
from .solver_kernel import (
    PACK_START_BITS,
    PACK_START_SHIFT,
    W_HAND,
    go_out_face_bits_in,
    go_out_face_start,
    layout_front_hand_in,
    popcount,
)

# -- the action table (as `actions`) and the phases (as `game.Phase`) ---------------------------
DRAW_PILE, TAKE_DISCARD, DISCARD_BASE, GO_OUT_BASE, LAY_BASE = 0, 1, 2, 33, 64
PASS, CHALLENGE_BASE, NUM_CHALLENGE_ACTIONS = 80, 81, 158
DRAW, DISCARD, GAME_OVER, LAY, CHALLENGE = 0, 1, 2, 3, 4
WORDS = MAX_HAND_SIZE
"""A laid layout's word slots (`laying.MAX_LAID_WORDS`): the challenge actions and observation slices per seat."""
FACES = NUM_FACES
FACE_BITS = (1 << 31) - 1
GO_UNKNOWN = -1
"""`go[i]` before the go-out faces of the hand just drawn were searched."""

# -- rule options: indices into rules-----------------------------------------------------------
R_PLAYERS, R_ROUNDS, R_MIN_CARDS, R_BONUS_VALUE, R_BONUSES, R_FLOOR, R_FORCED, R_CAP, R_CHOOSE, R_K = range(10)
R_CHALLENGES, R_BLUFF, R_PENALTY = range(10, 13)
"""The challenge variant: on; bluffing (with `layout: choose`); `failed_go_out_penalty`."""
R_SIZE = 13
BONUS_MOST_WORDS, BONUS_LONGEST = 1, 2
FLOOR_ROUND, FLOOR_TOTAL, FLOOR_NONE = 0, 1, 2

# -- offsets into a game's rows: indices into offsets-----------------------------------------------
# cards (int8)
(
    L_HANDS,
    L_KNOWN,
    L_DISC_COUNTS,
    L_DRAW,
    L_DISC,
    L_LAID_CARDS,
    L_LAY_ORDER,
    L_QUEUE,
    L_CAND_CARDS,
    L_STACK,
    L_LAID_UNUSED,
    L_CAND_UNUSED,
    L_CARDS_W,
) = range(13)
# ints (int32): scalars first
(
    I_ROUND,
    I_DEALER,
    I_CUR,
    I_PHASE,
    I_WENT_OUT,
    I_TURNS,
    I_RESHUFFLES,
    I_DRAW_LEN,
    I_DISC_LEN,
    I_HAND_SIZE,
    I_N_LAID,
    I_Q_HEAD,
    I_Q_LEN,
    I_CAND_N,
    I_ROUNDS_DONE,
    I_LAST_OUT,
    I_STACKED,
    I_CAND_BLUFF,
    I_CHALLENGER,
    I_CHALLENGERS_LEFT,
    I_N_CHALLENGES,
) = range(21)
"""The last four are the challenge variant's: the index of the bluff among the candidates (-1: none); the
challenge queue, as its head seat and how many seats it holds (they follow the head in seat order); the
challenges made this round."""
N_SCALARS = 21
L_TOTALS, L_GAIN, L_ROUND_SCORE, L_LAID_FIG, L_CAND_FIG, L_BONUS, L_LAID_REC, L_CAND_REC, L_INTS_W = range(13, 22)
# cards (int8), the challenge variant's (empty without it), per seat q and word slot j at q * WORDS + j: who
# challenged the word (its seat + 1, 0: nobody), whether it failed, when (the challenge's number + 1); and
# whether q's laid layout is its bluff (its last word the claimed cards). Reset when q lays, so, as the laid
# records, they stay readable after the round until q lays again.
L_WORD_BY, L_WORD_FAILED, L_WORD_ORDER, L_LAID_BLUFF = range(22, 26)
L_SIZE = 26
FIG = 5
"""A laid or candidate layout's figures: score (used - unused), longest word, words, card points used, unused."""
F_SCORE, F_LONGEST, F_WORDS, F_USED, F_UNUSED = range(FIG)
MAX_TERMS = MAX_HAND_SIZE + 1
"""Room for a layout's words (term ids) and for its unused faces in a record."""
REC = 5 + MAX_TERMS
"""A layout's record (ints): lay position, points used, points unused, bonus bits won, words, their term ids.
Its unused faces are in the cards (a count, then the faces). The laid records of a round stay until the
player lays again, so the round results can be read after the next round is dealt."""
RC_POSITION, RC_USED, RC_UNUSED, RC_BONUS_BITS, RC_N_TERMS, RC_TERMS = range(6)
UREC = 1 + MAX_TERMS


_DECK = np.asarray(new_deck(), dtype=np.int8)
_DECK_COUNTS = np.asarray(COUNTS, dtype=np.int64)
_POINTS = np.asarray(POINTS, dtype=np.int64)
_LETTERS = np.asarray([len(face) for face in FACE_NAMES], dtype=np.int64)
_KEY_ORDER = np.asarray(KEY_ORDER, dtype=np.int64)
_LABEL_MASK = (1 << 32) - 1
_START_MASK = (1 << PACK_START_BITS) - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def layout_offsets(num_players: int, k: int, num_rounds: int, challenges: bool = False) -> np.ndarray:
    """The offset table `offsets` for a table of `num_players`, K candidate layouts and `num_rounds` stacked decks
    (and the challenge variant's fields with `challenges`)."""
    n = num_players
    words = n * WORDS if challenges else 0
    off = np.zeros(L_SIZE, np.int64)
    pos = 0
    for name, size in (
        (L_HANDS, n * FACES),
        (L_KNOWN, n * FACES),
        (L_DISC_COUNTS, FACES),
        (L_DRAW, DECK_SIZE),
        (L_DISC, DECK_SIZE),
        (L_LAID_CARDS, n * FACES),
        (L_LAY_ORDER, n),
        (L_QUEUE, n),
        (L_CAND_CARDS, k * FACES),
        (L_STACK, num_rounds * DECK_SIZE),
        (L_LAID_UNUSED, n * UREC),
        (L_CAND_UNUSED, k * UREC),
        (L_WORD_BY, words),
        (L_WORD_FAILED, words),
        (L_WORD_ORDER, words),
        (L_LAID_BLUFF, n if challenges else 0),
    ):
        off[name] = pos
        pos += size
    off[L_CARDS_W] = pos
    pos = N_SCALARS
    for name, size in (
        (L_TOTALS, n),
        (L_GAIN, n),
        (L_ROUND_SCORE, n),
        (L_LAID_FIG, n * FIG),
        (L_CAND_FIG, k * FIG),
        (L_BONUS, n),
        (L_LAID_REC, n * REC),
        (L_CAND_REC, k * REC),
    ):
        off[name] = pos
        pos += size
    off[L_INTS_W] = pos
    return off


# -- generators ---------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True)
def mix64(z):
    """splitmix64's finaliser: a bijection of uint64 that scrambles every bit."""
    return _mix64(z)


@njit(cache=True, nogil=True)
def game_stream(seed, slot, episode):
    """The deal generator's first state for episode `episode` of slot `slot` of a batch seeded `seed`."""
    z = mix64(np.uint64(seed) + _GOLDEN)
    z = mix64(z ^ (np.uint64(slot) * _M1 + np.uint64(1)))
    return mix64(z ^ (np.uint64(episode) * _M2 + np.uint64(2)))


@njit(cache=True, nogil=True)
def next_u64(rng, i, j):
    """splitmix64: advance generator j of game i and return its next 64 random bits."""
    z = rng[i, j] + _GOLDEN
    rng[i, j] = z
    return mix64(z)


@njit(cache=True, nogil=True)
def below(rng, i, j, n):
    """A uniform integer in [0, n) from generator j of game i (n < 2**11; 53-bit multiply-shift)."""
    return np.int64(((next_u64(rng, i, j) >> np.uint64(11)) * np.uint64(n)) >> np.uint64(53))


@njit(cache=True, nogil=True)
def shuffle(rng, i, arr, n):
    """Fisher-Yates over arr[:n] in place, from game i's deal generator (the same draws as `below`)."""
    # `below` inlined, the generator's state kept in a register: the draws no longer wait on each other
    # through memory, so the processor computes the next ones while a swap waits (a round's deck is 117).
    z = rng[i, 0]
    for j in range(n - 1, 0, -1):
        z += _GOLDEN
        k = np.int64(((_mix64(z) >> np.uint64(11)) * np.uint64(j + 1)) >> np.uint64(53))
        t = arr[j]
        arr[j] = arr[k]
        arr[k] = t
    rng[i, 0] = z


@njit(cache=True, nogil=True)
def permutation_kernel(state, values):
    """`shuffle` on a copy of `values` with a one-game generator `state` (uint64 (1, 2)), for the single engine."""
    out = values.copy()
    shuffle(state, 0, out, out.shape[0])
    return out


# -- reading a game's rows ----------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def hand_of(cards, i, offsets, p, tables):
    """Player p's hand in game i as 31 int64 counts (the solver's input), in the scratch space's row W_HAND
    (an allocation per hand cost more than copying it): valid until the next `hand_of`."""
    h = tables[8][W_HAND, :FACES]
    base = offsets[L_HANDS] + p * FACES
    for f in range(FACES):
        h[f] = cards[i, base + f]
    return h


@njit(cache=True, nogil=True)
def hand_points(h):
    total = 0
    for f in range(FACES):
        total += h[f] * _POINTS[f]
    return total


# -- vocabularies (seat words, and the challenge variant) -------------------------------------------------
# Without seat vocabularies `tables` is the referee's tables and the scratch space; with them (the rules'
# `vocabularies`, or the challenge variant) it has one more entry, a `batch.Vocabularies` (each vocabulary's
# tables and term keys, each seat's vocabulary, the referee's). The functions below pick by the type of `tables`
# when the kernels are compiled: without seat vocabularies they are the referee's tables, and the kernels the same
# as before the variant. Two gates: a seat's own words (`seat_words_on`: the type of `tables` alone) and the
# challenge phase with its bluffs (`challenges_on`: that and the rule `R_CHALLENGES`, read at run time), so the
# plain game with vocabularies runs the variant's compiled kernels (the same types) with the challenges off.
# (Not `inline="always"`: so inlined, numba 0.68 picked another vocabulary's tables than the index asked for, in
# a test of `go_out_face_bits_in`.)


def seat_tables(tables, p):
    """Seat p's vocabulary's tables, as the first 8 entries of `tables` (the referee's, without challenges)."""


@overload(seat_tables)
def _seat_tables(tables, p):
    if len(tables) > 9:
        return lambda tables, p: tables[9].tables[tables[9].seat[p]]
    return lambda tables, p: (tables[0], tables[1], tables[2], tables[3], tables[4], tables[5], tables[6], tables[7])


@njit(cache=True, nogil=True, inline="always")
def seat_words_on(tables):
    """Whether seats have words of their own (the rules' `vocabularies`, or the challenge variant): `tables`
    holds the vocabularies only then, so its length is known when a kernel compiles (`len` of a tuple is a
    constant) and the plain game's kernels compile without these branches, as they were before them."""
    return len(tables) > 9


@njit(cache=True, nogil=True, inline="always")
def challenges_on(rules, tables):
    """Whether the challenge variant is on: the challenge phase, bluffs, the variant's observation slices. Its
    tables always hold the vocabularies (`seat_words_on`, known at compile time); rules with vocabularies and no
    challenges have them too, so the rule itself is read at run time."""
    return seat_words_on(tables) and rules[R_CHALLENGES] != 0


@njit(cache=True, nogil=True, inline="always")
def own_tables(tables, rules, p):
    """`seat_tables(tables, p)`, called only with seat vocabularies: without them the first 8 entries of `tables`,
    read in place. (`seat_tables` is a call, not inlined (above); on the plain game's hot paths, the go-out search
    of every learner mask and the lay fronts, that call cost the vector env 18% (`benchmarks/engine_ab.py
    --vector`).)"""
    if seat_words_on(tables):
        return seat_tables(tables, p)
    return (tables[0], tables[1], tables[2], tables[3], tables[4], tables[5], tables[6], tables[7])


def referee_tables(tables):
    """The referee's tables, as the first 8 entries of `tables`."""


@overload(referee_tables)
def _referee_tables(tables):
    if len(tables) > 9:
        return lambda tables: tables[9].tables[tables[9].referee]
    return lambda tables: (tables[0], tables[1], tables[2], tables[3], tables[4], tables[5], tables[6], tables[7])


def term_key(tables, p, term):
    """The key of a term of seat p's vocabulary (0 without seat vocabularies, where nothing asks)."""


@overload(term_key)
def _term_key(tables, p, term):
    if len(tables) > 9:
        return lambda tables, p, term: tables[9].codes[tables[9].seat[p]][term]
    return lambda tables, p, term: np.int64(0)


def seat_vocabulary(tables, p):
    """Seat p's vocabulary's index (`Vocabularies.seat`; 0 without seat vocabularies)."""


@overload(seat_vocabulary)
def _seat_vocabulary(tables, p):
    if len(tables) > 9:
        return lambda tables, p: tables[9].seat[p]
    return lambda tables, p: np.int64(0)


def seat_coverage(tables, p):
    """Seat p's vocabulary's size against the referee's (`vocabulary.coverage`; 1 without seat vocabularies)."""


@overload(seat_coverage)
def _seat_coverage(tables, p):
    if len(tables) > 9:
        return lambda tables, p: tables[9].coverage[p]
    return lambda tables, p: 1.0


# A word as a key: its cards' labels (key rank + 1, `dictionary.KEY_ORDER`) in base 32, the lowest label the
# most significant digit, as the dictionary's prefix codes (`Vocabularies.codes` holds each term's).


@njit(cache=True, nogil=True, _nrt=False)
def key_term(key, node_pack, node_term):
    """The term of the word with this key in a vocabulary's trie (`solver.solver_trie`), or -1."""
    digits = 0
    rest = key
    while rest:
        digits += 1
        rest >>= 5
    node = 0
    for d in range(digits - 1, -1, -1):
        lab = (key >> (5 * d)) & 31
        labs = node_pack[node] & _LABEL_MASK
        if (labs >> lab) & 1 == 0:
            return -1
        node = ((node_pack[node] >> PACK_START_SHIFT) & _START_MASK) + popcount(labs & ((np.int64(1) << lab) - 1)) + 1
    return node_term[node]


@njit(cache=True, nogil=True, inline="always")
def key_points(key):
    """A word's card points, from its key."""
    total = 0
    while key:
        total += _POINTS[_KEY_ORDER[(key & 31) - 1]]
        key >>= 5
    return total


@njit(cache=True, nogil=True, inline="always")
def key_letters(key):
    """A word's letters, from its key."""
    total = 0
    while key:
        total += _LETTERS[_KEY_ORDER[(key & 31) - 1]]
        key >>= 5
    return total


@njit(cache=True, nogil=True, inline="always")
def faces_key(cards, i, urec):
    """The key of the faces recorded at cards offset urec of game i (a count, then the faces)."""
    key = np.int64(0)
    for r in range(FACES):
        for u in range(cards[i, urec]):
            if cards[i, urec + 1 + u] == _KEY_ORDER[r]:
                key = key * 32 + r + 1
    return key


@njit(cache=True, nogil=True, inline="always")
def laid_words(i, q, cards, ints, offsets):
    """How many words player q laid (its bluff's claimed word counted)."""
    return ints[i, offsets[L_LAID_REC] + q * REC + RC_N_TERMS] + cards[i, offsets[L_LAID_BLUFF] + q]


@njit(cache=True, nogil=True, inline="always")
def word_key(i, q, j, cards, ints, offsets, tables):
    """The key of word j of player q's laid layout: a term of its vocabulary, or its bluff's claimed cards."""
    rec = offsets[L_LAID_REC] + q * REC
    if j < ints[i, rec + RC_N_TERMS]:
        return term_key(tables, q, ints[i, rec + RC_TERMS + j])
    return faces_key(cards, i, offsets[L_LAID_UNUSED] + q * UREC)


# -- dealing ----------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def start_round(i, cards, ints, rng, go, offsets, rules, sizes):
    """Deal round `ints[i, I_ROUND]` of game i: shuffle, deal from the dealer's left, turn the discard top."""
    n = rules[R_PLAYERS]
    hs = sizes[ints[i, I_ROUND]]
    # The deck is shuffled (or stacked) top first, in place: the pile is stored bottom first (its top is its
    # last card), so the deck is the pile read backwards.
    d = offsets[L_DRAW]
    deck = cards[i, d : d + DECK_SIZE][::-1]
    if ints[i, I_ROUND] < ints[i, I_STACKED]:  # the first I_STACKED rounds deal stacked decks
        start = offsets[L_STACK] + ints[i, I_ROUND] * DECK_SIZE
        deck[:] = cards[i, start : start + DECK_SIZE]
    else:
        deck[:] = _DECK
        shuffle(rng, i, deck, DECK_SIZE)
    for k in range(offsets[L_HANDS], offsets[L_DISC_COUNTS] + FACES):  # hands, cards known taken, discard counts
        cards[i, k] = 0
    for k in range(offsets[L_LAID_CARDS], offsets[L_STACK]):
        cards[i, k] = 0
    dl = DECK_SIZE
    dealer = ints[i, I_DEALER]
    for _ in range(hs):  # one card at a time, from the dealer's left
        for k in range(1, n + 1):
            p = (dealer + k) % n
            dl -= 1
            cards[i, offsets[L_HANDS] + p * FACES + cards[i, d + dl]] += 1
    dl -= 1
    top = cards[i, d + dl]
    cards[i, offsets[L_DISC]] = top
    cards[i, offsets[L_DISC_COUNTS] + top] = 1
    ints[i, I_DRAW_LEN] = dl
    ints[i, I_DISC_LEN] = 1
    ints[i, I_HAND_SIZE] = hs
    ints[i, I_CUR] = (dealer + 1) % n
    ints[i, I_PHASE] = DRAW
    ints[i, I_WENT_OUT] = -1
    ints[i, I_TURNS] = 0
    ints[i, I_RESHUFFLES] = 0
    ints[i, I_N_LAID] = 0
    ints[i, I_Q_HEAD] = 0
    ints[i, I_Q_LEN] = 0
    ints[i, I_CAND_N] = 0
    go[i] = 0
    for k in range(offsets[L_LAID_FIG], offsets[L_CAND_FIG] + rules[R_K] * FIG):
        ints[i, k] = 0


@njit(cache=True, nogil=True)
def reset_games(games, seeds, stacked, cards, ints, rng, go, offsets, rules, sizes):
    """Start a new game in each row `games[j]`, its generators seeded from the uint64 `seeds[j]`;
    `stacked[j]`: its first rounds that deal the decks already in its stack rows (reshuffles still draw from
    its generator; later rounds are shuffled)."""
    cards, ints, rng, go, offsets, rules, sizes = borrow(cards, ints, rng, go, offsets, rules, sizes)
    for j in range(games.shape[0]):
        reset_game(games[j], seeds[j], stacked[j], cards, ints, rng, go, offsets, rules, sizes)


@njit(cache=True, nogil=True, inline="always")  # inlined: a call costs a reference count per array
def reset_game(i, seed, stacked, cards, ints, rng, go, offsets, rules, sizes):
    """Start a new game in row i (`reset_games`, for one game seeded `seed`)."""
    n = rules[R_PLAYERS]
    rng[i, 0] = seed
    rng[i, 1] = mix64(seed ^ _M2)
    ints[i, I_STACKED] = stacked
    ints[i, I_ROUND] = 0
    ints[i, I_DEALER] = n - 1
    ints[i, I_ROUNDS_DONE] = 0
    ints[i, I_LAST_OUT] = -1
    for p in range(n):
        ints[i, offsets[L_TOTALS] + p] = 0
        ints[i, offsets[L_GAIN] + p] = 0
        ints[i, offsets[L_ROUND_SCORE] + p] = 0
        ints[i, offsets[L_BONUS] + p] = 0
    start_round(i, cards, ints, rng, go, offsets, rules, sizes)


@njit(cache=True, nogil=True)
def seat_draw(seed, num_players):
    """The learner's seat drawn from a game's seed (`core.batch.learner_seats`): a third stream of the seed
    (the deal uses the seed itself, the bots `mix64(seed ^ _M2)`)."""
    z = mix64(mix64(seed ^ _M1) + _GOLDEN)
    return np.int64((z >> np.uint64(11)) * np.uint64(num_players) >> np.uint64(53))


# -- laying and scoring -----------------------------------------------------------------------


@njit(cache=True, nogil=True)
def lay_key_bonus(longest, words, cards, ints, i, offsets, rules):
    """The bonuses a layout with these figures would win against the layouts already laid in game i."""
    bv = rules[R_BONUS_VALUE]
    if bv == 0:
        return 0
    won = 0
    nl = ints[i, I_N_LAID]
    for b in (BONUS_MOST_WORDS, BONUS_LONGEST):
        if not (rules[R_BONUSES] & b):
            continue
        mine = words if b == BONUS_MOST_WORDS else longest
        if mine <= 0:
            continue
        beats = True
        for k in range(nl):
            q = cards[i, offsets[L_LAY_ORDER] + k]
            other = ints[i, offsets[L_LAID_FIG] + q * FIG + (F_WORDS if b == BONUS_MOST_WORDS else F_LONGEST)]
            if mine <= other:
                beats = False
                break
        if beats:
            won += bv
    return won


@njit(cache=True, nogil=True)
def auto_pick(used, total, longest, words, n_front, cards, ints, i, offsets, rules):
    """The automatic rule (`laying.auto_index`): the first layout with the highest (score + bonuses, longest, words),
    layout j's score being 2 * used[j] - total (its cards' points used count for it, the rest of the hand's
    `total` against)."""
    best = 0
    k0 = 2 * used[0] - total + lay_key_bonus(longest[0], words[0], cards, ints, i, offsets, rules)
    k1 = longest[0]
    k2 = words[0]
    for j in range(1, n_front):
        a = 2 * used[j] - total + lay_key_bonus(longest[j], words[j], cards, ints, i, offsets, rules)
        if a > k0 or (a == k0 and (longest[j] > k1 or (longest[j] == k1 and words[j] > k2))):
            best = j
            k0 = a
            k1 = longest[j]
            k2 = words[j]
    return best


@njit(cache=True, nogil=True, inline="always")
def _front(h, full_only, rules, tables, q):
    """The layouts player q lays from (by its vocabulary): the whole front for a choice (`layout: choose`), else only the ones
    the automatic rule can pick (bonuses worth at most |bonus value| each; `layout_front_path`'s `slack`, and
    its `by_longest` where the longest word's is the only bonus that counts, and it is not negative)."""
    bv = rules[R_BONUS_VALUE]
    slack = -1
    if not rules[R_CHOOSE]:
        slack = 0
        for b in (BONUS_MOST_WORDS, BONUS_LONGEST):
            if rules[R_BONUSES] & b:
                slack += bv if bv > 0 else -bv
    by_longest = bv == 0 or (bv > 0 and not rules[R_BONUSES] & BONUS_MOST_WORDS)
    vocab = own_tables(tables, rules, q)
    return layout_front_hand_in(
        h,
        vocab[0],
        rules[R_MIN_CARDS],
        full_only,
        vocab[1],
        vocab[2],
        vocab[3],
        vocab[4],
        vocab[5],
        vocab[6],
        vocab[7],
        _POINTS,
        slack,
        by_longest,
        tables[8],
    )


@njit(cache=True, nogil=True, inline="always")
def _record(i, rec, urec, used, unused, terms, unused_faces, cards, ints):
    """Write a layout's record (`REC`) at ints offset rec and its unused faces at cards offset urec."""
    ints[i, rec + RC_USED] = used
    ints[i, rec + RC_UNUSED] = unused
    ints[i, rec + RC_BONUS_BITS] = 0
    ints[i, rec + RC_N_TERMS] = terms.shape[0]
    for t in range(terms.shape[0]):
        ints[i, rec + RC_TERMS + t] = terms[t]
    cards[i, urec] = unused_faces.shape[0]
    for u in range(unused_faces.shape[0]):
        cards[i, urec + 1 + u] = unused_faces[u]


@njit(cache=True, nogil=True, _nrt=False)
def _copy_record(i, rec_from, urec_from, rec_to, urec_to, cards, ints):
    for t in range(REC):
        ints[i, rec_to + t] = ints[i, rec_from + t]
    for u in range(UREC):
        cards[i, urec_to + u] = cards[i, urec_from + u]


@njit(cache=True, nogil=True, inline="always")
def _lay_words(i, q, bluff, cards, offsets, rules):
    """With challenges: player q's words are new, none challenged yet; `bluff`: its layout is its bluff."""
    if rules[R_CHALLENGES]:
        for t in range(q * WORDS, (q + 1) * WORDS):
            cards[i, offsets[L_WORD_BY] + t] = 0
            cards[i, offsets[L_WORD_FAILED] + t] = 0
            cards[i, offsets[L_WORD_ORDER] + t] = 0
        cards[i, offsets[L_LAID_BLUFF] + q] = bluff


@njit(cache=True, nogil=True, inline="always")
def _lay(i, q, figures, h, unused_faces, terms, cards, ints, offsets, rules):
    """Player q of game i lays: its figures (score, longest word, words, cards used and unused: the `F_*`
    order) and its cards in words become public; it joins the laying order."""
    score, longest, words, used, unused = figures
    _record(
        i,
        offsets[L_LAID_REC] + q * REC,
        offsets[L_LAID_UNUSED] + q * UREC,
        used,
        unused,
        terms,
        unused_faces,
        cards,
        ints,
    )
    ints[i, offsets[L_LAID_REC] + q * REC + RC_POSITION] = ints[i, I_N_LAID]
    base = offsets[L_LAID_FIG] + q * FIG
    ints[i, base + F_SCORE] = score
    ints[i, base + F_LONGEST] = longest
    ints[i, base + F_WORDS] = words
    ints[i, base + F_USED] = used
    ints[i, base + F_UNUSED] = unused
    lc = offsets[L_LAID_CARDS] + q * FACES
    for f in range(FACES):
        cards[i, lc + f] = h[f]
    for f in unused_faces:
        cards[i, lc + f] -= 1
    cards[i, offsets[L_LAY_ORDER] + ints[i, I_N_LAID]] = q
    ints[i, I_N_LAID] += 1
    ints[i, I_Q_HEAD] += 1
    _lay_words(i, q, False, cards, offsets, rules)


@njit(cache=True, nogil=True, inline="always")
def _stood(i, p, cards, ints, offsets, rules, tables):
    """Player p's laid figures, less its words that failed a challenge: points used, unused, words, longest."""
    fig = offsets[L_LAID_FIG] + p * FIG
    used, unused = ints[i, fig + F_USED], ints[i, fig + F_UNUSED]
    words, longest = ints[i, fig + F_WORDS], ints[i, fig + F_LONGEST]
    if challenges_on(rules, tables):
        longest = 0
        for j in range(laid_words(i, p, cards, ints, offsets)):
            key = word_key(i, p, j, cards, ints, offsets, tables)
            if cards[i, offsets[L_WORD_FAILED] + p * WORDS + j]:
                points = key_points(key)
                used -= points
                unused += points
                words -= 1
            else:
                longest = max(longest, key_letters(key))
    return used, unused, words, longest


@njit(cache=True, nogil=True, _nrt=False)
def _challenge_losses(i, p, cards, ints, offsets, rules, tables):
    """What player p loses in the challenge phase: the points of the words it challenged that stood, and
    `failed_go_out_penalty` if it went out and a word of it failed."""
    lost = 0
    failed = False
    for q in range(rules[R_PLAYERS]):
        for j in range(laid_words(i, q, cards, ints, offsets)):
            slot = q * WORDS + j
            if cards[i, offsets[L_WORD_BY] + slot] == p + 1 and not cards[i, offsets[L_WORD_FAILED] + slot]:
                lost += key_points(word_key(i, q, j, cards, ints, offsets, tables))
            failed |= q == p and cards[i, offsets[L_WORD_FAILED] + slot] != 0
    if failed and ints[i, I_WENT_OUT] == p:
        lost += rules[R_PENALTY]
    return lost


# _nrt=True stated (as on `_lay_next` below): the next round's deal needs it, and the challenge phase's kernels,
# compiled with _nrt=False, call this one.
@njit(cache=True, nogil=True, _nrt=True)
def _end_round(i, cards, ints, rng, go, offsets, rules, sizes, tables):
    n = rules[R_PLAYERS]
    bv = rules[R_BONUS_VALUE]
    for p in range(n):
        ints[i, offsets[L_BONUS] + p] = 0
    if bv != 0:
        for b in (BONUS_MOST_WORDS, BONUS_LONGEST):
            if not (rules[R_BONUSES] & b):
                continue
            col = F_WORDS if b == BONUS_MOST_WORDS else F_LONGEST
            best = -1
            winner = -1
            ties = 0
            for p in range(n):
                x = ints[i, offsets[L_LAID_FIG] + p * FIG + col]
                if challenges_on(rules, tables):  # the bonuses go by the words that stood
                    stood = _stood(i, p, cards, ints, offsets, rules, tables)
                    x = stood[2] if b == BONUS_MOST_WORDS else stood[3]
                if x > best:
                    best = x
                    winner = p
                    ties = 1
                elif x == best:
                    ties += 1
            if ties == 1 and best > 0:
                ints[i, offsets[L_BONUS] + winner] += bv
                ints[i, offsets[L_LAID_REC] + winner * REC + RC_BONUS_BITS] |= b
    for p in range(n):
        fig = offsets[L_LAID_FIG] + p * FIG
        score = ints[i, fig + F_USED] - ints[i, fig + F_UNUSED] + ints[i, offsets[L_BONUS] + p]
        if challenges_on(rules, tables):
            used, unused, _, _ = _stood(i, p, cards, ints, offsets, rules, tables)
            score = (
                used
                - unused
                + ints[i, offsets[L_BONUS] + p]
                - _challenge_losses(i, p, cards, ints, offsets, rules, tables)
            )
        if rules[R_FLOOR] == FLOOR_ROUND and score < 0:
            score = 0
        before = ints[i, offsets[L_TOTALS] + p]
        total = before + score
        if rules[R_FLOOR] == FLOOR_TOTAL and total < 0:
            total = 0
        ints[i, offsets[L_ROUND_SCORE] + p] = score
        ints[i, offsets[L_TOTALS] + p] = total
        ints[i, offsets[L_GAIN] + p] += total - before
    ints[i, I_ROUNDS_DONE] += 1
    ints[i, I_LAST_OUT] = ints[i, I_WENT_OUT]
    if ints[i, I_ROUND] + 1 < rules[R_ROUNDS]:
        ints[i, I_ROUND] += 1
        ints[i, I_DEALER] = (ints[i, I_DEALER] + 1) % n
        start_round(i, cards, ints, rng, go, offsets, rules, sizes)
    else:
        ints[i, I_PHASE] = GAME_OVER
        go[i] = 0


# -- the challenge phase --------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _can_challenge(i, p, cards, ints, offsets, rules):
    """Is a word of another player left for player p to challenge (`QuiddlerGame.challengeable`)."""
    for q in range(rules[R_PLAYERS]):
        if q != p:
            for j in range(laid_words(i, q, cards, ints, offsets)):
                if cards[i, offsets[L_WORD_BY] + q * WORDS + j] == 0:
                    return True
    return False


@njit(cache=True, nogil=True, _nrt=True)  # (it may end the round: `_end_round`)
def _challenge_next(i, cards, ints, rng, go, offsets, rules, sizes, tables):
    """The next challenger with something to challenge, or the round's end (`QuiddlerGame._challenge_next`)."""
    n = rules[R_PLAYERS]
    while ints[i, I_CHALLENGERS_LEFT] > 0 and not _can_challenge(i, ints[i, I_CHALLENGER], cards, ints, offsets, rules):
        ints[i, I_CHALLENGER] = (ints[i, I_CHALLENGER] + 1) % n
        ints[i, I_CHALLENGERS_LEFT] -= 1
    if ints[i, I_CHALLENGERS_LEFT] == 0:
        _end_round(i, cards, ints, rng, go, offsets, rules, sizes, tables)
        return
    ints[i, I_CUR] = ints[i, I_CHALLENGER]
    ints[i, I_PHASE] = CHALLENGE


@njit(cache=True, nogil=True, _nrt=True)
def _start_challenges(i, cards, ints, rng, go, offsets, rules, sizes, tables):
    """Everyone has laid: each player challenges in seat order from the one after the player who went out (after
    a turn cap, from the round's first player)."""
    wo = ints[i, I_WENT_OUT]
    ints[i, I_CHALLENGER] = (wo + 1 if wo >= 0 else ints[i, I_DEALER] + 1) % rules[R_PLAYERS]
    ints[i, I_CHALLENGERS_LEFT] = rules[R_PLAYERS]
    ints[i, I_N_CHALLENGES] = 0
    _challenge_next(i, cards, ints, rng, go, offsets, rules, sizes, tables)


@njit(cache=True, nogil=True, _nrt=False)
def _challenge(i, p, a, cards, ints, offsets, rules, tables):
    """Player p challenges the word action a names; the referee's verdict is recorded with it."""
    q = (p + (a - CHALLENGE_BASE) // WORDS + 1) % rules[R_PLAYERS]
    j = (a - CHALLENGE_BASE) % WORDS
    slot = q * WORDS + j
    ints[i, I_N_CHALLENGES] += 1
    cards[i, offsets[L_WORD_BY] + slot] = p + 1
    cards[i, offsets[L_WORD_ORDER] + slot] = ints[i, I_N_CHALLENGES]
    vocab = referee_tables(tables)  # the word stands if its cards spell a word of the referee's list
    cards[i, offsets[L_WORD_FAILED] + slot] = (
        key_term(word_key(i, q, j, cards, ints, offsets, tables), vocab[2], vocab[4]) < 0
    )


@njit(cache=True, nogil=True, _nrt=False)
def challenge_legal(i, a, cards, ints, offsets, rules):
    """Is action a a challenge phase move of game i's current player: pass, or a word not yet challenged."""
    if a == PASS:
        return True
    if a < CHALLENGE_BASE or a >= NUM_CHALLENGE_ACTIONS or (a - CHALLENGE_BASE) // WORDS + 1 >= rules[R_PLAYERS]:
        return False
    q = (ints[i, I_CUR] + (a - CHALLENGE_BASE) // WORDS + 1) % rules[R_PLAYERS]
    j = (a - CHALLENGE_BASE) % WORDS
    return j < laid_words(i, q, cards, ints, offsets) and cards[i, offsets[L_WORD_BY] + q * WORDS + j] == 0


@njit(cache=True, nogil=True, _nrt=False)
def _challenge_mask(i, out, cards, ints, offsets, rules):
    """The challenge phase's legal moves of game i's current player into out (zeroed)."""
    n = rules[R_PLAYERS]
    out[PASS] = 1
    for r in range(1, n):
        q = (ints[i, I_CUR] + r) % n
        for j in range(laid_words(i, q, cards, ints, offsets)):
            out[CHALLENGE_BASE + (r - 1) * WORDS + j] = cards[i, offsets[L_WORD_BY] + q * WORDS + j] == 0


@njit(cache=True, nogil=True, _nrt=True)
def _bluff_candidate(i, q, h, total, cards, ints, offsets, rules, tables):
    """With bluffing: player q's best bluff (`laying.best_bluff`) after its candidates, if it has one. Its record
    is the honest layout it builds on, its unused cards the claimed word (`L_LAID_BLUFF` once laid)."""
    ints[i, I_CAND_BLUFF] = -1
    n_cards = 0
    for f in range(FACES):
        n_cards += h[f]
    used, longest, words, term_off, terms, unused_off, unused = _front(h, False, rules, tables, q)
    whole = used.shape[0]  # laying nothing: the whole hand claimed
    best = -1
    for k in range(whole + 1):
        left = unused_off[k + 1] - unused_off[k] if k < whole else n_cards
        score = 2 * used[k] - total if k < whole else -total
        if left > 0 and rules[R_MIN_CARDS] <= left and (best < 0 or score > 2 * used[best] - total):
            best = k
    if best < 0:
        return
    c = ints[i, I_CAND_N]
    rec, urec = offsets[L_CAND_REC] + c * REC, offsets[L_CAND_UNUSED] + c * UREC
    if best < whole:
        b_used, b_longest, b_words = used[best], longest[best], words[best]
        lo, hi = unused_off[best], unused_off[best + 1]
        _record(
            i, rec, urec, b_used, total - b_used, terms[term_off[best] : term_off[best + 1]], unused[lo:hi], cards, ints
        )
    else:
        b_used, b_longest, b_words = 0, 0, 0
        _record(i, rec, urec, 0, total, terms[0:0], unused[0:0], cards, ints)
        for f in range(FACES):
            for _ in range(h[f]):
                cards[i, urec + 1 + cards[i, urec]] = f
                cards[i, urec] += 1
    letters = 0
    for u in range(cards[i, urec]):
        letters += _LETTERS[cards[i, urec + 1 + u]]
    base = offsets[L_CAND_FIG] + c * FIG
    ints[i, base + F_SCORE] = total
    ints[i, base + F_LONGEST] = max(b_longest, letters)
    ints[i, base + F_WORDS] = b_words + 1
    ints[i, base + F_USED] = total
    ints[i, base + F_UNUSED] = 0
    cc = offsets[L_CAND_CARDS] + c * FACES
    for f in range(FACES):
        cards[i, cc + f] = h[f]
    ints[i, I_CAND_BLUFF] = c
    ints[i, I_CAND_N] = c + 1


# _nrt=True stated: a kernel called from one compiled with _nrt=False inherits that flag unless it states its
# own, and the front below allocates (its arrays need their reference counts).
@njit(cache=True, nogil=True, _nrt=True)
def _lay_next(i, p, cards, ints, rng, go, offsets, rules, sizes, tables):
    """Lay for the players queued to lay now (auto), or hand the first its lay decision (choose);
    then the next turn, or the round's end (as `QuiddlerGame._lay_next`)."""
    n = rules[R_PLAYERS]
    while ints[i, I_Q_HEAD] < ints[i, I_Q_LEN]:
        q = cards[i, offsets[L_QUEUE] + ints[i, I_Q_HEAD]]
        full_only = q == ints[i, I_WENT_OUT]
        h = hand_of(cards, i, offsets, q, tables)
        total = hand_points(h)
        used, longest, words, term_off, terms, unused_off, unused = _front(h, full_only, rules, tables, q)
        n_front = used.shape[0]
        if rules[R_CHOOSE]:
            k_max = rules[R_K] - rules[R_BLUFF]  # with bluffing the last candidate is the bluff
            nc = n_front if n_front < k_max else k_max
            ints[i, I_CUR] = q
            ints[i, I_PHASE] = LAY
            ints[i, I_CAND_N] = nc
            for k in range(nc):
                base = offsets[L_CAND_FIG] + k * FIG
                ints[i, base + F_SCORE] = 2 * used[k] - total
                ints[i, base + F_LONGEST] = longest[k]
                ints[i, base + F_WORDS] = words[k]
                ints[i, base + F_USED] = used[k]
                ints[i, base + F_UNUSED] = total - used[k]
                cc = offsets[L_CAND_CARDS] + k * FACES
                for f in range(FACES):
                    cards[i, cc + f] = h[f]
                for u in range(unused_off[k], unused_off[k + 1]):
                    cards[i, cc + unused[u]] -= 1
                _record(
                    i,
                    offsets[L_CAND_REC] + k * REC,
                    offsets[L_CAND_UNUSED] + k * UREC,
                    used[k],
                    total - used[k],
                    terms[term_off[k] : term_off[k + 1]],
                    unused[unused_off[k] : unused_off[k + 1]],
                    cards,
                    ints,
                )
            if challenges_on(rules, tables) and rules[R_BLUFF]:
                _bluff_candidate(i, q, h, total, cards, ints, offsets, rules, tables)
            return
        k = auto_pick(used, total, longest, words, n_front, cards, ints, i, offsets, rules)
        figures = (2 * used[k] - total, longest[k], words[k], used[k], total - used[k])
        _lay(
            i,
            q,
            figures,
            h,
            unused[unused_off[k] : unused_off[k + 1]],
            terms[term_off[k] : term_off[k + 1]],
            cards,
            ints,
            offsets,
            rules,
        )
    if ints[i, I_N_LAID] == n:
        if challenges_on(rules, tables):
            _start_challenges(i, cards, ints, rng, go, offsets, rules, sizes, tables)
        else:
            _end_round(i, cards, ints, rng, go, offsets, rules, sizes, tables)
        return
    ints[i, I_CUR] = (p + 1) % n
    ints[i, I_PHASE] = DRAW


# -- moving -----------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def is_legal(i, a, cards, ints, go, offsets, rules, tables):
    """Is action a legal for the current player of game i (as `QuiddlerGame.is_legal`)."""
    ph = ints[i, I_PHASE]
    if ph == LAY:
        return LAY_BASE <= a < LAY_BASE + ints[i, I_CAND_N]
    if challenges_on(rules, tables) and ph == CHALLENGE:
        return challenge_legal(i, a, cards, ints, offsets, rules)
    if ph == DRAW:
        return a == TAKE_DISCARD or (a == DRAW_PILE and (ints[i, I_DRAW_LEN] > 0 or ints[i, I_DISC_LEN] > 1))
    if ph != DISCARD or a < DISCARD_BASE or a >= LAY_BASE:
        return False
    if a >= GO_OUT_BASE:
        return (go_out_faces(i, cards, ints, go, offsets, rules, tables) >> (a - GO_OUT_BASE)) & 1 == 1
    if rules[R_FORCED] and go_bits(i, cards, ints, go, offsets, rules, tables) != 0:
        return False
    return cards[i, offsets[L_HANDS] + ints[i, I_CUR] * FACES + a - DISCARD_BASE] > 0


@njit(cache=True, nogil=True, inline="always")
def may_go_out(i, h, ints):
    """Can a player holding h (after drawing) in game i go out at all: nobody has gone out this round, and
    a card is left to lay once one is discarded."""
    return ints[i, I_WENT_OUT] < 0 and h.sum() > 1


@njit(cache=True, nogil=True, inline="always")  # inlined: a call costs a reference count per array
def _go_bits(i, p, cards, ints, offsets, rules, tables):
    h = hand_of(cards, i, offsets, p, tables)
    if not may_go_out(i, h, ints):
        return np.int64(0)
    vocab = own_tables(tables, rules, p)  # by the player's own vocabulary
    return (
        go_out_face_bits_in(
            h, vocab[0], rules[R_MIN_CARDS], vocab[1], vocab[2], vocab[3], vocab[4], vocab[7], False, tables[8]
        )
        & FACE_BITS
    )


@njit(cache=True, nogil=True, inline="always")  # inlined: a call costs a reference count per array
def go_search(i, h, rules, tables, p):
    """Ready a search of which discards of h (the hand of game i's current player p, `may_go_out`) go out, by p's
    vocabulary, in the engine's scratch space; `solver_kernel.go_out_face(f, own_tables(tables, rules, p)[2], ws)`
    answers it for one discard, f."""
    vocab = own_tables(tables, rules, p)
    return go_out_face_start(
        h, vocab[0], rules[R_MIN_CARDS], vocab[1], vocab[2], vocab[3], vocab[4], vocab[7], tables[8]
    )


@njit(cache=True, nogil=True, inline="always")  # inlined: a call costs a reference count per array
def go_bits(i, cards, ints, go, offsets, rules, tables):
    """The current player's go-out faces in the discard phase (bit f), searched once per hand when first asked."""
    if go[i] == GO_UNKNOWN:
        go[i] = _go_bits(i, ints[i, I_CUR], cards, ints, offsets, rules, tables)
    return go[i]


@njit(cache=True, nogil=True, inline="always")
def _bluff_faces(i, honest, cards, ints, offsets, rules):
    """With bluffing: every face the current player holds, if the rest could be claimed as a word (at least
    `min_word_cards` cards) and nobody went out; else its honest go-out faces (`QuiddlerGame.go_out_faces`)."""
    if ints[i, I_WENT_OUT] >= 0:
        return honest
    base = offsets[L_HANDS] + ints[i, I_CUR] * FACES
    held = np.int64(0)
    n_cards = 0
    for f in range(FACES):
        n_cards += cards[i, base + f]
        held |= np.int64(cards[i, base + f] > 0) << f
    return held if n_cards - 1 >= rules[R_MIN_CARDS] else honest


@njit(cache=True, nogil=True, inline="always")
def go_out_faces(i, cards, ints, go, offsets, rules, tables):
    """The faces the current player may go out discarding (bit f): `go_bits`, or `_bluff_faces` with bluffing."""
    bits = go_bits(i, cards, ints, go, offsets, rules, tables)
    if challenges_on(rules, tables) and rules[R_BLUFF]:
        return _bluff_faces(i, bits, cards, ints, offsets, rules)
    return bits


# _nrt=False (here and on the other kernels that allocate nothing): no reference counts. Every array they take
# is borrowed from their caller, and numba made a call per array and view even for a borrowed one.
@njit(cache=True, nogil=True, _nrt=False)
def step_one(i, a, cards, ints, rng, go, offsets, rules, sizes, tables):
    """Play legal action a for the current player of game i (as `QuiddlerGame.step`)."""
    phase = ints[i, I_PHASE]
    if phase == LAY:
        _take_candidate(i, a, cards, ints, rng, go, offsets, rules, sizes, tables)
    elif challenges_on(rules, tables) and phase == CHALLENGE:
        p, n = ints[i, I_CUR], rules[R_PLAYERS]
        if a == PASS:  # its part ends
            ints[i, I_CHALLENGER] = (p + 1) % n
            ints[i, I_CHALLENGERS_LEFT] -= 1
        else:
            _challenge(i, p, a, cards, ints, offsets, rules, tables)
        _challenge_next(i, cards, ints, rng, go, offsets, rules, sizes, tables)
    elif phase == DRAW:
        _draw(i, a, cards, ints, rng, go, offsets)
    else:
        _discard(i, a, cards, ints, rng, go, offsets, rules, sizes, tables)


@njit(cache=True, nogil=True, inline="always")  # inlined into step_one: a phase of it, named
def _take_candidate(i, a, cards, ints, rng, go, offsets, rules, sizes, tables):
    """The current player lays its candidate layout a - LAY_BASE (`layout: choose`); the laying goes on."""
    p = ints[i, I_CUR]
    k = a - LAY_BASE
    base = offsets[L_CAND_FIG] + k * FIG
    cc = offsets[L_CAND_CARDS] + k * FACES
    lc = offsets[L_LAID_CARDS] + p * FACES
    fig = offsets[L_LAID_FIG] + p * FIG
    for t in range(FIG):
        ints[i, fig + t] = ints[i, base + t]
    for f in range(FACES):
        cards[i, lc + f] = cards[i, cc + f]
    rec = offsets[L_LAID_REC] + p * REC
    _copy_record(
        i,
        offsets[L_CAND_REC] + k * REC,
        offsets[L_CAND_UNUSED] + k * UREC,
        rec,
        offsets[L_LAID_UNUSED] + p * UREC,
        cards,
        ints,
    )
    ints[i, rec + RC_POSITION] = ints[i, I_N_LAID]
    cards[i, offsets[L_LAY_ORDER] + ints[i, I_N_LAID]] = p
    ints[i, I_N_LAID] += 1
    ints[i, I_Q_HEAD] += 1
    ints[i, I_CAND_N] = 0
    _lay_words(i, p, k == ints[i, I_CAND_BLUFF], cards, offsets, rules)
    _lay_next(i, p, cards, ints, rng, go, offsets, rules, sizes, tables)


@njit(cache=True, nogil=True, inline="always")  # inlined into step_one: a phase of it, named
def _draw(i, a, cards, ints, rng, go, offsets):
    """The current player draws from the draw pile (reshuffling the discard pile below its top when the pile is
    empty) or takes the discard pile's top (a card its opponents saw it take)."""
    p = ints[i, I_CUR]
    hand = offsets[L_HANDS] + p * FACES
    known = offsets[L_KNOWN] + p * FACES
    if a == DRAW_PILE:
        if ints[i, I_DRAW_LEN] == 0:  # reshuffle the discard pile below its top
            d0 = offsets[L_DISC]
            m = ints[i, I_DISC_LEN] - 1
            top = cards[i, d0 + m]
            for k in range(m):
                cards[i, offsets[L_DRAW] + k] = cards[i, d0 + k]
            shuffle(rng, i, cards[i, offsets[L_DRAW] : offsets[L_DRAW] + m], m)
            ints[i, I_DRAW_LEN] = m
            cards[i, d0] = top
            ints[i, I_DISC_LEN] = 1
            for f in range(FACES):
                cards[i, offsets[L_DISC_COUNTS] + f] = 0
            cards[i, offsets[L_DISC_COUNTS] + top] = 1
            ints[i, I_RESHUFFLES] += 1
        ints[i, I_DRAW_LEN] -= 1
        card = cards[i, offsets[L_DRAW] + ints[i, I_DRAW_LEN]]
    else:
        ints[i, I_DISC_LEN] -= 1
        card = cards[i, offsets[L_DISC] + ints[i, I_DISC_LEN]]
        cards[i, offsets[L_DISC_COUNTS] + card] -= 1
        cards[i, known + card] += 1
    cards[i, hand + card] += 1
    ints[i, I_PHASE] = DISCARD
    go[i] = GO_UNKNOWN  # asked for when a mask or a bot needs it (greedy reads it off its discard table)


@njit(cache=True, nogil=True, inline="always")  # inlined into step_one: a phase of it, named
def _discard(i, a, cards, ints, rng, go, offsets, rules, sizes, tables):
    """The current player discards (a discard move) or goes out (a go-out move) with a face; then who lays is
    queued: everyone after a go-out, from the next player; everyone when the turn cap ends the round."""
    n = rules[R_PLAYERS]
    p = ints[i, I_CUR]
    hand = offsets[L_HANDS] + p * FACES
    known = offsets[L_KNOWN] + p * FACES
    face = a - GO_OUT_BASE if a >= GO_OUT_BASE else a - DISCARD_BASE
    cards[i, hand + face] -= 1
    cards[i, offsets[L_DISC] + ints[i, I_DISC_LEN]] = face
    ints[i, I_DISC_LEN] += 1
    cards[i, offsets[L_DISC_COUNTS] + face] += 1
    if cards[i, known + face] > 0:
        cards[i, known + face] -= 1  # observers cannot tell which copy went
    ints[i, I_TURNS] += 1
    go[i] = 0
    cap = rules[R_CAP]
    if a >= GO_OUT_BASE:
        ints[i, I_WENT_OUT] = p
        cards[i, offsets[L_QUEUE]] = p
        ints[i, I_Q_HEAD] = 0
        ints[i, I_Q_LEN] = 1
    elif ints[i, I_WENT_OUT] >= 0:
        cards[i, offsets[L_QUEUE]] = p
        ints[i, I_Q_HEAD] = 0
        ints[i, I_Q_LEN] = 1
    elif cap > 0 and ints[i, I_TURNS] >= cap * n:
        first = (ints[i, I_DEALER] + 1) % n  # nobody went out: everyone lays, from the round's first player
        for k in range(n):
            cards[i, offsets[L_QUEUE] + k] = (first + k) % n
        ints[i, I_Q_HEAD] = 0
        ints[i, I_Q_LEN] = n
    _lay_next(i, p, cards, ints, rng, go, offsets, rules, sizes, tables)


@njit(cache=True, nogil=True)
def step_games(games, actions, cards, ints, rng, go, offsets, rules, sizes, tables):
    """Play actions[j] in game games[j] for each j; returns the first j whose action is illegal, or -1.

    Games before an illegal one have moved; from it on, nothing moved."""
    cards, ints, rng, go, offsets, rules, sizes, tables = borrow(cards, ints, rng, go, offsets, rules, sizes, tables)
    for j in range(games.shape[0]):
        if not is_legal(games[j], actions[j], cards, ints, go, offsets, rules, tables):
            return j
    for j in range(games.shape[0]):
        step_one(games[j], actions[j], cards, ints, rng, go, offsets, rules, sizes, tables)
    return -1


@njit(cache=True, nogil=True, inline="always")
def best_total(i, ints, offsets, rules):
    """Game i's highest running total and how many seats have it."""
    t0 = offsets[L_TOTALS]
    best = ints[i, t0]
    for p in range(1, rules[R_PLAYERS]):
        best = max(best, ints[i, t0 + p])
    sharing = 0
    for p in range(rules[R_PLAYERS]):
        sharing += ints[i, t0 + p] == best
    return best, sharing


# The learner's reward, by the vector env's `reward_mode` (`envs.common.round_rewards`, for one seat).
ROUND_SCORE, RELATIVE, LEAD, WIN_LOSS = range(4)
"""Codes of `envs.common.REWARD_MODES`, in its order."""


@njit(cache=True, nogil=True, _nrt=False)
def learner_reward(i, seat, mode, scale, ints, offsets, rules):
    """Seat `seat`'s reward in game i for the round ends since the last take of its gains; takes them (zeroed).

    round_score: its gains; relative: its gains less the others' mean; lead: the change of its lead (its
    total less the best other); win_loss: at the game's end, 1 for the sole best total, 0 for a shared one,
    -1 otherwise (0 before the end). Times `scale`."""
    n = rules[R_PLAYERS]
    g0 = offsets[L_GAIN]
    t0 = offsets[L_TOTALS]
    mine = ints[i, g0 + seat]
    if mode == ROUND_SCORE:
        r = np.float64(mine)
    elif mode == RELATIVE:
        others = 0
        for p in range(n):
            others += ints[i, g0 + p]
        r = mine - (others - mine) / (n - 1)
    elif mode == LEAD:
        best_now = np.int64(-(1 << 40))
        best_before = np.int64(-(1 << 40))
        for p in range(n):
            if p != seat:
                t = np.int64(ints[i, t0 + p])
                best_now = max(best_now, t)
                best_before = max(best_before, t - ints[i, g0 + p])
        r = np.float64((ints[i, t0 + seat] - best_now) - (ints[i, t0 + seat] - mine - best_before))
    else:
        r = 0.0
        if ints[i, I_PHASE] == GAME_OVER:
            best, sharing = best_total(i, ints, offsets, rules)
            r = (1.0 if sharing == 1 else 0.0) if ints[i, t0 + seat] == best else -1.0
    for p in range(n):
        ints[i, g0 + p] = 0
    return r * scale


@njit(cache=True, nogil=True)
def learner_rewards(games, seats, mode, scale, out, ints, offsets, rules):
    """`learner_reward` of seats[i] in each game i of games, into out[j]."""
    ints, offsets, rules = borrow(ints, offsets, rules)
    for j in range(games.shape[0]):
        i = games[j]
        out[j] = learner_reward(i, seats[i], mode, scale, ints, offsets, rules)


@njit(cache=True, nogil=True)
def take_gains(games, out, ints, offsets):
    """What round ends added to each player's total in games[j] since the last take, into out[j]; zeroed."""
    g0 = offsets[L_GAIN]
    for j in range(games.shape[0]):
        i = games[j]
        for p in range(out.shape[1]):
            out[j, p] = ints[i, g0 + p]
            ints[i, g0 + p] = 0


@njit(cache=True, nogil=True, inline="always")
def figures_row(i, round_ended, over, scores, bonuses, totals, winners, ints, offsets, rules):
    """Game i's row of the vector env's infos (arrays of zeros, a row per game): its last round's scores and
    bonuses if a round ended, its totals and how many seats share the highest total if the game is over."""
    n = rules[R_PLAYERS]
    if round_ended:
        for p in range(n):
            scores[i, p] = ints[i, offsets[L_ROUND_SCORE] + p]
            bonuses[i, p] = ints[i, offsets[L_BONUS] + p]
    if over:
        for p in range(n):
            totals[i, p] = ints[i, offsets[L_TOTALS] + p]
        winners[i] = best_total(i, ints, offsets, rules)[1]


@njit(cache=True, nogil=True)
def round_figures(round_ended, done, over, scores, bonuses, totals, winners, ints, offsets, rules):
    """`figures_row` of every game, over[i] set where done[i] and game i is over."""
    for i in range(ints.shape[0]):
        over[i] = done[i] and ints[i, I_PHASE] == GAME_OVER
        figures_row(i, round_ended[i], over[i], scores, bonuses, totals, winners, ints, offsets, rules)


# -- masks and observations ---------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")  # inlined: a call costs a reference count per array
def mask_row(i, out, cards, ints, go, offsets, rules, tables):
    """The legal-action mask of game i's current player into out (int8 or bool, zeros when over)."""
    out[:] = 0
    ph = ints[i, I_PHASE]
    if ph == LAY:
        for k in range(ints[i, I_CAND_N]):
            out[LAY_BASE + k] = 1
    elif challenges_on(rules, tables) and ph == CHALLENGE:
        _challenge_mask(i, out, cards, ints, offsets, rules)
    elif ph == DRAW:
        out[TAKE_DISCARD] = 1
        if ints[i, I_DRAW_LEN] > 0 or ints[i, I_DISC_LEN] > 1:
            out[DRAW_PILE] = 1
    elif ph == DISCARD:  # (written without a branch per face: whether a face is held is a coin flip)
        bits = go_bits(i, cards, ints, go, offsets, rules, tables)
        honest = bits  # forced going out is by the honest faces only
        if challenges_on(rules, tables) and rules[R_BLUFF]:
            bits = _bluff_faces(i, bits, cards, ints, offsets, rules)
        for f in range(FACES):
            out[GO_OUT_BASE + f] = (bits >> f) & 1
        if not (honest != 0 and rules[R_FORCED]):
            base = offsets[L_HANDS] + ints[i, I_CUR] * FACES
            for f in range(FACES):
                out[DISCARD_BASE + f] = cards[i, base + f] > 0


@njit(cache=True, nogil=True)
def masks(games, out, cards, ints, go, offsets, rules, tables):
    """The masks of games[j] into out[j]."""
    out, cards, ints, go, offsets, rules, tables = borrow(out, cards, ints, go, offsets, rules, tables)
    for j in range(games.shape[0]):
        mask_row(games[j], out[j], cards, ints, go, offsets, rules, tables)


@njit(cache=True, nogil=True)
def masks_at(games, out, cards, ints, go, offsets, rules, tables):
    """The masks of games[j] into out[games[j]] (out: a row per game of the batch)."""
    out, cards, ints, go, offsets, rules, tables = borrow(out, cards, ints, go, offsets, rules, tables)
    for j in range(games.shape[0]):
        mask_row(games[j], out[games[j]], cards, ints, go, offsets, rules, tables)


@njit(cache=True, nogil=True, inline="always")
def observe_row(i, p, out, cards, ints, offsets, rules, obs_starts, tables):
    """Player p's observation of game i into out (as `core.observation.encode_observation`).

    obs_starts holds the slice starts of `observation_layout(n, challenges)` in its table order. (Two calls: the
    plain game's slices, which need no word tables, and the variant's, compiled only with it.)"""
    _observe_plain(i, p, out, cards, ints, offsets, rules, obs_starts)
    if challenges_on(rules, tables):
        _observe_challenges(i, p, out, cards, ints, offsets, rules, obs_starts, tables)


@njit(cache=True, nogil=True, _nrt=False)
def _observe_plain(i, p, out, cards, ints, offsets, rules, obs_starts):
    """The plain game's slices of player p's observation of game i (all of it without challenges)."""
    n = rules[R_PLAYERS]
    out[:] = 0.0
    # The slices' starts, in `observation_layout`'s table order.
    o_hand, o_top, o_hs, o_phase = obs_starts[0], obs_starts[1], obs_starts[2], obs_starts[3]
    o_final, o_went, o_disc, o_taken = obs_starts[4], obs_starts[5], obs_starts[6], obs_starts[7]
    o_unseen, o_draw, o_tot, o_round = obs_starts[8], obs_starts[9], obs_starts[10], obs_starts[11]
    o_seat, o_turns, o_laying, o_laid = obs_starts[12], obs_starts[13], obs_starts[14], obs_starts[15]
    o_laid_cards, o_laid_fig, o_cand = obs_starts[16], obs_starts[17], obs_starts[18]
    hand = offsets[L_HANDS] + p * FACES
    for f in range(FACES):
        out[o_hand + f] = cards[i, hand + f]
    if ints[i, I_DISC_LEN] > 0:
        out[o_top + cards[i, offsets[L_DISC] + ints[i, I_DISC_LEN] - 1]] = 1.0
    out[o_hs] = ints[i, I_HAND_SIZE] / MAX_HAND_SIZE
    ph = ints[i, I_PHASE]
    if ph in (DRAW, DISCARD):
        out[o_phase + ph] = 1.0
    elif ph == LAY and ints[i, I_CUR] == p:
        out[o_laying] = 1.0
        for k in range(ints[i, I_CAND_N]):
            base = offsets[L_CAND_FIG] + k * FIG
            out[o_cand + 3 * k] = ints[i, base + F_SCORE] / TOTAL_SCALE
            out[o_cand + 3 * k + 1] = ints[i, base + F_LONGEST] / LETTERS_SCALE
            out[o_cand + 3 * k + 2] = ints[i, base + F_WORDS] / WORDS_SCALE
    wo = ints[i, I_WENT_OUT]
    if wo >= 0:
        out[o_final] = 1.0
        out[o_went + (wo - p) % n] = 1.0
    for f in range(FACES):
        out[o_disc + f] = cards[i, offsets[L_DISC_COUNTS] + f]
    for j in range(ints[i, I_N_LAID]):
        seat = cards[i, offsets[L_LAY_ORDER] + j]
        k = (seat - p) % n
        out[o_laid + k] = 1.0
        lc = offsets[L_LAID_CARDS] + seat * FACES
        for f in range(FACES):
            out[o_laid_cards + k * FACES + f] = cards[i, lc + f]
        fig = offsets[L_LAID_FIG] + seat * FIG
        out[o_laid_fig + 3 * k] = ints[i, fig + F_SCORE] / TOTAL_SCALE
        out[o_laid_fig + 3 * k + 1] = ints[i, fig + F_LONGEST] / LETTERS_SCALE
        out[o_laid_fig + 3 * k + 2] = ints[i, fig + F_WORDS] / WORDS_SCALE
    for k in range(1, n):
        seat = (p + k) % n
        row = offsets[L_KNOWN] + seat * FACES
        laid = out[o_laid + k] > 0.5
        lc = offsets[L_LAID_CARDS] + seat * FACES
        for f in range(FACES):
            t = cards[i, row + f]
            out[o_taken + (k - 1) * FACES + f] = t
            if laid and cards[i, lc + f] > t:  # cards it surely holds: taken, or laid (they may overlap)
                t = cards[i, lc + f]
            out[o_unseen + f] += t  # the cards known held by others, summed in place (no array to allocate)
    for f in range(FACES):
        u = _DECK_COUNTS[f] - cards[i, hand + f] - cards[i, offsets[L_DISC_COUNTS] + f] - np.int64(out[o_unseen + f])
        out[o_unseen + f] = u if u > 0 else 0
    out[o_draw] = ints[i, I_DRAW_LEN] / float(DECK_SIZE)
    for k in range(n):
        out[o_tot + k] = ints[i, offsets[L_TOTALS] + (p + k) % n] / TOTAL_SCALE
    out[o_round] = (ints[i, I_ROUND] + 1) / rules[R_ROUNDS]
    out[o_seat + (p - ints[i, I_DEALER]) % n] = 1.0
    cap = rules[R_CAP]
    # Capped at 1: the final turns after a late go-out run past the cap (as `observation.turns_fraction`).
    out[o_turns] = min(ints[i, I_TURNS] / (cap * n), 1.0) if cap > 0 else 0.0


@njit(cache=True, nogil=True, _nrt=False)
def _observe_challenges(i, p, out, cards, ints, offsets, rules, obs_starts, tables):
    """The challenge variant's slices of player p's observation of game i (`observation._encode_challenges`)."""
    n = rules[R_PLAYERS]
    o_seat, o_coverage, o_challenging, o_bluff, o_cards = (
        obs_starts[19],
        obs_starts[20],
        obs_starts[21],
        obs_starts[22],
        obs_starts[23],
    )
    o_figures, o_known, o_challenged, o_failed, o_record = (
        obs_starts[24],
        obs_starts[25],
        obs_starts[26],
        obs_starts[27],
        obs_starts[28],
    )
    out[o_seat + p] = 1.0
    out[o_coverage] = seat_coverage(tables, p)
    ph = ints[i, I_PHASE]
    if ph == CHALLENGE and ints[i, I_CUR] == p:
        out[o_challenging] = 1.0
    if ph == LAY and ints[i, I_CUR] == p and ints[i, I_CAND_BLUFF] >= 0:
        out[o_bluff + ints[i, I_CAND_BLUFF]] = 1.0
    vocab = seat_tables(tables, p)  # what the observer knows
    for t in range(ints[i, I_N_LAID]):
        q = cards[i, offsets[L_LAY_ORDER] + t]
        k = (q - p) % n
        for j in range(laid_words(i, q, cards, ints, offsets)):
            slot = k * WORDS + j
            key = word_key(i, q, j, cards, ints, offsets, tables)
            rest = key
            while rest:
                out[o_cards + slot * FACES + _KEY_ORDER[(rest & 31) - 1]] += 1.0
                rest >>= 5
            out[o_figures + 2 * slot] = key_points(key) / TOTAL_SCALE
            out[o_figures + 2 * slot + 1] = key_letters(key) / LETTERS_SCALE
            out[o_known + slot] = key_term(key, vocab[2], vocab[4]) >= 0
            by = cards[i, offsets[L_WORD_BY] + q * WORDS + j]
            if by > 0:  # the verdict shows once the word is challenged
                failed = cards[i, offsets[L_WORD_FAILED] + q * WORDS + j]
                out[o_challenged + slot] = 1.0
                out[o_failed + slot] = failed
                c = (by - 1 - p) % n
                out[o_record + 3 * c] += 1.0
                out[o_record + 3 * c + (1 if failed else 2)] += 1.0


@njit(cache=True, nogil=True)
def observe(games, players, out, cards, ints, offsets, rules, obs_starts, tables):
    """Observation of players[j] in games[j] into out[j]."""
    out, cards, ints, offsets, rules, obs_starts, tables = borrow(out, cards, ints, offsets, rules, obs_starts, tables)
    for j in range(games.shape[0]):
        observe_row(games[j], players[j], out[j], cards, ints, offsets, rules, obs_starts, tables)


@njit(cache=True, nogil=True)
def observe_at(games, players, out, cards, ints, offsets, rules, obs_starts, tables):
    """Observation of players[i] in game i into out[i], for each i of games (rows per game of the batch)."""
    out, cards, ints, offsets, rules, obs_starts, tables = borrow(out, cards, ints, offsets, rules, obs_starts, tables)
    for j in range(games.shape[0]):
        i = games[j]
        observe_row(i, players[i], out[i], cards, ints, offsets, rules, obs_starts, tables)


# -- one game's move and view (the AEC env's step) ----------------------------------------------


@njit(cache=True, nogil=True)
def view_row(i, mask, obs, cards, ints, go, offsets, rules, tables, obs_starts):
    """Game i's current player's legal moves into mask and its observation into obs (mask all zero when over)."""
    mask, obs, cards, ints, go, offsets, rules, tables, obs_starts = borrow(
        mask, obs, cards, ints, go, offsets, rules, tables, obs_starts
    )
    mask_row(i, mask, cards, ints, go, offsets, rules, tables)
    observe_row(i, ints[i, I_CUR], obs, cards, ints, offsets, rules, obs_starts, tables)


@njit(cache=True, nogil=True)
def step_view(i, a, mask, obs, cards, ints, rng, go, offsets, rules, sizes, tables, obs_starts):
    """Play action a in game i, then `view_row`: one call for a move and the next mover's view.

    Returns False, with nothing moved, if a is illegal. (The arrays come one by one, not as a `GameArrays`:
    this is the AEC env's call for each move of one game, where what numba's dispatcher spends on a tuple
    shows; `benchmarks/dispatch_cost.py`.)"""
    mask, obs, cards, ints, rng, go, offsets, rules, sizes, tables, obs_starts = borrow(
        mask, obs, cards, ints, rng, go, offsets, rules, sizes, tables, obs_starts
    )
    if not is_legal(i, a, cards, ints, go, offsets, rules, tables):
        return False
    step_one(i, a, cards, ints, rng, go, offsets, rules, sizes, tables)
    view_row(i, mask, obs, cards, ints, go, offsets, rules, tables, obs_starts)
    return True
