"""Solitaire (RULES.md section 8): the one-player game, as pure rules.

The rules as this engine plays them, with the points the rule book leaves open
decided here:

- **Deal.** 48 cards from a shuffled 118-card deck (the other 70 stay out of play):
  five face-down cards to each of the 8 piles, one at a time round the piles, then
  one face-up card on each pile. A stacked deal (`reset(piles=...)`) gives the 8
  piles directly, top card first.
- **Piles.** A pile is a stack whose top card is face up and every card below it
  face down. Whenever a pile loses its face-up card and still has cards, the next
  one is turned up at once, so "the top of a non-empty pile" is always face up.
- **Word move** (a non-empty set of piles, as a bitmask: bit p = pile p). The top
  cards of those piles, in some order, spell a word of the dictionary, and the word
  has at least `config.min_word_cards` cards (by default a lone IN is not a word).
  The cards are removed, their points are scored, and each of those piles turns up
  its next card.
- **Restart move** (from pile `src` to pile `dst`). `dst` is empty, and `src` has a
  face-down card under its top. The top card of `src` moves to `dst` (face up) and
  `src` turns up its next card. A pile whose only card is its face-up top cannot
  give it away: the move would only relabel a pile, and forbidding it keeps every
  game finite (each restart turns up one of the 40 face-down cards). Restarting is
  allowed at any later move, not only right after the pile ran out.
- **End.** The game is over when no move is legal. It is **won** when all 48 cards
  are laid in words, **lost** otherwise: then no set of face-up tops spells a word
  *and* no restart is possible (no pile is empty, or no other pile has a face-down
  card left). While a restart is possible the game goes on even when no word can
  be formed now, since a restart turns up a card that may make one. The engine
  never looks at face-down cards to decide the end; a player who digs with restarts
  and still finds no word ends the game when the restarts run out.
- **Score.** The points of the cards laid in words (no penalty for cards left).

Every game ends within `MAX_MOVES` moves: at most 48 word moves (one card each with
`min_word_cards=1`) and at most 40 restarts.

The action table (one fixed `Discrete(NUM_ACTIONS)`, masked):

| ids | move | legal when |
|---|---|---|
| 0 .. 254 | word from the piles of bitmask `id + 1` | those piles' tops spell a word |
| 255 .. 310 | restart: top of `src` to empty `dst` (`src != dst`, 56 pairs, `src`-major) | `dst` empty, `src` has a face-down card |
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from .cards import COUNTS, DECK_SIZE, FACES, NUM_FACES, POINTS, new_deck, parse_hand
from .config import QuiddlerConfig
from .dictionary import KEY_RANK, Dictionary, load_dictionary
from .game import IllegalActionError

# -- game facts, declared once ------------------------------------------------------------

NUM_PILES = 8
FACE_DOWN_PER_PILE = 5
PILE_CARDS = FACE_DOWN_PER_PILE + 1  # 6 dealt to each pile
CARDS_IN_PLAY = NUM_PILES * PILE_CARDS  # 48
NUM_WORD_ACTIONS = (1 << NUM_PILES) - 1  # 255 non-empty pile sets
RESTART_BASE = NUM_WORD_ACTIONS
NUM_RESTART_ACTIONS = NUM_PILES * (NUM_PILES - 1)  # 56 ordered (src, dst) pairs
NUM_ACTIONS = RESTART_BASE + NUM_RESTART_ACTIONS  # 311
MAX_MOVES = CARDS_IN_PLAY + NUM_PILES * FACE_DOWN_PER_PILE  # 88: 48 one-card words + 40 restarts
MAX_SCORE = sum(
    sorted((p for p, c in zip(POINTS, COUNTS, strict=True) for _ in range(c)), reverse=True)[:CARDS_IN_PLAY]
)
"""Upper bound on a solitaire score: the points of the 48 most valuable cards of the deck."""

assert NUM_ACTIONS == 311 and CARDS_IN_PLAY == 48


@njit(cache=True, nogil=True)
def _tops_words(labels, piles, min_cards, edge_start, edge_label, edge_child, node_term, term_cards):
    """Every set of tops that spells a word: (piles masks, term ids).

    `labels` are the tops' key ranks + 1, sorted; `piles` their pile numbers. A
    depth-first walk of the trie over the subsets of the tops, pruned at dead prefixes.
    """
    n = labels.shape[0]
    cap = 1 << n
    out_mask = np.empty(cap, np.int64)
    out_term = np.empty(cap, np.int64)
    st_start = np.empty(cap, np.int64)
    st_node = np.empty(cap, np.int64)
    st_mask = np.empty(cap, np.int64)
    n_out = 0
    st_start[0] = 0
    st_node[0] = 0
    st_mask[0] = 0
    sp = 1
    while sp > 0:
        sp -= 1
        start, node0, mask0 = st_start[sp], st_node[sp], st_mask[sp]
        for k in range(start, n):
            # Child of node0 by labels[k]: binary search in its sorted edge labels.
            lo, hi, child = edge_start[node0], edge_start[node0 + 1], -1
            while lo < hi:
                mid = (lo + hi) >> 1
                v = edge_label[mid]
                if v < labels[k]:
                    lo = mid + 1
                elif v > labels[k]:
                    hi = mid
                else:
                    child = edge_child[mid]
                    break
            if child < 0:
                continue
            mask = mask0 | (np.int64(1) << piles[k])
            t = node_term[child]
            if t >= 0 and term_cards[t] >= min_cards:
                out_mask[n_out] = mask
                out_term[n_out] = t
                n_out += 1
            st_start[sp] = k + 1
            st_node[sp] = child
            st_mask[sp] = mask
            sp += 1
    return out_mask[:n_out], out_term[:n_out]


IllegalMoveError = IllegalActionError
"""A move the rules do not allow here: the one illegal-action error of the project, under the solitaire's name."""


