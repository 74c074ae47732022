"""The `expert` bot: card counting and a sampled one-draw lookahead."""

from __future__ import annotations

import numpy as np

from quiddler_env.core import actions as A
from quiddler_env.core.cards import NUM_FACES
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.scoring import bonuses_in_play
from quiddler_env.core.solver import DiscardFigures

from .base import CHALLENGE, DRAW, INVALID_PRIOR, LAY, BaseAgent, SeatView, Weighing, legal_list
from .params import LEVEL_PARAM, MAX_GO_OUT_VALUE, MAX_SAMPLES, MAX_TOP, Param, check_params

DEFAULT_SAMPLES = 32
_MAX_FIGURE = 16
"""Above every CDF table's length: a longest word or word count past it beats the table for sure."""

# How long an opponent's longest word and how many words it lays, at the end of a
# round with `hand_size` cards dealt: P(opponent's value <= k) for k = 0, 1, 2, ...
# Measured from the final layouts of greedy-vs-greedy games (2,000 games, 2 players,
# default rules); the expert's prior for "is this bonus within reach".
_LONGEST_CDF: dict[int, tuple[float, ...]] = {
    3: (0.072, 0.072, 0.126, 0.838, 0.99, 1.0),
    4: (0.031, 0.031, 0.295, 0.527, 0.911, 0.992, 1.0),
    5: (0.009, 0.009, 0.02, 0.651, 0.87, 0.975, 0.998, 1.0),
    6: (0.005, 0.005, 0.094, 0.397, 0.846, 0.973, 0.997, 1.0),
    7: (0.004, 0.004, 0.004, 0.34, 0.756, 0.961, 0.994, 0.999, 1.0),
    8: (0.0, 0.0, 0.058, 0.302, 0.724, 0.942, 0.994, 0.999, 1.0),
    9: (0.0, 0.0, 0.002, 0.256, 0.674, 0.936, 0.992, 0.999, 1.0),
    10: (0.0, 0.0, 0.033, 0.19, 0.591, 0.905, 0.99, 0.999, 1.0),
}
_WORDS_CDF: dict[int, tuple[float, ...]] = {
    3: (0.072, 1.0),
    4: (0.031, 0.596, 1.0),
    5: (0.009, 0.199, 1.0),
    6: (0.005, 0.071, 0.821, 1.0),
    7: (0.004, 0.03, 0.521, 1.0),
    8: (0.0, 0.014, 0.241, 0.868, 1.0),
    9: (0.0, 0.006, 0.092, 0.64, 1.0),
    10: (0.0, 0.002, 0.035, 0.435, 0.896, 1.0),
}


def beat_probability(cdf_table: dict[int, tuple[float, ...]], hand_size: int, mine: int, opponents: int) -> float:
    """Chance that `mine` is strictly above every opponent's value (a tie wins nobody the bonus)."""
    if mine <= 0:
        return 0.0
    cdf = cdf_table[min(max(hand_size, min(cdf_table)), max(cdf_table))]
    below = cdf[min(mine - 1, len(cdf) - 1)]
    return below**opponents


