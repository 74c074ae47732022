"""The `search` bot: determinized rollouts of the round on the batched engine (PIMC).

At each draw and discard of a round in play, the bot deals the cards it cannot see
at random, consistent with what its seat has seen (its hand, the discard pile, the
cards opponents visibly took, the draw pile's size: the `unseen` counts of its
observation), `samples` times. In each of these determinizations it plays each of its
candidate moves, then plays the round out with the compiled greedy bot in every seat
(`core.batch_bots`), all determinizations and candidates as rows of one `BatchGame`,
and scores the round with the engine's own laying and scoring. A candidate's value is
its mean, over the determinizations, of the bot's round score minus the mean of its
opponents' (each determinization is shared by every candidate, so they are compared on
the same cards). Candidates: both draws; in the discard phase every go-out and the
`top` discards that keep the best layout now.

Final turns (someone went out: the round ends after this discard, nothing is left to
roll out), lay decisions (`layout: choose`) and challenges are the expert's (`quiddler_agents.expert`):
in a final turn it keeps the best hand against the layouts already laid.

In the challenge variant each rollout seat plays by its own vocabulary (the rules name every seat's), the
greedy bots challenge as greedy does, and the referee judges: so a bluffing go-out (a candidate under
`layout: choose`) is valued with the challenges it draws. With the rules' `vocabularies` outside the variant
each rollout seat likewise finds and lays only its own words (within the referee's list).

`ms` caps the time of one decision: determinizations are played in chunks of
`chunk` (8) until `samples` are done or `ms` milliseconds have passed (at least one chunk).
With `ms=0` (the default) every decision plays all `samples`, so the same seed gives
the same decisions on any machine; with a time cap it depends on the machine's speed.
With `win=true` the bot plays for the win, not for points: a candidate's value is its chance to end the game
with the top total. In the last round that is the share of determinizations in which the round's scores leave
the bot on top (a tie for the top counts half); before it, each opponent's lead after the round is read against
the rounds still to come, `ROUND_SPREAD` points of noise each (a normal model), so a bot far ahead plays safe and
one far behind takes risks. Candidates of equal chance are told apart by their points.
With `reads=true` the determinizations are weighed by what the neighbours' last moves say of their hands
(`quiddler_agents.reads`: a deal in which the next seat would have gained by taking this bot's discard, or the
previous seat threw away a card it needed, counts less). The bot reads only its observation; its generator is
its own.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import numpy as np

from quiddler_env.core import actions as A
from quiddler_env.core import batch_bots
from quiddler_env.core.batch import BatchGame
from quiddler_env.core.cards import NUM_FACES
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import Phase, QuiddlerGame
from quiddler_env.core.observation import observation_layout

from .base import CHALLENGE, DRAW, LAY, BaseAgent, SeatView, Weighing, check_level, legal_list
from .expert import ExpertAgent
from .params import LEVEL_PARAM, MAX_MS, MAX_SAMPLES, MAX_TOP, Param, check_params
from .reads import Evidence, Reads, deal_weight

DEFAULT_SAMPLES = 32
CHUNK = 8
"""Determinizations played per batch call; `ms` is checked between chunks."""
ROUND_SPREAD = 13.0
"""The spread (standard deviation, points) of the difference between two seats' round scores, for players of like
strength: 11 to 15 at 2 and 4 players from 3 to 10 cards (`benchmarks/round_spread.py` measures it). `win=true`
reads the rounds still to come as this much noise each."""
MAX_CANDIDATES = 2 * NUM_FACES
"""Rows per determinization the rollout batch holds (every discard and go-out at most)."""


def rounds_after(round_fraction: float, num_rounds: int) -> int:
    """Rounds still to play after the one in play, from the observation's round number / number of rounds."""
    return num_rounds - int(round(round_fraction * num_rounds))


