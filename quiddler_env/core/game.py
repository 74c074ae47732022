"""The Quiddler game state machine for 2..8 players (rule book sections 2-6).

`QuiddlerGame` holds the whole game: hands (face counts), the draw pile, the
discard pile, the dealer, whose turn it is and in which phase, who went out, and
the running totals. It moves by the action ids of `actions` and answers which are
legal. All chance comes from one `numpy.random.Generator` created by `reset(seed)`:
the same seed and the same actions give the same game in any process.

Seats are 0..n-1, clockwise. The dealer of the first round is seat n-1, so seat 0
moves first; the dealer moves one seat left (clockwise) each round.

Laying (rule book section 6): the player who goes out lays its words as it goes out;
each other player lays right after its final turn, in turn order; after a turn cap
with nobody out, everyone lays at the round's end in turn order from the round's
first player. `laid[p]` is public from that moment. With `layout: auto` the engine
lays for the player (`laying.auto_layout`: the bonus-aware best response to what is
already laid); with `layout: choose` the player's next decision is a lay move
(`Phase.LAY`, actions `64 + k` over `candidates`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import numpy as np

from . import actions as A
from . import laying
from .cards import DECK_SIZE, NUM_FACES, POINTS, new_deck, parse_hand
from .config import QuiddlerConfig
from .dictionary import load_dictionary
from .scoring import RoundResult, score_round
from .solver import HandSolver, Layout, get_solver

_DECK = np.asarray(new_deck(), dtype=np.int64)
_FACE_SHIFTS = np.arange(NUM_FACES, dtype=np.int64)


class Phase(enum.IntEnum):
    DRAW = 0
    DISCARD = 1
    GAME_OVER = 2
    LAY = 3
    """`layout: choose`: the current player chooses which of its `candidates` to lay."""


class IllegalActionError(ValueError):
    """An action that is not legal in the current state."""


class QuiddlerGame:
    """One game of Quiddler. Call `reset(seed)` before playing."""

    def __init__(self, config: QuiddlerConfig | None = None, solver: HandSolver | None = None):
        self.config = config or QuiddlerConfig()
        self.solver = solver or get_solver(load_dictionary(self.config.dictionary), self.config.min_word_cards)
        self.num_players = self.config.num_players
        self.num_actions = A.num_actions(self.config.layout)
        self.phase = Phase.GAME_OVER

    # -- setting up ------------------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        *,
        rng: np.random.Generator | None = None,
        decks: Sequence[Sequence[str | int]] | None = None,
    ) -> None:
        """Start a new game. `decks` stacks the deck: one card order (top first) per round."""
        self.rng = rng if rng is not None else np.random.default_rng(seed)
        if decks is not None:
            decks = [self.check_deck(d) for d in decks]
        self._decks = decks
        n = self.num_players
        self.totals = [0] * n
        self.round = 0
        self.dealer = n - 1
        self.round_history: list[list[RoundResult]] = []
        self.last_round_results: list[RoundResult] | None = None
        self.rounds_completed = 0
        self._start_round()

    @staticmethod
    def check_deck(deck: Sequence[str | int]) -> list[int]:
        """A stacked deck (faces or names, top first) as faces; a ValueError unless it is the whole deck."""
        cards = parse_hand(deck)
        if sorted(cards) != new_deck():
            raise ValueError(f"a stacked deck must hold all {DECK_SIZE} cards exactly once each")
        return cards

    def _start_round(self) -> None:
        n = self.num_players
        if self._decks is not None and self.round < len(self._decks):
            order = list(self._decks[self.round])  # top first
        else:
            order = self.rng.permutation(_DECK).tolist()
        self.draw_pile = order[::-1]  # top of the pile is the end of the list
        self.hand_size = self.config.hand_sizes[self.round]
        self.hands = [[0] * NUM_FACES for _ in range(n)]
        for _ in range(self.hand_size):  # one card at a time, from the dealer's left
            for k in range(1, n + 1):
                self.hands[(self.dealer + k) % n][self.draw_pile.pop()] += 1
        self.discard_pile = [self.draw_pile.pop()]
        self.discard_counts = [0] * NUM_FACES
        self.discard_counts[self.discard_pile[-1]] += 1
        # Public knowledge: cards each player took from the discard pile and surely still holds.
        self.known_taken = [[0] * NUM_FACES for _ in range(n)]
        self.current_player = (self.dealer + 1) % n
        self.phase = Phase.DRAW
        self.went_out: int | None = None
        self.turns_this_round = 0
        self.reshuffles = 0
        self.last_action: tuple[int, int] | None = None
        self._go_out_bits: int | None = None
        self.laid: list[Layout | None] = [None] * n
        """The layout each player has laid this round (public), None until it lays."""
        self.lay_order: list[int] = []
        self.candidates: tuple[Layout, ...] = ()
        """In the lay phase: the current player's candidate layouts (lay move k lays candidates[k])."""
        self._lay_queue: list[int] = []

    # -- questions ----------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.phase == Phase.GAME_OVER

    @property
    def in_final_turn(self) -> bool:
        """The current turn is a last turn after someone went out."""
        return self.went_out is not None

    def go_out_faces(self) -> int:
        """Bit f set iff the current player, in the discard phase, may go out discarding f."""
        if self.phase != Phase.DISCARD or self.went_out is not None:
            return 0
        if self._go_out_bits is None:
            self._go_out_bits = self.solver.go_out_faces(self.hands[self.current_player])
        return self._go_out_bits

    def legal_action_mask(self) -> np.ndarray:
        """int8 mask over the `num_actions` actions (64, or 64 + K with `layout: choose`)."""
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if self.phase == Phase.LAY:
            mask[A.LAY_BASE : A.LAY_BASE + len(self.candidates)] = 1
        elif self.phase == Phase.DRAW:
            mask[A.TAKE_DISCARD] = 1
            if self.draw_pile or len(self.discard_pile) > 1:
                mask[A.DRAW_PILE] = 1
        elif self.phase == Phase.DISCARD:
            bits = self.go_out_faces()
            if bits:
                mask[A.GO_OUT_BASE : A.NUM_ACTIONS] = (bits >> _FACE_SHIFTS) & 1
            if not (bits and self.config.go_out == "forced"):
                mask[A.DISCARD_BASE : A.GO_OUT_BASE] = self.hands[self.current_player]
                np.minimum(mask, 1, out=mask)
        return mask

    def legal_actions(self) -> list[int]:
        """The legal action ids, ascending."""
        if self.phase == Phase.DRAW:
            can_draw = len(self.draw_pile) > 0 or len(self.discard_pile) > 1
            return [A.DRAW_PILE, A.TAKE_DISCARD] if can_draw else [A.TAKE_DISCARD]
        if self.phase == Phase.GAME_OVER:
            return []
        if self.phase == Phase.LAY:
            return [A.lay(k) for k in range(len(self.candidates))]
        hand = self.hands[self.current_player]
        bits = self.go_out_faces()
        go = [A.GO_OUT_BASE + f for f in range(NUM_FACES) if bits >> f & 1]
        if go and self.config.go_out == "forced":
            return go
        return [A.DISCARD_BASE + f for f in range(NUM_FACES) if hand[f]] + go

    def is_legal(self, action: int) -> bool:
        if self.phase == Phase.LAY:
            return A.LAY_BASE <= action < A.LAY_BASE + len(self.candidates)
        if self.phase == Phase.DRAW:
            return action == A.TAKE_DISCARD or (
                action == A.DRAW_PILE and (len(self.draw_pile) > 0 or len(self.discard_pile) > 1)
            )
        if self.phase != Phase.DISCARD or not A.DISCARD_BASE <= action < A.NUM_ACTIONS:
            return False
        if action >= A.GO_OUT_BASE:
            return bool(self.go_out_faces() >> (action - A.GO_OUT_BASE) & 1)
        if self.config.go_out == "forced" and self.go_out_faces():
            return False
        return self.hands[self.current_player][action - A.DISCARD_BASE] > 0

    def card_count(self) -> int:
        """Cards in hands, draw pile and discard pile (always 118)."""
        return sum(sum(h) for h in self.hands) + len(self.draw_pile) + len(self.discard_pile)

    def best_layout(self, player: int) -> Layout:
        """The best layout of a player's current hand."""
        return self.solver.best_layout(self.hands[player], counts=True)

    # -- moving -------------------------------------------------------------------------

    def step(self, action: int) -> list[RoundResult] | None:
        """Play `action` for the current player; returns the round results if a round ended."""
        action = int(action)
        if not self.is_legal(action):
            from .actions import action_name

            try:
                name = action_name(action)
            except ValueError:
                name = "out of range"
            legal = ", ".join(f"{a} ({action_name(a)})" for a in self.legal_actions())
            raise IllegalActionError(
                f"illegal action {action} ({name}) for player {self.current_player}; legal: {legal or 'none'}"
            )
        p = self.current_player
        self.last_action = (p, action)
        if self.phase == Phase.LAY:
            self._lay(p, self.candidates[action - A.LAY_BASE])
            self.candidates = ()
            return self._lay_next(p)  # the next to lay, or the next seat's turn, or the round's end
        if self.phase == Phase.DRAW:
            if action == A.DRAW_PILE:
                if not self.draw_pile:
                    self._reshuffle()
                card = self.draw_pile.pop()
            else:
                card = self.discard_pile.pop()
                self.discard_counts[card] -= 1
                self.known_taken[p][card] += 1
            self.hands[p][card] += 1
            self.phase = Phase.DISCARD
            self._go_out_bits = None
            return None
        face = A.discarded_face(action)
        self.hands[p][face] -= 1
        self.discard_pile.append(face)
        self.discard_counts[face] += 1
        if self.known_taken[p][face]:
            # Observers cannot tell which copy went; they only know one fewer surely remains.
            self.known_taken[p][face] -= 1
        self.turns_this_round += 1
        self._go_out_bits = None
        cap = self.config.turn_cap
        if action >= A.GO_OUT_BASE:
            self.went_out = p
            self._lay_queue = [p]
        elif self.went_out is not None:
            self._lay_queue = [p]
        elif cap is not None and self.turns_this_round >= cap * self.num_players:
            first = (
                self.dealer + 1
            ) % self.num_players  # nobody went out: everyone lays, from the round's first player
            self._lay_queue = [(first + k) % self.num_players for k in range(self.num_players)]
        return self._lay_next(p)

    def _lay_next(self, p: int) -> list[RoundResult] | None:
        """Lay for the players queued to lay now (auto), or hand the first of them its lay decision (choose);
        then the next turn, or the round's end."""
        while self._lay_queue:
            q = self._lay_queue[0]
            goes_out = q == self.went_out
            if self.config.layout == "choose":
                self.current_player = q
                self.candidates = laying.candidates(self.solver, self.hands[q], goes_out=goes_out)
                self.phase = Phase.LAY
                return None
            # The rule weighs figures only: build just the layout it picks.
            figures = self.solver.front_figures(self.hands[q], full_only=goes_out)
            k = laying.auto_index(figures, self.laid_layouts(), self.config, self.num_players)
            self._lay(q, self.solver.front_layout(self.hands[q], k, full_only=goes_out))
        if all(layout is not None for layout in self.laid):
            return self._end_round()
        self.current_player = (p + 1) % self.num_players
        self.phase = Phase.DRAW
        return None

    def _lay(self, q: int, layout: Layout) -> None:
        self.laid[q] = layout
        self.lay_order.append(q)
        self._lay_queue.pop(0)

    def laid_layouts(self) -> list[Layout]:
        """The layouts laid so far this round, in laying order."""
        return [self.laid[q] for q in self.lay_order]

    def _reshuffle(self) -> None:
        top = self.discard_pile.pop()
        pile = self.discard_pile
        # The discard pile's order is public; shuffling it with the game's generator hides it again.
        self.draw_pile = self.rng.permutation(np.asarray(pile, dtype=np.int64)).tolist()
        self.discard_pile = [top]
        self.discard_counts = [0] * NUM_FACES
        self.discard_counts[top] = 1
        self.reshuffles += 1

    def _end_round(self) -> list[RoundResult]:
        results = score_round(self.laid, self.totals, self.config, went_out=self.went_out, lay_order=self.lay_order)
        self.totals = [r.total for r in results]
        self.round_history.append(results)
        self.last_round_results = results
        self.rounds_completed += 1
        if self.round + 1 < self.config.num_rounds:
            self.round += 1
            self.dealer = (self.dealer + 1) % self.num_players
            self._start_round()
        else:
            self.phase = Phase.GAME_OVER
        return results

    def winners(self) -> list[int]:
        """Seats with the highest total (several on a tie)."""
        best = max(self.totals)
        return [p for p, t in enumerate(self.totals) if t == best]

    def hand_points(self, player: int) -> int:
        return sum(c * POINTS[f] for f, c in enumerate(self.hands[player]))
