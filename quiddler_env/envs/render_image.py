"""The table as an RGB image (`render_mode="rgb_array"`), drawn with numpy alone.

`render_rgb(game, names, shown, last_move)` takes what `common.render_table` takes and returns a
uint8 array (height, width, 3): the round, whose move it is and the last move; the draw pile (a
card back and its size) and the top of the discard pile; then a row per seat with its name, total
and last round's score, its hand, and the words it laid this round. The hands of the seats in
`shown` are face up; every other hand shows the cards it publicly took from the discard pile face
up and the rest as card backs (what the text table shows). The image's size depends on the number
of players only, so every frame of a game has the same shape (what a video recorder needs).

The letters are a 5x7 bitmap font (A-Z, 0-9 and a few symbols; lower case is drawn upper case,
anything else as "?") scaled up; a card is its face in large letters and its points in small.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.cards import FACES, NUM_FACES, POINTS
from ..core.game import Phase, QuiddlerGame

# One glyph per line: the character, then its 7 rows of 5 pixels ('#' set).
_FONT_TABLE = """
A .###. #...# #...# ##### #...# #...# #...#
B ####. #...# #...# ####. #...# #...# ####.
C .###. #...# #.... #.... #.... #...# .###.
D ###.. #..#. #...# #...# #...# #..#. ###..
E ##### #.... #.... ####. #.... #.... #####
F ##### #.... #.... ####. #.... #.... #....
G .###. #...# #.... #.### #...# #...# .####
H #...# #...# #...# ##### #...# #...# #...#
I .###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.
J ..### ...#. ...#. ...#. ...#. #..#. .##..
K #...# #..#. #.#.. ##... #.#.. #..#. #...#
L #.... #.... #.... #.... #.... #.... #####
M #...# ##.## #.#.# #.#.# #...# #...# #...#
N #...# #...# ##..# #.#.# #..## #...# #...#
O .###. #...# #...# #...# #...# #...# .###.
P ####. #...# #...# ####. #.... #.... #....
Q .###. #...# #...# #...# #.#.# #..#. .##.#
R ####. #...# #...# ####. #.#.. #..#. #...#
S .#### #.... #.... .###. ....# ....# ####.
T ##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..
U #...# #...# #...# #...# #...# #...# .###.
V #...# #...# #...# #...# #...# .#.#. ..#..
W #...# #...# #...# #.#.# #.#.# #.#.# .#.#.
X #...# #...# .#.#. ..#.. .#.#. #...# #...#
Y #...# #...# .#.#. ..#.. ..#.. ..#.. ..#..
Z ##### ....# ...#. ..#.. .#... #.... #####
0 .###. #...# #..## #.#.# ##..# #...# .###.
1 ..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.
2 .###. #...# ....# ...#. ..#.. .#... #####
3 ##### ...#. ..#.. ...#. ....# #...# .###.
4 ...#. ..##. .#.#. #..#. ##### ...#. ...#.
5 ##### #.... ####. ....# ....# #...# .###.
6 ..##. .#... #.... ####. #...# #...# .###.
7 ##### ....# ...#. ..#.. .#... .#... .#...
8 .###. #...# #...# .###. #...# #...# .###.
9 .###. #...# #...# .#### ....# ...#. .##..
/ ..... ....# ...#. ..#.. .#... #.... .....
: ..... .##.. .##.. ..... .##.. .##.. .....
- ..... ..... ..... ##### ..... ..... .....
+ ..... ..#.. ..#.. ##### ..#.. ..#.. .....
* ..... ..#.. #.#.# .###. #.#.# ..#.. .....
( ...#. ..#.. .#... .#... .#... ..#.. ...#.
) .#... ..#.. ...#. ...#. ...#. ..#.. .#...
. ..... ..... ..... ..... ..... .##.. .##..
, ..... ..... ..... ..... .##.. ..#.. .#...
! ..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..
? .###. #...# ....# ...#. ..#.. ..... ..#..
= ..... ..... ##### ..... ##### ..... .....
# .#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.
_ ..... ..... ..... ..... ..... ..... #####
> .#... ..#.. ...#. ....# ...#. ..#.. .#...
< ...#. ..#.. .#... #.... .#... ..#.. ...#.
' ..#.. ..#.. .#... ..... ..... ..... .....
"""

GLYPH_W, GLYPH_H = 5, 7
GLYPHS: dict[str, np.ndarray] = {
    line[0]: np.asarray([[c == "#" for c in row] for row in line[2:].split()], dtype=bool)
    for line in _FONT_TABLE.strip("\n").splitlines()
}
GLYPHS[" "] = np.zeros((GLYPH_H, GLYPH_W), dtype=bool)

BACKGROUND = (22, 92, 52)
TEXT = (240, 240, 230)
HIGHLIGHT = (255, 214, 0)
DIM = (160, 200, 170)
CARD_FACE = (250, 246, 232)
CARD_EDGE = (35, 35, 35)
CARD_INK = (20, 20, 20)
POINTS_INK = (176, 28, 28)
CARD_BACK = (44, 72, 160)
CARD_BACK_INNER = (96, 132, 214)

CARD_W, CARD_H = 34, 46
CARD_PITCH = CARD_W + 4
MAX_CARDS = 12  # a hand of 11 (the largest deal) plus the card drawn
MARGIN = 8
HEADER_H = 8 + CARD_H + 20
ROW_H = CARD_H + 22
NAME_W = 158
WIDTH = NAME_W + MAX_CARDS * CARD_PITCH + MARGIN  # 622


def glyph(char: str) -> np.ndarray:
    """The 7x5 bool bitmap of `char` (upper-cased; "?" for a character the font lacks)."""
    return GLYPHS.get(char.upper(), GLYPHS["?"])


def text_width(text: str, scale: int = 1) -> int:
    """Pixels `text` takes at `scale` (one pixel of space between letters, scaled)."""
    return max(0, len(text) * (GLYPH_W + 1) * scale - scale)


def draw_text(image: np.ndarray, x: int, y: int, text: str, color: tuple[int, int, int], scale: int = 1) -> None:
    """Paint `text` with its top-left corner at (x, y), letters `scale` times the 5x7 font; clipped to the image."""
    height, width = image.shape[:2]
    for char in text:
        if x >= width:
            return
        bits = glyph(char)
        if scale > 1:
            bits = np.repeat(np.repeat(bits, scale, axis=0), scale, axis=1)
        h, w = bits.shape
        y0, x0 = max(y, 0), max(x, 0)
        y1, x1 = min(y + h, height), min(x + w, width)
        if y0 < y1 and x0 < x1:
            region = image[y0:y1, x0:x1]
            region[bits[y0 - y : y1 - y, x0 - x : x1 - x]] = color
        x += (GLYPH_W + 1) * scale


def fill_rect(image: np.ndarray, x: int, y: int, w: int, h: int, color: tuple[int, int, int]) -> None:
    """Fill a rectangle (clipped to the image)."""
    image[max(y, 0) : max(y + h, 0), max(x, 0) : max(x + w, 0)] = color


def _card_frame(fill: tuple[int, int, int]) -> np.ndarray:
    card = np.empty((CARD_H, CARD_W, 3), dtype=np.uint8)
    card[:] = CARD_EDGE
    card[2:-2, 2:-2] = fill
    return card


def _face_card(face: int) -> np.ndarray:
    card = _card_frame(CARD_FACE)
    name = FACES[face]
    draw_text(card, (CARD_W - text_width(name, 2)) // 2, 9, name, CARD_INK, 2)
    points = str(POINTS[face])
    draw_text(card, CARD_W - 4 - text_width(points), CARD_H - 5 - GLYPH_H, points, POINTS_INK)
    card.flags.writeable = False
    return card


def _back_card() -> np.ndarray:
    card = _card_frame(CARD_BACK)
    card[6:-6, 6:-6] = CARD_BACK_INNER
    card[9:-9, 9:-9] = CARD_BACK
    card.flags.writeable = False
    return card


CARDS: tuple[np.ndarray, ...] = tuple(_face_card(f) for f in range(NUM_FACES))
"""Each face's card image (CARD_H, CARD_W, 3), read-only: its name large, its points small."""
CARD_BACK_IMAGE = _back_card()