def win_chances(totals: np.ndarray, rounds_left: int) -> np.ndarray:
    """Per row of game totals after this round (own seat first): the chance that the own seat ends the game on
    top. With no round left: 1 on top alone, 1/2 tied for the top, else 0. Before: the product over opponents of
    the normal chance that the own lead survives `rounds_left` rounds of `ROUND_SPREAD` noise each (the logistic
    curve 1/(1+exp(-1.702 z)), within 0.01 of the normal's)."""
    totals = np.asarray(totals, dtype=np.float64)
    own, others = totals[:, 0], totals[:, 1:]
    if rounds_left <= 0:
        top = others.max(axis=1)
        return (own > top) + 0.5 * (own == top)
    z = (own[:, None] - others) / (ROUND_SPREAD * np.sqrt(rounds_left))
    return np.prod(1.0 / (1.0 + np.exp(-1.702 * z)), axis=1)


class SearchAgent(BaseAgent):
    """Determinized rollouts of the round with the compiled greedy bot (see the module docstring)."""

    name = "search"
    chunk = CHUNK
    """Determinizations a rollout batch call plays (`ms` is checked between calls)."""

    PARAMS = {
        "samples": Param(int, 1, MAX_SAMPLES),
        "ms": Param(float, 0, MAX_MS, "0: no time cap"),
        "top": Param(int, 1, MAX_TOP),
        "level": LEVEL_PARAM,
        "reads": Param(bool),
        "win": Param(bool),
    }
    """The spec's parameters (`search:samples=64:ms=50`) and their bounds."""

    def __init__(
        self,
        seed: int | None = None,
        config: QuiddlerConfig | None = None,
        *,
        level: int | str | None = None,
        samples: int = DEFAULT_SAMPLES,
        ms: float = 0.0,
        top: int = 4,
        reads: bool = False,
        win: bool = False,
    ):
        checked = check_params(self.name, self.PARAMS, samples=samples, ms=ms, top=top, reads=reads, win=win)
        level = check_level(self.name, level, config)  # before its expert checks it under its own name
        self.samples = checked["samples"]
        self.ms = checked["ms"]
        self.top = checked["top"]
        self.reads = checked["reads"]
        """Weigh the determinizations by what the neighbours' last moves say of their hands (`quiddler_agents.reads`)."""
        self.win = checked["win"]
        """Value candidates by the chance to win the game, not by points (the module docstring)."""
        self._reads = Reads()
        self._evidence = Evidence()
        self.last_samples = 0
        """Determinizations the last `rollout_values` played (fewer than `samples` when `ms` cut it short)."""
        self.last_values: tuple[list[int], np.ndarray] | None = None
        """The last decision's weighed moves and their rollout values (None when it weighed none: one candidate,
        or the expert decided)."""
        self._batches: dict[int, BatchGame] = {}  # one rollout batch per hand size (a one-round game)
        self._expert = ExpertAgent(seed, config, level=level)
        super().__init__(seed, config, level=level)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if hasattr(self, "_reads"):
            self._reads.reset()
        expert = getattr(self, "_expert", None)
        if expert is not None:  # its own stream, derived from the same seed
            expert.reset(None if seed is None else [int(seed), 1])

    # -- decisions -------------------------------------------------------------------

    def act(self, observation, action_mask=None) -> int:
        return self.weigh(observation, action_mask).choice

    def weigh(self, observation, action_mask=None, extra: Sequence[int] = ()) -> Weighing:
        """The decision `act` makes, with the values the bot weighs it by (`act` is this call's `choice`).

        In a draw or discard of a round in play: its candidates' rollout values (`rollout_values`, points:
        the round score minus the opponents' mean). In a final turn, a lay choice or a challenge: the expert's
        (`ExpertAgent.weigh`; a challenge's are `ExpertAgent.challenge_values`). `extra`: legal moves to value
        beside the candidates (the coach's move played), on the same determinizations; they never change the
        values of the candidates or the choice."""
        obs, mask = self._prepare(observation, action_mask)
        legal = legal_list(mask)
        self.last_values = None
        extra = [int(a) for a in extra if int(a) in legal]
        if len(legal) == 1:
            return Weighing([legal[0]], None, legal[0], "only")
        seat = self.view(obs)
        if seat.phase in (LAY, CHALLENGE) or seat.final_turn:
            self._expert.num_players = self.num_players
            return self._expert.weigh(obs, mask)
        if self.reads:
            self._evidence = self._reads.see(seat)
        candidates = self._candidates(seat, legal)
        weighed = candidates + [a for a in dict.fromkeys(extra) if a not in candidates]
        if len(weighed) == 1:
            if self.reads:
                self._reads.played(seat, candidates[0])
            return Weighing(candidates, None, candidates[0], "only")
        points, chances = self._rollouts(seat, obs, weighed)
        values, basis = (chances, "win") if self.win else (points, "rollouts")
        # The best value; of equal ones, the most points; of those, the first candidate.
        best = np.lexsort((-points[: len(candidates)], -values[: len(candidates)]))[0]
        choice = candidates[int(best)]
        if self.reads:
            self._reads.played(seat, choice)
        if len(candidates) > 1:
            self.last_values = (candidates, values[: len(candidates)])
        return Weighing(weighed, values, choice, basis, self.last_samples)

    def _candidates(self, seat: SeatView, legal: list[int]) -> list[int]:
        if seat.phase == DRAW:
            return legal
        legal = self.honest(seat, legal)
        go = [a for a in legal if a >= A.GO_OUT_BASE]
        discards = [a for a in legal if A.DISCARD_BASE <= a < A.GO_OUT_BASE]
        scores = {o.face: o.score for o in self.solver.discard_options(seat.hand)}
        # The `top` discards that keep the best layout now (ties: the lower face first, a fixed order).
        discards.sort(key=lambda a: (-scores.get(a - A.DISCARD_BASE, -(10**9)), a))
        return go + discards[: self.top]

    # -- rollouts --------------------------------------------------------------------

    def rollout_values(self, seat: SeatView, obs: np.ndarray, candidates: list[int]) -> np.ndarray:
        """Each candidate's mean over determinizations of (own round score - the opponents' mean) after the
        round is played out by greedy in every seat; with `reads`, the mean weighted by each determinization's
        `reads.deal_weight`."""
        return self._rollouts(seat, obs, candidates)[0]

    def _rollouts(self, seat: SeatView, obs: np.ndarray, candidates: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """`rollout_values`, and each candidate's chance to win the game over the same determinizations
        (`win_chances`; zeros unless the bot plays for the win)."""
        batch = self._batch(seat.hand_size)
        C = len(candidates)
        turns = self._turns(obs)
        rounds_left = rounds_after(seat.round_fraction, self.config.num_rounds)
        totals = np.zeros(C)
        chances = np.zeros(C)
        weights = np.ones(self.chunk)
        weight_sum = 0.0
        done = 0
        start = time.perf_counter()
        while done < self.samples:
            chunk = min(self.chunk, self.samples - done)
            rows = np.arange(chunk * C, dtype=np.int64)
            for d in range(chunk):
                game = self._determinize(seat, turns, batch)
                if self.reads:
                    weights[d] = deal_weight(self._evidence, game.hands, self.solver)
                seed = int(self.rng.integers(2**63))
                for c in range(C):
                    batch.load(d * C + c, game, seed=seed)
            batch.step(np.tile(np.asarray(candidates, dtype=np.int64), chunk), rows)
            self._play_out(batch, rows)
            scores = batch.totals[rows].astype(np.float64) - np.asarray(seat.totals, dtype=np.float64)
            relative = scores[:, 0] - scores[:, 1:].mean(axis=1)
            totals += (relative.reshape(chunk, C) * weights[:chunk, None]).sum(axis=0)
            if self.win:  # only a bot that plays for the win pays for its chances
                won = win_chances(batch.totals[rows], rounds_left)
                chances += (won.reshape(chunk, C) * weights[:chunk, None]).sum(axis=0)
            weight_sum += weights[:chunk].sum()
            done += chunk
            if self.ms and (time.perf_counter() - start) * 1000 >= self.ms:
                break
        self.last_samples = done
        return totals / weight_sum, chances / weight_sum

    def _play_out(self, batch: BatchGame, rows: np.ndarray) -> None:
        """Play the rows' rounds to their end: greedy in every seat."""
        batch.play_bots(rows, self._greedy_seats(batch), np.zeros(batch.num_games, dtype=np.int64))

    def _batch(self, hand_size: int) -> BatchGame:
        seat_words = bool(self.challenges or self.config.vocabularies)
        key = (hand_size, self.seat if seat_words else 0)
        batch = self._batches.get(key)
        if batch is None:
            # The round in play as a one-round game: its end is the game's end, where the bots stop.
            rules = dataclasses.replace(self.config, num_players=self.num_players, hand_sizes=(hand_size,))
            solver = self.solver
            if seat_words:
                # Its seat is the rollouts' seat 0, the others follow in relative order, each with its vocabulary
                # (the rules name them); the referee is the rules' dictionary, not the bot's own vocabulary.
                n, cfg = self.num_players, self.config
                seats = tuple(cfg.seat_vocabulary((self.seat + k) % n) for k in range(n))
                rules, solver = dataclasses.replace(rules, vocabularies=seats), None
            batch = self._batches[key] = BatchGame(rules, self.chunk * MAX_CANDIDATES, solver=solver)
        return batch

    def _greedy_seats(self, batch: BatchGame) -> np.ndarray:
        """Greedy in every seat of every rollout row (`play_bots`' table), built once."""
        seats = getattr(self, "_greedy", None)
        if seats is None or seats.shape != (batch.num_games, batch.num_players):
            seats = self._greedy = np.full((batch.num_games, batch.num_players), batch_bots.GREEDY, dtype=np.int64)
        return seats

    def _turns(self, obs: np.ndarray) -> int:
        cap = self.config.turn_cap
        if not cap:
            return 0
        fraction = float(observation_layout(self.num_players).view(obs)["turns_this_round"][0])
        return int(round(fraction * cap * self.num_players))

    def _determinize(self, seat: SeatView, turns: int, batch: BatchGame) -> QuiddlerGame:
        """A position the seat cannot tell from the real one: its own seat 0, opponents in relative order,
        their hidden cards and the draw pile dealt at random from the unseen cards."""
        n = self.num_players
        pool = np.repeat(np.arange(NUM_FACES), seat.unseen)
        self.rng.shuffle(pool)
        hands = [list(seat.hand)]
        taken = 0
        for k in range(1, n):
            hand = list(seat.opponent_taken[k - 1])
            hidden = seat.hand_size - sum(hand)
            for f in pool[taken : taken + hidden]:
                hand[f] += 1
            taken += hidden
            hands.append(hand)
        draw_pile = pool[taken:].tolist()
        below = [f for f in range(NUM_FACES) for _ in range(seat.discard_pile[f])]
        if seat.discard_top >= 0:
            below.remove(seat.discard_top)
        self.rng.shuffle(below)
        discard_pile = below + ([seat.discard_top] if seat.discard_top >= 0 else [])
        game = QuiddlerGame(batch.config, batch.solver)
        game.hands = hands
        game.draw_pile = draw_pile
        game.discard_pile = discard_pile
        game.discard_counts = list(seat.discard_pile)
        game.known_taken = [[0] * NUM_FACES] + [list(row) for row in seat.opponent_taken]
        game.totals = list(seat.totals)
        game.round = 0
        game.rounds_completed = 0
        game.dealer = (-seat.seat_from_dealer) % n
        game.current_player = 0
        game.phase = Phase.DRAW if seat.phase == DRAW else Phase.DISCARD
        game.hand_size = seat.hand_size
        game.went_out = None
        game.turns_this_round = turns
        game.reshuffles = 0
        game.lay_order = []
        game.laid = [None] * n
        game.candidates = ()
        game._lay_queue = []
        game._decks = None
        game.round_history = []
        game.last_round_results = None
        game.last_action = None
        game._go_out_bits = None
        return game
