"""The engine's one interface: a game handle every env plays through.

```python
from quiddler_env.core.engine import Game

game = Game(QuiddlerConfig(num_players=3))
game.reset(seed=7)                         # the deal of `batch.game_seed(7, 0)`'s stream
while not game.is_over:
    move = int(game.legal_mask.nonzero()[0][0])   # the mover's legal moves (int8, refreshed by each step)
    results = game.step(move)              # the round's `RoundResult`s when the move ended a round, else None
game.totals, game.winners()
```

A `Game` holds one game in the batched engine (`batch.BatchGame` as a batch of one): each `step` is one
compiled call that plays the move and writes the next mover's legal moves (`legal_mask`) and observation
(`observation`). It answers who moves (`current_player`), in which phase (`phase`), what any seat sees
(`observe(seat)`), the round results (`round_history`, `last_gains`), each hand (`hand(seat)`, for
referees and shaping, never for a policy) and the whole game as the readable reference
(`snapshot()`: a `QuiddlerGame` copy, which `tests/test_batch_parity.py` checks move by move).
Many games at once are `BatchGame` itself, which the vector env drives through `learner.LearnerGames`.

The envs (`quiddler_env.envs`) talk to the engine only through this module, `batch` and `learner`;
no env reads the kernels' packed state (`tests/test_imports.py` checks it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from . import batch_bots
from . import batch_kernels as kernels
from .batch import BatchGame, game_seed
from .batch_bots import StepResults
from .cards import FACE_INDEX
from .config import QuiddlerConfig
from .game import IllegalActionError, Phase, QuiddlerGame
from .scoring import RoundResult
from .solver import HandSolver

__all__ = [
    "COMPILED_BOTS",
    "Game",
    "HiddenArrays",
    "IllegalActionError",
    "LearnerGames",
    "Phase",
    "StepResults",
    "game_seed",
    "hidden_arrays",
]

COMPILED_BOTS: tuple[str, ...] = tuple(batch_bots.BOT_CODES)
"""The bots the engine plays itself, by name (an opponent named so costs no Python per move)."""


class HiddenArrays(NamedTuple):
    """What a game's state (`envs.state`) holds beyond a seat's observation, for a batch of games (absolute seats).

    PRIVILEGED: every hand and the referee's verdicts; for critics and analysis, never for a policy."""

    hands: np.ndarray
    """(G, players, 31) every hand, face counts."""
    known_taken: np.ndarray
    """(G, players, 31) per seat: the cards it took from the discard pile and surely still holds."""
    discard_counts: np.ndarray
    """(G, 31) the discard pile's cards."""
    phase: np.ndarray
    """(G,) each game's `Phase` value."""
    current_player: np.ndarray
    """(G,) the seat to move."""
    dealer: np.ndarray
    """(G,) the dealer's seat."""
    word_valid: np.ndarray | None
    """The challenge variant: (G, players, 11) the referee's verdict on each word laid this round (None without)."""


def hidden_arrays(batch: BatchGame, games: np.ndarray | None = None) -> HiddenArrays:
    """The `HiddenArrays` of `games` (all by default) of `batch`: copies, numpy over the games, except the
    challenge variant's verdicts, looked up in Python for the games where someone laid this round."""
    games = batch.all_games if games is None else np.asarray(games, dtype=np.int64)
    n, faces, L = batch.num_players, kernels.FACES, batch.offsets
    c, v = batch.cards[games], batch.ints[games]
    known = int(L[kernels.L_KNOWN])
    disc = int(L[kernels.L_DISC_COUNTS])
    word_valid = None
    if batch.challenges:
        word_valid = np.zeros((games.size, n, kernels.WORDS), dtype=bool)
        referee = batch.solver.dictionary
        for j in np.flatnonzero(v[:, kernels.I_N_LAID] > 0).tolist():
            for seat, layout in enumerate(batch.laid(int(games[j]))):
                for w, word in enumerate(layout.words if layout is not None else ()):
                    word_valid[j, seat, w] = referee.lookup([FACE_INDEX[face] for face in word]) >= 0
    return HiddenArrays(
        hands=batch.hands()[games].astype(np.int64),
        known_taken=c[:, known : known + n * faces].reshape(-1, n, faces).astype(np.int64),
        discard_counts=c[:, disc : disc + faces].astype(np.int64),
        phase=v[:, kernels.I_PHASE].astype(np.int64),
        current_player=v[:, kernels.I_CUR].astype(np.int64),
        dealer=v[:, kernels.I_DEALER].astype(np.int64),
        word_valid=word_valid,
    )


