"""Build agents from spec strings: `random`, `greedy`, `greedy:level=2`, `expert`, `expert:samples=64`, `search`,
`guided`, `openspiel-ismcts`, `human`, `policy:PATH`.

A spec is a name, then optional `key=value` parameters after colons (or commas):
`expert:samples=64:top=3`, `policy:runs/a/model.zip:deterministic=false`. For
`policy` everything between the name and the parameters is the bundle path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from quiddler_env.core.config import QuiddlerConfig

from . import params
from .base import BaseAgent, table_rules
from .expert import DEFAULT_SAMPLES, ExpertAgent
from .guided import DEFAULT_SAMPLES as GUIDED_SAMPLES
from .guided import GuidedSearchAgent
from .human import HumanAgent
from .ismcts import DEFAULT_SIMULATIONS as ISMCTS_SIMULATIONS
from .ismcts import ISMCTSAgent
from .params import LEVEL_PARAM, Param
from .search import DEFAULT_SAMPLES as SEARCH_SAMPLES
from .search import SearchAgent
from .simple import GreedyAgent, RandomAgent


@dataclass(frozen=True)
class AgentSpec:
    """One registered agent kind: its parameters (name -> `Param`) and what it is."""

    name: str
    params: dict[str, Param]
    summary: str
    build: Callable[..., BaseAgent]


def _build_policy(*, path: str, seed, config, deterministic: bool = True, trusted: bool = False, **_):
    from .policies import load_policy

    return load_policy(path, trusted=trusted, deterministic=deterministic, seed=seed, config=config)


def _build_zoo(*, path: str, seed, config, deterministic: bool = True, **_):
    from . import zoo
    from .policies import load_policy

    # Shipped bundles are weights only: never unpickled (trusted stays False).
    return load_policy(zoo.entry_path(path), deterministic=deterministic, seed=seed, config=config)


REGISTRY: dict[str, AgentSpec] = {
    "random": AgentSpec("random", {}, "uniform over the legal moves", RandomAgent),
    "greedy": AgentSpec(
        "greedy",
        {"level": LEVEL_PARAM},
        "best layout now; takes the discard when it helps; goes out at once (level: knows a shipped level's words)",
        GreedyAgent,
    ),
    "expert": AgentSpec(
        "expert",
        {
            **ExpertAgent.PARAMS,
        },
        f"card counting + sampled one-draw lookahead + bonus odds (samples={DEFAULT_SAMPLES})",
        ExpertAgent,
    ),
    "search": AgentSpec(
        "search",
        {
            **SearchAgent.PARAMS,
        },
        f"determinized rollouts of the round with greedy in every seat (samples={SEARCH_SAMPLES}; ms caps a decision)",
        SearchAgent,
    ),
    "guided": AgentSpec(
        "guided",
        {
            **GuidedSearchAgent.PARAMS,
        },
        f"search guided by a trained policy: its favourite moves join the candidates and it plays the rollouts "
        f"(samples={GUIDED_SAMPLES}; policy: the zoo's entry for the table)",
        GuidedSearchAgent,
    ),
    "openspiel-ismcts": AgentSpec(
        "openspiel-ismcts",
        {
            **ISMCTSAgent.PARAMS,
        },
        f"OpenSpiel's IS-MCTS over the rest of the round, greedy playouts at the leaves (simulations={ISMCTS_SIMULATIONS}; "
        "the openspiel extra)",
        ISMCTSAgent,
    ),
    "human": AgentSpec("human", {}, "a person at the terminal", HumanAgent),
    "policy": AgentSpec(
        "policy",
        {"deterministic": Param(bool)},
        "a trained policy bundle (SB3 or RLlib): policy:PATH[:deterministic=false]",
        _build_policy,
    ),
    "zoo": AgentSpec(
        "zoo",
        {"deterministic": Param(bool)},
        "a policy shipped in the package: zoo:NAME[:deterministic=false] (the entries are listed below)",
        _build_zoo,
    ),
}
_NAMED = ("policy", "zoo")
"""Specs whose first segment after the colon is a name (a bundle path, a zoo entry), not a parameter."""

_PARAM = re.compile(r"^[A-Za-z_]\w*=[^:,=]*$")


def available() -> str:
    """The registered specs, one per line, for help texts and error messages."""
    lines = []
    for spec in REGISTRY.values():
        params = ", ".join(f"{k}=<{p.kind.__name__}{_range(p)}>" for k, p in spec.params.items())
        head = {"policy": "policy:PATH", "zoo": "zoo:NAME"}.get(spec.name, spec.name)
        lines.append(f"{head}{' [' + params + ']' if params else ''}: {spec.summary}")
    from . import zoo

    for name in zoo.entries():
        lines.append(f"  zoo:{name}: {zoo.summary(name)}")
    return "\n".join(lines)


def _range(param: Param) -> str:
    return "" if param.low is None else f" {param.low:g}..{param.high:g}"


def check_params(agent: str, **values: Any) -> dict[str, Any]:
    """The parameters of registered agent `agent`, each checked against its declaration (`Param.check`)."""
    return params.check_params(agent, REGISTRY[agent].params, **values)


def _convert(agent: str, key: str, text: str, kind: type) -> Any:
    if key == "level" and not text.strip().lstrip("-").isdigit():
        from quiddler_env.core.levels import get_level

        try:
            return get_level(text).number  # a level's name
        except ValueError as exc:
            raise ValueError(f"agent spec {agent!r}: {exc}") from None
    try:
        if kind is bool:
            low = text.lower()
            if low in ("true", "1", "yes"):
                return True
            if low in ("false", "0", "no"):
                return False
            raise ValueError
        return kind(text)
    except ValueError:
        raise ValueError(f"agent spec {agent!r}: parameter {key}={text!r} is not a valid {kind.__name__}") from None


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, Any]]:
    """Split a spec into (name, policy path or None, parameters), checking names and types."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}; specs:\n{available()}")
    name, _, rest = spec.strip().partition(":")
    entry = REGISTRY.get(name.lower())
    if entry is None:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; specs:\n{available()}")
    path = None
    segments = rest.split(":") if rest else []
    if entry.name in _NAMED:
        # Parameters are the trailing key=value segments; the path (name) is everything before them.
        cut = len(segments)
        while cut > 0 and all(_PARAM.match(p) for p in segments[cut - 1].split(",")):
            cut -= 1
        path = ":".join(segments[:cut])
        if not path and entry.name == "zoo":
            raise ValueError(f"agent spec {spec!r}: zoo needs a name, e.g. zoo:champion-2p")
        if not path:
            raise ValueError(f"agent spec {spec!r}: policy needs a path, e.g. policy:runs/quickstart/model.zip")
        segments = segments[cut:]
    params: dict[str, Any] = {}
    for segment in segments:
        for item in segment.split(","):
            if not item:
                continue
            key, eq, value = item.partition("=")
            if not eq or not key:
                raise ValueError(f"agent spec {spec!r}: cannot read {item!r}; parameters are key=value")
            if key not in entry.params:
                known = ", ".join(entry.params) or "none"
                raise ValueError(f"agent spec {spec!r}: unknown parameter {key!r} for {entry.name}; known: {known}")
            param = entry.params[key]
            params[key] = param.check(entry.name, key, _convert(spec, key, value, param.kind))
    return entry.name, path, params


