"""The compiled heart of the hand solver (numba), one call per hand.

Inputs describe a hand as *fields*: its distinct faces in the index's key order,
each with its rank label (rank + 1, as in the index codes) and count. A state is
a sub-multiset of the hand, indexed in mixed radix. The kernels

1. walk the dictionary trie (CSR arrays) along the hand's sub-multisets, in key
   order, to list every word multiset the hand contains (`hand_words`);
2. search layouts over states: the lowest remaining card is either left unused
   or starts a word whose lowest card it is, so each layout is built once.
   `_covers` asks "can every card be laid" depth-first with a memo and stops at
   the first complete layout (the go-out mask; it walks the trie itself, only
   for the words of the lowest cards its states reach, `_walk_low`); `_best_table` finds the best
   layout (points used, then words, then longest word) of every state the search
   reaches, in two sweeps over state indices; `layout_front_path` keeps, per state, the unbeaten
   cells of a table over (longest word, number of words) of the most points used,
   and reads the Pareto front of the hand's layouts from the whole hand's table
   (`full_only`: every card laid).

`go_out_face_bits` answers the engine's per-step question for a hand after
drawing (`go_out_face_start` and `go_out_face` the same, one discard at a time),
`best_layout_hand` the round-end layout, `discard_table` the best layout left by
each discard (for the bots), `layout_front_hand` the layouts a player lays from.

A word's fit in a state is one subtraction on a packed form (5 bits per field:
4 for the count, 1 guard that a borrow clears), so hands have at most 12 fields
(`_best_table` tests up to 64 words at once, with bit sets).

Shape, and why. The searches take the dictionary's arrays one by one (`edge_start`, `edge_label`,
`edge_child`, `node_term`, `term_points`, `term_letters`, `term_cards`: the trie and its terms, as
`solver.HandSolver` holds them), so `layout_front_path` and its two wrappers take 14-15 parameters: they
are called from Python for one hand at a time (`HandSolver`), where numba's dispatcher types loose arrays
fastest (`benchmarks/dispatch_cost.py`), as well as from the engine's kernels. The three searches
(`_covers`, `_best_table`, `layout_front_path`) are each one function, 81, 156 and 363 lines: each is a
loop over states whose phases (a sweep down, a build up, a walk back) share a dozen arrays carved from
the scratch space and as many counters; split, each part would take them all as parameters. Their
docstrings give the algorithm, and `tests/test_solver.py` pins them against a brute-force search.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

try:  # numba's count-zeros intrinsics (an internal module, so portable fallbacks below)
    from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
except ImportError:  # pragma: no cover - only on a numba without it

    @njit(cache=True, nogil=True, error_model="numpy")
    def trailing_zeros(x):
        n = 0
        while (x >> n) & 1 == 0:
            n += 1
        return n

    @njit(cache=True, nogil=True, error_model="numpy")
    def leading_zeros(x):  # of a uint64
        n = 0
        while (x << np.uint64(n)) >> np.uint64(63) == 0:
            n += 1
        return n


MAX_FIELDS = 12
PACK_START_SHIFT, PACK_START_BITS, PACK_WORD_BIT = 32, 26, 58
"""Where `solver.solver_trie`'s node pack holds a node's first edge and its word flags (labels: bits 1..31)."""
_LABEL_MASK = (1 << 32) - 1
_START_MASK = (1 << PACK_START_BITS) - 1

# -- scratch space: the searches' working arrays in one int64 table, rows by use ------------------
# At small hands the searches' allocations cost more than their work: the engine passes one table,
# kept between calls (`new_scratch`), and the other callers allocate one per call instead of ~15.
(
    W_TERM,  # hand_words: the words' terms, state indices, packed forms, lowest fields
    W_IDX,
    W_PACKED,
    W_LOW,
    W_WALK,  # hand_words: its walk's stack, 4 rows (of 5)
) = range(5)
# hand_words' `above` [0, 16) and `field_of` [16, 80); _low_starts' `low_start` [80, 96);
# the go-out search's figures [112, 118) and strides [128, 141) (`go_out_start`, which also keeps `above` and
# `field_of` there, each field's walked words in [80, 112), and the hand's labels and counts in row W_LOW)
W_SMALL = 9
W_HAND = 10  # the batched engine's hand being searched (`batch_kernels.hand_of`; no search writes this row)
W_MEMO = 11  # go_out_fields: the cover memo (as int8)
W_COVER = 12  # go_out_fields: _covers' stack, 4 rows
W_FIELDS = 16  # the *_in functions: the hand's faces [0, 32), labels [32, 64), counts [64, 96), points [96, 128)
W_FRONT_WORDS = 11  # layout_front_path (which runs no cover search): its word data, 4 rows (W_MEMO, W_COVER..)
W_FRONT_REACH = 15  # layout_front_path: the states reached and not yet swept, a bit each (as uint64)
W_FRONT_STATES = 17  # layout_front_path: its per-state rows, 9
W_FRONT_EDGES = 26  # layout_front_path: its edges (int32), 2 rows
W_FRONT_ARENA = 28  # layout_front_path: its arena of kept cells (int32), 8 rows
W_FRONT_CELLS = 36  # layout_front_path: the state being built and the front's table (int32), 1 row
W_FRONT_KEYS = 37  # layout_front_path: the front's keys
W_FRONT_OUT = 38  # layout_front_path: its results (int32), 2 rows
SCRATCH_ROWS = 40
_SCRATCH_MIN_WIDTH = 144  # W_SMALL's and W_FIELDS' columns
SCRATCH_WIDTH = (1 << MAX_FIELDS) + 1
"""Columns of `new_scratch`: a state count (plus one) of any hand of at most MAX_FIELDS cards."""


def new_scratch() -> np.ndarray:
    """Scratch space for the searches of hands of up to MAX_FIELDS cards (larger ones allocate their own)."""
    return np.empty((SCRATCH_ROWS, SCRATCH_WIDTH), np.int64)


@njit(cache=True, nogil=True, error_model="numpy")
def _own_scratch(n_states):
    """A new scratch space for a search over n_states states."""
    return np.empty((SCRATCH_ROWS, max(n_states + 1, _SCRATCH_MIN_WIDTH)), np.int64)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _scratch_for(ws, n_states):
    """ws if its rows hold a search over n_states states, else a new scratch space that does."""
    if ws.shape[1] > n_states and ws.shape[1] >= _SCRATCH_MIN_WIDTH:
        return ws
    return _own_scratch(n_states)


@intrinsic
def _rows_as_int32(typingctx, ws, row, n_rows):
    """Rows [row, row + n_rows) of the scratch space ws (2-D int64, C order) as one 1-D int32 array, a view.

    (`ws[row : row + n_rows].reshape(-1).view(np.int32)` is the same array, but numba's reshape calls a
    C helper each time, 0.5% of the vector env's step over the front's five int32 tables.)"""
    if not (isinstance(ws, types.Array) and ws.ndim == 2 and ws.dtype == types.int64 and ws.layout == "C"):
        return None
    out_type = types.Array(types.int32, 1, "C")

    def codegen(context, builder, signature, args):
        src = context.make_array(signature.args[0])(context, builder, value=args[0])
        first = context.cast(builder, args[1], signature.args[1], types.intp)
        rows = context.cast(builder, args[2], signature.args[2], types.intp)
        shape = cgutils.unpack_tuple(builder, src.shape, 2)
        strides = cgutils.unpack_tuple(builder, src.strides, 2)
        start = builder.add(builder.ptrtoint(src.data, cgutils.intp_t), builder.mul(first, strides[0]))
        out = context.make_array(out_type)(context, builder)
        context.populate_array(
            out,
            data=builder.inttoptr(start, context.get_value_type(types.int32).as_pointer()),
            shape=cgutils.pack_array(builder, [builder.mul(builder.mul(rows, shape[1]), cgutils.intp_t(2))]),
            strides=cgutils.pack_array(builder, [cgutils.intp_t(4)]),
            itemsize=cgutils.intp_t(4),
            meminfo=src.meminfo,
            parent=None,
        )
        view = out._getvalue()
        context.nrt.incref(builder, out_type, view)  # a new reference to ws's memory, as a view is
        return view

    return out_type(ws, row, n_rows), codegen


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _int32_rows(ws, row, n_rows, need):
    """`need` int32 entries: rows [row, row + n_rows) of ws if they hold that many, else a new array."""
    if 2 * n_rows * ws.shape[1] >= need:
        return _rows_as_int32(ws, row, n_rows)[:need]
    return np.empty(need, np.int32)


@intrinsic
def popcount(typingctx, x):
    """Set bits of an integer: LLVM's ctpop, one instruction where the processor has one (the trie walk
    counts a node's edges below a label at every step; LLVM left the shift-and-mask form as it was)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return x(x), codegen


