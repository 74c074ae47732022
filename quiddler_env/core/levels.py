"""Levels: word lists of the sizes people know, shipped with the package.

A perfect word finder with the whole referee's list (ENABLE, 172,820 words) can nearly always go out on its
first turn; people know far fewer words. Each level is SCOWL's American word list of one size (SCOWL's
"common-word" levels: size 10 is the most common words, 50 what a well-read adult knows), lowercase
letters only, two or more, kept within ENABLE (`scripts/build_levels.py` rebuilds the files; provenance
and license in `quiddler_env/data/NOTICE.md`).

| level | name | SCOWL size | words |
|---|---|---|---|
| 1 | beginner | 10 | 3,969 |
| 2 | casual | 20 | 10,893 |
| 3 | everyday | 35 | 38,933 |
| 4 | well-read | 50 | 60,673 |

(and no level: the referee's whole list). A level is named by its number or its name: as a bot's spec
parameter (`greedy:level=2`, `expert:level=beginner`), where the bot finds words only in its level's list,
and as a seat's vocabulary in the challenge variant (`vocabularies: [level-2]`, `level-beginner`).
Outside the challenge variant the referee still judges every laid word: a level's words are kept within the
referee's list (`level_dictionary`), so a bot of a level finds fewer words, never an invalid one.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .dictionary import DEFAULT_NAME, Dictionary, load_dictionary, word_list_identity


@dataclass(frozen=True)
class Level:
    """One shipped level."""

    number: int
    name: str
    scowl_size: int
    """SCOWL's size of the list (its cumulative American list of that size)."""
    words: int
    """Words in the shipped file (checked by `scripts/build_levels.py` and the tests)."""

    @property
    def file(self) -> str:
        """The file in `quiddler_env.data`."""
        return f"scowl-{self.scowl_size}.txt.gz"

    def path(self) -> Path:
        """The shipped file's path."""
        return Path(str(resources.files("quiddler_env.data").joinpath(self.file)))


LEVELS: tuple[Level, ...] = (
    Level(1, "beginner", 10, 3_969),
    Level(2, "casual", 20, 10_893),
    Level(3, "everyday", 35, 38_933),
    Level(4, "well-read", 50, 60_673),
)
"""The levels, weakest first: the one declaration of their numbers, names, sources and sizes."""

VOCABULARY_PREFIX = "level-"
"""A vocabulary spec naming a level: `level-2`, `level-beginner`."""


def choices() -> str:
    """The levels as their errors list them."""
    return ", ".join(f"{lv.number} ({lv.name})" for lv in LEVELS)


def get_level(value: int | str) -> Level:
    """The level named by its number (an int or its text) or its name; a one-line ValueError otherwise."""
    text = str(value).strip().lower()
    for level in LEVELS:
        if text in (str(level.number), level.name):
            return level
    raise ValueError(f"unknown level {value!r}: the levels are {choices()}")


_CACHE: dict[tuple[int, str], Dictionary] = {}


def level_dictionary(level: int | str | Level, referee: str = DEFAULT_NAME) -> Dictionary:
    """The words of `level` that the referee's list (`referee`, a `dictionary` setting) also has, indexed."""
    level = level if isinstance(level, Level) else get_level(level)
    base = load_dictionary(referee)
    key = (level.number, base.identity)
    found = _CACHE.get(key)
    if found is None:
        found = load_dictionary(level.path())
        if referee != DEFAULT_NAME:  # the shipped files are within ENABLE already
            kept = tuple(w for w in found.words if w in base)
            if not kept:
                raise ValueError(f"level {level.number} ({level.name}) has no word of the list {referee!r}")
            if len(kept) < len(found.words):
                identity = word_list_identity(kept)
                found = Dictionary(name=f"level-{level.number}", identity=identity, source_digest=identity, _words=kept)
                found.ensure_index()
        _CACHE[key] = found
    return found
