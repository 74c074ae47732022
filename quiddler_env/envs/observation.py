"""Moved to `quiddler_env.core.observation` (the engine and the envs share it); this name still works and warns."""

import warnings

from ..core.observation import *  # noqa: F403
from ..core.observation import __all__  # noqa: F401

warnings.warn(
    "quiddler_env.envs.observation moved to quiddler_env.core.observation; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
