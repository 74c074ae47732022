"""The env version: one number for what an agent sees, may do or is paid, and its history.

PettingZoo and Pgx bump an env's version whenever a change would change learning results. Here the registered
ids keep their `v0` (`Quiddler-v0`, `quiddler_v0`, `quiddler/quiddler-v0`): that `v0` names the API family,
and `ENV_VERSION` is the learning-relevant version. The envs carry it in their `metadata["env_version"]`,
policy bundles (`policy.json`), evaluation results (`results.json`) and training runs (`run.json`) record it,
and loading a bundle made for another version warns in one line.

The rule (`tests/test_env_versions.py`): `env_fingerprint()` hashes what the code declares about the
observation (the slice table for 2..8 players, with and without challenges, and the default rules' bounds),
the action table (its sizes and every action's name), the reward modes and their default scales, the rule
options' defaults and the env options. When it no longer equals `ENV_FINGERPRINT`, bump `ENV_VERSION`, add a
row to `ENV_VERSIONS` and store the new fingerprint. A change the fingerprint cannot see (the laying rule, a
value that moved inside its slice) needs the same bump by hand.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EnvVersion:
    """One env version: the package version it arrived in (a CHANGELOG.md heading) and what changed for an agent."""

    version: int
    package: str
    changes: str


ENV_VERSIONS: tuple[EnvVersion, ...] = (
    EnvVersion(
        1, "0.1.0", "The first version: the AEC env, `Quiddler-v0`, the 64 actions (draw, take, discard, go out)."
    ),
    EnvVersion(
        2,
        "0.2.0",
        "Words are laid by the rule book's section 6 (in laying order, bonus-aware, public once laid): scores "
        "differ. The observation has five more slices (`laying`, `laid`, `laid_cards`, `laid_figures`, "
        "`candidates`) and `unseen` no longer counts cards an opponent laid; `layout: choose` adds the lay "
        "actions 64..79.",
    ),
    EnvVersion(
        3,
        "0.6.0",
        "The challenge variant (`challenges: true`): the actions `pass` (80) and `challenge` (81..157) and the "
        "variant's observation slices. Off by default: a default game is unchanged.",
    ),
    EnvVersion(4, "0.7.0", "`reward_mode: lead`: a round end pays the change in the agent's lead."),
    EnvVersion(
        5,
        "Unreleased",
        "`turns_this_round` is capped at 1 (it ran past its space after a late go-out); the vector env's rows "
        "whose episode just ended allow action 0 (the ignored action of the reset step) instead of an all-zero "
        "mask.",
    ),
)
"""Every env version, oldest first, each citing the CHANGELOG.md version it arrived in."""

ENV_VERSION: int = ENV_VERSIONS[-1].version
"""The env version of this code."""

FIRST_RECORDED_VERSION = 5
"""The first version a policy bundle records as `env_version`; a bundle without it is older."""

ENV_FINGERPRINT = "c0c5f9cee48855a9"
"""`env_fingerprint()` of `ENV_VERSION`: the test of the rule recomputes it."""

DOCS_ANCHOR = "docs/observations.md#versions"


class EnvVersionWarning(UserWarning):
    """A policy bundle made for another env version than this code's."""


def _plain(value: Any) -> Any:
    """A default as JSON can hold it (the repr of anything else)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return repr(value)


def fingerprint_source() -> dict[str, Any]:
    """What the fingerprint hashes, read from the code's own declarations."""
    from ..core import actions as A
    from ..core.config import MAX_PLAYERS, MIN_PLAYERS, QuiddlerConfig
    from ..core.observation import observation_layout
    from . import common

    observation = {}
    for challenges in (False, True):
        for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
            layout = observation_layout(n, challenges)
            low, high = common.observation_bounds(QuiddlerConfig(num_players=n, challenges=challenges))
            observation[f"{n}{'c' if challenges else ''}"] = {
                "slices": [[name, s.stop - s.start] for name, s in layout.slices.items()],
                "size": layout.size,
                "bounds": [[round(float(v), 6) for v in low], [round(float(v), 6) for v in high]],
            }
    sizes = {
        f"{layout}{'+challenges' if challenges else ''}": A.num_actions(layout, challenges)
        for layout in ("auto", "choose")
        for challenges in (False, True)
    }
    return {
        "observation": observation,
        "actions": {"sizes": sizes, "names": [A.action_name(a) for a in range(max(sizes.values()))]},
        "rewards": {"modes": list(common.REWARD_MODES), "default_scale": dict(common.DEFAULT_REWARD_SCALE)},
        "rules": {o.name: _plain(o.default) for o in QuiddlerConfig.rule_options()},
        "env_options": {
            kind: {o.name: _plain(o.default) for o in common.ENV_OPTIONS if kind in o.kinds}
            for kind in ("aec", "gym", "vector")
        },
    }


def env_fingerprint() -> str:
    """A short sha256 of `fingerprint_source()`: it changes when the observation, actions or rewards do."""
    text = json.dumps(fingerprint_source(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _release(text: str) -> tuple[int, ...] | None:
    match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", text.strip()) if isinstance(text, str) else None
    return tuple(int(g) for g in match.groups()) if match else None


def env_version_of_package(package_version: Any) -> int | None:
    """The env version a package version had (the last row that arrived in it or before); None if unknown.

    A row of an unreleased version is newer than every release."""
    release = _release(package_version)
    if release is None:
        return None
    known = [row.version for row in ENV_VERSIONS if (r := _release(row.package)) is not None and r <= release]
    return max(known) if known else None


def recorded_env_version(description: dict[str, Any]) -> tuple[int, str]:
    """The env version a policy description was made for, and how it is known (for messages).

    `env_version` where the bundle records it; for an older bundle, the version of its `quiddler_env_version`,
    else the last version before versions were recorded."""
    value = description.get("env_version")
    if isinstance(value, int) and not isinstance(value, bool):
        return value, ""
    package = description.get("quiddler_env_version")
    inferred = env_version_of_package(package)
    if inferred is not None:
        return inferred, f" (no env_version; quiddler_env_version {package})"
    return FIRST_RECORDED_VERSION - 1, " (no env_version)"


def env_version_mismatch(description: dict[str, Any], name: str) -> str | None:
    """The one-line warning for a bundle made for another env version, or None when it matches."""
    made_for, how = recorded_env_version(description)
    if made_for == ENV_VERSION:
        return None
    return (
        f"policy {name}: made for env version {made_for}{how}, this is env version {ENV_VERSION} "
        f"(see {DOCS_ANCHOR}); its observations may differ"
    )


def versions_table() -> str:
    """The versions as a Markdown table (the docs' `<!-- table:env-versions -->`)."""
    rows = ["| env version | since | what changed for an agent |", "|---|---|---|"]
    for row in reversed(ENV_VERSIONS):
        rows.append(f"| {row.version} | {row.package} | {row.changes.replace('|', chr(92) + '|')} |")
    return "\n".join(rows)