def image_shape(num_players: int) -> tuple[int, int, int]:
    """The (height, width, 3) of every frame of a game of `num_players`."""
    return HEADER_H + num_players * ROW_H + MARGIN, WIDTH, 3


def hand_origin(seat: int, k: int) -> tuple[int, int]:
    """(x, y) of the top-left corner of card k (0-based) of `seat`'s hand row."""
    return NAME_W + k * CARD_PITCH, HEADER_H + seat * ROW_H


DRAW_PILE_ORIGIN = (WIDTH - MARGIN - 2 * CARD_PITCH, 8)
DISCARD_ORIGIN = (WIDTH - MARGIN - CARD_PITCH, 8)


def _paste(image: np.ndarray, x: int, y: int, card: np.ndarray) -> None:
    image[y : y + CARD_H, x : x + CARD_W] = card


def _hand_cards(counts: Sequence[int]) -> list[int]:
    return [f for f in range(NUM_FACES) for _ in range(counts[f])]


def render_rgb(game: QuiddlerGame, names: Sequence[str], shown: Sequence[int], last_move: str | None) -> np.ndarray:
    """The table as a uint8 RGB image (see the module docstring); the seats in `shown` show their hands."""
    n = game.num_players
    image = np.empty(image_shape(n), dtype=np.uint8)
    image[:] = BACKGROUND
    over = game.phase == Phase.GAME_OVER
    cfg = game.config
    # -- the header: the round, the move, the last move; the draw pile and the discard pile.
    if over:
        winners = " ".join(names[p] for p in game.winners())
        draw_text(image, MARGIN, 8, f"GAME OVER - {game.rounds_completed} ROUNDS", HIGHLIGHT, 2)
        draw_text(image, MARGIN, 30, f"WINNER: {winners}", HIGHLIGHT, 2)
    else:
        draw_text(image, MARGIN, 8, f"ROUND {game.round + 1}/{cfg.num_rounds} - {game.hand_size} CARDS", TEXT, 2)
        phase = game.phase.name.replace("_", " ")
        draw_text(image, MARGIN, 30, f"TO MOVE: {names[game.current_player]} {phase}", TEXT, 2)
        if game.went_out is not None:
            draw_text(image, MARGIN, 47, f"FINAL TURNS: {names[game.went_out]} WENT OUT", HIGHLIGHT)
    if last_move:
        draw_text(image, MARGIN, HEADER_H - 14, f"LAST: {last_move}", DIM)
    x, y = DRAW_PILE_ORIGIN
    if game.draw_pile:
        _paste(image, x, y, CARD_BACK_IMAGE)
    draw_text(image, x, y + CARD_H + 3, f"{len(game.draw_pile)}", TEXT)
    x, y = DISCARD_ORIGIN
    if game.discard_pile:
        _paste(image, x, y, CARDS[game.discard_pile[-1]])
    draw_text(image, x, y + CARD_H + 3, f"{len(game.discard_pile)}", TEXT)
    # -- a row per seat: name, total, last round's score; the hand; the words laid this round.
    last = {r.player: r for r in game.round_history[-1]} if game.round_history else {}
    for seat in range(n):
        x, y = hand_origin(seat, 0)
        mover = seat == game.current_player and not over
        color = HIGHLIGHT if mover else TEXT
        if mover:
            fill_rect(image, 0, y, 4, CARD_H, HIGHLIGHT)
        draw_text(image, MARGIN, y + 2, names[seat] + (" *" if mover else ""), color, 2)
        draw_text(image, MARGIN, y + 22, f"TOTAL {game.totals[seat]}", color, 2)
        if seat in last:
            draw_text(image, MARGIN, y + 40, f"LAST ROUND {last[seat].round_score:+d}", DIM)
        hand = game.hands[seat]
        if seat in shown:
            cards = [CARDS[f] for f in _hand_cards(hand)]
        else:
            known = _hand_cards(game.known_taken[seat])
            cards = [CARDS[f] for f in known] + [CARD_BACK_IMAGE] * max(sum(hand) - len(known), 0)
        for k, card in enumerate(cards[:MAX_CARDS]):
            _paste(image, x + k * CARD_PITCH, y, card)
        laid = game.laid[seat] if game.laid else None
        words = ""
        if laid is not None:
            words = "LAID: " + (" ".join(laid.spelled) or "-")
            if laid.unused:
                words += "  UNUSED: " + " ".join(laid.unused)
        if game.went_out == seat and not over:
            words = ("WENT OUT  " + words).strip()
        if words:
            draw_text(image, x, y + CARD_H + 4, words, DIM)
    return image


__all__ = ["CARDS", "CARD_BACK_IMAGE", "GLYPHS", "draw_text", "hand_origin", "image_shape", "render_rgb"]