def word_action(piles_mask: int) -> int:
    """Action id of the word move on the piles of `piles_mask` (bit p = pile p, 1..255)."""
    if not 1 <= int(piles_mask) <= NUM_WORD_ACTIONS:
        raise ValueError(f"pile bitmask {piles_mask!r} out of range 1..{NUM_WORD_ACTIONS}")
    return int(piles_mask) - 1


def restart_action(src: int, dst: int) -> int:
    """Action id of the restart move: the top card of pile `src` to the empty pile `dst`."""
    if not (0 <= src < NUM_PILES and 0 <= dst < NUM_PILES) or src == dst:
        raise ValueError(f"restart from pile {src!r} to pile {dst!r}: piles are two different numbers 0..7")
    return RESTART_BASE + src * (NUM_PILES - 1) + (dst if dst < src else dst - 1)


def decode_action(action: int) -> tuple[str, int, int]:
    """("word", piles_mask, 0) or ("restart", src, dst) for an action id."""
    a = int(action)
    if 0 <= a < NUM_WORD_ACTIONS:
        return ("word", a + 1, 0)
    if RESTART_BASE <= a < NUM_ACTIONS:
        src, k = divmod(a - RESTART_BASE, NUM_PILES - 1)
        return ("restart", src, k if k < src else k + 1)
    raise ValueError(f"solitaire action {action!r} is out of range 0..{NUM_ACTIONS - 1}")


def piles_of(piles_mask: int) -> tuple[int, ...]:
    """The pile numbers in a bitmask, ascending."""
    return tuple(p for p in range(NUM_PILES) if piles_mask >> p & 1)


def action_name(action: int) -> str:
    """A readable name: 'word from piles 0+3+5' or 'restart pile 6 from pile 2'."""
    kind, a, b = decode_action(action)
    if kind == "word":
        return "word from piles " + "+".join(str(p) for p in piles_of(a))
    return f"restart pile {b} from pile {a}"


@dataclass(frozen=True)
class LaidWord:
    """One word move: the word, its cards in spelling order and the piles they came from."""

    word: str
    faces: tuple[str, ...]
    """Faces in spelling order, e.g. ("QU", "I", "Z")."""
    piles: tuple[int, ...]
    """The pile each card came from, in spelling order."""
    points: int


