"""The game itself, no RL imports: the rules as readable Python (`game.QuiddlerGame`, the reference), the
compiled engine (numba kernels in `batch_kernels`, `batch_bots`, `solver_kernel`; `batch.BatchGame`) and its
one interface for the envs (`engine.Game`, `engine.LearnerGames`). See docs/engine.md."""

from . import kernel_cache  # noqa: F401  (first: numba's cache must know every kernel module's source)
from .actions import NUM_ACTIONS, action_name
from .cards import COUNTS, DECK_SIZE, FACES, NUM_FACES, POINTS
from .config import QuiddlerConfig
from .dictionary import Dictionary, DictionaryError, load_dictionary
from .game import IllegalActionError, Phase, QuiddlerGame
from .scoring import RoundResult, score_round
from .solver import HandSolver, Layout, get_solver

__all__ = [
    "COUNTS",
    "DECK_SIZE",
    "FACES",
    "NUM_ACTIONS",
    "NUM_FACES",
    "POINTS",
    "Dictionary",
    "DictionaryError",
    "HandSolver",
    "IllegalActionError",
    "Layout",
    "Phase",
    "QuiddlerConfig",
    "QuiddlerGame",
    "RoundResult",
    "action_name",
    "get_solver",
    "load_dictionary",
    "score_round",
]
