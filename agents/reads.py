"""Reads: what the opponents' last moves say about their hidden cards, as weights on a search's deals.

A player who keeps its best layout (greedy does, and the expert and search mostly) takes the discard
top when it raises the best layout it can keep, and discards the card whose loss hurts its best
layout least. So a deal of the hidden cards in which the next seat would have gained by taking the
card this bot discarded, yet drew from the pile, or in which the previous seat threw away a card its
best layout needed, explains the table's moves less well. With `reads` on (`search:reads=true`,
`guided:reads=true`) the search weighs each determinization by `READ_WEIGHT` for each such
contradiction (1 otherwise), and a candidate's value is the weighted mean over the determinizations.

Only what the seat saw: the card it discarded and whether the next seat took it (the cards opponents
took from the pile are in its observation), and the top card at its turn (the previous seat's
discard). The hands judged are the determinization's as they are now, after the move judged: a
proxy for the hand the move was made from (one card drawn since, for the next seat; none, for the
previous seat's discard).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from quiddler_env.core import actions as A
from quiddler_env.core.solver import HandSolver

from .base import DISCARD, DRAW, SeatView

READ_WEIGHT = 0.25
"""The weight a determinization keeps for each move of the table it contradicts."""


@dataclass(frozen=True)
class Evidence:
    """What the seat knows at its turn about its neighbours' last moves (faces; -1: nothing known)."""

    declined: int = -1
    """The card this bot discarded last turn, which the next seat (relative 1) left for the draw pile."""
    discarded: int = -1
    """The card the previous seat (relative n - 1) discarded: the top at this seat's turn."""


class Reads:
    """A bot's memory, within a round, of its last discard and what the next seat did with it."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything (a new game)."""
        self._round: tuple | None = None
        self._offered = -1
        self._taken: tuple[int, ...] = ()
        self.evidence = Evidence()

    def see(self, seat: SeatView) -> Evidence:
        """Take in the seat's view at one of its decisions; returns the evidence of its current turn."""
        key = (seat.round_fraction, seat.hand_size)
        first = key != self._round
        if first:  # a new round: nothing is known of it yet
            self._round, self._offered, self._taken, self.evidence = key, -1, (), Evidence()
        if seat.phase == DRAW:
            declined = -1
            d = self._offered
            # Taken, the card shows in what the next seat took; thrown straight back, it is on top again (unknown).
            if d >= 0 and seat.opponent_taken[0][d] <= self._taken[d] and seat.discard_top != d:
                declined = d
            # The first mover's first top is the card turned up at the deal, nobody's discard.
            opening = first and seat.seat_from_dealer == 1 % seat.num_players
            self.evidence = Evidence(declined, -1 if opening else seat.discard_top)
            self._offered = -1
        return self.evidence

    def played(self, seat: SeatView, action: int) -> None:
        """Remember the card the bot discards (it is offered to the next seat)."""
        if seat.phase == DISCARD and A.DISCARD_BASE <= action < A.GO_OUT_BASE:
            self._offered = action - A.DISCARD_BASE
            self._taken = tuple(seat.opponent_taken[0])


def contradictions(evidence: Evidence, hands: Sequence[Sequence[int]], solver: HandSolver) -> int:
    """How many of the neighbours' moves in `evidence` the deal `hands` (seat 0 the bot's, then relative order,
    counts per face) contradicts for a player who keeps its best layout."""
    found = 0
    if evidence.declined >= 0:
        hand = list(hands[1])
        now = solver.best_layout(hand, counts=True).score
        hand[evidence.declined] += 1
        found += max(o.score for o in solver.discard_options(hand)) > now  # taking it would have paid
    if evidence.discarded >= 0:
        hand = list(hands[-1])
        hand[evidence.discarded] += 1
        options = {o.face: o.score for o in solver.discard_options(hand)}
        found += options[evidence.discarded] < max(options.values())  # it threw away a card it needed
    return found


def deal_weight(evidence: Evidence, hands: Sequence[Sequence[int]], solver: HandSolver) -> float:
    """The weight of a determinization: `READ_WEIGHT` to the power of its contradictions."""
    return float(READ_WEIGHT ** contradictions(evidence, hands, solver))