@njit(cache=True, nogil=True, error_model="numpy", inline="always")  # inlined: a call costs a count per array
def _walk_field(
    low, labels, counts, strides, word_bit, node_pack, node_term, terms, above, field_of, words, n_words, stack
):
    """Append the hand's words whose lowest field is `low` to `words` (rows: term id, state index, packed
    form; the term ids only if `terms`, else `node_term` is not read) from entry n_words; returns the new
    count. `above` and `field_of` as `_field_labels` sets them; `stack`: the walk's stack, 4 rows.

    The walk: depth first from the root's edge for the field's label, over the later fields in label
    order, each taken as often as the hand holds it; a node is resumed (pushed) after each card taken,
    the last pushed first. A node's edges go to consecutive nodes, sorted by label, the first at
    `edge_start[node] + 1`, and `node_pack[node]` has bit l set for each edge of label l, so the child by
    label l is node `edge_start[node] + (the set bits below l) + 1`; the pack also holds the node's first
    edge and its word flags, so each step down is one read. (The walk is bound by its branches, not by memory:
    on the trie minimized to a word graph that fits the second-level cache it was no faster.)
    """
    word_term = words[0]
    word_idx = words[1]
    word_packed = words[2]
    n_words0 = n_words
    st_start = stack[0]
    st_node = stack[1]
    st_packed = stack[2]
    st_idx = stack[3]
    sp = 1
    st_start[0] = low
    st_node[0] = node_pack[0]
    st_packed[0] = 0
    st_idx[0] = 0
    only = np.int64(1) << labels[low]  # at the root, the lowest field's edge alone
    while sp > 0:
        sp -= 1
        start = st_start[sp]
        pack0 = st_node[sp]
        packed0 = st_packed[sp]
        idx0 = st_idx[sp]
        labs0 = pack0 & _LABEL_MASK
        first0 = (pack0 >> PACK_START_SHIFT) & _START_MASK
        avail = labs0 & above[start] & only  # the later fields this node has an edge for, lowest label first
        only = np.int64(-1)
        while avail != 0:
            lab = trailing_zeros(avail)
            avail &= avail - 1
            j = field_of[lab]
            node = first0 + popcount(labs0 & ((np.int64(1) << lab) - 1)) + 1
            pack = node_pack[node]
            packed = packed0
            idx = idx0
            unit = np.int64(1) << (5 * j)
            for rep in range(counts[j]):
                if rep > 0:
                    labs = pack & _LABEL_MASK
                    if (labs >> lab) & 1 == 0:
                        break
                    node = ((pack >> PACK_START_SHIFT) & _START_MASK) + popcount(labs & ((np.int64(1) << lab) - 1)) + 1
                    pack = node_pack[node]
                packed += unit
                idx += strides[j]
                # Without a branch (whether a node ends a word, and whether it goes on, are coin flips to
                # the processor): the entry is written anyway and kept, by advancing the count, if it is
                # one. A word's term is read after the walk, from its node.
                if terms:
                    word_term[n_words] = node
                word_idx[n_words] = idx
                word_packed[n_words] = packed
                n_words += (pack >> word_bit) & 1
                # Resume from this node with the later fields, if it has an edge for one of them.
                st_start[sp] = j + 1
                st_node[sp] = pack
                st_packed[sp] = packed
                st_idx[sp] = idx
                sp += (pack & above[j + 1]) != 0
    if terms:
        for w in range(n_words0, n_words):
            word_term[w] = node_term[word_term[w]]
    return n_words


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _word_bit(min_cards):
    """The node pack's bit that marks a word the walk lists: any word, or one of at least two cards."""
    return PACK_WORD_BIT + (1 if min_cards >= 2 else 0)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _field_labels(labels, small):
    """`hand_words`' `above` (the labels of fields j.., bit l for label l) and `field_of` (each label's
    field) in the scratch row `small`."""
    m = labels.shape[0]
    above = small[0:16]
    field_of = small[16:80]
    above[m] = 0
    for j in range(m - 1, -1, -1):
        above[j] = above[j + 1] | (np.int64(1) << labels[j])
        field_of[labels[j]] = j
    return above, field_of


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def hand_words(labels, counts, strides, min_cards, edge_start, node_pack, edge_child, node_term, term_cards, ws):
    """Every word multiset in the hand: (term id, state index, packed form, lowest field) arrays.

    The trie as the solver holds it (`solver.solver_trie`), walked field by field (`_walk_field`), so the
    words come grouped by lowest field, lowest first, in a fixed order within each field (the order the
    searches' ties follow; `_low_starts` finds the groups). (`edge_start`, `edge_child` and `term_cards`
    are the pack's sources, not read here.) The arrays returned are views of the scratch space ws (rows
    W_TERM..W_LOW), which must hold `strides[-1] + 1` columns (`_scratch_for`).
    """
    m = labels.shape[0]
    word_bit = _word_bit(min_cards)
    above, field_of = _field_labels(labels, ws[W_SMALL])
    words = ws[W_TERM : W_PACKED + 1]
    word_low = ws[W_LOW]
    stack = ws[W_WALK : W_WALK + 4]
    n_words = 0
    for low in range(m):
        first = n_words
        n_words = _walk_field(
            low, labels, counts, strides, word_bit, node_pack, node_term, True, above, field_of, words, n_words, stack
        )
        word_low[first:n_words] = low
    return words[0, :n_words], words[1, :n_words], words[2, :n_words], word_low[:n_words]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _low_starts(word_low, m, ws):
    """Where each lowest field's words start in `hand_words`' list (grouped by lowest field, lowest first:
    field j's are [low_start[j], low_start[j + 1])), and the guard mask; low_start is a view of ws."""
    n_words = word_low.shape[0]
    low_start = ws[W_SMALL, 80 : 80 + m + 1]
    guard = np.int64(0)
    w = 0
    for j in range(m):
        low_start[j] = w
        while w < n_words and word_low[w] == j:
            w += 1
        guard |= np.int64(16) << (5 * j)
    low_start[m] = n_words
    return low_start, guard


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _strides(counts):
    m = counts.shape[0]
    strides = np.empty(m + 1, np.int64)
    strides[0] = 1
    for j in range(m):
        strides[j + 1] = strides[j] * (counts[j] + 1)
    return strides


