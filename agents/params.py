"""The parameters of agent specs (`expert:samples=64`): each one's type and bounds, declared once.

An agent declares its parameters as `PARAMS` (name -> `Param`); the registry reads them to parse
specs, and the agent's constructor checks its arguments with `check_params`, so a spec and a
direct construction refuse the same values with the same message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quiddler_env.core import actions as A
from quiddler_env.core.levels import LEVELS

MAX_SAMPLES = 4096
"""The most samples (cards drawn, determinizations) a decision of expert or search takes: far past where more
stop helping, and what memory and a decision's time allow (10**11 asked numpy for 745 GiB)."""
MAX_MS = 60_000.0
"""The longest time cap of a search decision, in milliseconds (a minute)."""
MAX_TOP = A.NUM_ACTIONS
"""The most candidate moves a bot weighs: the action table's size, more than any decision has legal moves."""
MAX_GO_OUT_VALUE = 1000.0
"""The largest premium (or, negative, penalty) in points for a hand that goes out: more than any round scores."""


@dataclass(frozen=True)
class Param:
    """One parameter of an agent spec: its type (bool, int, float or str) and, for a number, its bounds (both
    allowed).

    The one declaration of the bounds: `parse_spec` checks them, and so do the agents' constructors
    (`check_params`)."""

    kind: type
    low: float | None = None
    high: float | None = None
    note: str = ""
    """What a special value means, told with the bounds (e.g. "0: no time cap")."""

    def allowed(self) -> str:
        """The values it takes, as its errors say it."""
        if self.kind is bool:
            return "true or false"
        if self.kind is str:
            return self.note or "a non-empty text"
        if self.kind is int:
            text = f"a positive integer up to {self.high}" if self.low == 1 else f"an integer {self.low}..{self.high}"
        elif self.low == 0:
            text = f"a number >= 0 and at most {self.high:g}"
        else:
            text = f"a finite number {self.low:g}..{self.high:g}"
        return text + (f" ({self.note})" if self.note else "")

    def check(self, agent: str, key: str, value: Any) -> Any:
        """`value` as the agent takes it; a ValueError naming the agent, the parameter and the bounds if it is
        out of them or of another type."""
        if self.kind is bool:
            ok = isinstance(value, bool)
        elif self.kind is str:
            ok = isinstance(value, str) and bool(value.strip())
        elif isinstance(value, bool) or not isinstance(value, int if self.kind is int else (int, float)):
            ok = False  # a bool is no number here, and a float no integer
        else:
            ok = self.low <= value <= self.high  # NaN compares false: refused too, as is an infinity
        if not ok:
            raise ValueError(f"{agent}: {key} must be {self.allowed()}, got {value!r}")
        return self.kind(value)


def check_params(agent: str, declared: dict[str, Param], **values: Any) -> dict[str, Any]:
    """The parameters `values` of agent `agent`, each checked against its declaration (`Param.check`)."""
    return {key: declared[key].check(agent, key, value) for key, value in values.items()}


LEVEL_PARAM = Param(
    int,
    LEVELS[0].number,
    LEVELS[-1].number,
    ", ".join(f"{lv.number} {lv.name}" for lv in LEVELS) + "; or the name; none: the whole dictionary",
)
"""`level`: the shipped word list a bot finds its words in (`quiddler_env.core.levels`), by number or name."""
