"""Registration of the environments (run on `import quiddler_env`): the Gymnasium ids of the single-agent
environments, and the AEC env in PettingZoo's registry (PettingZoo 1.27 and later).

`pettingzoo.make("aec", "quiddler/quiddler-v0", num_players=3, ...)` makes `quiddler_env.env(...)` with the
same options (`pettingzoo.pprint_registry()` lists it); PettingZoo's `max_cycles=` goes to the env's
`max_cycles` option. Entry points are strings, so registering imports none of the environment modules:
`gymnasium.make("Quiddler-v0")` loads `quiddler_env.envs.gym_env` only when called, and
`gymnasium.make_vec("Quiddler-v0", num_envs=N, vectorization_mode="vector_entry_point")` the batched
`quiddler_env.envs.vector_env`.
"""

from __future__ import annotations

import gymnasium

PETTINGZOO_ID = "quiddler/quiddler-v0"
"""The AEC env's id in PettingZoo's registry."""


def _register(env_id: str, entry_point: str, vector_entry_point: str | None = None) -> None:
    # Idempotent: re-importing (e.g. importlib.reload in a notebook) must not warn about overriding.
    if env_id not in gymnasium.registry:
        gymnasium.register(id=env_id, entry_point=entry_point, vector_entry_point=vector_entry_point)


def register_envs() -> None:
    """Register every Gymnasium id of the project (safe to call more than once)."""
    _register(
        "Quiddler-v0",
        "quiddler_env.envs.gym_env:QuiddlerEnv",
        vector_entry_point="quiddler_env.envs.vector_env:QuiddlerVectorEnv",
    )
    _register("QuiddlerSolitaire-v0", "quiddler_env.envs.solitaire_env:QuiddlerSolitaireEnv")
    import pettingzoo

    if hasattr(pettingzoo, "register") and PETTINGZOO_ID not in pettingzoo.aec_registry:  # PettingZoo >= 1.27
        pettingzoo.register("aec", PETTINGZOO_ID, entry_point="quiddler_env.envs.quiddler_v0:env")


register_envs()
