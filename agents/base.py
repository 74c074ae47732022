"""The agent protocol and what a seat sees, decoded from its observation vector.

Every policy implements `reset(seed)` and `act(observation, action_mask) -> int`.
`observation` is the float32 vector of `quiddler_env.core.observation` (or the
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

from quiddler_env.core import actions as A
from quiddler_env.core import laying
from quiddler_env.core.actions import LAY_BASE, NUM_ACTIONS, num_actions
from quiddler_env.core.cards import DECK_SIZE, NUM_FACES
from quiddler_env.core.config import MAX_HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, QuiddlerConfig
from quiddler_env.core.dictionary import load_dictionary
from quiddler_env.core.levels import get_level, level_dictionary
from quiddler_env.core.observation import LETTERS_SCALE, TOTAL_SCALE, WORDS_SCALE, observation_layout, plain_seats
from quiddler_env.core.solver import Figures, HandSolver, get_solver
from quiddler_env.core.vocabulary import load_seat_vocabulary

from .params import LEVEL_PARAM, check_params

DRAW, DISCARD, LAY, CHALLENGE, OVER = "draw", "discard", "lay", "challenge", "over"
MASK_SIZES = (NUM_ACTIONS, num_actions("choose"), num_actions(challenges=True))
"""The action masks an agent may get: without and with the lay moves of `layout: choose`, and with challenges."""
TABLES = tuple((n, c) for c in (False, True) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1))
"""Every (players, challenges) an observation may come from; their vector sizes all differ (tested)."""


@dataclass(frozen=True)
class LaidWord:
    """One word on the table in the challenge variant, as the observing seat sees it."""

    cards: tuple[int, ...]
    """Count per face."""
    points: int
    letters: int
    known: bool
    """In the observing seat's own vocabulary."""
    challenged: bool
    failed: bool
    """Challenged, and the referee rejected it."""


@dataclass(frozen=True)
class Weighing:
    """A bot's decision with what it weighed: the moves, the value of each (None: nothing was weighed, one move
    only or a move without values), the move it chose, and on what the values rest (`basis`)."""

    moves: list[int]
    values: np.ndarray | None
    choice: int
    basis: str
    """"rollouts" (the search bot's), "win" (the search bot's with `win=true`: chances to win the game), "expert" (the expert's estimate), "challenge" (the expected gain the bots
    decide a challenge by), "only" (one move) or "unweighed"."""
    samples: int = 0
    """Determinizations behind rollout values."""


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
    seat: int = -1
    """The challenge variant: own seat (vocabularies are per seat); -1 otherwise."""
    coverage: float = 1.0
    """The challenge variant: own vocabulary's size against the referee's."""
    candidate_bluff: int = -1
    """The challenge variant's lay phase: the index of the bluff among `candidates`, -1 if none."""
    words: tuple[tuple[LaidWord, ...], ...] = ()
    """The challenge variant: per seat (own first, then relative seats), its laid words in order."""

    @classmethod
    def decode(cls, observation: np.ndarray, num_players: int, challenges: bool = False) -> SeatView:
        """Decode an observation vector of a table of `num_players` (with the challenge variant's slices)."""
        v = observation_layout(num_players, challenges).view(np.asarray(observation))

        def ints(x: np.ndarray) -> tuple[int, ...]:
            return tuple(np.rint(x).astype(np.int64).tolist())

        phase_vec = v["phase"]
        phase = DRAW if phase_vec[0] > 0.5 else DISCARD if phase_vec[1] > 0.5 else LAY if v["laying"][0] > 0.5 else OVER
        if challenges and v["challenging"][0] > 0.5:
            phase = CHALLENGE

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
            **(_decode_challenges(v, laid, ints) if challenges else {}),
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


def _decode_challenges(v: dict[str, np.ndarray], laid: tuple, ints) -> dict:
    """The challenge variant's fields of a `SeatView`."""
    words = []
    for k, figures in enumerate(laid):
        row = []
        if figures is not None:
            for j in range(laying.MAX_LAID_WORDS):
                cards = ints(v["word_cards"][k, j])
                if not any(cards):
                    break
                points, letters = v["word_figures"][k, j]
                row.append(
                    LaidWord(
                        cards=cards,
                        points=int(round(float(points) * TOTAL_SCALE)),
                        letters=int(round(float(letters) * LETTERS_SCALE)),
                        known=bool(v["word_known"][k, j] > 0.5),
                        challenged=bool(v["word_challenged"][k, j] > 0.5),
                        failed=bool(v["word_failed"][k, j] > 0.5),
                    )
                )
        words.append(tuple(row))
    bluff = np.flatnonzero(v["candidate_bluff"] > 0.5)
    return {
        "seat": int(np.argmax(v["seat"])),
        "coverage": float(v["vocabulary_coverage"][0]),
        "candidate_bluff": int(bluff[0]) if bluff.size else -1,
        "words": tuple(words),
    }


