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

Seat vocabularies (the rules' `vocabularies`) outside the variant: each seat finds its go-out moves and has its
layouts laid only from the words of its vocabulary that the referee's list also has (`seat_solvers`), so every
laid word is valid; there are no bluffs and no challenge phase, and the observation is the plain game's.

Challenges (`challenges: true`, rule book section 7): each seat has its own
vocabulary (`seat_solvers`); its go-out moves and layouts come from it, and the
referee (`solver`, the `dictionary`) judges only challenged words. With `layout:
choose` a seat may also bluff: its candidates end with its best bluff
(`laying.best_bluff`), and every discard that leaves a claimable hand may go out.
After everyone has laid comes `Phase.CHALLENGE`: in seat order from the player
after the one who went out (after a turn cap, from the round's first player),
each player challenges words of the others one action at a time, or passes,
which ends its part; a player with nothing left to challenge is skipped. A word
is challenged once. The round is scored when the last has passed (`scoring`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import numpy as np

from . import actions as A
from . import laying
from .cards import DECK_SIZE, FACE_INDEX, NUM_FACES, POINTS, new_deck, parse_hand
from .config import QuiddlerConfig
from .dictionary import load_dictionary
from .scoring import Challenge, RoundResult, score_round, word_points
from .solver import HandSolver, Layout, get_solver
from .vocabulary import coverage, load_seat_vocabulary

_DECK = np.asarray(new_deck(), dtype=np.int64)
_FACE_SHIFTS = np.arange(NUM_FACES, dtype=np.int64)


def rules_seat_solvers(config: QuiddlerConfig, referee: HandSolver) -> tuple[HandSolver, ...]:
    """Each seat's solver under the rules: over its vocabulary (`vocabulary.load_seat_vocabulary`: in the
    challenge variant the spec's words, outside it those the referee also has); `referee` for every seat of
    rules without vocabularies outside the variant."""
    n = config.num_players
    if not config.challenges and not config.vocabularies:
        return (referee,) * n
    return tuple(
        get_solver(
            load_seat_vocabulary(config.seat_vocabulary(p), config.dictionary, config.challenges),
            config.min_word_cards,
        )
        for p in range(n)
    )


class Phase(enum.IntEnum):
    DRAW = 0
    DISCARD = 1
    GAME_OVER = 2
    LAY = 3
    """`layout: choose`: the current player chooses which of its `candidates` to lay."""
    CHALLENGE = 4
    """`challenges: true`: the current player challenges a laid word of another player, or passes."""


class IllegalActionError(ValueError):
    """An action that is not legal in the current state."""


class QuiddlerGame:
    """One game of Quiddler. Call `reset(seed)` before playing."""

    def __init__(self, config: QuiddlerConfig | None = None, solver: HandSolver | None = None):
        self.config = config or QuiddlerConfig()
        self.solver = solver or get_solver(load_dictionary(self.config.dictionary), self.config.min_word_cards)
        self.num_players = self.config.num_players
        self.num_actions = A.num_actions(self.config.layout, self.config.challenges)
        self.challenges = self.config.challenges
        self.bluffing = self.challenges and self.config.layout == "choose"
        self.seat_words = self.challenges or bool(self.config.vocabularies)
        """Whether the rules give seats words of their own (`vocabularies`, or the challenge variant): then
        `set_seat_solvers` is refused."""
        self.seat_solvers = rules_seat_solvers(self.config, self.solver)
        """Each seat's solver over its own vocabulary (`rules_seat_solvers`: the referee's `solver` for every seat
        of rules without vocabularies)."""
        self.phase = Phase.GAME_OVER
        # The variant's state, empty until a round has challenges (a game built field by field, as
        # `BatchGame.game` builds one, has it too).
        self.challenge_log: list[Challenge] = []
        self.challenge_history: list[list[Challenge]] = []
        self._challenge_queue: list[int] = []
        self.candidate_bluff: int | None = None

    # -- setting up ------------------------------------------------------------------

    def set_seat_solvers(self, solvers: Sequence[HandSolver | None]) -> None:
        """For rules without `vocabularies`: the words each seat finds, one solver per seat (None: the referee's),
        e.g. a bot's level (`BaseAgent.seat_solver`). A seat's go-out moves and the layouts laid for it come
        from its solver; the referee's list still judges, so every solver's words must be the referee's (a
        level's are kept within it: `levels.level_dictionary`). With `vocabularies` (and in the variant) the
        rules decide."""
        if self.challenges:
            raise ValueError("the challenge variant's seat words are the rules' vocabularies, not set_seat_solvers")
        if self.config.vocabularies:
            raise ValueError("set_seat_solvers: the rules' vocabularies give each seat its words already")
        if len(solvers) != self.num_players:
            raise ValueError(f"set_seat_solvers needs {self.num_players} entries (one per seat), got {len(solvers)}")
        self.seat_solvers = tuple(self.solver if s is None else s for s in solvers)
        self._go_out_bits = None

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
        self.challenge_history: list[list[Challenge]] = []
        """Per scored round, its challenges (empty lists without `challenges: true`)."""
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
        self.candidate_bluff: int | None = None
        """In the lay phase with bluffing: the index of the bluff among `candidates` (None if it has none)."""
        self._lay_queue: list[int] = []
        self.challenge_log: list[Challenge] = []
        """The challenges made this round, in order, with the referee's verdicts (public once made)."""
        self._challenge_queue: list[int] = []

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
            hand = self.hands[self.current_player]
            bits = self.honest_go_out_faces()
            if self.bluffing and sum(hand) - 1 >= self.config.min_word_cards:
                bits = sum(1 << f for f in range(NUM_FACES) if hand[f])  # the rest can be claimed as words
            self._go_out_bits = bits
        return self._go_out_bits

    def honest_go_out_faces(self) -> int:
        """Bit f set iff the current player may go out discarding f with words its vocabulary knows."""
        if self.phase != Phase.DISCARD or self.went_out is not None:
            return 0
        return self.seat_solvers[self.current_player].go_out_faces(self.hands[self.current_player])

    def vocabulary_coverage(self, player: int) -> float:
        """The size of `player`'s vocabulary against the referee's (1.0 without challenges)."""
        if not self.challenges:
            return 1.0
        return coverage(self.seat_solvers[player].dictionary, self.solver.dictionary)

    def challengeable(self, player: int) -> list[tuple[int, int]]:
        """(seat, word) of every laid word of another player that `player` may challenge now."""
        done = {(c.player, c.word) for c in self.challenge_log}
        n = self.num_players
        out = []
        for k in range(1, n):
            q = (player + k) % n
            layout = self.laid[q]
            if layout is not None:
                out.extend((q, j) for j in range(layout.n_words) if (q, j) not in done)
        return out

    def legal_action_mask(self) -> np.ndarray:
        """int8 mask over the `num_actions` actions (64, or 64 + K with `layout: choose`)."""
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if self.phase == Phase.LAY:
            mask[A.LAY_BASE : A.LAY_BASE + len(self.candidates)] = 1
        elif self.phase == Phase.CHALLENGE:
            mask[self.legal_actions()] = 1
        elif self.phase == Phase.DRAW:
            mask[A.TAKE_DISCARD] = 1
            if self.draw_pile or len(self.discard_pile) > 1:
                mask[A.DRAW_PILE] = 1
        elif self.phase == Phase.DISCARD:
            bits = self.go_out_faces()
            if bits:
                mask[A.GO_OUT_BASE : A.NUM_ACTIONS] = (bits >> _FACE_SHIFTS) & 1
            if not (self.config.go_out == "forced" and self.honest_go_out_faces()):
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
        p, n = self.current_player, self.num_players
        if self.phase == Phase.CHALLENGE:
            return [A.PASS] + sorted(A.challenge((q - p) % n, j) for q, j in self.challengeable(p))
        hand = self.hands[p]
        bits = self.go_out_faces()
        go = [A.GO_OUT_BASE + f for f in range(NUM_FACES) if bits >> f & 1]
        if go and self.config.go_out == "forced" and self.honest_go_out_faces():
            return go
        return [A.DISCARD_BASE + f for f in range(NUM_FACES) if hand[f]] + go

    def is_legal(self, action: int) -> bool:
        if self.phase == Phase.LAY:
            return A.LAY_BASE <= action < A.LAY_BASE + len(self.candidates)
        if self.phase == Phase.CHALLENGE:
            return action in self.legal_actions()
        if self.phase == Phase.DRAW:
            return action == A.TAKE_DISCARD or (
                action == A.DRAW_PILE and (len(self.draw_pile) > 0 or len(self.discard_pile) > 1)
            )
        if self.phase != Phase.DISCARD or not A.DISCARD_BASE <= action < A.NUM_ACTIONS:
            return False
        if action >= A.GO_OUT_BASE:
            return bool(self.go_out_faces() >> (action - A.GO_OUT_BASE) & 1)
        if self.config.go_out == "forced" and self.honest_go_out_faces():
            return False
        return self.hands[self.current_player][action - A.DISCARD_BASE] > 0

    def card_count(self) -> int:
        """Cards in hands, draw pile and discard pile (always 118)."""
        return sum(sum(h) for h in self.hands) + len(self.draw_pile) + len(self.discard_pile)

    def best_layout(self, player: int) -> Layout:
        """The best layout of a player's current hand (by its own vocabulary in the challenge variant)."""
        return self.seat_solvers[player].best_layout(self.hands[player], counts=True)

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
            self.candidate_bluff = None
            return self._lay_next(p)  # the next to lay, or the next seat's turn, or the round's end
        if self.phase == Phase.CHALLENGE:
            if action == A.PASS:
                self._challenge_queue.pop(0)
            else:
                self._challenge(p, *A.challenged(action))
            return self._challenge_next()
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
            solver = self.seat_solvers[q]
            if self.config.layout == "choose":
                self.current_player = q
                if self.bluffing:
                    self.candidates, self.candidate_bluff = laying.bluff_candidates(
                        solver, self.hands[q], goes_out=goes_out
                    )
                else:
                    self.candidates = laying.candidates(solver, self.hands[q], goes_out=goes_out)
                self.phase = Phase.LAY
                return None
            # The rule weighs figures only: build just the layout it picks.
            figures = solver.front_figures(self.hands[q], full_only=goes_out)
            k = laying.auto_index(figures, self.laid_layouts(), self.config, self.num_players)
            self._lay(q, solver.front_layout(self.hands[q], k, full_only=goes_out))
        if all(layout is not None for layout in self.laid):
            if self.challenges:
                first = self.went_out + 1 if self.went_out is not None else self.dealer + 1
                self._challenge_queue = [(first + k) % self.num_players for k in range(self.num_players)]
                return self._challenge_next()
            return self._end_round()
        self.current_player = (p + 1) % self.num_players
        self.phase = Phase.DRAW
        return None

    def _challenge(self, p: int, seat: int, word: int) -> None:
        q = (p + seat) % self.num_players
        faces = self.laid[q].words[word]
        cards = [FACE_INDEX[f] for f in faces]
        # The referee's verdict: the word stands if its cards spell a word of the referee's list.
        valid = self.solver.dictionary.lookup(cards) >= 0
        self.challenge_log.append(Challenge(p, q, word, self.laid[q].spelled[word], word_points(faces), valid))

    def _challenge_next(self) -> list[RoundResult] | None:
        """The next challenger with something to challenge, or the round's end."""
        while self._challenge_queue and not self.challengeable(self._challenge_queue[0]):
            self._challenge_queue.pop(0)
        if not self._challenge_queue:
            return self._end_round()
        self.current_player = self._challenge_queue[0]
        self.phase = Phase.CHALLENGE
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
        results = score_round(
            self.laid,
            self.totals,
            self.config,
            went_out=self.went_out,
            lay_order=self.lay_order,
            challenges=self.challenge_log,
        )
        self.totals = [r.total for r in results]
        self.round_history.append(results)
        self.challenge_history.append(list(self.challenge_log))
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
