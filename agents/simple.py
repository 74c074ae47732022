"""The baseline bots: `random` (uniform over legal moves) and `greedy` (best layout now).

Both lay their words by the automatic rule (`layout: choose`: the lay move the engine's
`layout: auto` would make), so the choice of layout is never what separates them.

In the challenge variant random plays every legal move at random (it bluffs, and
challenges, by chance); greedy lays honestly from its vocabulary and challenges by
`BaseAgent.challenge_move`.
"""

from __future__ import annotations

import numpy as np

from quiddler_env.core import actions as A

from .base import CHALLENGE, DRAW, LAY, BaseAgent, legal_list
from .hands import with_card


class RandomAgent(BaseAgent):
    """Uniform over the legal actions, from its own generator; lays by the automatic rule."""

    name = "random"

    def act(self, observation, action_mask=None) -> int:
        obs, mask = self._prepare(observation, action_mask)
        legal = np.flatnonzero(mask)
        if legal[-1] >= A.LAY_BASE and not self.challenges:
            return self.auto_lay(self.view(obs), legal_list(mask))
        return int(legal[self.rng.integers(legal.size)])


class GreedyAgent(BaseAgent):
    """Plays for the best layout it holds right now.

    Draw: takes the discard top when that raises the best layout score it can keep
    (after its best discard), otherwise draws from the pile. Discard: goes out
    whenever it can (keeping the best-scoring hand); otherwise discards the card
    whose loss hurts its best layout least. Ties are broken by its generator.
    """

    name = "greedy"

    def act(self, observation, action_mask=None) -> int:
        obs, mask = self._prepare(observation, action_mask)
        legal = legal_list(mask)
        if len(legal) == 1:
            return legal[0]
        seat = self.view(obs)
        if seat.phase == CHALLENGE:
            return self.challenge_move(seat, legal)
        legal = self.honest(seat, legal)
        if seat.phase == LAY:
            return self.auto_lay(seat, legal)
        if seat.phase == DRAW:
            if A.TAKE_DISCARD in legal and A.DRAW_PILE in legal and seat.discard_top >= 0:
                now = self.solver.best_layout(list(seat.hand), counts=True).score
                options = self.solver.discard_options(with_card(seat.hand, seat.discard_top))
                if max(o.score for o in options) > now:
                    return A.TAKE_DISCARD
                return A.DRAW_PILE
            return legal[0]
        options = {o.face: o for o in self.solver.discard_options(seat.hand)}
        go = [a for a in legal if a >= A.GO_OUT_BASE and a - A.GO_OUT_BASE in options]
        pool = go or [a for a in legal if A.DISCARD_BASE <= a < A.GO_OUT_BASE and a - A.DISCARD_BASE in options]
        if not pool:  # a mask this hand cannot explain: still never leave the mask
            return legal[int(self.rng.integers(len(legal)))]
        scores = [options[A.discarded_face(a)].score for a in pool]
        best = max(scores)
        ties = [a for a, s in zip(pool, scores, strict=True) if s == best]
        return ties[int(self.rng.integers(len(ties)))] if len(ties) > 1 else ties[0]
