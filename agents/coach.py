"""The coach: for a seat's decision, the moves the `search` bot weighs and the points each is worth.

The coach is the search bot's own `SearchAgent.weigh`, the call its `act` makes: the same
candidates (both draws; every go-out and the `top` discards that keep the best layout), valued
over the same determinizations, so coach and bot cannot disagree. A move the player made that
the bot did not weigh is valued beside them, on the same determinizations (it changes nothing
else). The generator is re-seeded for every decision from (`seed`, the keys the caller names:
game, move number), so the same advice comes back every time.

The values, in points for the player:

- `rollouts` (draws and discards of a round in play): the search bot's rollout value, the mean
  over its determinizations of the player's round score minus the mean of the opponents' round
  scores, once the round is played out by the greedy bot in every seat.
- `expert` (a last turn after someone went out, a lay choice under `layout: choose`): the search
  bot leaves these to the expert, and the values are the expert's: the points of the hand or
  layout kept, plus the bonuses it expects to win (own round score, not a difference).
- `challenge` (a challenge decision of the challenge variant): the values the bots decide challenges by
  (`ExpertAgent.challenge_values`, the search bot's own): 0 for passing; for challenging a word, its
  expected gain in points, P(invalid) x 2 x its points (its player's word turns into unused cards) minus
  P(valid) x its points (what the challenger pays if it stands). A word in the player's own vocabulary is
  valid to it; one it does not know is invalid with the probability the bots reckon from the vocabulary's
  size against the referee's. (The bots' estimate: a failed go-out's penalty and a bonus changing hands are
  not in it.)
- `only` / `unweighed`: one legal move, or a decision the bots do not value.

The loss of a move is the best value minus its value (0 for the best, never below 0).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from quiddler_env.core import actions as A
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import Phase, QuiddlerGame
from quiddler_env.core.observation import encode_observation

from .human import move_name
from .search import DEFAULT_SAMPLES, SearchAgent

KINDS = ("draw", "discard", "go_out", "last_turn", "lay", "challenge")
"""Kinds of decision: a draw or take; a discard; a discard where going out was legal (go-out timing, and which
card to go out on); the draw or discard of a last turn after someone went out (they decide the words laid); a lay choice
(`layout: choose`); a challenge."""


def decision_kind(game: QuiddlerGame) -> str:
    """The kind (`KINDS`) of the decision the player to move faces."""
    if game.phase == Phase.LAY:
        return "lay"
    if game.phase == Phase.CHALLENGE:
        return "challenge"
    if game.went_out is not None:
        return "last_turn"
    if game.phase == Phase.DRAW:
        return "draw"
    return "go_out" if any(a >= A.GO_OUT_BASE for a in game.legal_actions()) else "discard"


def coach_seed(seed: int, *keys: int) -> int:
    """The generator seed of one decision's advice, from the review's seed and the decision's keys."""
    return int(np.random.SeedSequence([int(seed), *(int(k) for k in keys)]).generate_state(1, np.uint64)[0])


@dataclasses.dataclass(frozen=True)
class Advice:
    """One decision, weighed: the moves and their values (points for the player), the move the search bot plays,
    the best move weighed, on what the values rest, and the kind of decision."""

    moves: list[int]
    values: list[float] | None
    search_move: int
    best: int
    basis: str
    kind: str
    samples: int = 0

    def value(self, move: int) -> float | None:
        if self.values is None or move not in self.moves:
            return None
        return self.values[self.moves.index(move)]

    def loss(self, move: int) -> float | None:
        """Best value minus the move's (>= 0); None where the move has no value (nothing weighed)."""
        v = self.value(move)
        if v is None:
            return None
        return max(0.0, max(self.values) - v)

    def to_dict(self, name=lambda a: str(a)) -> dict[str, Any]:
        moves = [
            {"action": a, "move": name(a), "value": None if self.values is None else round(self.values[i], 3)}
            for i, a in enumerate(self.moves)
        ]
        moves.sort(key=lambda m: -(m["value"] if m["value"] is not None else -np.inf))
        return {
            "kind": self.kind,
            "basis": self.basis,
            "samples": self.samples,
            "search": {"action": self.search_move, "move": name(self.search_move)},
            "best": {"action": self.best, "move": name(self.best)},
            "moves": moves,
        }


class Coach:
    """The search bot as a coach for games under `config` (`samples`, `top`: the bot's parameters)."""

    def __init__(self, config: QuiddlerConfig, *, samples: int = DEFAULT_SAMPLES, top: int = 4, seed: int = 0):
        self.config = config
        self.seed = int(seed)
        self.agent = SearchAgent(self.seed, config, samples=samples, top=top)

    def weigh(self, observation, action_mask, seed: int, played: int | None = None, kind: str = "") -> Advice:
        """The advice on one decision from its observation and mask, with the generator seeded by `seed`."""
        self.agent.reset(seed)
        w = self.agent.weigh(observation, action_mask, extra=() if played is None else (played,))
        values = None if w.values is None else [float(v) for v in w.values]
        best = w.choice
        if values is not None and values[w.moves.index(best)] < max(values) - 1e-9:
            best = w.moves[int(np.argmax(values))]  # the move played beat the bot's choice
        return Advice(list(w.moves), values, w.choice, best, w.basis, kind, w.samples)

    def advise(self, game: QuiddlerGame, keys: tuple[int, ...] = (), played: int | None = None) -> Advice:
        """The advice on the decision of the player to move in `game` (seeded by the coach's seed and `keys`)."""
        p = game.current_player
        return self.weigh(
            encode_observation(game, p),
            game.legal_action_mask(),
            coach_seed(self.seed, *keys),
            played,
            decision_kind(game),
        )


def move_namer(game: QuiddlerGame):
    """Names of the moves of the decision in `game` as the table shows them (`take E`, `discard QU`)."""
    top = game.discard_pile[-1] if game.discard_pile else -1
    return lambda a: move_name(a, top)
