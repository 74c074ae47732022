"""quiddler-env: the card game Quiddler as reinforcement-learning environments.

- `quiddler_env.best_layout(["QU", "I", "Z", "M"])` / `can_go_out(...)`: the exact hand solver.
- `quiddler_env.core`: the rules engine (deck, config, dictionary, solver, scoring, game, solitaire).
- `quiddler_env.env(**options)` / `raw_env(...)`: the PettingZoo AEC environment `quiddler_v0`.
- Gymnasium ids `Quiddler-v0` and `QuiddlerSolitaire-v0`, registered on import; the AEC env is
  `pettingzoo.make("aec", "quiddler/quiddler-v0")` too.
- `quiddler_env.wrappers`: the solver features the shipped policies read (`quiddler_env.features`),
  appended to any env's observations.
- `ENV_VERSION`: the env version, bumped whenever what an agent sees, may do or is paid changes (the ids'
  `v0` names the API family; `quiddler_env.envs.versions` holds the history).
- `IllegalActionError` (a ValueError): the one error for an illegal action, in the engine and every env.
"""

from __future__ import annotations

from collections.abc import Iterable

from .core import IllegalActionError, QuiddlerConfig
from .core.dictionary import load_dictionary
from .core.solver import Layout, get_solver
from .envs import registration as _registration  # noqa: F401  (registers the Gymnasium ids)
from .envs.versions import ENV_VERSION

__version__ = "0.8.12"


def _solver(config: QuiddlerConfig | None):
    config = config or QuiddlerConfig()
    return get_solver(load_dictionary(config.dictionary), config.min_word_cards)


def best_layout(hand: Iterable[str], config: QuiddlerConfig | None = None) -> Layout:
    """The best layout of `hand` (face strings such as ["QU", "I", "Z", "M"]) under `config`'s rules."""
    return _solver(config).best_layout(hand)


def can_go_out(hand: Iterable[str], config: QuiddlerConfig | None = None) -> bool:
    """Whether every card of `hand` can be laid in words."""
    return _solver(config).can_go_out(hand)


def __getattr__(name: str):
    # The RL layers load lazily so that `import quiddler_env` stays light for core users.
    if name in ("env", "raw_env"):
        from .envs import quiddler_v0

        return getattr(quiddler_v0, name)
    raise AttributeError(f"module 'quiddler_env' has no attribute {name!r}")


__all__ = [
    "ENV_VERSION",
    "IllegalActionError",
    "QuiddlerConfig",
    "Layout",
    "best_layout",
    "can_go_out",
    "env",
    "raw_env",
]
