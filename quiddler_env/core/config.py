"""`QuiddlerConfig`: every rule option of the rule book, frozen and validated.

Build it from keyword arguments or from a YAML mapping (`from_mapping`,
`from_yaml`); an unknown key or a bad value raises a `ValueError` that names the
key, the value and what is allowed.

| field | default | allowed | rule |
|---|---|---|---|
| `num_players` | 2 | 2..8 | players at the table |
| `hand_sizes` | (3, 4, ..., 10) | 1..11 cards each, 1..16 rounds | one round per entry: cards dealt that round |
| `min_word_cards` | 2 | 1, 2 | minimum cards in a word (1: a lone IN or ER counts) |
| `two_player_bonus` | "longest_word" | "longest_word", "most_words", "both" | bonuses used with exactly two players |
| `bonus_value` | 10 | an int -1000..1000 (0 disables) | points of each bonus |
| `score_floor` | "round" | "round", "total", "none" | no negative round score / no negative running total / neither |
| `go_out` | "optional" | "optional", "forced" | whether a player who can go out must |
| `dictionary` | "enable" | "enable" or a word-list path | the words in play |
| `turn_cap` | 30 | an int 1..1000, or None | house rule: after this many turns each in one round with nobody out, every player lays and the round is scored |
| `layout` | "auto" | "auto", "choose" | how a player lays its words: the bonus-aware best response to the layouts already laid, or its own choice among its Pareto-best layouts (`laying`) |
| `challenges` | False | False, True | the challenge variant (`challenges`): seats with their own vocabularies lay words the referee may reject, and challenge each other's words before the round is scored |
| `vocabularies` | () | one entry for every seat, or one per seat | each seat's words: `referee` (the `dictionary`), `enable`, `level-N` (a shipped level, `levels.LEVELS`), a word-list path, or `SOURCE:P:SEED` (a seeded subset of SOURCE, each word kept with probability P); () gives every seat the referee's list. With `challenges` a seat lays any word of its vocabulary (the referee judges challenged ones); without, a seat finds its go-out moves and has its layouts laid only from the words of its vocabulary that the referee's list also has, so no laid word is invalid, and the observation and actions are the plain game's |
| `failed_go_out_penalty` | 0 | an int 0..1000 | with `challenges`: points the player who went out loses when one of its words fails a challenge (a house rule the rule books leave open) |
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .cards import DECK_SIZE

MIN_PLAYERS, MAX_PLAYERS = 2, 8
MAX_HAND_SIZE = 11
"""Largest hand the engine deals (the solver packs a hand after drawing into 64 bits).
Eight hands of 11 leave 30 of the 118 cards for the draw and discard piles."""
MAX_ROUNDS = 16
TWO_PLAYER_BONUS = ("longest_word", "most_words", "both")
SCORE_FLOOR = ("round", "total", "none")
GO_OUT = ("optional", "forced")
LAYOUT = ("auto", "choose")


VARIANT_FIELDS = ("challenges", "vocabularies", "failed_go_out_penalty")
"""The challenge variant's fields (`to_dict` leaves them out when `challenges` is off, `vocabularies` only when
it is empty: seats have vocabularies outside the variant too)."""

MAX_POINTS_OPTION = 1000
"""The largest size of a rule option that counts points (a bonus, a penalty). The batched engine keeps the
totals in int32 and its rule options in int64: unbounded, a bonus of 2**62 vanished from the totals and one
of 2**63 did not fit. Within it a game's total stays far inside int32: 16 rounds x (11 cards x 15 points +
2 bonuses) is under 35,000."""
MAX_TURN_CAP = 1000
"""The largest `turn_cap` (turns each, per round): more is no cap in practice (`None` says it)."""

RULE_KINDS = ("int", "ints", "choice", "text", "int_or_none", "bool", "texts")
"""How a rule option is written on a command line: an integer, a list of integers, one of its
`choices`, a text, an integer or `none`, true or false, or a list of texts."""


def _rule(
    help: str, cli: str | None = "int", choices: tuple | None = None, bounds: tuple[int, int] | None = None
) -> dict[str, Any]:
    """A field's metadata: its help text, its command-line kind (None: set otherwise), its choices and, for an
    integer option, its bounds (low, high), both allowed; `QuiddlerConfig` checks every declared bound."""
    if cli not in (*RULE_KINDS, None):
        raise ValueError(f"unknown command-line kind {cli!r}")
    return {"help": help, "cli": cli, "choices": choices, "bounds": bounds}


@dataclass(frozen=True)
class RuleOption:
    """One rule option as a command line offers it (from the field's metadata)."""

    name: str
    help: str
    kind: str | None
    choices: tuple | None
    default: Any
    bounds: tuple[int, int] | None = None
    """An integer option's (low, high), both allowed; None: no bounds declared (the option is checked otherwise)."""

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def allowed(self) -> str:
        """What values of a bounded option the config takes, as its errors say it."""
        low, high = self.bounds
        text = f"a positive integer up to {high}" if low == 1 else f"an integer {low}..{high}"
        return text + (", or null for no cap" if self.kind == "int_or_none" else "")


@dataclass(frozen=True)
class QuiddlerConfig:
    """The rules of one game. See the module docstring for every field."""

    num_players: int = field(default=2, metadata=_rule("players at the table, 2..8", cli=None))
    hand_sizes: tuple[int, ...] = field(
        default=(3, 4, 5, 6, 7, 8, 9, 10),
        metadata=_rule("cards dealt each round, one round per entry, e.g. 3 4 5", cli="ints"),
    )
    min_word_cards: int = field(
        default=2, metadata=_rule("minimum cards in a word (1: a lone IN or ER counts)", choices=(1, 2))
    )
    two_player_bonus: str = field(
        default="longest_word",
        metadata=_rule("bonuses used with exactly two players", cli="choice", choices=TWO_PLAYER_BONUS),
    )
    bonus_value: int = field(
        default=10,
        metadata=_rule("points of each bonus (0 disables)", bounds=(-MAX_POINTS_OPTION, MAX_POINTS_OPTION)),
    )
    score_floor: str = field(
        default="round",
        metadata=_rule("no negative round score / running total / neither", cli="choice", choices=SCORE_FLOOR),
    )
    go_out: str = field(
        default="optional", metadata=_rule("whether a player who can go out must", cli="choice", choices=GO_OUT)
    )
    dictionary: str = field(
        default="enable", metadata=_rule('the words in play: "enable" or a word-list file', cli="text")
    )
    turn_cap: int | None = field(
        default=30,
        metadata=_rule(
            "turns each per round before it is scored anyway (none: no cap)",
            cli="int_or_none",
            bounds=(1, MAX_TURN_CAP),
        ),
    )
    layout: str = field(
        default="auto",
        metadata=_rule(
            "how words are laid: auto (bonus-aware best response) or choose (a decision among the Pareto-best layouts)",
            cli="choice",
            choices=LAYOUT,
        ),
    )

    challenges: bool = field(
        default=False,
        metadata=_rule(
            "the challenge variant: per-seat vocabularies, bluffing, a challenge phase before scoring",
            cli="bool",
            choices=(False, True),
        ),
    )
    vocabularies: tuple[str, ...] = field(
        default=(),
        metadata=_rule(
            "each seat's words, one entry for all or one per seat: referee, enable, level-N, a word-list path, or "
            "SOURCE:P:SEED (a seeded subset); none given: the referee's list. Without challenges a seat finds and "
            "lays only those of its words the referee also has (no bluffs, the plain observation)",
            cli="texts",
        ),
    )
    failed_go_out_penalty: int = field(
        default=0,
        metadata=_rule(
            "with challenges: points the player who went out loses when one of its words fails",
            bounds=(0, MAX_POINTS_OPTION),
        ),
    )

    def __post_init__(self) -> None:
        def bad(name: str, value: Any, allowed: str) -> ValueError:
            return ValueError(f"config key {name!r}: bad value {value!r}; allowed: {allowed}")

        if not _is_int(self.num_players) or not MIN_PLAYERS <= self.num_players <= MAX_PLAYERS:
            raise bad("num_players", self.num_players, f"an integer {MIN_PLAYERS}..{MAX_PLAYERS}")
        sizes = self.hand_sizes
        # A mapping or a set is iterable too, but its keys are no ordered list of rounds.
        if isinstance(sizes, (str, bytes, Mapping, set, frozenset)) or not hasattr(sizes, "__iter__"):
            raise bad("hand_sizes", sizes, f"a list of 1..{MAX_ROUNDS} integers, each 1..{MAX_HAND_SIZE}")
        sizes = tuple(sizes)
        if not 1 <= len(sizes) <= MAX_ROUNDS or not all(_is_int(s) and 1 <= s <= MAX_HAND_SIZE for s in sizes):
            raise bad("hand_sizes", self.hand_sizes, f"a list of 1..{MAX_ROUNDS} integers, each 1..{MAX_HAND_SIZE}")
        # The deal must leave a draw pile and a discard to turn up.
        if self.num_players * max(sizes) + 2 > DECK_SIZE:
            raise bad(
                "hand_sizes",
                self.hand_sizes,
                f"hands that {self.num_players} players can be dealt from {DECK_SIZE} cards",
            )
        object.__setattr__(self, "hand_sizes", tuple(int(s) for s in sizes))
        if self.min_word_cards not in (1, 2) or isinstance(self.min_word_cards, bool):
            raise bad("min_word_cards", self.min_word_cards, "1 or 2")
        if self.two_player_bonus not in TWO_PLAYER_BONUS:
            raise bad("two_player_bonus", self.two_player_bonus, ", ".join(TWO_PLAYER_BONUS))
        for option in _bounded_options():  # bonus_value, turn_cap, failed_go_out_penalty: their declared bounds
            value = getattr(self, option.name)
            if value is None and option.kind == "int_or_none":
                continue
            if not _is_int(value) or not option.bounds[0] <= value <= option.bounds[1]:
                raise bad(option.name, value, option.allowed())
        if self.score_floor not in SCORE_FLOOR:
            raise bad("score_floor", self.score_floor, ", ".join(SCORE_FLOOR))
        if self.go_out not in GO_OUT:
            raise bad("go_out", self.go_out, ", ".join(GO_OUT))
        if not isinstance(self.dictionary, (str, os.PathLike)) or not str(self.dictionary):
            raise bad("dictionary", self.dictionary, '"enable" or the path of a word-list file')
        object.__setattr__(self, "dictionary", str(self.dictionary))
        if self.layout not in LAYOUT:
            raise bad("layout", self.layout, ", ".join(LAYOUT))
        if not isinstance(self.challenges, bool):
            raise bad("challenges", self.challenges, "true or false")
        vocabularies = self.vocabularies
        if isinstance(vocabularies, (str, os.PathLike)):
            vocabularies = (vocabularies,)  # one entry: every seat's
        if vocabularies is None:
            vocabularies = ()
        # A mapping would be read as its keys and a set has no seat order: only a sequence says which seat is which.
        if (
            isinstance(vocabularies, (Mapping, set, frozenset))
            or not hasattr(vocabularies, "__iter__")
            or not all(isinstance(v, (str, os.PathLike)) for v in vocabularies)
        ):
            raise bad("vocabularies", self.vocabularies, "a list of vocabulary specs (texts)")
        vocabularies = tuple(str(v) for v in vocabularies)
        if len(vocabularies) not in (0, 1, self.num_players):
            raise bad(
                "vocabularies", self.vocabularies, f"one entry for every seat, or {self.num_players} (one per seat)"
            )
        from .vocabulary import check_vocabulary_spec  # the spec's grammar is declared there, beside its reader

        for spec in vocabularies:
            problem = check_vocabulary_spec(spec)
            if problem:
                raise bad("vocabularies", spec, problem)
        object.__setattr__(self, "vocabularies", vocabularies)
        if self.failed_go_out_penalty and not self.challenges:
            raise bad("failed_go_out_penalty", self.failed_go_out_penalty, "0 without challenges: true")

    @property
    def num_rounds(self) -> int:
        return len(self.hand_sizes)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def rule_options(cls) -> tuple[RuleOption, ...]:
        """Every field with its help, command-line kind and choices (the one declaration CLIs read)."""
        return tuple(
            RuleOption(
                f.name, f.metadata["help"], f.metadata["cli"], f.metadata["choices"], f.default, f.metadata["bounds"]
            )
            for f in dataclasses.fields(cls)
        )

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any] | None = None, **overrides: Any) -> QuiddlerConfig:
        """Build from a mapping (e.g. parsed YAML); unknown keys are an error naming them."""
        data = dict(mapping or {})
        data.update(overrides)
        unknown = sorted(set(data) - set(cls.field_names()))
        if unknown:
            raise ValueError(
                f"unknown config key(s) {', '.join(map(repr, unknown))}; known keys: {', '.join(cls.field_names())}"
            )
        return cls(**data)

    @classmethod
    def from_yaml(cls, path: str | os.PathLike) -> QuiddlerConfig:
        """Read a YAML file (safe_load) holding a mapping of config fields."""
        from .files import read_yaml_mapping

        return cls.from_mapping(read_yaml_mapping(path, what="config file"))

    def to_dict(self) -> dict[str, Any]:
        """Plain types, ready for YAML or JSON. The challenge variant's keys appear only when it is on, so
        the records of every other game read as they always did."""
        out = dataclasses.asdict(self)
        out["hand_sizes"] = list(self.hand_sizes)
        out["vocabularies"] = list(self.vocabularies)
        if not self.challenges:
            for name in VARIANT_FIELDS:
                if name != "vocabularies" or not self.vocabularies:
                    del out[name]
        return out

    def check_word_lists(self) -> None:
        """Load the referee's word list and every seat's vocabulary (outside the variant, its words within the
        referee's), so that a missing or unreadable file, or a vocabulary that shares no word with the referee,
        is a `ValueError` naming its config key up front (not a traceback later, inside the first game or a
        worker)."""
        from .dictionary import load_dictionary
        from .vocabulary import load_seat_vocabulary

        try:
            load_dictionary(self.dictionary)
        except (OSError, ValueError) as exc:
            raise ValueError(f"config key 'dictionary': {exc}") from None
        for i, spec in enumerate(self.vocabularies):
            try:
                load_seat_vocabulary(spec, self.dictionary, self.challenges)
            except (OSError, ValueError) as exc:
                raise ValueError(f"config key 'vocabularies[{i}]': {exc}") from None

    def seat_vocabulary(self, seat: int) -> str:
        """The vocabulary spec of `seat` (the referee's list when none is given)."""
        if not self.vocabularies:
            return "referee"
        return self.vocabularies[0] if len(self.vocabularies) == 1 else self.vocabularies[seat]


@functools.cache
def _bounded_options() -> tuple[RuleOption, ...]:
    """The rule options that declare bounds (read once: every config checks them)."""
    return tuple(o for o in QuiddlerConfig.rule_options() if o.bounds is not None)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
