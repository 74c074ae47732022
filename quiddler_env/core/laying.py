"""Laying words as the table lays them (rule book section 6, "Laying"): pure, no RL imports.

Laying order: the player who went out lays when going out; each other player lays
right after its final turn, in turn order. After a turn cap with nobody out, everyone
lays at the round's end, in turn order from the round's first player. Laid words are
public at once, so each player lays knowing the layouts already laid.

The automatic rule (`auto_layout`): a player lays, among the layouts of its hand, the
one with the highest `lay_key` = (card points used minus unused plus the bonuses it
would win against the layouts already laid, longest word in letters, number of
words); remaining ties go to the first in the front's fixed order (score, then
longest, then words, all descending). The player who went out lays every card. A
layout wins a bonus in play (`scoring.bonuses_in_play`) when its figure (words, or
letters of its longest word) is above zero and strictly above every laid layout's;
a tie with any laid layout wins nothing (and, at the round's scoring, gives nobody the
bonus). With nothing laid, a layout with words wins every bonus in play. The rule
counts only the player's own points: it does not lay to deny a later player a bonus.

The choice is made on the Pareto front of the hand's layouts over (score, longest,
words) (`HandSolver.layout_front`). With `bonus_value` >= 0 the bonuses never fall as
the longest word or the number of words grows, so the best layout under `lay_key` is
always on the front. (With a negative `bonus_value` the rule is, by definition, the best
layout of the front.)

The players' choice (`candidates`): each player, at its laying moment, chooses among
its candidate layouts: the front (only layouts laying every card for the player who
goes out), in the front's order, cut to its first K = `MAX_CANDIDATES`. K is measured
with `benchmarks/bench_laying.py`: over 20,000 random hands of 1..11 cards per setting
(half of them 11 cards; both minimum word sizes; every card laid, on hands that go
out, or not) the largest front seen has 9 layouts (11 cards, one-card words allowed;
8 with the default two-card words, 6 when going out). K = 16 leaves nearly twice that,
so no Pareto-best layout of a dealt hand was dropped in the measurement. Should a
larger front occur, the cut is explicit: the layouts after the first K in the front's
order (score, then longest, then words, all descending) are dropped.

Every layout of a front has its own (longest, words), so two front layouts never tie
under `lay_key`; the "first in the front's order" tie-break only decides among
candidates passed in with equal figures.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import FACE_INDEX, FACES, NUM_FACES, POINTS
from .config import MAX_HAND_SIZE, QuiddlerConfig
from .scoring import bonuses_in_play
from .solver import Figures, HandSolver, Layout

MAX_CANDIDATES = 16
"""K: the most candidate layouts a player chooses among (the largest front measured is 9)."""
MAX_LAID_WORDS = MAX_HAND_SIZE
"""The most words one layout holds: a player lays at most a dealt hand's cards, each word one card or more."""


def _figure(layout: Layout, bonus: str) -> int:
    return layout.n_words if bonus == "most_words" else layout.longest


def bonuses_won(layout: Layout, laid: Sequence[Layout], config: QuiddlerConfig, num_players: int) -> dict[str, int]:
    """The bonuses `layout` would win against the layouts already `laid`: {name: points}."""
    if not config.bonus_value:
        return {}
    won = {}
    for bonus in bonuses_in_play(config, num_players):
        mine = _figure(layout, bonus)
        if mine > 0 and all(mine > _figure(other, bonus) for other in laid):
            won[bonus] = config.bonus_value
    return won


def lay_key(layout: Layout, laid: Sequence[Layout], config: QuiddlerConfig, num_players: int) -> tuple[int, int, int]:
    """The automatic rule's order: (score + bonuses won, longest word, number of words)."""
    bonus = sum(bonuses_won(layout, laid, config, num_players).values())
    return (layout.score + bonus, layout.longest, layout.n_words)


def auto_index(
    front: Sequence[Layout | Figures], laid: Sequence[Layout | Figures], config: QuiddlerConfig, num_players: int
) -> int:
    """The index of the first layout of `front` with the highest `lay_key` (the automatic rule).

    Anything with `score`, `longest` and `n_words` will do (`Layout`, or the cheaper `Figures` of
    `HandSolver.front_figures`, or what an observation shows of laid and candidate layouts).
    """
    if not front:
        raise ValueError("no layout to lay: the front is empty")
    best, best_key = 0, lay_key(front[0], laid, config, num_players)
    for i in range(1, len(front)):
        key = lay_key(front[i], laid, config, num_players)
        if key > best_key:
            best, best_key = i, key
    return best


def auto_layout(front: Sequence[Layout], laid: Sequence[Layout], config: QuiddlerConfig, num_players: int) -> Layout:
    """The first layout of `front` with the highest `lay_key` (the automatic rule)."""
    return front[auto_index(front, laid, config, num_players)]


def candidates(solver: HandSolver, counts: Sequence[int], *, goes_out: bool, bluff: bool = False) -> tuple[Layout, ...]:
    """A player's candidate layouts: the front (laying every card if it goes out), its first `MAX_CANDIDATES`.

    `bluff` (the challenge variant with `layout: choose`): as `bluff_candidates` gives them.
    """
    if bluff:
        return bluff_candidates(solver, counts, goes_out=goes_out)[0]
    return solver.layout_front(counts, full_only=goes_out)[:MAX_CANDIDATES]


def bluff_candidates(
    solver: HandSolver, counts: Sequence[int], *, goes_out: bool
) -> tuple[tuple[Layout, ...], int | None]:
    """The challenge variant's candidates under `layout: choose`: the front's first K - 1 and, last, the best
    bluff (`best_bluff`) if the hand has one; with the bluff's index (None without one)."""
    honest = solver.layout_front(counts, full_only=goes_out)[: MAX_CANDIDATES - 1]
    claim = best_bluff(solver, counts)
    if claim is None:
        return honest, None
    return honest + (claim,), len(honest)


def best_bluff(solver: HandSolver, counts: Sequence[int]) -> Layout | None:
    """The challenge variant's bluff: a layout laying every card, the cards the player's vocabulary cannot place
    claimed as one more word (spelled in face order).

    Of the honest layouts on the hand's front (and laying nothing, which claims the whole hand), the one that
    risks the fewest points: the highest score, first in the front's order, whose leftover cards can be a word
    (at least `min_word_cards` of them). None if there is no such leftover: a hand that lays out honestly
    has no bluff to make beyond what the leftover allows.
    """
    n_cards = sum(counts)
    whole = Layout(
        words=(),
        spelled=(),
        unused=tuple(FACES[f] for f in range(NUM_FACES) for _ in range(counts[f])),
        score=-sum(POINTS[f] * c for f, c in enumerate(counts)),
        card_points=0,
        unused_points=sum(POINTS[f] * c for f, c in enumerate(counts)),
    )
    best = None
    for base in (*solver.layout_front(counts), whole):
        left = len(base.unused)
        if left and solver.min_cards <= left <= n_cards and (best is None or base.score > best.score):
            best = base
    return None if best is None else claim_unused(best)


def claim_unused(base: Layout) -> Layout:
    """`base` with its unused cards claimed as one more word, last, spelled in face order (`best_bluff`'s form)."""
    claimed = tuple(sorted(base.unused, key=FACE_INDEX.__getitem__))
    points = base.unused_points
    return Layout(
        words=base.words + (claimed,),
        spelled=base.spelled + ("".join(f.lower() for f in claimed),),
        unused=(),
        score=base.card_points + points,
        card_points=base.card_points + points,
        unused_points=0,
    )