class ExpertAgent(BaseAgent):
    """Values each draw and each discard by the expected best layout after its next draw.

    Card counting: the cards it has not seen (not in its hand, the discard pile, or
    what opponents visibly took) are what a draw from the pile may give.

    - Draw: taking the discard top is worth the best hand it can then keep; drawing
      from the pile is worth the same averaged over `samples` cards sampled from the
      unseen ones. It takes the discard only when that is worth more.
    - Discard: its `top` best discards by the hand kept now are each valued by the
      expected best kept hand after one more sampled draw, so it keeps the cards that
      combine with what is still out there.
    - A hand's worth: its best layout score, plus each bonus in play times the odds
      that its longest word (most words) beats every opponent's (`_LONGEST_CDF`,
      `_WORDS_CDF`), floored at 0 like a round score; a hand that can go out is worth
      `go_out_value` more (going out ends the round before opponents improve).
    - Going out: whenever it can (in this game the round ends within a few turns, so
      waiting for a better layout mostly hands the opponents another turn), keeping
      the best-valued hand. In a final turn it keeps the best-valued hand outright.

    Decisions depend only on the observation and its own generator (the samples and
    the tie-breaks), so the same seed replays the same decisions.
    """

    name = "expert"

    PARAMS = {
        "samples": Param(int, 1, MAX_SAMPLES),
        "top": Param(int, 1, MAX_TOP),
        "go_out_value": Param(float, -MAX_GO_OUT_VALUE, MAX_GO_OUT_VALUE),
        "level": LEVEL_PARAM,
    }
    """The spec's parameters (`expert:samples=64`) and their bounds."""

    def __init__(
        self,
        seed: int | None = None,
        config: QuiddlerConfig | None = None,
        *,
        level: int | str | None = None,
        samples: int = DEFAULT_SAMPLES,
        top: int = 4,
        go_out_value: float = 10.0,
    ):
        checked = check_params("expert", self.PARAMS, samples=samples, top=top, go_out_value=go_out_value)
        self.samples = checked["samples"]
        self.top = checked["top"]
        self.go_out_value = checked["go_out_value"]
        self._odds: dict[int, dict[str, np.ndarray]] = {}
        super().__init__(seed, config, level=level)

    # -- values ----------------------------------------------------------------------

    def _beat_odds(self, hand_size: int) -> dict[str, np.ndarray]:
        """Per bonus in play, `beat_probability` of each value 0.._MAX_FIGURE at this hand size."""
        odds = self._odds.get(hand_size)
        if odds is None:
            opponents = self.num_players - 1
            odds = self._odds[hand_size] = {
                bonus: np.array(
                    [
                        beat_probability(
                            _LONGEST_CDF if bonus == "longest_word" else _WORDS_CDF, hand_size, k, opponents
                        )
                        for k in range(_MAX_FIGURE + 1)
                    ]
                )
                for bonus in bonuses_in_play(self.config, self.num_players)
            }
        return odds

    def _values(self, options: DiscardFigures, hand_size: int, final: bool) -> np.ndarray:
        """What keeping each option's hand is worth: layout score, expected bonuses, going out (one per face)."""
        cfg = self.config
        values = options.score.astype(np.float64)
        if cfg.bonus_value:
            for bonus, odds in self._beat_odds(hand_size).items():
                mine = options.longest if bonus == "longest_word" else options.n_words
                values = values + cfg.bonus_value * odds[np.minimum(mine, _MAX_FIGURE)]
        if cfg.score_floor == "round":
            values = np.maximum(values, 0.0)
        if not final:
            values = values + np.where(options.goes_out, self.go_out_value, 0.0)
        return values

    def _best_kept(self, hand: list[int], drawn, final: bool) -> np.ndarray:
        """For each face in `drawn`: the value of holding `hand` plus that card, by its best discard."""
        options = self.solver.draw_discard_figures(hand, drawn)
        values = np.where(options.faces >= 0, self._values(options, sum(hand), final), -np.inf)
        return values.max(axis=1)

    def _sample_draws(self, seat: SeatView) -> tuple[np.ndarray, np.ndarray]:
        """Faces a draw from the pile may give and their weights, from `samples` sampled cards."""
        weights = np.asarray(seat.draw_pile_weights(), dtype=np.float64)
        total = weights.sum()
        if total <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        drawn = self.rng.choice(NUM_FACES, size=self.samples, p=weights / total)
        counts = np.bincount(drawn, minlength=NUM_FACES)
        faces = np.flatnonzero(counts)
        return faces, counts[faces] / self.samples

    def _expected(self, hand: list[int], faces: np.ndarray, probs: np.ndarray, final: bool) -> float:
        """The value of `hand` after a draw from the pile: `_best_kept` averaged over the sampled faces."""
        best = self._best_kept(hand, faces, final).tolist()
        return float(sum(p * v for p, v in zip(probs.tolist(), best, strict=True)))

    # -- decisions -------------------------------------------------------------------

    def act(self, observation, action_mask=None) -> int:
        return self.weigh(observation, action_mask).choice

    def weigh(self, observation, action_mask=None) -> Weighing:
        """The decision `act` makes, with the values it compares (points of the hand or layout kept, with the
        bonuses it expects; see the class docstring); `act` is this call's `choice`."""
        obs, mask = self._prepare(observation, action_mask)
        legal = legal_list(mask)
        if len(legal) == 1:
            return Weighing([legal[0]], None, legal[0], "only")
        seat = self.view(obs)
        if seat.phase == CHALLENGE:
            return Weighing(legal, self.challenge_values(seat, legal), self.challenge_move(seat, legal), "challenge")
        legal = self.honest(seat, legal)
        if seat.phase == DRAW:
            moves, values = self._draw(seat, legal)
        elif seat.phase == LAY:
            return self._lay(seat, legal)
        else:
            moves, values = self._discard(seat, legal)
        if values is None:
            return Weighing(moves, None, moves[0], "unweighed")
        # A draw's choice is its first move (no tie-break draw from the generator); a discard's, `_pick`'s.
        choice = moves[0] if seat.phase == DRAW else self._pick(moves, values)
        return Weighing(moves, np.asarray(values, dtype=np.float64), choice, "expert")

    def challenge_values(self, seat: SeatView, legal: list[int]) -> np.ndarray:
        """The values `challenge_move` decides by, per legal move: 0 for passing; for challenging a word its
        expected gain in points, P(invalid) x 2 x its points (a failed word's cards count against its player)
        minus P(valid) x its points (what a word that stands costs the challenger). A word in the bot's own
        vocabulary is valid to it (P(invalid) = 0); one it does not know is invalid with the probability
        `challenge_move` reckons from its vocabulary's coverage. The move `challenge_move` plays is the first
        of the largest values (passing unless a challenge gains)."""
        b = INVALID_PRIOR["choose" if self.config.layout == "choose" else "auto"]
        c = min(max(seat.coverage, 0.0), 1.0)
        unknown = b / (b + (1.0 - b) * (1.0 - c)) if b > 0 else 0.0
        values = np.zeros(len(legal))
        for i, a in enumerate(legal):
            if a >= A.CHALLENGE_BASE:
                k, j = A.challenged(a)
                word = seat.words[k][j]
                p = 0.0 if word.known else unknown
                values[i] = p * 2 * word.points - (1.0 - p) * word.points
        return values

    def _lay(self, seat: SeatView, legal: list[int]) -> Weighing:
        """`layout: choose`: the candidate with the most card points plus the bonuses it expects to keep.

        A bonus counts only if the layout beats every layout already laid, and then by the
        odds (its prior) that it also beats each opponent still to lay.
        """
        laid = [f for f in seat.laid if f is not None]
        waiting = sum(1 for f in seat.laid[1:] if f is None)
        cfg = self.config
        keys = []
        for a in legal:
            layout = seat.candidates[a - A.LAY_BASE]
            value = float(layout.score)
            for bonus in bonuses_in_play(cfg, self.num_players):
                table, mine = (_WORDS_CDF, layout.n_words) if bonus == "most_words" else (_LONGEST_CDF, layout.longest)
                others = [f.n_words if bonus == "most_words" else f.longest for f in laid]
                if cfg.bonus_value and mine > 0 and all(mine > o for o in others):
                    value += cfg.bonus_value * beat_probability(table, seat.hand_size, mine, waiting)
            keys.append((value, layout.longest, layout.n_words, -a))
        choice = legal[max(range(len(legal)), key=keys.__getitem__)]
        return Weighing(list(legal), np.array([k[0] for k in keys]), choice, "expert")

    def _draw(self, seat: SeatView, legal: list[int]) -> tuple[list[int], list[float] | None]:
        """The draws weighed and their values (the first move and None where there is no choice to weigh)."""
        if not (A.TAKE_DISCARD in legal and A.DRAW_PILE in legal and seat.discard_top >= 0):
            return [legal[0]], None
        hand = list(seat.hand)
        final = seat.final_turn
        take = float(self._best_kept(hand, [seat.discard_top], final)[0])
        faces, probs = self._sample_draws(seat)
        if faces.size == 0:
            return [A.TAKE_DISCARD], [take]
        draw = self._expected(hand, faces, probs, final)
        # The choice first: the discard only when it is worth more (a tie draws from the pile).
        return (
            ([A.DRAW_PILE, A.TAKE_DISCARD], [draw, take])
            if take <= draw
            else ([A.TAKE_DISCARD, A.DRAW_PILE], [take, draw])
        )

    def _discard(self, seat: SeatView, legal: list[int]) -> tuple[list[int], list[float] | None]:
        """The discards (or go-outs) weighed and their values; a random legal move and None for a mask this hand
        cannot explain."""
        options = self.solver.discard_figures(seat.hand)
        index = {f: j for j, f in enumerate(options.faces.tolist())}
        go = [a for a in legal if a >= A.GO_OUT_BASE and a - A.GO_OUT_BASE in index]
        size = seat.hand_size
        if go:
            final_values = self._values(options, size, True).tolist()
            return go, [final_values[index[a - A.GO_OUT_BASE]] for a in go]
        pool = [a for a in legal if A.DISCARD_BASE <= a < A.GO_OUT_BASE and a - A.DISCARD_BASE in index]
        if not pool:  # a mask this hand cannot explain: still never leave the mask
            return [legal[int(self.rng.integers(len(legal)))]], None
        now = [index[a - A.DISCARD_BASE] for a in pool]
        if seat.final_turn:  # the round ends for this seat after this discard
            final_values = self._values(options, size, True).tolist()
            return pool, [final_values[j] for j in now]
        # Shortlist by the hand kept now, then look one draw ahead.
        kept_values = self._values(options, size, False).tolist()
        now_values = [kept_values[j] for j in now]
        order = sorted(range(len(pool)), key=lambda i: -now_values[i])[: self.top]
        faces, probs = self._sample_draws(seat)
        values = []
        for i in order:
            kept = list(seat.hand)
            kept[pool[i] - A.DISCARD_BASE] -= 1
            ahead = self._expected(kept, faces, probs, False) if faces.size else now_values[i]
            values.append(ahead)
        return [pool[i] for i in order], values

    def _pick(self, actions: list[int], values: list[float]) -> int:
        best = max(values)
        ties = [a for a, v in zip(actions, values, strict=True) if v >= best - 1e-9]
        return ties[int(self.rng.integers(len(ties)))] if len(ties) > 1 else ties[0]
