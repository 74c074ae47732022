"""The agent protocol and what a seat sees, decoded from its observation vector.

Every policy implements `reset(seed)` and `act(observation, action_mask) -> int`.
`observation` is the float32 vector of `quiddler_env.envs.observation` (or the
PettingZoo dict ``{"observation": ..., "action_mask": ...}``, then `action_mask` may
be omitted). Bots read it through `SeatView`, which decodes the documented slices
of `observation_layout(n)`; they never look at the game itself, so they act only on
what their seat may see.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from quiddler_env.core import laying
from quiddler_env.core.actions import LAY_BASE, NUM_ACTIONS, num_actions
from quiddler_env.core.cards import DECK_SIZE, NUM_FACES
from quiddler_env.core.config import MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, QuiddlerConfig
from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.solver import Figures, HandSolver, get_solver
from quiddler_env.envs.observation import LETTERS_SCALE, TOTAL_SCALE, WORDS_SCALE, observation_layout

DRAW, DISCARD, LAY, OVER = "draw", "discard", "lay", "over"
MASK_SIZES = (NUM_ACTIONS, num_actions("choose"))
"""The action masks an agent may get: without and with the lay moves of `layout: choose`."""


@runtime_checkable
class Agent(Protocol):
    """What every policy offers: seeded reset, and a legal action for an observation."""

    def reset(self, seed: int | None = None) -> None: ...

    def act(self, observation, action_mask=None) -> int: ...


@dataclass(frozen=True)
class SeatView:
    """One seat's observation, decoded to game terms (ints, not scaled floats)."""

    num_players: int
    hand: tuple[int, ...]
    """Own hand: count per face."""
    discard_top: int
    """Face on top of the discard pile, -1 if it is empty."""
    hand_size: int
    """Cards dealt this round."""
    phase: str
    """"draw", "discard", "lay" (`layout: choose`: which candidate to lay) or "over"."""
    final_turn: bool
    """Someone went out: this is the seat's last turn of the round."""
    went_out: int
    """Relative seat (1 = next clockwise) of the player who went out, -1 if nobody."""
    discard_pile: tuple[int, ...]
    """Faces in the discard pile."""
    opponent_taken: tuple[tuple[int, ...], ...]
    """Per opponent (relative seat order), cards taken from the discard pile and surely still held."""
    unseen: tuple[int, ...]
    """Cards of each face this seat has not seen: the draw pile and opponents' hidden cards."""
    draw_pile_size: int
    totals: tuple[int, ...]
    """Running totals, own first, then relative seats."""
    round_fraction: float
    """Round number / number of rounds (1.0 in the last round)."""
    seat_from_dealer: int
    laid: tuple[Figures | None, ...] = ()
    """Per seat (own first, then relative seats): the figures of the layout it laid this round, None before."""
    laid_cards: tuple[tuple[int, ...], ...] = ()
    """Per seat (own first): the cards it laid in words (all zero before it lays)."""
    candidates: tuple[Figures, ...] = ()
    """In the lay phase: this seat's candidate layouts (lay move k lays candidates[k])."""

    @classmethod
    def decode(cls, observation: np.ndarray, num_players: int) -> SeatView:
        """Decode an observation vector of a table of `num_players`."""
        v = observation_layout(num_players).view(np.asarray(observation))

        def ints(x: np.ndarray) -> tuple[int, ...]:
            return tuple(int(c) for c in np.rint(x))

        phase_vec = v["phase"]
        phase = DRAW if phase_vec[0] > 0.5 else DISCARD if phase_vec[1] > 0.5 else LAY if v["laying"][0] > 0.5 else OVER

        def figures(row: np.ndarray) -> Figures:
            return Figures(
                *(int(round(float(x) * k)) for x, k in zip(row, (TOTAL_SCALE, LETTERS_SCALE, WORDS_SCALE), strict=True))
            )

        laid = tuple(
            figures(row) if flag > 0.5 else None for flag, row in zip(v["laid"], v["laid_figures"], strict=True)
        )
        # Past the last candidate the slice is zero; a real candidate never is (laying nothing scores below 0).
        candidates = tuple(figures(row) for row in v["candidates"] if row.any()) if phase == LAY else ()
        went = np.flatnonzero(v["went_out"] > 0.5)
        top = np.flatnonzero(v["discard_top"] > 0.5)
        return cls(
            num_players=num_players,
            hand=ints(v["hand"]),
            discard_top=int(top[0]) if top.size else -1,
            hand_size=int(round(float(v["hand_size"][0]) * MAX_HAND_SIZE)),
            phase=phase,
            final_turn=bool(v["final_turn"][0] > 0.5),
            went_out=int(went[0]) if went.size else -1,
            discard_pile=ints(v["discard_pile"]),
            opponent_taken=tuple(ints(row) for row in v["opponent_taken"]),
            unseen=ints(v["unseen"]),
            draw_pile_size=int(round(float(v["draw_pile_size"][0]) * DECK_SIZE)),
            totals=tuple(int(round(float(t) * TOTAL_SCALE)) for t in v["totals"]),
            round_fraction=float(v["round"][0]),
            seat_from_dealer=int(np.argmax(v["seat_from_dealer"])),
            laid=laid,
            laid_cards=tuple(ints(row) for row in v["laid_cards"]),
            candidates=candidates,
        )

    def draw_pile_weights(self) -> list[int]:
        """Cards a draw from the pile may give, as counts per face.

        The unseen cards; when the draw pile is empty, a draw reshuffles the discard
        pile below its top card, which the seat has seen.
        """
        if self.draw_pile_size > 0 or sum(self.discard_pile) <= 1:
            return list(self.unseen)
        pile = list(self.discard_pile)
        if self.discard_top >= 0:
            pile[self.discard_top] -= 1
        return pile