# A go-out search kept in the scratch space between questions: `go_out_start` readies it, `go_out_field`
# asks about one discard, `go_out_fields` about every discard (the mask); the random bot asks about one at
# a time, and only when its pick lands on a go-out move. The hand's words are not listed up front: the
# cover search lays the lowest card left in a word that it is the lowest card of, so it only ever needs
# the words of the lowest fields its states reach, and it walks the trie for a field's words the first
# time a state asks for them (`_walk_low`). A search that goes out soon walks a few fields' words, not all.
_M_WORDS, _M_FIELDS, _M_WORD_BIT, _M_FULL, _M_PACKED, _M_GUARD = range(112, 118)  # W_SMALL: the figures
_M_FIRST, _M_END = 80, 96  # W_SMALL [80, 96), [96, 112): field j's words are [first[j], end[j]) once walked
_M_STRIDES = 128  # W_SMALL [128, 141): the hand's strides
_M_LABELS, _M_COUNTS = 0, 16  # W_LOW [0, 16), [16, 32): the hand's labels and counts


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def go_out_start(labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards, ws):
    """Ready a go-out search of a hand after drawing (its fields) in ws, for `go_out_field`.

    ws: scratch space for the hand's states (`_scratch_for`). (The trie is read by `go_out_field`, as
    `edge_label`'s node pack, `solver.solver_trie`; the other tables are not read.)
    """
    m = labels.shape[0]
    small = ws[W_SMALL]
    hand = ws[W_LOW]
    strides = small[_M_STRIDES : _M_STRIDES + m + 1]
    strides[0] = 1
    for j in range(m):
        strides[j + 1] = strides[j] * (counts[j] + 1)
        hand[_M_LABELS + j] = labels[j]
        hand[_M_COUNTS + j] = counts[j]
        small[_M_FIRST + j] = -1
    _field_labels(labels, small)
    guard = np.int64(0)
    packed = np.int64(0)
    for j in range(m):
        guard |= np.int64(16) << (5 * j)
        packed += counts[j] << (5 * j)
    ws[W_MEMO].view(np.int8)[: strides[m]] = 0
    small[_M_WORDS] = 0
    small[_M_FIELDS] = m
    small[_M_WORD_BIT] = _word_bit(min_cards)
    small[_M_FULL] = strides[m] - 1
    small[_M_PACKED] = packed + guard
    small[_M_GUARD] = guard


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _walk_low(low, node_pack, ws):
    """List the readied hand's words whose lowest field is `low` (`_walk_field`, without term ids) after
    the words listed so far, in rows W_IDX and W_PACKED."""
    small = ws[W_SMALL]
    m = small[_M_FIELDS]
    hand = ws[W_LOW]
    n_words = small[_M_WORDS]
    small[_M_FIRST + low] = n_words
    n_words = _walk_field(
        low,
        hand[_M_LABELS : _M_LABELS + m],
        hand[_M_COUNTS : _M_COUNTS + m],
        small[_M_STRIDES : _M_STRIDES + m + 1],
        small[_M_WORD_BIT],
        node_pack,
        node_pack,
        False,
        small[0:16],
        small[16:80],
        ws[W_TERM : W_PACKED + 1],
        n_words,
        ws[W_WALK : W_WALK + 4],
    )
    small[_M_WORDS] = n_words
    small[_M_END + low] = n_words


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def _covers(j0, j1, whole, node_pack, ws):
    """Bit j (j0 <= j < j1) set iff the readied hand minus one card of field j can be laid out completely,
    and bit m (the hand's field count) iff the whole hand can, when `whole`.

    Each question is a depth-first search, memoised across them (row W_MEMO: 0 unknown, 1 yes, 2 no).
    The lowest card goes in a word that it is the lowest card of, the words tried last listed first (the
    walk lists a field's longer words after their prefixes: a long word first reaches a cover sooner).
    Iterative (an explicit stack, rows W_COVER: state, packed form, next word, first word): recursive calls
    cost more than the search. A yes ends the question: every state on the stack is then a yes.
    """
    small = ws[W_SMALL]
    memo = ws[W_MEMO].view(np.int8)
    guard = small[_M_GUARD]
    word_packed = ws[W_PACKED]
    word_idx = ws[W_IDX]
    st_s = ws[W_COVER]
    st_p = ws[W_COVER + 1]
    st_k = ws[W_COVER + 2]
    st_first = ws[W_COVER + 3]
    m = small[_M_FIELDS]
    bits = np.int64(0)
    for j in range(j0, j1 + 1):
        if j == j1:
            if not whole:
                break
            s = small[_M_FULL]
            packed = small[_M_PACKED]
            bit = np.int64(1) << m
        else:
            s = small[_M_FULL] - small[_M_STRIDES + j]
            packed = small[_M_PACKED] - (np.int64(1) << (5 * j))
            bit = np.int64(1) << j
        if s == 0 or memo[s] == 1:
            bits |= bit
            continue
        if memo[s] == 2:
            continue
        low = trailing_zeros(packed ^ guard) // 5  # the lowest field left: its lane's bits are the lowest set
        if small[_M_FIRST + low] < 0:
            _walk_low(low, node_pack, ws)
        st_s[0] = s
        st_p[0] = packed
        st_k[0] = small[_M_END + low] - 1
        st_first[0] = small[_M_FIRST + low]
        sp = 1
        while sp > 0:
            top = sp - 1
            s = st_s[top]
            p = st_p[top]
            k = st_k[top]
            first = st_first[top]
            pushed = False
            while k >= first:
                r = p - word_packed[k]
                c = s - word_idx[k]
                k -= 1
                if (r & guard) != guard:
                    continue
                if c == 0 or memo[c] == 1:
                    for i in range(sp):
                        memo[st_s[i]] = 1
                    bits |= bit
                    sp = 0
                    break
                if memo[c] == 2:
                    continue
                st_k[top] = k
                low = trailing_zeros(r ^ guard) // 5
                if small[_M_FIRST + low] < 0:
                    _walk_low(low, node_pack, ws)
                st_s[sp] = c
                st_p[sp] = r
                st_k[sp] = small[_M_END + low] - 1
                st_first[sp] = small[_M_FIRST + low]
                sp += 1
                pushed = True
                break
            if sp > 0 and not pushed:
                memo[s] = 2
                sp -= 1
    return bits


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def go_out_field(j, node_pack, ws):
    """After `go_out_start`: can the hand minus one card of field j be laid out completely."""
    return _covers(j, j + 1, False, node_pack, ws) != 0


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def go_out_fields(labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards, whole, ws):
    """For a hand after drawing: bit j set iff the hand minus one card of field j can be laid out.

    Cheaper than the full table: a depth-first cover search that stops at the first
    complete layout, sharing its memo and the words it walked between the discards
    (`go_out_start`; `go_out_field` asks about one). `whole`: bit m (one past the fields)
    is set iff the whole hand can be laid out (not searched otherwise). ws: scratch space
    for the hand's states (`_scratch_for`).
    """
    go_out_start(labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards, ws)
    return _covers(0, labels.shape[0], whole, edge_label, ws)


