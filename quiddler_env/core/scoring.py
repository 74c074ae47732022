"""Round scoring (rule book section 6), with every option of `QuiddlerConfig`.

    round score = points of cards in words - points of cards unused + bonuses

Most-words bonus: the player with strictly the most words. Longest-word bonus: the
player with strictly the longest word in letters. A tie gives nobody that bonus.
With exactly two players only the bonus(es) named by `two_player_bonus` are used.
`score_floor`: "round" floors each round score at 0, "total" floors the running
total at 0, "none" allows negatives.

Challenges (`challenges: true`, rule book section 7): a word that fails a challenge is
no word: its cards count as unused, and it counts for neither the most words nor the
longest word, which are decided after the challenges. A challenger whose challenged
word stands loses that word's points. The player who went out and had a word fail
also loses `failed_go_out_penalty`. The score floor applies after all of these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .cards import FACE_INDEX, POINTS
from .config import QuiddlerConfig
from .solver import Layout


@dataclass(frozen=True)
class Challenge:
    """One challenge of the challenge phase and the referee's verdict on the word."""

    challenger: int
    player: int
    """The seat whose word was challenged."""
    word: int
    """The word's index among the words `player` laid."""
    spelled: str
    points: int
    """The word's card points (what is at stake)."""
    valid: bool
    """The referee knows the word: the challenger loses `points`; otherwise the word fails."""

    def to_dict(self) -> dict:
        return {
            "challenger": self.challenger,
            "player": self.player,
            "word": self.word,
            "spelled": self.spelled,
            "points": self.points,
            "valid": self.valid,
        }


@dataclass(frozen=True)
class ChallengeScore:
    """What the challenge phase did to one player's round (present only with `challenges: true`)."""

    failed: tuple[str, ...] = ()
    """Its words that failed a challenge (their cards are in `unused`)."""
    challenge_points: int = 0
    """Points it lost for challenging words that stood (0 or less)."""
    go_out_penalty: int = 0
    """`-failed_go_out_penalty` if it went out and a word of it failed, else 0."""
    made: int = 0
    """Challenges it made this round."""
    won: int = 0
    """Of those, the words that failed."""
    challenged: int = 0
    """Its own words that others challenged (`failed` of them failed)."""

    @property
    def lost(self) -> int:
        return self.made - self.won

    def to_dict(self) -> dict:
        return {
            "failed": list(self.failed),
            "challenge_points": self.challenge_points,
            "go_out_penalty": self.go_out_penalty,
            "made": self.made,
            "won": self.won,
            "lost": self.lost,
            "challenged": self.challenged,
        }


def word_points(faces: Sequence[str]) -> int:
    """Card points of a word given as its faces."""
    return sum(POINTS[FACE_INDEX[f]] for f in faces)


def without_words(layout: Layout, drop: Sequence[int]) -> Layout:
    """`layout` with the words at indices `drop` taken out: their cards count as unused."""
    if not drop:
        return layout
    gone = set(drop)
    points = sum(word_points(layout.words[i]) for i in gone)
    unused = list(layout.unused) + [f for i in sorted(gone) for f in layout.words[i]]
    return Layout(
        words=tuple(w for i, w in enumerate(layout.words) if i not in gone),
        spelled=tuple(w for i, w in enumerate(layout.spelled) if i not in gone),
        unused=tuple(sorted(unused, key=FACE_INDEX.__getitem__)),
        score=layout.score - 2 * points,
        card_points=layout.card_points - points,
        unused_points=layout.unused_points + points,
    )


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
    challenge: ChallengeScore | None = None
    """With `challenges: true`: what the challenge phase did (then `words` are the words that stood)."""

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
        } | ({"challenge": self.challenge.to_dict()} if self.challenge is not None else {})


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


def challenge_scores(
    layouts: Sequence[Layout], challenges: Sequence[Challenge], config: QuiddlerConfig, went_out: int | None
) -> tuple[list[ChallengeScore], list[Layout]]:
    """What the challenge phase did to each player, and each one's layout less its words that failed."""
    scores, stood = [], []
    for p, layout in enumerate(layouts):
        failed = sorted(c.word for c in challenges if c.player == p and not c.valid)
        mine = [c for c in challenges if c.challenger == p]
        scores.append(
            ChallengeScore(
                failed=tuple(layout.spelled[i] for i in failed),
                challenge_points=-sum(c.points for c in mine if c.valid),
                go_out_penalty=-config.failed_go_out_penalty if failed and went_out == p else 0,
                made=len(mine),
                won=sum(not c.valid for c in mine),
                challenged=sum(c.player == p for c in challenges),
            )
        )
        stood.append(without_words(layout, failed))
    return scores, stood


def score_round(
    layouts: Sequence[Layout],
    totals: Sequence[int],
    config: QuiddlerConfig,
    went_out: int | None = None,
    lay_order: Sequence[int] | None = None,
    challenges: Sequence[Challenge] = (),
) -> list[RoundResult]:
    """Score one round from the layout each player laid; `totals` are the totals before it, `lay_order` the seats
    in the order they laid, `challenges` the challenge phase's (with `challenges: true`). The bonuses are decided
    here, among the laid layouts less their failed words."""
    n = len(layouts)
    variant = config.challenges
    if challenges and not variant:
        raise ValueError("challenges were made, but the rules have challenges: false")
    scores = [ChallengeScore() for _ in range(n)]
    if variant:
        scores, layouts = challenge_scores(layouts, challenges, config, went_out)
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
        score += scores[p].challenge_points + scores[p].go_out_penalty
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
                challenge=scores[p] if variant else None,
            )
        )
    return results
