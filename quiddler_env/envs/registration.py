"""Gymnasium registration of the single-agent environments (run on `import quiddler_env`).

Entry points are strings, so registering imports none of the environment modules:
`gymnasium.make("Quiddler-v0")` loads `quiddler_env.envs.gym_env` only when called, and
`gymnasium.make_vec("Quiddler-v0", num_envs=N, vectorization_mode="vector_entry_point")` the batched
`quiddler_env.envs.vector_env`.
"""

from __future__ import annotations

import gymnasium


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


register_envs()