@njit(cache=True, nogil=True, error_model="numpy")
def _best_table(
    roots, root_packed, counts, strides, low_start, word_idx, word_packed, word_term, term_points, term_letters
):
    """The best layout (points used, then words, then longest word) of every state searched from `roots`.

    A state's best layout: its lowest card left unused (the best of the state without it), or
    laid in one of the words it is the lowest card of, in index order (that word, plus the best
    of the state left); only a strict gain replaces the choice, so the first best one is kept.
    Each state's answer depends on the state alone, so it is the same whichever root reaches it
    (what a memoised depth-first search from the roots finds). Also: can the state be laid out
    completely (some such word leaves a state that can).

    Two sweeps over state indices instead of a memoised recursion (its calls cost more than
    the work): a child has a smaller index than its parent, so a sweep down marks the states
    the roots reach and lists each one's fitting words, and a sweep up fills them children first.
    The answers, and the first best choice at each state, are those of the recursion (what
    `discard_table` and `best_layout_hand` returned before, bit for bit).

    Returns (lowest field, key, choice, cover) by state, valid at the states reached: key is
    used * 2**32 + words * 2**16 + longest, choice the word's position in `hand_words`' list (-1: the
    lowest card left unused).
    """
    m = strides.shape[0] - 1
    n_states = strides[m]
    # Word data in one block, the word's points and one word as one add.
    n_all = word_idx.shape[0]
    o_buf = np.empty((4, n_all), np.int64)
    o_packed = o_buf[0]
    o_idx = o_buf[1]
    o_add = o_buf[2]  # what laying the word adds to a key: its points and one word
    o_letters = o_buf[3]
    for k in range(n_all):
        o_packed[k] = word_packed[k]
        o_idx[k] = word_idx[k]
        o_add[k] = (np.int64(term_points[word_term[k]]) << 32) + (1 << 16)
        o_letters[k] = term_letters[word_term[k]]

    # The fit tests, by bit sets: each field's group of words (lowest field g) is split in
    # blocks of 64, and kill[...] (group g, field j, count c, block b) has the bits of the
    # words needing more than c cards of field j. The words that fit a state of lowest field
    # g are those of group g in no set for the state's counts: a few ORs for up to 64 words,
    # instead of a test per word (most of which fail). Slot (j, c) is at fbase[j] + c; the
    # slot of each field's full count stays empty, so no count needs a test.
    fg = np.empty((2, m + 1), np.int64)
    fbase = fg[0]
    gblk = fg[1]
    fbase[0] = 0
    gblk[0] = 0
    for j in range(m):
        fbase[j + 1] = fbase[j] + counts[j] + 1
        gblk[j + 1] = gblk[j] + ((low_start[j + 1] - low_start[j] + 63) >> 6)
    n_slots = fbase[m]
    kill = np.zeros(gblk[m] * n_slots, np.int64)
    for g in range(m):
        lo = low_start[g]
        nb = gblk[g + 1] - gblk[g]
        base = gblk[g] * n_slots
        for k in range(lo, low_start[g + 1]):
            i = k - lo
            blk = base + (i >> 6)
            bit = np.int64(1) << (i & 63)
            p = o_packed[k]
            while p != 0:
                j = trailing_zeros(p) // 5
                for c in range((p >> (5 * j)) & 15):
                    kill[blk + (fbase[j] + c) * nb] |= bit
                p &= ~(np.int64(31) << (5 * j))

    reach = np.zeros(n_states, np.bool_)
    # By state (one allocation): packed form (no guard bits), lowest field, its fitting
    # words (positions in the word list: edge[e_off[s]:e_end[s]]), and the results below. `built`:
    # the reached states, from the top down.
    st_buf = np.empty((8, n_states), np.int64)
    st_packed = st_buf[0]
    st_low = st_buf[1]
    e_off = st_buf[2]
    e_end = st_buf[3]
    built = st_buf[4]
    top = 0
    for i in range(roots.shape[0]):
        s = roots[i]
        reach[s] = True
        st_packed[s] = root_packed[i]
        if s > top:
            top = s
    e_cap = 4 * n_states + 64
    edge = np.empty(e_cap, np.int32)
    n_edges = 0
    n_built = 0
    for s in range(top, 0, -1):
        if not reach[s]:
            continue
        built[n_built] = s
        n_built += 1
        sp = st_packed[s]
        low = 0
        while (sp >> (5 * low)) & 15 == 0:
            low += 1
        st_low[s] = low
        r = s - strides[low]
        reach[r] = True
        st_packed[r] = sp - (np.int64(1) << (5 * low))
        lo = low_start[low]
        hi = low_start[low + 1]
        if n_edges + hi - lo > e_cap:
            e_cap = 2 * e_cap + hi - lo
            edge = _grow(edge, e_cap, n_edges)
        e_off[s] = n_edges
        nb = gblk[low + 1] - gblk[low]
        base = gblk[low] * n_slots
        for b in range(nb):
            acc = np.int64(0)
            for j in range(low, m):
                acc |= kill[base + (fbase[j] + ((sp >> (5 * j)) & 15)) * nb + b]
            fits = ~acc
            n_in = hi - lo - 64 * b
            if n_in < 64:
                fits &= (np.int64(1) << n_in) - 1
            while fits != 0:
                k = lo + 64 * b + trailing_zeros(fits)
                fits &= fits - 1
                edge[n_edges] = k
                n_edges += 1
                r = s - o_idx[k]
                reach[r] = True
                st_packed[r] = sp - o_packed[k]
        e_end[s] = n_edges

    # A state's best as one key: keys compare as the (used, words, longest) triples do,
    # lexicographically (words and longest are small and not negative), so a candidate is
    # one add (and the longest word's fix) and a compare. A choice changes on a strict gain only.
    key = st_buf[5]
    choice = st_buf[6]
    cover = st_buf[7]  # 1: yes, 0: no
    key[0] = 0
    choice[0] = -1
    cover[0] = 1
    for q in range(n_built - 1, -1, -1):
        s = built[q]
        best = key[s - strides[st_low[s]]]
        ch = -1
        cov = 0
        for e in range(e_off[s], e_end[s]):
            k = edge[e]
            r = s - o_idx[k]
            cov |= cover[r]
            kr = key[r]
            lr = kr & 0xFFFF
            lw = o_letters[k]
            c = kr + o_add[k] + (lw - lr if lw > lr else 0)
            ch = k if c > best else ch
            best = c if c > best else best
        key[s] = best
        choice[s] = ch
        cover[s] = cov
    return st_low, key, choice, cover


