"""The compiled heart of the hand solver (numba), one call per hand.

Inputs describe a hand as *fields*: its distinct faces in the index's key order,
each with its rank label (rank + 1, as in the index codes) and count. A state is
a sub-multiset of the hand, indexed in mixed radix. The kernels

1. walk the dictionary trie (CSR arrays) along the hand's sub-multisets, in key
   order, to list every word multiset the hand contains (`hand_words`);
2. search layouts depth-first with a memo over states: the lowest remaining card
   is either left unused or starts a word whose lowest card it is, so each layout
   is built once. `_cover` asks "can every card be laid" and stops at the first
   complete layout (the go-out mask); `_best` finds the best layout (points used,
   then words, then longest word); `_front` keeps, per state, a table over (longest
   word, number of words) of the most points used, from which `layout_front_path`
   reads the Pareto front of the hand's layouts (`full_only`: every card laid).

`go_out_face_bits` answers the engine's per-step question for a hand after
drawing, `best_layout_hand` the round-end layout, `discard_table` the best layout
left by each discard (for the bots), `layout_front_hand` the layouts a player lays from.

A word's fit in a state is one subtraction on a packed form (5 bits per field:
4 for the count, 1 guard that a borrow clears), so hands have at most 12 fields.
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAX_FIELDS = 12


@njit(cache=True, nogil=True)
def _child(edge_start, edge_label, edge_child, node, label):
    lo = edge_start[node]
    hi = edge_start[node + 1]
    # Labels are sorted: binary search (the root has 31 edges, inner nodes few).
    while lo < hi:
        mid = (lo + hi) >> 1
        v = edge_label[mid]
        if v < label:
            lo = mid + 1
        elif v > label:
            hi = mid
        else:
            return edge_child[mid]
    return -1


@njit(cache=True, nogil=True)
def hand_words(labels, counts, strides, min_cards, edge_start, edge_label, edge_child, node_term, term_cards):
    """Every word multiset in the hand: (term id, state index, packed form, lowest field) arrays."""
    m = labels.shape[0]
    n_states = strides[m]
    cap = n_states + 1
    word_term = np.empty(cap, np.int32)
    word_idx = np.empty(cap, np.int64)
    word_packed = np.empty(cap, np.int64)
    word_low = np.empty(cap, np.int32)
    n_words = 0
    st_start = np.empty(cap, np.int32)
    st_node = np.empty(cap, np.int32)
    st_packed = np.empty(cap, np.int64)
    st_idx = np.empty(cap, np.int64)
    st_low = np.empty(cap, np.int32)
    sp = 1
    st_start[0] = 0
    st_node[0] = 0
    st_packed[0] = 0
    st_idx[0] = 0
    st_low[0] = -1
    while sp > 0:
        sp -= 1
        start = st_start[sp]
        node0 = st_node[sp]
        packed0 = st_packed[sp]
        idx0 = st_idx[sp]
        low0 = st_low[sp]
        for j in range(start, m):
            node = node0
            packed = packed0
            idx = idx0
            low = low0 if low0 >= 0 else j
            unit = np.int64(1) << (5 * j)
            for _ in range(counts[j]):
                node = _child(edge_start, edge_label, edge_child, node, labels[j])
                if node < 0:
                    break
                packed += unit
                idx += strides[j]
                t = node_term[node]
                if t >= 0 and term_cards[t] >= min_cards:
                    word_term[n_words] = t
                    word_idx[n_words] = idx
                    word_packed[n_words] = packed
                    word_low[n_words] = low
                    n_words += 1
                if j + 1 < m:
                    st_start[sp] = j + 1
                    st_node[sp] = node
                    st_packed[sp] = packed
                    st_idx[sp] = idx
                    st_low[sp] = low
                    sp += 1

    return word_term[:n_words], word_idx[:n_words], word_packed[:n_words], word_low[:n_words]


@njit(cache=True, nogil=True)
def _group_by_low(word_low, m):
    """Word order grouped by lowest field (counting sort, order kept), and the guard mask."""
    n_words = word_low.shape[0]
    low_start = np.zeros(m + 1, np.int32)
    for w in range(n_words):
        low_start[word_low[w] + 1] += 1
    for j in range(m):
        low_start[j + 1] += low_start[j]
    fill = low_start.copy()
    order = np.empty(n_words, np.int32)
    for w in range(n_words):
        order[fill[word_low[w]]] = w
        fill[word_low[w]] += 1
    guard = np.int64(0)
    for j in range(m):
        guard |= np.int64(16) << (5 * j)
    return low_start, order, guard


@njit(cache=True, nogil=True)
def _strides(counts):
    m = counts.shape[0]
    strides = np.empty(m + 1, np.int64)
    strides[0] = 1
    for j in range(m):
        strides[j + 1] = strides[j] * (counts[j] + 1)
    return strides


@njit(cache=True, nogil=True)
def _cover(s, packed, guard, low_start, order, word_packed, word_idx, memo):
    """Can sub-multiset s (packed form `packed`) be laid out completely? Depth-first, memoised."""
    if s == 0:
        return True
    if memo[s] != 0:
        return memo[s] == 1
    rest = packed ^ guard
    low = 0
    while (rest >> (5 * low)) & 15 == 0:
        low += 1
    for k in range(low_start[low], low_start[low + 1]):
        w = order[k]
        r = packed - word_packed[w]
        if (r & guard) == guard and _cover(s - word_idx[w], r, guard, low_start, order, word_packed, word_idx, memo):
            memo[s] = 1
            return True
    memo[s] = 2
    return False


@njit(cache=True, nogil=True)
def go_out_fields(labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards):
    """For a hand after drawing: bit j set iff the hand minus one card of field j can be laid out.

    Cheaper than the full table: a depth-first cover search that stops at the first
    complete layout, sharing its memo between the discards.
    Bit m (one past the fields) is set iff the whole hand can be laid out.
    """
    m = labels.shape[0]
    strides = _strides(counts)
    word_term, word_idx, word_packed, word_low = hand_words(
        labels, counts, strides, min_cards, edge_start, edge_label, edge_child, node_term, term_cards
    )
    low_start, order, guard = _group_by_low(word_low, m)
    memo = np.zeros(strides[m], np.int8)
    full = strides[m] - 1
    packed = guard
    for j in range(m):
        packed += counts[j] << (5 * j)
    bits = np.int64(0)
    for j in range(m):
        if _cover(
            full - strides[j], packed - (np.int64(1) << (5 * j)), guard, low_start, order, word_packed, word_idx, memo
        ):
            bits |= np.int64(1) << j
    if _cover(full, packed, guard, low_start, order, word_packed, word_idx, memo):
        bits |= np.int64(1) << m
    return bits


@njit(cache=True, nogil=True)
def _best(
    s,
    packed,
    guard,
    strides,
    low_start,
    order,
    word_packed,
    word_idx,
    word_term,
    term_points,
    term_letters,
    best_used,
    best_words,
    best_long,
    choice,
    nxt,
    seen,
):
    """Fill the best layout of state s (and the states it needs), depth-first with a memo."""
    if s == 0 or seen[s]:
        return
    rest = packed ^ guard
    low = 0
    while (rest >> (5 * low)) & 15 == 0:
        low += 1
    r = s - strides[low]
    rp = packed - (np.int64(1) << (5 * low))
    _best(
        r,
        rp,
        guard,
        strides,
        low_start,
        order,
        word_packed,
        word_idx,
        word_term,
        term_points,
        term_letters,
        best_used,
        best_words,
        best_long,
        choice,
        nxt,
        seen,
    )
    used = best_used[r]
    nw = best_words[r]
    lg = best_long[r]
    ch = -1
    nx = r
    for k in range(low_start[low], low_start[low + 1]):
        w = order[k]
        rp = packed - word_packed[w]
        if (rp & guard) != guard:
            continue
        r = s - word_idx[w]
        _best(
            r,
            rp,
            guard,
            strides,
            low_start,
            order,
            word_packed,
            word_idx,
            word_term,
            term_points,
            term_letters,
            best_used,
            best_words,
            best_long,
            choice,
            nxt,
            seen,
        )
        t = word_term[w]
        u2 = best_used[r] + term_points[t]
        w2 = best_words[r] + 1
        l2 = term_letters[t]
        if best_long[r] > l2:
            l2 = best_long[r]
        if u2 > used or (u2 == used and (w2 > nw or (w2 == nw and l2 > lg))):
            used = u2
            nw = w2
            lg = l2
            ch = w
            nx = r
    best_used[s] = used
    best_words[s] = nw
    best_long[s] = lg
    choice[s] = ch
    nxt[s] = nx
    seen[s] = True


@njit(cache=True, nogil=True)
def _search_state(labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards):
    """The words of a hand and empty memo arrays for `_best`, one slot per state."""
    m = labels.shape[0]
    strides = _strides(counts)
    n_states = strides[m]
    word_term, word_idx, word_packed, word_low = hand_words(
        labels, counts, strides, min_cards, edge_start, edge_label, edge_child, node_term, term_cards
    )
    low_start, order, guard = _group_by_low(word_low, m)
    packed = guard
    for j in range(m):
        packed += counts[j] << (5 * j)
    best_used = np.zeros(n_states, np.int32)
    best_words = np.zeros(n_states, np.int32)
    best_long = np.zeros(n_states, np.int32)
    choice = np.full(n_states, -1, np.int32)
    nxt = np.zeros(n_states, np.int64)
    seen = np.zeros(n_states, np.bool_)
    return (
        strides,
        word_term,
        word_idx,
        word_packed,
        low_start,
        order,
        guard,
        packed,
        best_used,
        best_words,
        best_long,
        choice,
        nxt,
        seen,
    )


@njit(cache=True, nogil=True)
def best_layout_path(
    labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_points, term_letters, term_cards
):
    """The best layout of the whole hand, searched depth-first from the full hand only.

    Returns (used points, terms of the words laid, fields of the unused cards).
    """
    m = labels.shape[0]
    (
        strides,
        word_term,
        word_idx,
        word_packed,
        low_start,
        order,
        guard,
        packed,
        best_used,
        best_words,
        best_long,
        choice,
        nxt,
        seen,
    ) = _search_state(labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards)
    full = strides[m] - 1
    _best(
        full,
        packed,
        guard,
        strides,
        low_start,
        order,
        word_packed,
        word_idx,
        word_term,
        term_points,
        term_letters,
        best_used,
        best_words,
        best_long,
        choice,
        nxt,
        seen,
    )
    terms = np.empty(m + 12, np.int32)
    unused = np.empty(m + 12, np.int32)
    n_terms = 0
    n_unused = 0
    s = full
    while s != 0:
        ch = choice[s]
        if ch >= 0:
            terms[n_terms] = word_term[ch]
            n_terms += 1
        else:
            diff = s - nxt[s]
            j = 0
            while strides[j] != diff:
                j += 1
            unused[n_unused] = j
            n_unused += 1
        s = nxt[s]
    return best_used[full], terms[:n_terms], unused[:n_unused]


@njit(cache=True, nogil=True)
def hand_fields(hand, key_order):
    """The fields of a hand given as 31 face counts: faces in key order, their labels and counts."""
    m = 0
    for f in key_order:
        if hand[f] > 0:
            m += 1
    faces = np.empty(m, np.int64)
    labels = np.empty(m, np.int64)
    counts = np.empty(m, np.int64)
    j = 0
    for rank in range(key_order.shape[0]):
        f = key_order[rank]
        if hand[f] > 0:
            faces[j] = f
            labels[j] = rank + 1
            counts[j] = hand[f]
            j += 1
    return faces, labels, counts


@njit(cache=True, nogil=True)
def go_out_face_bits(hand, key_order, min_cards, edge_start, edge_label, edge_child, node_term, term_cards):
    """`go_out_fields` for a hand of 31 face counts: bit f for face f; bit 31 for the whole hand."""
    faces, labels, counts = hand_fields(hand, key_order)
    m = faces.shape[0]
    if m > MAX_FIELDS:
        return np.int64(-1)
    field_bits = go_out_fields(labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards)
    bits = np.int64(0)
    for j in range(m):
        if (field_bits >> j) & 1:
            bits |= np.int64(1) << faces[j]
    if (field_bits >> m) & 1:
        bits |= np.int64(1) << 31
    return bits


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def discard_table(
    hand, key_order, min_cards, edge_start, edge_label, edge_child, node_term, term_points, term_letters, term_cards
):
    """For a hand of 31 face counts after drawing: the best layout left by each discard.

    The depth-first best-layout search runs from each `hand - one card of a face`,
    sharing one memo. Returns (faces, points used, words, longest, can go out), one
    entry per face in the hand (in key order).
    """
    faces, labels, counts = hand_fields(hand, key_order)
    m = faces.shape[0]
    (
        strides,
        word_term,
        word_idx,
        word_packed,
        low_start,
        order,
        guard,
        packed,
        best_used,
        best_words,
        best_long,
        choice,
        nxt,
        seen,
    ) = _search_state(labels, counts, min_cards, edge_start, edge_label, edge_child, node_term, term_cards)
    full = strides[m] - 1
    memo = np.zeros(full + 1, np.int8)
    used = np.zeros(m, np.int32)
    words = np.zeros(m, np.int32)
    longest = np.zeros(m, np.int32)
    cover = np.zeros(m, np.bool_)
    for j in range(m):
        s = full - strides[j]
        p = packed - (np.int64(1) << (5 * j))
        _best(
            s,
            p,
            guard,
            strides,
            low_start,
            order,
            word_packed,
            word_idx,
            word_term,
            term_points,
            term_letters,
            best_used,
            best_words,
            best_long,
            choice,
            nxt,
            seen,
        )
        used[j] = best_used[s]
        words[j] = best_words[s]
        longest[j] = best_long[s]
        cover[j] = _cover(s, p, guard, low_start, order, word_packed, word_idx, memo)
    return faces, used, words, longest, cover


@njit(cache=True, nogil=True)
def _front(
    s,
    packed,
    guard,
    strides,
    low_start,
    order,
    word_packed,
    word_idx,
    word_term,
    term_points,
    term_letters,
    full_only,
    n_words,
    n_cells,
    table,
    choice,
    child_long,
    top_long,
    top_words,
    seen,
):
    """Fill state s's table (longest L, words W) -> best points used, depth-first with a memo.

    Cell L * n_words + W of state s holds the most points used by a layout of s whose
    longest word has L letters and which has W words (-1: none), with its witness: the
    word laid with the lowest card (-1: left unused) and the child state's longest.
    Options are tried in the search order (lowest card unused, then each word in index
    order; the child's cells by longest, then words) and only a strict gain replaces a
    cell, so each cell keeps the first layout found. `full_only`: no card is left unused.
    """
    if seen[s]:
        return
    rest = packed ^ guard
    low = 0
    while (rest >> (5 * low)) & 15 == 0:
        low += 1
    base = s * n_cells
    tl = -1
    tw = -1
    if not full_only:
        r = s - strides[low]
        _front(
            r,
            packed - (np.int64(1) << (5 * low)),
            guard,
            strides,
            low_start,
            order,
            word_packed,
            word_idx,
            word_term,
            term_points,
            term_letters,
            full_only,
            n_words,
            n_cells,
            table,
            choice,
            child_long,
            top_long,
            top_words,
            seen,
        )
        rb = r * n_cells
        for L in range(top_long[r] + 1):
            for W in range(top_words[r] + 1):
                c = L * n_words + W
                v = table[rb + c]
                if v >= 0:
                    table[base + c] = v
                    choice[base + c] = -1
                    child_long[base + c] = L
        tl = top_long[r]
        tw = top_words[r]
    for k in range(low_start[low], low_start[low + 1]):
        w = order[k]
        rp = packed - word_packed[w]
        if (rp & guard) != guard:
            continue
        r = s - word_idx[w]
        _front(
            r,
            rp,
            guard,
            strides,
            low_start,
            order,
            word_packed,
            word_idx,
            word_term,
            term_points,
            term_letters,
            full_only,
            n_words,
            n_cells,
            table,
            choice,
            child_long,
            top_long,
            top_words,
            seen,
        )
        if top_long[r] < 0:
            continue
        t = word_term[w]
        pw = term_points[t]
        lw = term_letters[t]
        rb = r * n_cells
        for L2 in range(top_long[r] + 1):
            L = L2 if lw < L2 else lw
            for W2 in range(top_words[r] + 1):
                v = table[rb + L2 * n_words + W2]
                if v < 0:
                    continue
                u = v + pw
                c = base + L * n_words + W2 + 1
                if u > table[c]:
                    table[c] = u
                    choice[c] = w
                    child_long[c] = L2
                    if tl < L:
                        tl = L
                    if tw < W2 + 1:
                        tw = W2 + 1
    top_long[s] = tl
    top_words[s] = tw
    seen[s] = True


@njit(cache=True, nogil=True)
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
):
    """The Pareto front of the hand's layouts over (points used, longest word, words).

    Exactly the non-dominated (used, longest, words) triples, one layout each, ordered by
    used, then longest, then words, all descending. Returns (used, longest, words,
    term offsets, terms, unused offsets, unused fields): layout i lays terms
    [term_off[i], term_off[i + 1]) and leaves the fields [unused_off[i], unused_off[i + 1]).
    """
    m = labels.shape[0]
    strides = _strides(counts)
    n_states = strides[m]
    word_term, word_idx, word_packed, word_low = hand_words(
        labels, counts, strides, min_cards, edge_start, edge_label, edge_child, node_term, term_cards
    )
    low_start, order, guard = _group_by_low(word_low, m)
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
    n_words = n_cards // min_cards + 1
    n_cells = n_long * n_words
    table = np.full(n_states * n_cells, -1, np.int16)
    choice = np.full(n_states * n_cells, -1, np.int16)
    child_long = np.zeros(n_states * n_cells, np.int8)
    top_long = np.full(n_states, -1, np.int32)
    top_words = np.full(n_states, -1, np.int32)
    seen = np.zeros(n_states, np.bool_)
    table[0] = 0
    top_long[0] = 0
    top_words[0] = 0
    seen[0] = True
    full = n_states - 1
    _front(
        full,
        packed,
        guard,
        strides,
        low_start,
        order,
        word_packed,
        word_idx,
        word_term,
        term_points,
        term_letters,
        full_only,
        n_words,
        n_cells,
        table,
        choice,
        child_long,
        top_long,
        top_words,
        seen,
    )
    # Non-dominated cells: more used than every cell with at least as long a word and as many words.
    base = full * n_cells
    above = np.full((n_long + 1) * (n_words + 1), -1, np.int32)  # max used over L2 >= L, W2 >= W
    keys = np.empty(n_cells, np.int64)
    n_front = 0
    for L in range(n_long - 1, -1, -1):
        for W in range(n_words - 1, -1, -1):
            v = np.int32(table[base + L * n_words + W])
            a = above[(L + 1) * (n_words + 1) + W]
            b = above[L * (n_words + 1) + W + 1]
            beat = a if a > b else b
            if v >= 0 and v > beat:
                keys[n_front] = (np.int64(v) * n_long + L) * n_words + W
                n_front += 1
            above[L * (n_words + 1) + W] = v if v > beat else beat
    keys = np.sort(keys[:n_front])[::-1]
    used = np.empty(n_front, np.int32)
    longest = np.empty(n_front, np.int32)
    words = np.empty(n_front, np.int32)
    term_off = np.zeros(n_front + 1, np.int32)
    unused_off = np.zeros(n_front + 1, np.int32)
    terms = np.empty(n_front * (n_cards + 1), np.int32)
    unused = np.empty(n_front * (n_cards + 1), np.int32)
    n_terms = 0
    n_unused = 0
    for i in range(n_front):
        key = keys[i]
        W = key % n_words
        L = (key // n_words) % n_long
        used[i] = key // (n_words * n_long)
        longest[i] = L
        words[i] = W
        s = full
        while s != 0:
            c = s * n_cells + L * n_words + W
            ch = choice[c]
            if ch >= 0:
                terms[n_terms] = word_term[ch]
                n_terms += 1
                s -= word_idx[ch]
                W -= 1
            else:
                j = 0
                while (s // strides[j]) % (counts[j] + 1) == 0:
                    j += 1
                unused[n_unused] = j
                n_unused += 1
                s -= strides[j]
            L = child_long[c]
        term_off[i + 1] = n_terms
        unused_off[i + 1] = n_unused
    return used, longest, words, term_off, terms[:n_terms], unused_off, unused[:n_unused]


@njit(cache=True, nogil=True)
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
):
    """`layout_front_path` for a hand of 31 face counts; unused cards come back as faces."""
    faces, labels, counts = hand_fields(hand, key_order)
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
    )
    for k in range(unused.shape[0]):
        unused[k] = faces[unused[k]]
    return used, longest, words, term_off, terms, unused_off, unused