class SolitaireGame:
    """The one-player game: 8 piles, words from their face-up tops, restarts of empty piles.

    Call `reset(seed)` before playing (until then the piles are empty and the game is
    over). Only `config.min_word_cards` and `config.dictionary` apply to solitaire;
    the other fields of a `QuiddlerConfig` are ignored.
    """

    def __init__(self, config: QuiddlerConfig | None = None):
        self.config = config or QuiddlerConfig()
        self.dictionary: Dictionary = load_dictionary(self.config.dictionary)
        self.min_word_cards = self.config.min_word_cards
        self._start([[] for _ in range(NUM_PILES)])

    # -- setting up ---------------------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        *,
        rng: np.random.Generator | None = None,
        piles: Sequence[Sequence[str | int]] | None = None,
    ) -> None:
        """Deal a new game from a deck shuffled by `rng` (or `default_rng(seed)`), or stack it with `piles`.

        `piles`: 8 sequences of 6 cards each (face names or indices), top card first;
        together they must be cards a 118-card deck holds.
        """
        if piles is not None:
            self._start(self._check_piles(piles))
            return
        rng = rng if rng is not None else np.random.default_rng(seed)
        order = [int(c) for c in rng.permutation(new_deck())[:CARDS_IN_PLAY]]
        # Pile lists run bottom to top: five face-down rounds, then the face-up round.
        dealt: list[list[int]] = [[] for _ in range(NUM_PILES)]
        for i, card in enumerate(order):
            dealt[i % NUM_PILES].append(card)
        self._start(dealt)

    def _start(self, piles: list[list[int]]) -> None:
        self.piles = piles
        self.dealt_counts = [0] * NUM_FACES
        for pile in self.piles:
            for card in pile:
                self.dealt_counts[card] += 1
        self.laid_counts = [0] * NUM_FACES
        self.words_laid: list[LaidWord] = []
        self.score = 0
        self.moves = 0
        self.restarts = 0
        self.last_move: tuple[str, int, int] | None = None
        self._words: list[tuple[int, int]] | None = None

    @staticmethod
    def _check_piles(piles: Sequence[Sequence[str | int]]) -> list[list[int]]:
        if isinstance(piles, (str, bytes)) or len(piles) != NUM_PILES:
            raise ValueError(f"a stacked solitaire deal needs {NUM_PILES} piles, got {piles!r}")
        out = []
        for p, pile in enumerate(piles):
            if isinstance(pile, (str, bytes)):
                raise ValueError(f"pile {p} must be a list of {PILE_CARDS} card faces, got the string {pile!r}")
            cards = parse_hand(pile)
            if len(cards) != PILE_CARDS:
                raise ValueError(f"pile {p} must hold {PILE_CARDS} cards (top first), got {len(cards)}: {list(pile)!r}")
            out.append(cards[::-1])  # stored bottom to top
        counts = [0] * NUM_FACES
        for pile in out:
            for card in pile:
                counts[card] += 1
        too_many = [f"{FACES[f]} x{c} (deck has {COUNTS[f]})" for f, c in enumerate(counts) if c > COUNTS[f]]
        if too_many:
            raise ValueError(
                f"a stacked deal uses more cards than the {DECK_SIZE}-card deck holds: {', '.join(too_many)}"
            )
        return out

    # -- the position -------------------------------------------------------------------

    def tops(self) -> list[int]:
        """The face-up top card of each pile (face index), -1 for an empty pile."""
        return [pile[-1] if pile else -1 for pile in self.piles]

    def face_down_counts(self) -> list[int]:
        """Face-down cards under each pile's top."""
        return [max(len(pile) - 1, 0) for pile in self.piles]

    @property
    def cards_laid(self) -> int:
        return sum(self.laid_counts)

    @property
    def cards_left(self) -> int:
        """Cards still in the piles."""
        return sum(len(pile) for pile in self.piles)

    @property
    def won(self) -> bool:
        """All 48 cards are laid in words."""
        return self.cards_laid == CARDS_IN_PLAY

    @property
    def is_over(self) -> bool:
        """No legal move remains (won, or lost)."""
        return not self.word_moves() and not self.restart_moves()

    # -- legal moves --------------------------------------------------------------------

    def word_moves(self) -> list[tuple[int, int]]:
        """(piles_mask, dictionary term) for every set of piles whose tops spell a word, by mask."""
        if self._words is None:
            self._words = self._find_words()
        return self._words

    def _find_words(self) -> list[tuple[int, int]]:
        # The tops sorted in the index's key order: a set of tops is then a path in the
        # dictionary trie, and a prefix no word starts with prunes every superset of it.
        tops = sorted((KEY_RANK[pile[-1]] + 1, p) for p, pile in enumerate(self.piles) if pile)
        if not tops:
            return []
        labels = np.array([rank for rank, _ in tops], dtype=np.int64)
        piles = np.array([p for _, p in tops], dtype=np.int64)
        d = self.dictionary
        masks, terms = _tops_words(labels, piles, self.min_word_cards, *d.trie, d.term_cards)
        return sorted(zip(masks.tolist(), terms.tolist(), strict=True))

    def restart_moves(self) -> list[tuple[int, int]]:
        """(src, dst) for every legal restart, sorted."""
        empty = [p for p, pile in enumerate(self.piles) if not pile]
        if not empty:
            return []
        donors = [p for p, pile in enumerate(self.piles) if len(pile) >= 2]
        return [(src, dst) for src in donors for dst in empty]

    def legal_actions(self) -> list[int]:
        """Legal action ids, ascending."""
        return [m - 1 for m, _ in self.word_moves()] + [restart_action(s, d) for s, d in self.restart_moves()]

    def legal_action_mask(self) -> np.ndarray:
        """int8 array of NUM_ACTIONS: 1 where the action is legal."""
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        for a in self.legal_actions():
            mask[a] = 1
        return mask

    def is_legal(self, action: int) -> bool:
        try:
            kind, a, b = decode_action(action)
        except ValueError:
            return False
        if kind == "word":
            return any(m == a for m, _ in self.word_moves())
        return (a, b) in self.restart_moves()

    def spell(self, piles_mask: int) -> LaidWord | None:
        """The word the tops of `piles_mask` spell, or None; of several anagrams, the first in alphabetical order."""
        for m, term in self.word_moves():
            if m == piles_mask:
                return self._laid_word(piles_mask, term)
        return None

    def _laid_word(self, piles_mask: int, term: int) -> LaidWord:
        word, faces = self.dictionary.spellings_of(term)[0]
        free = list(piles_of(piles_mask))
        order = []
        for face in faces:  # match each card of the spelling to a pile showing that face
            f = FACES.index(face)
            p = next(p for p in free if self.piles[p][-1] == f)
            free.remove(p)
            order.append(p)
        points = sum(POINTS[FACES.index(face)] for face in faces)
        return LaidWord(word=word, faces=faces, piles=tuple(order), points=points)

    # -- moves --------------------------------------------------------------------------

    def step(self, action: int) -> int:
        """Play an action id; returns the points it scored (0 for a restart)."""
        try:
            kind, a, b = decode_action(action)
        except (ValueError, TypeError):
            raise IllegalMoveError(f"solitaire action {action!r} is out of range 0..{NUM_ACTIONS - 1}") from None
        if kind == "word":
            return self.play_word(a)
        self.restart(a, b)
        return 0

    def play_word(self, piles_mask: int) -> int:
        """Lay the word spelled by the tops of the piles in `piles_mask`; returns its points."""
        laid = self.spell(piles_mask) if 1 <= piles_mask <= NUM_WORD_ACTIONS else None
        if laid is None:
            tops = " ".join(FACES[t] if t >= 0 else "-" for t in self.tops())
            raise IllegalMoveError(
                f"piles {list(piles_of(piles_mask)) if 1 <= piles_mask <= NUM_WORD_ACTIONS else piles_mask!r} "
                f"(bitmask {piles_mask!r}) do not spell a word; tops are {tops}; legal actions: {self.legal_actions()}"
            )
        for p in laid.piles:
            self.laid_counts[self.piles[p].pop()] += 1  # the next card below is now the face-up top
        self.words_laid.append(laid)
        self.score += laid.points
        self._after_move(("word", piles_mask, 0))
        return laid.points

    def restart(self, src: int, dst: int) -> None:
        """Move the top card of pile `src` onto the empty pile `dst`; `src` turns up its next card."""
        if (src, dst) not in self.restart_moves():
            raise IllegalMoveError(
                f"cannot restart pile {dst!r} from pile {src!r}: the target must be empty and the source must have "
                f"a face-down card (pile sizes {[len(p) for p in self.piles]}); legal actions: {self.legal_actions()}"
            )
        self.piles[dst].append(self.piles[src].pop())
        self.restarts += 1
        self._after_move(("restart", src, dst))

    def _after_move(self, move: tuple[str, int, int]) -> None:
        self.moves += 1
        self.last_move = move
        self._words = None

    # -- checks -------------------------------------------------------------------------

    def check_invariants(self) -> None:
        """Assert card conservation and the score; for tests and debugging."""
        held = [0] * NUM_FACES
        for pile in self.piles:
            for card in pile:
                held[card] += 1
        for f in range(NUM_FACES):
            if held[f] + self.laid_counts[f] != self.dealt_counts[f]:
                raise AssertionError(f"face {FACES[f]}: {held[f]} in piles + {self.laid_counts[f]} laid != dealt")
        if self.score != sum(w.points for w in self.words_laid):
            raise AssertionError("score differs from the points of the words laid")
        if self.moves > MAX_MOVES:
            raise AssertionError(f"{self.moves} moves exceed MAX_MOVES={MAX_MOVES}")