@njit(cache=True, nogil=True, error_model="numpy")
def _hand_search(labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards):
    """The words of a hand grouped by lowest field, and its packed form (no guard bits)."""
    m = labels.shape[0]
    strides = _strides(counts)
    ws = _own_scratch(strides[m])
    word_term, word_idx, word_packed, word_low = hand_words(
        labels, counts, strides, min_cards, edge_start, edge_label, edge_child, node_term, term_cards, ws
    )
    low_start, guard = _low_starts(word_low, m, ws)
    packed = np.int64(0)
    for j in range(m):
        packed += counts[j] << (5 * j)
    return strides, word_term, word_idx, word_packed, low_start, packed


@njit(cache=True, nogil=True, error_model="numpy")
def best_layout_path(
    labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_points, term_letters, term_cards
):
    """The best layout of the whole hand (`_best_table` from the full hand only).

    Returns (used points, terms of the words laid, fields of the unused cards).
    """
    m = labels.shape[0]
    strides, word_term, word_idx, word_packed, low_start, packed = _hand_search(
        labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards
    )
    full = strides[m] - 1
    roots = np.empty(2, np.int64)
    roots[0] = full
    roots[1] = packed
    st_low, key, choice, cover = _best_table(
        roots[:1],
        roots[1:],
        counts,
        strides,
        low_start,
        word_idx,
        word_packed,
        word_term,
        term_points,
        term_letters,
    )
    terms = np.empty(m + 12, np.int32)
    unused = np.empty(m + 12, np.int32)
    n_terms = 0
    n_unused = 0
    s = full
    while s != 0:
        k = choice[s]
        if k >= 0:
            terms[n_terms] = word_term[k]
            n_terms += 1
            s -= word_idx[k]
        else:
            j = st_low[s]
            unused[n_unused] = j
            n_unused += 1
            s -= strides[j]
    return np.int32(key[full] >> 32), terms[:n_terms], unused[:n_unused]


@njit(cache=True, nogil=True, error_model="numpy")
def hand_fields(hand, key_order):
    """The fields of a hand given as 31 face counts: faces in key order, their labels and counts."""
    m = 0
    for f in key_order:
        if hand[f] > 0:
            m += 1
    fields = np.empty((3, m + 1), np.int64)  # (one past the faces: `_fields_into` writes there)
    return _fields_into(hand, key_order, fields[0], fields[1], fields[2])


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _fields_into(hand, key_order, faces, labels, counts):
    """`hand_fields` into the given arrays (one more entry than the hand has faces, or 31); returns views."""
    j = 0
    for rank in range(key_order.shape[0]):  # written anyway, kept if held: no branch to mispredict per face
        f = key_order[rank]
        faces[j] = f
        labels[j] = rank + 1
        counts[j] = hand[f]
        j += hand[f] > 0
    return faces[:j], labels[:j], counts[:j]


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _fields_in_scratch(hand, key_order, ws):
    """A scratch space for the hand's search (ws if it is large enough) and the hand's fields in its W_FIELDS row."""
    n_states = 1
    for f in range(hand.shape[0]):
        n_states *= hand[f] + 1
    ws = _scratch_for(ws, n_states)
    row = ws[W_FIELDS]
    faces, labels, counts = _fields_into(hand, key_order, row[0:32], row[32:64], row[64:96])
    return ws, faces, labels, counts


@njit(cache=True, nogil=True, error_model="numpy")
def go_out_face_bits(hand, key_order, min_cards, edge_start, edge_label, edge_child, node_term, term_cards, whole):
    """`go_out_fields` for a hand of 31 face counts: bit f for face f; bit 31 for the whole hand (`whole`)."""
    return go_out_face_bits_in(
        hand,
        key_order,
        min_cards,
        edge_start,
        edge_label,
        edge_child,
        node_term,
        term_cards,
        whole,
        np.empty((SCRATCH_ROWS, 0), np.int64),
    )


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def go_out_face_bits_in(
    hand, key_order, min_cards, edge_start, edge_label, edge_child, node_term, term_cards, whole, ws
):
    """`go_out_face_bits` searching in the scratch space ws (`new_scratch`; a new one if the hand needs more)."""
    m = 0
    for f in range(hand.shape[0]):
        m += hand[f] > 0
    if m > MAX_FIELDS:
        return np.int64(-1)
    ws, faces, labels, counts = _fields_in_scratch(hand, key_order, ws)
    field_bits = go_out_fields(
        labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards, whole, ws
    )
    bits = ((field_bits >> m) & 1) << 31
    for j in range(m):
        bits |= ((field_bits >> j) & 1) << faces[j]
    return bits


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def go_out_face_start(hand, key_order, min_cards, edge_start, edge_label, edge_child, node_term, term_cards, ws):
    """Ready a go-out search of a hand after drawing (31 face counts, at most MAX_FIELDS faces) for
    `go_out_face`; returns the scratch space it runs in (ws, or a new one if the hand needs more)."""
    ws, _, labels, counts = _fields_in_scratch(hand, key_order, ws)
    go_out_start(labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards, ws)
    return ws


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def go_out_face(face, node_pack, ws):
    """After `go_out_face_start`: can the hand minus one card of `face` be laid out completely (the trie's
    node pack as given to the start, `solver.solver_trie`)."""
    m = ws[W_SMALL, _M_FIELDS]
    faces = ws[W_FIELDS]
    for j in range(m):
        if faces[j] == face:
            return go_out_field(j, node_pack, ws)
    return False


@njit(cache=True, nogil=True, error_model="numpy")
def best_layout_hand(
    hand, key_order, min_cards, edge_start, edge_label, edge_child, node_term, term_points, term_letters, term_cards
):
    """`best_layout_path` for a hand of 31 face counts; unused cards come back as faces."""
    faces, labels, counts = hand_fields(hand, key_order)
    used, terms, unused = best_layout_path(
        labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_points, term_letters, term_cards
    )
    for k in range(unused.shape[0]):
        unused[k] = faces[unused[k]]
    return used, terms, unused


@njit(cache=True, nogil=True, error_model="numpy")
def discard_table(
    hand, key_order, min_cards, edge_start, edge_label, edge_child, node_term, term_points, term_letters, term_cards
):
    """For a hand of 31 face counts after drawing: the best layout left by each discard.

    One `_best_table` search from every `hand - one card of a face` at once. Returns (faces,
    points used, words, longest, can go out), one entry per face in the hand (in key order).
    """
    faces, labels, counts = hand_fields(hand, key_order)
    m = faces.shape[0]
    strides, word_term, word_idx, word_packed, low_start, packed = _hand_search(
        labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards
    )
    full = strides[m] - 1
    roots = np.empty((2, m), np.int64)
    for j in range(m):
        roots[0, j] = full - strides[j]
        roots[1, j] = packed - (np.int64(1) << (5 * j))
    st_low, key, choice, cover = _best_table(
        roots[0],
        roots[1],
        counts,
        strides,
        low_start,
        word_idx,
        word_packed,
        word_term,
        term_points,
        term_letters,
    )
    used = np.zeros(m, np.int32)
    words = np.zeros(m, np.int32)
    longest = np.zeros(m, np.int32)
    can_go_out = np.zeros(m, np.bool_)
    for j in range(m):
        s = roots[0, j]
        used[j] = key[s] >> 32
        words[j] = (key[s] >> 16) & 0xFFFF
        longest[j] = key[s] & 0xFFFF
        can_go_out[j] = cover[s] != 0
    return faces, used, words, longest, can_go_out


