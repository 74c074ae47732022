"""Command line: `python -m quiddler_env solve QU I Z M` prints the best layout and its score."""

from __future__ import annotations

import argparse
import sys

from .core.cards import FACES
from .core.config import QuiddlerConfig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m quiddler_env", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    solve = sub.add_parser("solve", help="best layout of a hand")
    solve.add_argument("cards", nargs="+", help=f"card faces: {' '.join(FACES)}")
    solve.add_argument("--min-word-cards", type=int, default=2, choices=(1, 2))
    solve.add_argument("--dictionary", default="enable", help='"enable" or a word-list file')
    args = parser.parse_args(argv)
    from . import best_layout, can_go_out

    try:
        config = QuiddlerConfig(min_word_cards=args.min_word_cards, dictionary=args.dictionary)
        layout = best_layout(args.cards, config)
        goes_out = can_go_out(args.cards, config)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for faces, word in zip(layout.words, layout.spelled, strict=True):
        print(f"{word.upper():<14} {'-'.join(faces):<24} {sum(_points(f) for f in faces):>3}")
    if layout.unused:
        print(f"{'unused':<14} {' '.join(layout.unused):<24} {-layout.unused_points:>3}")
    print(
        f"score {layout.score} ({len(layout.words)} words, longest {layout.longest} letters; "
        f"can go out: {'yes' if goes_out else 'no'})"
    )
    return 0


def _points(face: str) -> int:
    from .core.cards import FACE_INDEX, POINTS

    return POINTS[FACE_INDEX[face]]


if __name__ == "__main__":
    sys.exit(main())
