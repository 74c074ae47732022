"""Round scoring (rule book section 6), with every option of `QuiddlerConfig`.

    round score = points of cards in words - points of cards unused + bonuses

Most-words bonus: the player with strictly the most words. Longest-word bonus: the
player with strictly the longest word in letters. A tie gives nobody that bonus.
With exactly two players only the bonus(es) named by `two_player_bonus` are used.
`score_floor`: "round" floors each round score at 0, "total" floors the running
total at 0, "none" allows negatives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .config import QuiddlerConfig
from .solver import Layout


@dataclass(frozen=True)
class RoundResult:
    """One player's scored round: rebuildable from its own fields."""

    player: int
    words: tuple[tuple[str, ...], ...]
    spelled: tuple[str, ...]
    unused: tuple[str, ...]
    card_points: int
    unused_points: int
    bonuses: dict[str, int] = field(default_factory=dict)
    round_score: int = 0
    total: int = 0
    went_out: bool = False
    lay_position: int | None = None
    """When the player laid its words this round: 0 first (the player who went out), 1 next, ..."""

    @classmethod
    def of_layout(cls, player: int, layout: Layout, **scored) -> RoundResult:
        """The result of `player` who laid `layout`; `scored`: bonuses, round_score, total, went_out, lay_position."""
        return cls(
            player=player,
            words=layout.words,
            spelled=layout.spelled,
            unused=layout.unused,
            card_points=layout.card_points,
            unused_points=layout.unused_points,
            **scored,
        )

    def to_dict(self) -> dict:
        """JSON-ready form (lists, not tuples)."""
        return {
            "player": self.player,
            "words": [list(w) for w in self.words],
            "spelled": list(self.spelled),
            "unused": list(self.unused),
            "card_points": self.card_points,
            "unused_points": self.unused_points,
            "bonuses": dict(self.bonuses),
            "round_score": self.round_score,
            "total": self.total,
            "went_out": self.went_out,
            "lay_position": self.lay_position,
        }


def bonuses_in_play(config: QuiddlerConfig, num_players: int) -> tuple[str, ...]:
    """Names of the bonuses awarded at a table of `num_players`."""
    if num_players == 2:
        return {"longest_word": ("longest_word",), "most_words": ("most_words",)}.get(
            config.two_player_bonus, ("most_words", "longest_word")
        )
    return ("most_words", "longest_word")


def _strict_winner(values: Sequence[int]) -> int | None:
    best = max(values)
    winners = [i for i, v in enumerate(values) if v == best]
    return winners[0] if len(winners) == 1 and best > 0 else None


def score_round(
    layouts: Sequence[Layout],
    totals: Sequence[int],
    config: QuiddlerConfig,
    went_out: int | None = None,
    lay_order: Sequence[int] | None = None,
) -> list[RoundResult]:
    """Score one round from the layout each player laid; `totals` are the totals before it, `lay_order` the seats
    in the order they laid. The bonuses are decided here, among all the laid layouts."""
    n = len(layouts)
    awards: list[dict[str, int]] = [{} for _ in range(n)]
    if config.bonus_value:
        for bonus in bonuses_in_play(config, n):
            values = [lay.n_words if bonus == "most_words" else lay.longest for lay in layouts]
            winner = _strict_winner(values)
            if winner is not None:
                awards[winner][bonus] = config.bonus_value
    results = []
    for p, lay in enumerate(layouts):
        score = lay.card_points - lay.unused_points + sum(awards[p].values())
        if config.score_floor == "round":
            score = max(0, score)
        total = totals[p] + score
        if config.score_floor == "total":
            total = max(0, total)
        results.append(
            RoundResult.of_layout(
                p,
                lay,
                bonuses=awards[p],
                round_score=score,
                total=total,
                went_out=went_out == p,
                lay_position=None if lay_order is None else list(lay_order).index(p),
            )
        )
    return results
