"""The action table: `Discrete(64)`, masked to the legal moves; `layout: choose` adds the lay moves after id 63.

| id | move | legal when |
|---|---|---|
| 0 | draw the top card of the draw pile | draw phase (and the draw pile, or the discard pile below its top, has cards) |
| 1 | take the top card of the discard pile | draw phase |
| 2 + f | discard one card of face f (f = 0..30 in `cards.FACES` order) | discard phase, face f in hand |
| 33 + f | discard one card of face f and go out | discard phase, the rest of the hand can all be laid in words, not in a final turn |
| 64 + k | lay candidate layout k (k = 0..K-1, `laying.MAX_CANDIDATES`) | lay phase (`layout: choose`), k < the number of candidates |
| 80 | pass: challenge no more this round | challenge phase (`challenges: true`) |
| 81 + 11 (r - 1) + j | challenge word j (0..10, `laying.MAX_LAID_WORDS`) of the player r seats to the left (r = 1..7) | challenge phase, that word laid and not yet challenged |

The table has 64 actions, 80 with `layout: choose`, and 158 with `challenges: true`
(whatever the layout rule: the lay moves keep their ids, masked off under `auto`).
"""

from __future__ import annotations

from .cards import FACES, NUM_FACES
from .config import MAX_PLAYERS
from .laying import MAX_CANDIDATES, MAX_LAID_WORDS

DRAW_PILE = 0
TAKE_DISCARD = 1
DISCARD_BASE = 2
GO_OUT_BASE = DISCARD_BASE + NUM_FACES  # 33
NUM_ACTIONS = GO_OUT_BASE + NUM_FACES  # 64: the table without lay moves (`layout: auto`)
LAY_BASE = NUM_ACTIONS
PASS = LAY_BASE + MAX_CANDIDATES  # 80
CHALLENGE_BASE = PASS + 1  # 81
NUM_CHALLENGE_ACTIONS = CHALLENGE_BASE + (MAX_PLAYERS - 1) * MAX_LAID_WORDS  # 158: the table with challenges


def num_actions(layout: str = "auto", challenges: bool = False) -> int:
    """The size of the action table: 64, 64 + K with the lay moves of `layout: choose`, 158 with `challenges`."""
    if challenges:
        return NUM_CHALLENGE_ACTIONS
    return NUM_ACTIONS + (MAX_CANDIDATES if layout == "choose" else 0)


def challenge(seat: int, word: int) -> int:
    """Action id: challenge word `word` of the player `seat` seats to the left (1 = the next)."""
    if not 1 <= seat < MAX_PLAYERS or not 0 <= word < MAX_LAID_WORDS:
        raise ValueError(f"no challenge of word {word} of relative seat {seat}")
    return CHALLENGE_BASE + (seat - 1) * MAX_LAID_WORDS + word


def challenged(action: int) -> tuple[int, int]:
    """(relative seat, word index) a challenge action names."""
    if not CHALLENGE_BASE <= action < NUM_CHALLENGE_ACTIONS:
        raise ValueError(f"action {action!r} is not a challenge")
    seat, word = divmod(action - CHALLENGE_BASE, MAX_LAID_WORDS)
    return seat + 1, word


def lay(k: int) -> int:
    """Action id: lay candidate layout k."""
    return LAY_BASE + k


def discard(face: int) -> int:
    """Action id: discard one card of `face`."""
    return DISCARD_BASE + face


def go_out(face: int) -> int:
    """Action id: discard one card of `face` and go out."""
    return GO_OUT_BASE + face


def action_name(action: int) -> str:
    """A readable name: 'draw', 'take discard', 'discard QU', 'go out discarding M'."""
    if action == DRAW_PILE:
        return "draw"
    if action == TAKE_DISCARD:
        return "take discard"
    if DISCARD_BASE <= action < GO_OUT_BASE:
        return f"discard {FACES[action - DISCARD_BASE]}"
    if GO_OUT_BASE <= action < NUM_ACTIONS:
        return f"go out discarding {FACES[action - GO_OUT_BASE]}"
    if LAY_BASE <= action < LAY_BASE + MAX_CANDIDATES:
        return f"lay candidate {action - LAY_BASE}"
    if action == PASS:
        return "pass"
    if CHALLENGE_BASE <= action < NUM_CHALLENGE_ACTIONS:
        seat, word = challenged(action)
        return f"challenge word {word} of seat +{seat}"
    raise ValueError(f"action {action!r} is out of range 0..{NUM_CHALLENGE_ACTIONS - 1}")


def discarded_face(action: int) -> int:
    """The face an action discards (-1 for the draw and lay actions)."""
    if action >= LAY_BASE:
        return -1
    if action >= GO_OUT_BASE:
        return action - GO_OUT_BASE
    if action >= DISCARD_BASE:
        return action - DISCARD_BASE
    return -1


assert NUM_ACTIONS == 64