def infer_table(size: int) -> tuple[int, bool]:
    """(players, challenges) of the table whose observation vector has `size` entries (ValueError if none)."""
    for n, challenges in TABLES:
        if observation_layout(n, challenges).size == size:
            return n, challenges
    sizes = ", ".join(f"{n}: {observation_layout(n).size}" for n in range(MIN_PLAYERS, MAX_PLAYERS + 1))
    raise ValueError(f"observation of size {size} matches no table size (players: size = {sizes})")


def infer_num_players(size: int) -> int:
    """The table size whose observation vector has `size` entries (ValueError if none)."""
    return infer_table(size)[0]


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


def table_rules(num_players: int | None = None, config: QuiddlerConfig | None = None) -> QuiddlerConfig | None:
    """The rules an agent is built for, from the public entry points that still take a table size
    (`registry.make`, `policies.load_policy`): `config` itself, or `num_players` alone as short for
    `QuiddlerConfig(num_players=num_players)` (the default rules at that table), or None (the table is read from
    the first observation). The table size is the config's: a `num_players` given beside a config (as older
    callers do, e.g. `Quiddler-v0` for its string opponents) must name the same table, else a ValueError."""
    if num_players is None:
        return config
    if config is not None:
        if num_players != config.num_players:
            raise ValueError(f"num_players={num_players} disagrees with config.num_players={config.num_players}")
        return config
    return QuiddlerConfig(num_players=num_players)


class BaseAgent(ABC):
    """Shared plumbing: the agent's own generator, table size, rules and solver.

    `config`: the rules the agent plays by; the table size is `config.num_players`. Without one the
    table (size, variant) is read from the first observation and the rules are the defaults for that table.
    `level`: a shipped level (`quiddler_env.core.levels`, its number or name): the agent finds words only in
    that list (within the rules' dictionary), and goes out only with them; None: the whole dictionary. Not with
    rules that have `vocabularies` (nor in the challenge variant), where a seat's words are the rules' (`level-N`
    names a level there).
    """

    name = "base"

    def __init__(
        self, seed: int | None = None, config: QuiddlerConfig | None = None, *, level: int | str | None = None
    ):
        if config is not None and not isinstance(config, QuiddlerConfig):
            raise TypeError(
                f"config must be a QuiddlerConfig or None, got {type(config).__name__}: {config!r} "
                "(an agent's table size is config.num_players; there is no num_players argument)"
            )
        self.level: int | None = check_level(self.name, level, config)
        """The shipped level whose words the agent knows (None: the whole dictionary)."""
        self.num_players = config.num_players if config is not None else None
        """The table size: the config's, or read from the first observation."""
        self._config = config
        self._solver: HandSolver | None = None
        self._seat_solvers: dict[int, HandSolver] = {}
        self.challenges = config.challenges if config is not None else None
        """Whether observations carry the challenge variant's slices (from the rules, or the first observation)."""
        self.seat = -1
        """With seat vocabularies (the challenge variant, or rules with `vocabularies`): the seat of the last
        observation (its vocabulary is the agent's); -1 otherwise."""
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
        """The words this agent knows: the rules' dictionary (its level's words within it, with a `level`), or with
        the rules' `vocabularies` its seat's vocabulary (outside the challenge variant, the words of it the
        referee's list also has: `vocabulary.load_seat_vocabulary`)."""
        cfg = self.config
        if self.level is not None and (self.challenges or cfg.vocabularies):
            raise ValueError(_LEVEL_IN_CHALLENGES if self.challenges else _LEVEL_WITH_VOCABULARIES)
        if self.seat >= 0 and (cfg.challenges or cfg.vocabularies):
            solver = self._seat_solvers.get(self.seat)
            if solver is None:
                vocabulary = load_seat_vocabulary(cfg.seat_vocabulary(self.seat), cfg.dictionary, cfg.challenges)
                solver = self._seat_solvers[self.seat] = get_solver(vocabulary, cfg.min_word_cards)
            return solver
        if self._solver is None:
            words = (
                load_dictionary(cfg.dictionary) if self.level is None else level_dictionary(self.level, cfg.dictionary)
            )
            self._solver = get_solver(words, cfg.min_word_cards)
        return self._solver

    def seat_solver(self) -> HandSolver | None:
        """The solver an engine should give this agent's seat outside the challenge variant
        (`QuiddlerGame.set_seat_solvers`): its level's, so the layouts laid for it hold only its words; None
        without a level (the referee's)."""
        return None if self.level is None or self.config.challenges else self.solver

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the agent's generator (the same seed gives the same decisions)."""
        self.rng = np.random.default_rng(seed)

    def _prepare(self, observation, action_mask) -> tuple[np.ndarray, np.ndarray]:
        obs, mask = split_observation(observation, action_mask)
        if self.num_players is None or self.challenges is None:
            n, challenges = infer_table(obs.shape[0])
            self.num_players = self.num_players or n
            self.challenges = challenges if self.challenges is None else self.challenges
        expected = observation_layout(self.num_players, self.challenges).size
        if obs.shape[0] != expected:
            variant = " with challenges" if self.challenges else ""
            raise ValueError(
                f"observation has {obs.shape[0]} entries, but a {self.num_players}-player table{variant} has {expected}"
            )
        if self.challenges:
            self.seat = int(np.argmax(obs[observation_layout(self.num_players, True).slices["seat"]]))
        elif self._config is not None and self._config.vocabularies:
            self.seat = plain_seat(obs, self._config)
        if self._config is not None and self._config.num_players != self.num_players:
            raise ValueError(
                f"agent plays by rules for {self._config.num_players} players, observation is for {self.num_players}"
            )
        return obs, mask

    def view(self, obs: np.ndarray) -> SeatView:
        return SeatView.decode(obs, self.num_players, bool(self.challenges))

    def honest(self, seat: SeatView, legal: list[int]) -> list[int]:
        """The legal moves without bluffs (the challenge variant with `layout: choose`): go-out moves only where
        the agent's own vocabulary lays every other card, and no bluff candidate. With a `level`, outside the
        variant too: the agent goes out only with words it knows."""
        if not self.challenges:
            if self.level is None or seat.phase != DISCARD or not any(a >= A.GO_OUT_BASE for a in legal):
                return legal
            bits = self.solver.go_out_faces(list(seat.hand))
            return [a for a in legal if a < A.GO_OUT_BASE or bits >> (a - A.GO_OUT_BASE) & 1] or legal
        if seat.phase == LAY and seat.candidate_bluff >= 0:
            honest = [a for a in legal if a != LAY_BASE + seat.candidate_bluff]
            return honest or legal
        if seat.phase == DISCARD and any(a >= A.GO_OUT_BASE for a in legal):
            bits = self.solver.go_out_faces(list(seat.hand))
            honest = [a for a in legal if a < A.GO_OUT_BASE or bits >> (a - A.GO_OUT_BASE) & 1]
            return honest or legal
        return legal

    def challenge_move(self, seat: SeatView, legal: list[int]) -> int:
        """The challenge phase: challenge the unknown word with the largest positive expected gain, else pass.

        A word in the agent's own vocabulary is never challenged. For one it does not know, the chance that it
        is invalid comes from the agent's vocabulary's size against the referee's (`coverage` c) and a prior b
        that a laid word is invalid (`INVALID_PRIOR`, higher when the rules let players bluff): a valid word is
        unknown with probability 1 - c, an invalid one always, so P(invalid | unknown) = b / (b + (1 - b)(1 - c)).
        Challenging wins 2 x points against the player who laid it (the word's points turn negative) if the
        word fails, and costs its points if it stands.
        """
        b = INVALID_PRIOR["choose" if self.config.layout == "choose" else "auto"]
        c = min(max(seat.coverage, 0.0), 1.0)
        p_invalid = b / (b + (1.0 - b) * (1.0 - c)) if b > 0 else 0.0
        best, best_gain = A.PASS, 0.0
        for a in legal:
            if a < A.CHALLENGE_BASE:
                continue
            k, j = A.challenged(a)
            word = seat.words[k][j]
            if word.known:
                continue
            gain = p_invalid * 2 * word.points - (1.0 - p_invalid) * word.points
            if gain > best_gain + 1e-9:
                best, best_gain = a, gain
        return best if best in legal else legal[0]

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
        level = "" if self.level is None else f", level={self.level}"
        return f"{type(self).__name__}(num_players={self.num_players}{level})"