class Game:
    """One game of Quiddler in the batched engine (see the module docstring). Call `reset` before playing."""

    def __init__(self, config: QuiddlerConfig | None = None, solver: HandSolver | None = None) -> None:
        self.config = config or QuiddlerConfig()
        self.num_players = self.config.num_players
        batch = self._batch = BatchGame(self.config, num_games=1, solver=solver)
        self.num_actions = batch.num_actions
        self.observation_size = batch.observation_size
        self.legal_mask = np.zeros(self.num_actions, dtype=np.int8)
        """The current player's legal moves (all zero once the game is over); rewritten in place by each step."""
        self.observation = np.zeros(self.observation_size, dtype=np.float32)
        """The current player's observation; rewritten in place by each step."""
        self.round_history: list[list[RoundResult]] = []
        """Per scored round of this game, every seat's `RoundResult`."""
        self.last_gains: list[int] = [0] * self.num_players
        """What the last scored round added to each seat's total (after the score floor)."""
        self._bind()

    def _bind(self) -> None:
        """The views the hot path reads: the game's row of ints and the kernels' arguments, in their order."""
        b = self._batch
        self._ints = b.ints[0]
        self._state = (b.cards, b.ints, b.rng, b.go, b.offsets, b.rules, b.sizes, b.tables, b.obs_starts)
        self._gain = slice(int(b.offsets[kernels.L_GAIN]), int(b.offsets[kernels.L_GAIN]) + self.num_players)

    # -- playing -------------------------------------------------------------------------------

    def reset(self, seed: int, decks: Sequence[Sequence[str | int]] | None = None) -> None:
        """Deal a new game from the deal generator seeded `seed` (a `game_seed`; uint64 range). `decks` stacks the
        decks, as `QuiddlerGame.reset(decks=...)`: faces, top card first, for the first rounds."""
        stacked = None
        if decks is not None:
            stacked = np.asarray([[QuiddlerGame.check_deck(d) for d in decks[: self.config.num_rounds]]])
        self._batch.reset(seeds=np.asarray([int(seed)], dtype=np.uint64), decks=stacked)
        self._ints[self._gain] = 0
        self.round_history = []
        self.last_gains = [0] * self.num_players
        self._view()

    def step(self, move: int) -> list[RoundResult] | None:
        """Play `move` for the current player; the scored round's results if the move ended a round, else None.

        An illegal move raises `IllegalActionError` and changes nothing."""
        ints = self._ints
        rounds_before = ints[kernels.I_ROUNDS_DONE]
        if not kernels.step_view(0, move, self.legal_mask, self.observation, *self._state):
            legal = np.flatnonzero(self.legal_mask).tolist()
            raise IllegalActionError(f"illegal action {move} for player {self.current_player}; legal: {legal}")
        if ints[kernels.I_ROUNDS_DONE] == rounds_before:
            return None
        results = self._batch.round_results(0)
        gains = ints[self._gain]
        self.last_gains = gains.tolist()
        gains[:] = 0
        self.round_history.append(results)
        return results

    def _view(self) -> None:
        """The mover's legal moves and observation from the state (a step writes them itself)."""
        b = self._batch
        kernels.view_row(
            0, self.legal_mask, self.observation, b.cards, b.ints, b.go, b.offsets, b.rules, b.tables, b.obs_starts
        )

    # -- reading -------------------------------------------------------------------------------

    @property
    def current_player(self) -> int:
        return int(self._ints[kernels.I_CUR])

    @property
    def phase(self) -> Phase:
        return Phase(int(self._ints[kernels.I_PHASE]))

    @property
    def is_over(self) -> bool:
        return bool(self._ints[kernels.I_PHASE] == kernels.GAME_OVER)

    @property
    def totals(self) -> list[int]:
        return self._batch.totals[0].tolist()

    def winners(self) -> list[int]:
        """The seats sharing the highest total."""
        totals = self.totals
        return [p for p, t in enumerate(totals) if t == max(totals)]

    @property
    def discard_top(self) -> int:
        """The face index on top of the discard pile, -1 when it is empty."""
        length = int(self._ints[kernels.I_DISC_LEN])
        return int(self._batch.cards[0, int(self._batch.offsets[kernels.L_DISC]) + length - 1]) if length else -1

    def hand(self, seat: int) -> list[int]:
        """Seat's hand as face counts (hidden information: for referees, rewards and analysis, not policies)."""
        return self._batch.hands()[0, seat].tolist()

    def observe(self, seat: int) -> np.ndarray:
        """What `seat` sees now (a new float32 array; `observation` is the current player's)."""
        if seat == self.current_player and not self.is_over:
            return self.observation.copy()
        return self._batch.observe(np.asarray([seat]), self._batch.all_games)[0]

    def hidden_arrays(self) -> HiddenArrays:
        """The game's `HiddenArrays` (a batch of one): what its state holds beyond the observations (privileged)."""
        return hidden_arrays(self._batch)

    def snapshot(self) -> QuiddlerGame:
        """The game now as the readable reference `QuiddlerGame` (a copy: changing it changes nothing here)."""
        return self._batch.game(0, self.round_history)

    # -- copying and pickling ------------------------------------------------------------------

    _ARRAYS = ("cards", "ints", "rng", "go")

    def __getstate__(self) -> dict[str, Any]:
        """The rules, the game's arrays and what this handle keeps; not the dictionary or compiled tables, which
        `__setstate__` takes from the process (`solver.get_solver` shares them)."""
        return {
            "config": self.config,
            "arrays": {name: getattr(self._batch, name).copy() for name in self._ARRAYS},
            "round_history": [list(results) for results in self.round_history],
            "last_gains": list(self.last_gains),
            "legal_mask": self.legal_mask.copy(),
            "observation": self.observation.copy(),
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        Game.__init__(self, state["config"])
        for name, array in state["arrays"].items():
            getattr(self._batch, name)[...] = array
        self.round_history = state["round_history"]
        self.last_gains = state["last_gains"]
        self.legal_mask[...] = state["legal_mask"]
        self.observation[...] = state["observation"]


REWARD_CODES = {
    "round_score": kernels.ROUND_SCORE,
    "relative": kernels.RELATIVE,
    "lead": kernels.LEAD,
    "win_loss": kernels.WIN_LOSS,
}
"""The reward modes as the kernels know them (`batch_kernels.learner_reward`)."""
RESET_ACTION = batch_bots.RESET_ACTION
"""The one action a learner's mask allows once its episode ended (the next action is then ignored)."""
NOT_A_BOT = batch_bots.NOT_A_BOT
"""`LearnerGames.bots` of a seat the engine does not play: the learner's, or a Python policy's."""


class LearnerGames:
    """N games for one learner seat each, the other seats played by compiled bots (by name) or by the caller
    (Python policies): the vector env's engine. Each game's learner step is one compiled call
    (`batch_bots.vector_step`); a game waiting on a Python policy comes back to the caller, which plays it
    (`BatchGame.step`) and calls `finish`. Arrays by game: `seats` (the learner's), `bots` (per seat, the
    compiled bot's code or `NOT_A_BOT`), `moves` (every seat's, this episode), `steps` (the learner's),
    `episodes` (dealt so far), `masks` and `observations` (the learner's, now)."""

    def __init__(
        self,
        config: QuiddlerConfig,
        num_games: int,
        *,
        reward_mode: str = "round_score",
        reward_scale: float = 1.0,
        illegal_reward: float = -1.0,
        max_cycles: int | None = None,
        learner_seat: int | str = "random",
        slot_offset: int = 0,
    ) -> None:
        self.games = BatchGame(config, num_games)
        N, n = num_games, config.num_players
        self.num_players = n
        self.num_actions = self.games.num_actions
        self.reward_code = REWARD_CODES[reward_mode]
        self.reward_scale = float(reward_scale)
        self.illegal_reward = float(illegal_reward)
        self.max_cycles = max_cycles or 0
        self.seat_code = -1 if learner_seat == "random" else int(learner_seat)
        self.slot_offset = int(slot_offset)
        self.seed = 0  # (and the setting the kernels read)
        self.seats = np.zeros(N, dtype=np.int64)
        self.bots = np.full((N, n), NOT_A_BOT, dtype=np.int8)
        self.moves = np.zeros(N, dtype=np.int64)
        self.steps = np.zeros(N, dtype=np.int64)
        self.episodes = np.zeros(N, dtype=np.int64)
        self.masks = np.zeros((N, self.num_actions), dtype=np.int8)
        self.observations = np.zeros((N, self.games.observation_size), dtype=np.float32)

    @staticmethod
    def bot_codes(names: Sequence[str]) -> np.ndarray:
        """The compiled bots' codes of `names` (each one of `COMPILED_BOTS`), seat by seat."""
        return np.asarray([batch_bots.BOT_CODES[name] for name in names], dtype=np.int8)

    @property
    def seed(self) -> np.uint64:
        """The batch's seed: slot s's episode e is dealt from `game_seed(seed, s, e)`."""
        return self._seed

    @seed.setter
    def seed(self, value: int) -> None:
        self._seed = np.uint64(value)
        self._setting = (  # a `batch_bots.LearnerSetting`, as a plain tuple (see `batch_bots.GameArrays`)
            self._seed, np.int64(self.slot_offset), np.int64(self.seat_code), np.int64(self.max_cycles),
            np.int64(self.reward_code), np.float64(self.reward_scale), np.float64(self.illegal_reward),
        )  # fmt: skip

    def _learners(self) -> tuple:
        """The `batch_bots.Learners` the kernels take, as a plain tuple (see `batch_bots.GameArrays`)."""
        return (self.seats, self.bots, self.moves, self.steps, self.episodes, self.masks, self.observations)

    def new_results(self) -> StepResults:
        """Zeroed outputs for one `step`: rewards, flags and the infos' figures (round scores, round bonuses,
        totals: games x players; winner counts), by game."""
        N, n = self.games.num_games, self.num_players
        flags = (np.zeros(N, dtype=bool) for _ in range(5))
        figures = (np.zeros((N, n), dtype=np.int64) for _ in range(3))
        return StepResults(
            np.zeros(N, dtype=np.float64), *flags, *figures, np.zeros(N, dtype=np.int64), np.full(N, -1, np.int64)
        )

    def start_bot_episodes(self, slots: np.ndarray, codes: np.ndarray) -> None:
        """Deal each of `slots` its next episode (episode `episodes[i]` of slot i + slot_offset: `game_seed`),
        seat its learner and the bots `codes` (k seats after the learner: codes[k - 1]), play them up to the
        learner's move and write its mask and observation: one compiled call."""
        slots = np.ascontiguousarray(slots, dtype=np.int64)
        batch_bots.start_episodes(slots, codes, self._setting, self._learners(), self.games.kernel_args)

    def deal(self, slots: np.ndarray) -> np.ndarray:
        """Deal each of `slots` its next episode, seats to be assigned by the caller (then `play_bots` and
        `refresh`); returns the episodes' game seeds."""
        seeds = game_seed(int(self.seed), slots + self.slot_offset, self.episodes[slots])
        self.games.reset(games=slots, seeds=seeds)
        self.episodes[slots] += 1
        self.steps[slots] = 0
        self.moves[slots] = 0
        self.games.take_gains(slots)
        return seeds

    def step(
        self, actions: np.ndarray, restart: np.ndarray, codes: np.ndarray, results: StepResults
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each game's learner step (see `batch_bots.vector_step`; restart[i]: 0 play, 1 start the next episode
        with the bots `codes`, 2 leave it to the caller), writing `results` (`new_results`) and the learners'
        masks and observations in place. Returns the games waiting on a Python policy and their rounds
        completed before the learner's move: play them, then `finish(games, rounds_before, results)`."""
        actions = actions.astype(np.int64, copy=False)
        batch_bots.vector_step(
            actions, restart, codes, self._setting, self._learners(), tuple(results), self.games.kernel_args
        )
        waiting = np.flatnonzero(results.waiting >= 0)
        return waiting, results.waiting[waiting]

    def finish(self, games: np.ndarray, rounds_before: np.ndarray, results: StepResults) -> None:
        """End the learner step of `games` that `step` returned waiting, once the caller played their Python
        seats up to the learner's move or the game's end: rewards, flags, figures, masks and observations."""
        batch_bots.finish_steps(
            games, rounds_before, self._setting, self._learners(), tuple(results), self.games.kernel_args
        )

    def hidden_arrays(self, slots: np.ndarray | None = None) -> HiddenArrays:
        """The `HiddenArrays` of `slots` (every game by default): privileged, for critics (`envs.state`)."""
        return hidden_arrays(self.games, slots)

    def refresh(self, slots: np.ndarray) -> None:
        """Write the learners' masks and observations of `slots` from their games (after `deal` and play)."""
        self.games.action_masks(slots, self.masks, at_games=True)
        self.games.observe(self.seats, slots, self.observations, at_games=True)