NETWORK_AGENTS = ("policy", "zoo", "guided")
"""The agents that run a trained network at each decision."""


def one_torch_thread(specs) -> None:
    """Run torch on one thread in this process if any of `specs` plays a network: a small network's forward passes
    only contend for threads (on a busy machine, milliseconds each instead of microseconds), and one thread does
    the same arithmetic, so the same argmax, in every process."""
    if any(str(spec).split(":", 1)[0].strip().lower() in NETWORK_AGENTS for spec in specs):
        import torch

        torch.set_num_threads(1)


def bundle_path(spec: str) -> str | None:
    """The policy bundle a `policy:` or `zoo:` spec plays (its path), None for the bots."""
    name, path, _ = parse_spec(spec)
    if name == "zoo":
        from . import zoo

        return str(zoo.entry_path(path))
    return path if name == "policy" else None


def make(
    spec: str,
    seed: int | None = None,
    num_players: int | None = None,
    config: QuiddlerConfig | None = None,
    *,
    trusted: bool = False,
    **options: Any,
) -> BaseAgent:
    """Build the agent a spec names, seeded with `seed`, playing by the rules `config`.

    The table size is `config.num_players`; `num_players` alone is short for
    `config=QuiddlerConfig(num_players=...)` (the default rules at that table); beside a
    config it must name the config's table (a ValueError otherwise). With neither, the table is read from the first observation.
    Every builder (`AgentSpec.build`) takes `seed` and `config`. `trusted=True` lets `policy:` specs unpickle `model.zip` (only for
    files you trust). `options` go to the agent's constructor (e.g. `input_stream`
    for `human`).
    """
    name, path, params = parse_spec(spec)
    config = table_rules(num_players, config)
    entry = REGISTRY[name]
    if name == "policy":
        return entry.build(path=path, seed=seed, config=config, trusted=trusted, **params)
    if name == "zoo":
        return entry.build(path=path, seed=seed, config=config, **params)
    if trusted:
        raise ValueError(f"trusted=True only applies to policy: specs, not {spec!r}")
    return entry.build(seed=seed, config=config, **params, **options)