@njit(cache=True, nogil=True, error_model="numpy")
def draw_discard_tables(
    hand,
    drawn,
    key_order,
    min_cards,
    edge_start,
    edge_label,
    edge_child,
    node_term,
    term_points,
    term_letters,
    term_cards,
    face_points,
):
    """`discard_table` of `hand` plus one card of each face in `drawn` (-1: nothing added), by face.

    Row i answers `hand + drawn[i]`; its columns are the faces in that hand, ascending, then -1
    padding. Returns (faces, score: points used minus unused, words, longest, goes out), each an
    array of shape (len(drawn), MAX_FIELDS).
    """
    rows = drawn.shape[0]
    faces = np.full((rows, MAX_FIELDS), -1, np.int64)
    score = np.zeros((rows, MAX_FIELDS), np.int64)
    words = np.zeros((rows, MAX_FIELDS), np.int64)
    longest = np.zeros((rows, MAX_FIELDS), np.int64)
    goes_out = np.zeros((rows, MAX_FIELDS), np.bool_)
    work = hand.copy()
    for i in range(rows):
        if drawn[i] >= 0:
            work[drawn[i]] += 1
        total = 0
        for f in range(work.shape[0]):
            total += face_points[f] * work[f]
        row_faces, used, row_words, row_longest, cover = discard_table(
            work,
            key_order,
            min_cards,
            edge_start,
            edge_label,
            edge_child,
            node_term,
            term_points,
            term_letters,
            term_cards,
        )
        order = np.argsort(row_faces)
        for j in range(order.shape[0]):
            k = order[j]
            rest = total - face_points[row_faces[k]]
            faces[i, j] = row_faces[k]
            score[i, j] = 2 * np.int64(used[k]) - rest
            words[i, j] = row_words[k]
            longest[i, j] = row_longest[k]
            goes_out[i, j] = cover[k] and rest > 0
        if drawn[i] >= 0:
            work[drawn[i]] -= 1
    return faces, score, words, longest, goes_out


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def layout_front_path(
    labels,
    counts,
    min_cards,
    full_only,
    edge_start,
    edge_label,
    edge_child,
    node_term,
    term_points,
    term_letters,
    term_cards,
    field_points,
    slack,
    by_longest,
    ws,
):
    """The Pareto front of the hand's layouts over (points used, longest word, words).

    Exactly the non-dominated (used, longest, words) triples, one layout each, ordered by
    used, then longest, then words, all descending. Returns (used, longest, words,
    term offsets, terms, unused offsets, unused fields): layout i lays terms
    [term_off[i], term_off[i + 1]) and leaves the fields [unused_off[i], unused_off[i + 1]).

    The search: each state s (a sub-multiset reached from the hand by laying words with
    the lowest card, or leaving it unused) has a table over cells (longest L, words W) of
    the most points used by a layout of s, with its witness: the word laid with the
    lowest card (-1: left unused) and the child state's cell. A state's table is built
    from its children's: the lowest card unused (the child's cells as they are), then
    each word in index order (the child's cells by L, then W, shifted to
    (max(L, letters), W + 1)); only a strict gain replaces a cell, so each cell keeps the
    first layout found. `full_only`: no card is left unused.

    Why it is fast: a state keeps only the cells no other cell of it beats (one with
    L' >= L, W' >= W and strictly more points); they are few, listed in an arena in
    (L, W) order. Dropping the beaten cells changes no cell that a front layout passes
    through, nor its witness. If an option giving a parent cell its value came from a
    beaten child cell, the beating child cell under the same word (or left-unused step)
    would give strictly more points to a parent cell with at least as long a word and as
    many words: the parent cell would be beaten, or not hold that value. So, by
    induction down from the front's cells (which no cell even matches), the cells on a
    front layout are unbeaten in the full search, their values and first winning options
    come from unbeaten child cells only, and those are kept, with their values, in the
    same order; the values of beaten cells can only drop, so they stay beaten and the
    front is the same. States are built children first, one dense scratch table at a time.

    `slack` >= 0 (the automatic rule, with bonuses worth at most `slack` points in all;
    `field_points`: each field's card points): only the front's layouts that rule can pick,
    those using at least U - slack // 2 points, U the most any layout uses (its score is
    2 * used - hand points, so a layout using fewer loses to the best one whatever bonuses
    it wins). The sweep down keeps, per state, the most points the words laid above it use
    (`outside`, so U = outside[0]) and the state's card points; the sweep (against the most points of a
    layout seen so far, when cards may be left unused) and the build skip the states, and the build
    drops the cells, whose layouts cannot use that many: what it keeps is built
    exactly as in the full search (a dropped option scores below every kept cell it could
    compete with), so the layouts it returns are the full front's, with the same words.
    `slack` < 0: the whole front. ws: scratch space (`new_scratch`; a new one if the hand needs more).
    The arrays returned are views of ws where they fit: read them before the next search in ws.

    `by_longest` (with `slack` >= 0, for a rule whose only bonus is the longest word's, and not negative):
    the cells are by L alone, each holding the most (points used, words), compared in that order (one value:
    used * 32 + W). That rule's key, (score + bonus, L, W), grows with L and with (used, W), so of the layouts
    with one L it can only pick the best by (used, W), and a cell beaten by one with L' >= L and a better
    (used, W) never. The argument above, over these cells, keeps every cell on the picked layout and its first
    winning options in the same order: the layouts returned are those of the full front (same words) that the
    rule can pick, the one it picks among them, with fewer cells to merge per state.
    """
    m = labels.shape[0]
    strides = _strides(counts)
    n_states = strides[m]
    ws = _scratch_for(ws, n_states)
    word_term, word_idx, word_packed, word_low = hand_words(
        labels, counts, strides, min_cards, edge_start, edge_label, edge_child, node_term, term_cards, ws
    )
    low_start, guard = _low_starts(word_low, m, ws)
    packed = guard
    n_cards = 0
    for j in range(m):
        packed += counts[j] << (5 * j)
        n_cards += counts[j]
    max_long = 0
    for w in range(word_term.shape[0]):
        if term_letters[word_term[w]] > max_long:
            max_long = term_letters[word_term[w]]
    n_long = max_long + 1
    n_words = n_cards // min_cards + 1  # the values W takes
    # The table's W axis: none when W is folded into the value (`by_longest`: value = used * 32 + W, so a word
    # adds its points << 5 and one word, and the points used are value >> vshift).
    by_longest = by_longest and slack >= 0
    n_wcells = 1 if by_longest else n_words
    wstep = 0 if by_longest else 1
    vshift = 5 if by_longest else 0
    n_cells = n_long * n_wcells
    full = n_states - 1

    # The states the search reaches from the whole hand: a child has a smaller index than
    # its parent, so one sweep down marks them (no recursion: its calls cost more than the
    # work), and a sweep up builds them children first. The sweep down also lists each
    # state's words (positions k in the word list of the words that fit, in order) and lowest
    # field, so that the fit tests run once. It goes from one reached state to the next by the
    # highest bit left in a bit set of them (a test per state index was a branch per index, which
    # the processor cannot predict), and updates the children without branches. Word data is copied
    # into one block (reading the packed forms and indices from the walk's rows instead was 1.3-1.9%
    # slower in engine_ab.py).
    # (Working arrays are rows of the scratch space ws: at small hands allocations dominate.)
    n_all = word_idx.shape[0]
    o_packed = ws[W_FRONT_WORDS]
    o_idx = ws[W_FRONT_WORDS + 1]
    o_points = ws[W_FRONT_WORDS + 2]
    o_letters = ws[W_FRONT_WORDS + 3]
    for k in range(n_all):
        o_packed[k] = word_packed[k]
        o_idx[k] = word_idx[k]
        o_points[k] = term_points[word_term[k]]
        o_letters[k] = term_letters[word_term[k]]
    st_buf = ws[W_FRONT_STATES : W_FRONT_STATES + 9]
    outside = st_buf[7]  # the most points the words laid above state s use
    cards_in = st_buf[8]  # state s's card points
    outside[:n_states] = -1  # (-1: not reached yet)
    outside[full] = 0
    cards_in[full] = 0
    for j in range(m):
        cards_in[full] += field_points[j] * counts[j]
    st_packed = st_buf[0]
    st_low = st_buf[1]
    e_off = st_buf[2]  # state s's words: edges [e_off[s], e_end[s])
    e_end = st_buf[3]
    built = st_buf[4]  # the reached states, from the whole hand down
    st_off = st_buf[5]  # state s's kept cells: arena rows [st_off[s], st_off[s] + st_cnt[s])
    st_cnt = st_buf[6]
    n_built = 0
    e_cap = 4 * n_states + 64
    edge = _int32_rows(ws, W_FRONT_EDGES, 2, e_cap)
    n_edges = 0
    st_packed[full] = packed
    reach = ws[W_FRONT_REACH, : (n_states + 63) >> 6].view(np.uint64)  # state s: bit s & 63 of word s >> 6
    reach[:] = 0
    reach[full >> 6] = np.uint64(1) << np.uint64(full & 63)
    # Pruning as it goes (the automatic rule, a player who may leave cards unused): laying the words
    # above a state and leaving its cards unused is a layout, so `best`, the most points of those seen,
    # is at most U, and a state whose layouts use fewer than best - slack // 2 points cannot be on a
    # layout the rule keeps; its children are not reached through it. A child's `outside` may then be
    # short of the whole search's, but only where the whole one is too low to keep it as well.
    best = np.int64(0)
    bar = np.int64(slack // 2) if slack >= 0 and not full_only else np.int64(1) << 40
    reached_empty = False
    word = full >> 6
    while word >= 0:
        bits = reach[word]
        if bits == 0:
            word -= 1
            continue
        b = 63 - leading_zeros(bits)
        s = (word << 6) + b
        if s == 0:
            reached_empty = True
            break
        reach[word] = bits ^ (np.uint64(1) << np.uint64(b))
        if outside[s] + cards_in[s] < best - bar:
            st_cnt[s] = 0  # (the build never reaches s: only its parents read this)
            continue
        built[n_built] = s
        n_built += 1
        sp = st_packed[s]
        low = trailing_zeros(sp ^ guard) // 5  # the lowest field left (its lane's bits are the lowest set)
        st_low[s] = low
        out_s = outside[s]
        if not full_only:
            r = s - strides[low]
            was = outside[r]
            outside[r] = was if was > out_s else out_s
            cards_in[r] = cards_in[s] - field_points[low]
            reach[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
            st_packed[r] = sp - (np.int64(1) << (5 * low))
        if n_edges + low_start[low + 1] - low_start[low] > e_cap:
            e_cap = 2 * e_cap + low_start[low + 1] - low_start[low]
            edge = _grow(edge, e_cap, n_edges)
        e_off[s] = n_edges
        for k in range(low_start[low], low_start[low + 1]):
            edge[n_edges] = k
            n_edges += ((sp - o_packed[k]) & guard) == guard
        e_end[s] = n_edges
        for e in range(e_off[s], n_edges):
            k = edge[e]
            r = s - o_idx[k]
            here = out_s + o_points[k]
            was = outside[r]
            outside[r] = was if was > here else here
            best = best if best > here else here
            cards_in[r] = cards_in[s] - o_points[k]
            reach[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
            st_packed[r] = sp - o_packed[k]
    floor = np.int64(-1)  # the fewest points a kept layout uses
    if slack >= 0 and reached_empty:
        floor = outside[0] - slack // 2

    # Arena of the kept cells, by state, each state's by L then W. A row: points used, L, W,
    # and the witness: the word laid with the lowest card (-1: left unused), the child
    # state's cell (its row).
    cap = max(4 * n_cells + 64, (16 * ws.shape[1]) // 5)  # the arena's rows of ws, or a new one
    arena = _int32_rows(ws, W_FRONT_ARENA, 8, 5 * cap)  # row i at [5 * i, 5 * i + 5)
    arena[0] = 0  # the empty state: no points, no word
    arena[1] = 0
    arena[2] = 0
    arena[3] = -1
    arena[4] = -1
    st_off[0] = 0
    st_cnt[0] = 1
    n_arena = 1

    # Dense scratch table of the state being built (all -1 between states) and the list of
    # its filled cells (few: cheaper to sort and compare than sweeping the table).
    front_cells = _int32_rows(ws, W_FRONT_CELLS, 1, 4 * n_cells + (n_long + 1) * (n_wcells + 1))
    val = front_cells[:n_cells]
    val[:] = -1
    sch = front_cells[n_cells : 2 * n_cells]
    schild = front_cells[2 * n_cells : 3 * n_cells]
    touched = front_cells[3 * n_cells : 4 * n_cells]
    for q in range(n_built - 1, -1, -1):
        s = built[q]
        n_touch = 0
        if s != full and outside[s] + cards_in[s] < floor:  # no layout through s uses enough points
            st_off[s] = n_arena
            st_cnt[s] = 0
            continue
        if not full_only:
            r = s - strides[st_low[s]]
            off = st_off[r]
            for i in range(off, off + st_cnt[r]):
                c = arena[5 * i + 1] * n_wcells + arena[5 * i + 2]
                val[c] = arena[5 * i]
                sch[c] = -1
                schild[c] = i
                touched[n_touch] = c
                n_touch += 1
        for e in range(e_off[s], e_end[s]):
            k = edge[e]
            r = s - o_idx[k]
            cnt = st_cnt[r]
            if cnt == 0:
                continue
            pw = (o_points[k] << vshift) + 1 - wstep  # what the word adds to a value
            lw = o_letters[k]
            off = st_off[r]
            for i in range(off, off + cnt):
                L2 = arena[5 * i + 1]
                L = L2 if lw < L2 else lw
                c = L * n_wcells + arena[5 * i + 2] + wstep
                u = arena[5 * i] + pw
                v = val[c]
                if u > v:
                    if v < 0:
                        touched[n_touch] = c
                        n_touch += 1
                    val[c] = u
                    sch[c] = k
                    schild[c] = i
        if s == full:
            break
        # Keep the unbeaten cells, in (L, W) order: sort the filled cells by index (insertion
        # sort, the lists are short); only a later cell can have L' >= L and W' >= W.
        for i in range(1, n_touch):
            c = touched[i]
            j = i - 1
            while j >= 0 and touched[j] > c:
                touched[j + 1] = touched[j]
                j -= 1
            touched[j + 1] = c
        if n_arena + n_touch > cap:
            cap = 2 * cap + n_touch
            arena = _grow(arena, 5 * cap, 5 * n_arena)
        st_off[s] = n_arena
        for i in range(n_touch):
            c = touched[i]
            v = val[c]
            W = c % n_wcells
            beaten = False
            for j in range(i + 1, n_touch):
                c2 = touched[j]
                if val[c2] > v and c2 % n_wcells >= W:
                    beaten = True
                    break
            if not beaten and (v >> vshift) + outside[s] >= floor:
                arena[5 * n_arena] = v
                arena[5 * n_arena + 1] = c // n_wcells
                arena[5 * n_arena + 2] = W
                arena[5 * n_arena + 3] = sch[c]
                arena[5 * n_arena + 4] = schild[c]
                n_arena += 1
        for i in range(n_touch):
            val[touched[i]] = -1
        st_cnt[s] = n_arena - st_off[s]
    if full == 0:
        val[0] = 0
        sch[0] = -1
        schild[0] = 0

    # Non-dominated cells of the whole hand: a better value than every cell with at least as long
    # a word and as many words (W: the cell's, or from the value when it is folded in).
    above = front_cells[4 * n_cells :]  # max value over L2 >= L, W2 >= W
    above[:] = -1
    keys = ws[W_FRONT_KEYS, :n_cells] if ws.shape[1] >= n_cells else np.empty(n_cells, np.int64)
    n_front = 0
    for L in range(n_long - 1, -1, -1):
        for Wc in range(n_wcells - 1, -1, -1):
            v = val[L * n_wcells + Wc]
            a = above[(L + 1) * (n_wcells + 1) + Wc]
            b = above[L * (n_wcells + 1) + Wc + 1]
            beat = a if a > b else b
            if v >= 0 and v > beat and (v >> vshift) >= floor:
                W = v & 31 if by_longest else Wc
                keys[n_front] = (np.int64(v >> vshift) * n_long + L) * n_words + W
                n_front += 1
            above[L * (n_wcells + 1) + Wc] = v if v > beat else beat
    for i in range(1, n_front):  # largest key first (insertion sort: fronts are short)
        key = keys[i]
        j = i - 1
        while j >= 0 and keys[j] < key:
            keys[j + 1] = keys[j]
            j -= 1
        keys[j + 1] = key
    # The results, in ws (rows W_FRONT_OUT..) when they fit: valid until the next search in ws.
    n_out = n_front * (n_cards + 1)
    out = _int32_rows(ws, W_FRONT_OUT, 2, 5 * n_front + 2 + 2 * n_out)
    used = out[:n_front]
    longest = out[n_front : 2 * n_front]
    words = out[2 * n_front : 3 * n_front]
    term_off = out[3 * n_front : 4 * n_front + 1]
    unused_off = out[4 * n_front + 1 : 5 * n_front + 2]
    terms = out[5 * n_front + 2 : 5 * n_front + 2 + n_out]
    unused = out[5 * n_front + 2 + n_out :]
    term_off[0] = 0
    unused_off[0] = 0
    n_terms = 0
    n_unused = 0
    for i in range(n_front):
        key = keys[i]
        W = key % n_words
        L = (key // n_words) % n_long
        used[i] = key // (n_words * n_long)
        longest[i] = L
        words[i] = W
        c = L * n_wcells + W * wstep
        ch = sch[c]
        cell = schild[c]
        s = full
        while s != 0:
            if ch >= 0:
                terms[n_terms] = word_term[ch]
                n_terms += 1
                s -= word_idx[ch]
            else:
                j = 0
                while (s // strides[j]) % (counts[j] + 1) == 0:
                    j += 1
                unused[n_unused] = j
                n_unused += 1
                s -= strides[j]
            ch = arena[5 * cell + 3]
            cell = arena[5 * cell + 4]
        term_off[i + 1] = n_terms
        unused_off[i + 1] = n_unused
    return used, longest, words, term_off, terms[:n_terms], unused_off, unused[:n_unused]


@njit(cache=True, nogil=True, error_model="numpy")
def _grow(a, cap, n):
    """`a`'s first n entries in a new array of cap entries."""
    b = np.empty(cap, a.dtype)
    b[:n] = a[:n]
    return b


@njit(cache=True, nogil=True, error_model="numpy")
def layout_front_hand(
    hand,
    key_order,
    min_cards,
    full_only,
    edge_start,
    edge_label,
    edge_child,
    node_term,
    term_points,
    term_letters,
    term_cards,
    face_points,
    slack,
    by_longest,
):
    """`layout_front_path` for a hand of 31 face counts (`face_points`: each face's card points; `slack`
    and `by_longest` as there); unused cards come back as faces."""
    return layout_front_hand_in(
        hand,
        key_order,
        min_cards,
        full_only,
        edge_start,
        edge_label,
        edge_child,
        node_term,
        term_points,
        term_letters,
        term_cards,
        face_points,
        slack,
        by_longest,
        np.empty((SCRATCH_ROWS, 0), np.int64),
    )


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def layout_front_hand_in(
    hand,
    key_order,
    min_cards,
    full_only,
    edge_start,
    edge_label,
    edge_child,
    node_term,
    term_points,
    term_letters,
    term_cards,
    face_points,
    slack,
    by_longest,
    ws,
):
    """`layout_front_hand` searching in the scratch space ws (`new_scratch`; a new one if the hand needs more);
    its results are views of ws, valid until the next search in it."""
    ws, faces, labels, counts = _fields_in_scratch(hand, key_order, ws)
    field_points = ws[W_FIELDS, 96 : 96 + faces.shape[0]]
    for j in range(faces.shape[0]):
        field_points[j] = face_points[faces[j]]
    used, longest, words, term_off, terms, unused_off, unused = layout_front_path(
        labels,
        counts,
        min_cards,
        full_only,
        edge_start,
        edge_label,
        edge_child,
        node_term,
        term_points,
        term_letters,
        term_cards,
        field_points,
        slack,
        by_longest,
        ws,
    )
    for k in range(unused.shape[0]):
        unused[k] = faces[unused[k]]
    return used, longest, words, term_off, terms, unused_off, unused
