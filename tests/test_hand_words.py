"""The solver's word listing (`solver_kernel.hand_words`, on the label-mask trie) against a plain walk.

Every layout search starts from this list, grouped by each word's lowest field, and its order decides
ties, so the compiled walk must list exactly the words of the plain walk below (the dictionary's own
trie, edges merged with the hand's fields), in the same order within each lowest field, and the fields
in order (the compiled walk goes field by field; the plain one from the root, so it is grouped here).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from quiddler_env.core.cards import COUNTS, NUM_FACES
from quiddler_env.core.dictionary import KEY_ORDER, load_dictionary
from quiddler_env.core.solver import solver_trie
from quiddler_env.core.solver_kernel import MAX_FIELDS, _own_scratch, _strides, hand_fields, hand_words

DICTIONARY = load_dictionary()
DICTIONARY.ensure_index()
KEYS = np.asarray(KEY_ORDER, dtype=np.int64)


def plain_hand_words(labels, counts, strides, min_cards):
    """Depth-first over (next field, node): at each node the later fields in label order, each as often as
    the hand holds it; a state is resumed (pushed) after every card taken, the last pushed first. The
    words as (term, state index, packed form, lowest field), grouped by lowest field."""
    d = DICTIONARY
    out = []
    stack = [(0, 0, 0, 0, -1)]
    m = len(labels)
    while stack:
        start, node0, packed0, idx0, low0 = stack.pop()
        for j in range(start, m):
            node = d.child(node0, int(KEYS[labels[j] - 1])) if node0 >= 0 else -1
            if node < 0:
                continue
            packed, idx, low = packed0, idx0, (low0 if low0 >= 0 else j)
            for rep in range(counts[j]):
                if rep > 0:
                    node = d.child(node, int(KEYS[labels[j] - 1]))
                    if node < 0:
                        break
                packed += 1 << (5 * j)
                idx += int(strides[j])
                t = int(d.node_term[node])
                if t >= 0 and d.term_cards[t] >= min_cards:
                    out.append((t, idx, packed, low))
                stack.append((j + 1, node, packed, idx, low))
    return sorted(out, key=lambda word: word[3])  # grouped by lowest field (a stable sort: order kept)


def compiled_hand_words(hand, min_cards):
    _, labels, counts = hand_fields(np.asarray(hand, dtype=np.int64), KEYS)
    strides = _strides(counts)
    edge_start, node_labels, edge_child, node_term = solver_trie(DICTIONARY)
    words = hand_words(
        labels,
        counts,
        strides,
        min_cards,
        edge_start,
        node_labels,
        edge_child,
        node_term,
        DICTIONARY.term_cards,
        _own_scratch(strides[-1]),
    )
    return labels, counts, strides, list(zip(*(w.tolist() for w in words), strict=True))


hands = st.lists(st.integers(0, NUM_FACES - 1), min_size=1, max_size=11).map(
    lambda faces: [min(faces.count(f), COUNTS[f]) for f in range(NUM_FACES)]
)


@settings(max_examples=300, deadline=None)
@given(hand=hands, min_cards=st.sampled_from([1, 2]))
def test_hand_words_lists_the_plain_walks_words_in_its_order(hand, min_cards):
    if sum(1 for c in hand if c) > MAX_FIELDS:
        return
    labels, counts, strides, got = compiled_hand_words(hand, min_cards)
    assert got == plain_hand_words(labels.tolist(), counts.tolist(), strides, min_cards)


def test_dealt_hands_have_words_and_the_lists_agree():
    rng = np.random.default_rng(0)
    deck = [f for f in range(NUM_FACES) for _ in range(COUNTS[f])]
    found = 0
    for _ in range(300):
        hand = [0] * NUM_FACES
        for f in rng.choice(deck, size=int(rng.integers(3, 12)), replace=False):
            hand[f] += 1
        labels, counts, strides, got = compiled_hand_words(hand, 2)
        assert got == plain_hand_words(labels.tolist(), counts.tolist(), strides, 2)
        found += len(got)
    assert found > 3000  # dealt hands hold many words: the comparison is not of empty lists