def plain_seat(observation: np.ndarray, config: QuiddlerConfig) -> int:
    """The observing seat of a plain observation of a game of `config` (`core.observation.plain_seats`)."""
    return int(plain_seats(observation, config.num_players, config.num_rounds)[0])


def check_level(agent: str, level: int | str | None, config: QuiddlerConfig | None = None) -> int | None:
    """A bot's `level` as its number (a name is read too), None for none; a one-line ValueError naming the
    agent for a level that does not exist, for one in the challenge variant, or for one beside the rules'
    `vocabularies`."""
    if level is None:
        return None
    if isinstance(level, str):
        try:
            level = get_level(level).number
        except ValueError as exc:
            raise ValueError(f"{agent}: {exc}") from None
    level = check_params(agent, {"level": LEVEL_PARAM}, level=level)["level"]
    if config is not None and config.challenges:
        raise ValueError(f"{agent}: {_LEVEL_IN_CHALLENGES}")
    if config is not None and config.vocabularies:
        raise ValueError(f"{agent}: {_LEVEL_WITH_VOCABULARIES}")
    return level


_LEVEL_IN_CHALLENGES = (
    "level: not in the challenge variant, where each seat's words are the rules' vocabularies "
    "(name a level there as vocabularies: [level-N])"
)
_LEVEL_WITH_VOCABULARIES = (
    "level and the rules' vocabularies both name a seat's words: give one (a level as vocabularies: [level-N])"
)

INVALID_PRIOR = {"auto": 0.05, "choose": 0.25}
"""The bots' prior that a laid word is invalid: under `layout: auto` only a vocabulary holding words the
referee lacks lays one; under `layout: choose` players may bluff."""


def legal_list(mask: np.ndarray) -> list[int]:
    return [int(a) for a in np.flatnonzero(mask)]


assert NUM_FACES == 31
