"""The value checks of run configs: each raises `RunConfigError` naming the dotted key, the value and what is allowed.

Shared by the backend-neutral sections (`config.py`) and each backend's own sections
(`sb3/`, `rllib/config.py`), so a key is always reported the same way.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any


class RunConfigError(ValueError):
    """A run config that cannot be used; the message names the dotted key."""


def bad(key: str, value: Any, allowed: str) -> RunConfigError:
    return RunConfigError(f"config key {key!r}: bad value {value!r}; allowed: {allowed}")


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def positive_int(key: str, v: Any) -> int:
    if not is_int(v) or v < 1:
        raise bad(key, v, "a positive integer")
    return v


def non_negative_int(key: str, v: Any) -> int:
    if not is_int(v) or v < 0:
        raise bad(key, v, "an integer >= 0")
    return v


_FLOAT_TEXT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def number(key: str, v: Any, low: float | None = None, high: float | None = None, *, open_low=False) -> float:
    """A finite number within the bounds (`open_low`: strictly above `low`)."""
    # YAML 1.1 reads 3e-4 (no dot) as a string: accept plain numeric text, nothing else.
    if isinstance(v, str) and _FLOAT_TEXT.match(v.strip()):
        v = float(v)
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    if ok and low is not None:
        ok = v > low if open_low else v >= low
    if ok and high is not None:
        ok = v <= high
    if not ok:
        lo = "" if low is None else f"{'>' if open_low else '>='} {low}"
        hi = "" if high is None else f"<= {high}"
        raise bad(key, v, f"a number {' and '.join(x for x in (lo, hi) if x)}".rstrip())
    return float(v)


def boolean(key: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise bad(key, v, "true or false")
    return v


def string(key: str, v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise bad(key, v, "a non-empty string")
    return v


def mapping(key: str, v: Any) -> dict[str, Any]:
    """A section: a mapping with string keys (None is an empty section)."""
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise bad(key, v, "a mapping of keys")
    wrong = [k for k in v if not isinstance(k, str)]
    if wrong:
        raise bad(f"{key}.{wrong[0]}" if key else str(wrong[0]), wrong[0], "string keys")
    return dict(v)


# -- checks as values: what a config field declares (see `checked`) -------------------------------------


def between(low: float | None = None, high: float | None = None, *, open_low: bool = False):
    """A check: a finite number within the bounds."""
    return lambda key, v: number(key, v, low, high, open_low=open_low)


def one_of(*choices: str):
    """A check: one of `choices`."""

    def check(key: str, v: Any) -> str:
        if v not in choices:
            raise bad(key, v, ", ".join(choices))
        return v

    return check


def optional(check):
    """A check that also lets null through."""
    return lambda key, v: None if v is None else check(key, v)


def checked(default: Any = None, check=None, *, factory=None):
    """A config dataclass field: its default and its check (`check(key, value) -> value`), declared together."""
    from dataclasses import field

    if factory is not None:
        return field(default_factory=factory, metadata={"check": check})
    return field(default=default, metadata={"check": check})


def parse_section(cls, section: str, data: Mapping[str, Any]):
    """A frozen config dataclass from a mapping: every key known, every given value through its field's check."""
    from dataclasses import fields

    names = [f.name for f in fields(cls)]
    known(section, data, names)
    return cls(
        **{f.name: f.metadata["check"](f"{section}.{f.name}", data[f.name]) for f in fields(cls) if f.name in data}
    )


def known(section: str, data: Mapping[str, Any], names: Sequence[str]) -> None:
    """Every key of `data` is one of `names`."""
    unknown = [k for k in data if k not in names]
    if unknown:
        where = f"{section}.{unknown[0]}" if section else unknown[0]
        raise RunConfigError(
            f"unknown config key {where!r}; known keys in {section or 'the top level'!r}: {', '.join(names)}"
        )


def owned(key_prefix: str, check, *args: Any) -> Any:
    """Run an owner's check (an env's, a bot's) and report its `ValueError` under the config key."""
    try:
        return check(*args)
    except ValueError as exc:
        # The owners say "option 'learner_seat': ..."; the run config calls it 'env.learner_seat'.
        raise RunConfigError(str(exc).replace("option '", f"config key '{key_prefix}")) from None