def infer_num_players(size: int) -> int:
    """The table size whose observation vector has `size` entries (ValueError if none)."""
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
        if observation_layout(n).size == size:
            return n
    sizes = ", ".join(f"{n}: {observation_layout(n).size}" for n in range(MIN_PLAYERS, MAX_PLAYERS + 1))
    raise ValueError(f"observation of size {size} matches no table size (players: size = {sizes})")


def split_observation(observation, action_mask) -> tuple[np.ndarray, np.ndarray]:
    """Accept a vector + mask, or PettingZoo's dict with both; validate the mask."""
    if isinstance(observation, dict):
        if action_mask is None:
            action_mask = observation.get("action_mask")
        observation = observation.get("observation")
    if observation is None:
        raise ValueError("act() needs an observation vector (or a dict with 'observation')")
    if action_mask is None:
        raise ValueError("act() needs an action_mask (or a dict with 'action_mask')")
    mask = np.asarray(action_mask).reshape(-1)
    if mask.shape[0] not in MASK_SIZES:
        raise ValueError(f"action_mask must have {' or '.join(map(str, MASK_SIZES))} entries, got {mask.shape[0]}")
    if not mask.any():
        raise ValueError("action_mask allows no action: the game is over for this seat")
    return np.asarray(observation, dtype=np.float32).reshape(-1), mask


class BaseAgent(ABC):
    """Shared plumbing: the agent's own generator, table size, rules and solver."""

    name = "base"

    def __init__(
        self,
        seed: int | None = None,
        num_players: int | None = None,
        config: QuiddlerConfig | None = None,
    ):
        if config is not None and num_players is not None and config.num_players != num_players:
            raise ValueError(f"num_players={num_players} disagrees with config.num_players={config.num_players}")
        self.num_players = num_players if num_players is not None else (config.num_players if config else None)
        self._config = config
        self._solver: HandSolver | None = None
        self.reset(seed)

    @property
    def config(self) -> QuiddlerConfig:
        """The rules this agent plays by (the default rules for its table size if none were given)."""
        if self._config is not None:
            return self._config
        config = QuiddlerConfig(num_players=self.num_players or MIN_PLAYERS)
        if self.num_players is not None:  # keep the default only once the table size is known
            self._config = config
        return config

    @property
    def solver(self) -> HandSolver:
        if self._solver is None:
            cfg = self.config
            self._solver = get_solver(load_dictionary(cfg.dictionary), cfg.min_word_cards)
        return self._solver

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the agent's generator (the same seed gives the same decisions)."""
        self.rng = np.random.default_rng(seed)

    def _prepare(self, observation, action_mask) -> tuple[np.ndarray, np.ndarray]:
        obs, mask = split_observation(observation, action_mask)
        if self.num_players is None:
            self.num_players = infer_num_players(obs.shape[0])
        expected = observation_layout(self.num_players).size
        if obs.shape[0] != expected:
            raise ValueError(
                f"observation has {obs.shape[0]} entries, but a {self.num_players}-player table has {expected}"
            )
        if self._config is not None and self._config.num_players != self.num_players:
            raise ValueError(
                f"agent plays by rules for {self._config.num_players} players, observation is for {self.num_players}"
            )
        return obs, mask

    def view(self, obs: np.ndarray) -> SeatView:
        return SeatView.decode(obs, self.num_players)

    def auto_lay(self, seat: SeatView, legal: list[int]) -> int:
        """The lay move of the automatic rule (`laying.lay_key` against what is laid), from the seat's view."""
        laid = [f for f in seat.laid if f is not None]
        options = [a - LAY_BASE for a in legal if a >= LAY_BASE]
        # The engine's own rule, over the candidates the mask offers (all of them, in their fixed order).
        k = laying.auto_index([seat.candidates[i] for i in options], laid, self.config, self.num_players)
        return LAY_BASE + options[k]

    @abstractmethod
    def act(self, observation, action_mask=None) -> int:
        """A legal action id for this observation."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_players={self.num_players})"


def legal_list(mask: np.ndarray) -> list[int]:
    return [int(a) for a in np.flatnonzero(mask)]


assert NUM_FACES == 31
