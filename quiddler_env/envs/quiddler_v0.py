# noqa: D212, D415
"""
# Quiddler

| Import             | `from quiddler_env import env` (or `quiddler_env.envs.quiddler_v0`) |
|--------------------|--------------------------------------------------|
| Actions            | Discrete                                         |
| Parallel API       | No                                               |
| Manual Control     | No                                               |
| Agents             | `agents= ['player_0', ..., 'player_{n-1}']`      |
| Agents             | 2 to 8 (`num_players`, default 2)                |
| Action Shape       | (1,)                                             |
| Action Values      | Discrete(64); Discrete(64 + K) with `layout="choose"` |
| Observation Shape  | (101 + 69 n + 3 K,) for n players, K = 16: (287,) for 2 |
| Observation Values | counts 0..12, totals / 100, the rest in [0, 1]   |

Quiddler is a rummy-like word card game for 2 to 8 players. Each of 8 rounds deals
3, 4, ... 10 cards; on a turn a player draws (from the draw pile or the discard
pile), then discards one card. A player whose other cards can all be laid in words
may go out as they discard; every other player then has one last turn, and the
round is scored: points of the cards laid in words minus points of the cards left
in hand, plus 10 for the longest word (and/or the most words). The highest total
after the last round wins. The rules, with every option, are in `QuiddlerConfig`.

Which words a hand lays is decided by the exact solver and the table's laying rule
(see Laying), so an agent decides what matters: where to draw from, what to keep,
when to go out; with `layout="choose"` also which of its best layouts to lay.

### Arguments

```python
quiddler_env.env(config=None, *, reward_mode="round_score", reward_scale=None,
                 render_mode=None, render_view="current", max_cycles=None, infos="full", **rules)
```

`config`: a YAML file (e.g. `configs/env/default.yaml`), a mapping or a
`QuiddlerConfig`; keyword arguments override it. Any key that is neither a rule nor
an env option raises a `ValueError` naming it.

`**rules`: the `QuiddlerConfig` fields: `num_players` (2..8), `hand_sizes` (one
round per entry), `min_word_cards`, `two_player_bonus`, `bonus_value`,
`score_floor`, `go_out`, `dictionary`, `turn_cap`.

The env options (every env's, with defaults, docs and checks) are declared once in
`quiddler_env.envs.common.ENV_OPTIONS`; `env_option_names("aec")` lists this env's.

`reward_mode`: `"round_score"`, `"relative"`, `"lead"` or `"win_loss"` (see Rewards).

`reward_scale`: multiplies every reward; `None` means 0.01 for the point modes (a
round's reward is then roughly -1..2) and 1 for `win_loss`.

`render_mode`: `None`, `"ansi"` (render returns the text table), `"human"`
(prints it after every step) or `"rgb_array"` (render returns the table as a uint8
image, height x width x 3, its size fixed by the number of players: what Gymnasium's
`RecordVideo` records, e.g. around `SelfPlayEnv`; `quiddler_env.envs.render_image`).

`render_view`: whose hand the table shows, in every render mode: `"current"` (the agent
to act), `"all"` (a spectator's view: every hand face up), or a seat (`2` or
`"player_2"`); other hands show only their size (card backs in the image) and the
cards publicly taken from the discard pile.

`max_cycles`: truncate every agent after `max_cycles * num_players` agent steps
(`None`: no limit besides the game's own end; the default `turn_cap` ends every
round after 30 turns each).

`infos`: `"full"` (the round's results with their words, see Infos) or `"flat"` (every
info the same keys, numbers and fixed-length arrays, which collectors such as Tianshou's
can stack; see Infos).

### Observation Space

A dict: `'observation'` is the float32 vector of `quiddler_env.core.observation`
(the encoding every env and bot uses) for the observing agent; `'action_mask'` is
an int8 vector of 64 with 1 for each legal action of the agent to act, and all
zeros for every other agent (PettingZoo's classic convention). Opponents come in
seat order starting with the next seat clockwise ("relative seats"). Nothing
private to another player is encoded: opponents' hands only as the cards they took
from the discard pile and must still hold; the draw pile only as its size.

| slice | size | content | scale |
|---|---|---|---|
| `hand` | 31 | own hand, count per face (faces in `FACES` order) | raw count |
| `discard_top` | 31 | top of the discard pile, one-hot (all zero if empty) | 0/1 |
| `hand_size` | 1 | cards dealt this round | / 11 |
| `phase` | 2 | one-hot: draw, discard | 0/1 |
| `final_turn` | 1 | 1 once someone has gone out: the turns left are last turns | 0/1 |
| `went_out` | n | relative seat of the player who went out, one-hot | 0/1 |
| `discard_pile` | 31 | faces in the discard pile (all were seen face up) | raw count |
| `opponent_taken` | 31*(n-1) | per opponent (relative seat order): cards taken from the discard pile and surely still held | raw count |
| `unseen` | 31 | cards of each face not in own hand, the discard pile or `opponent_taken` | raw count |
| `draw_pile_size` | 1 | cards in the draw pile | / 118 |
| `totals` | n | running totals, own first, then relative seats | / 100 |
| `round` | 1 | round number (1-based) | / number of rounds |
| `seat_from_dealer` | n | own seat relative to the dealer (0 = dealer), one-hot | 0/1 |
| `turns_this_round` | 1 | turns played this round (every seat's) | / (turn cap x players), at most 1; 0 without cap |
| `laying` | 1 | 1 in the lay phase (`layout: choose`): the move is which candidate to lay | 0/1 |
| `laid` | n | who has laid this round, own first, then relative seats | 0/1 |
| `laid_cards` | 31*n | the cards each player laid in words (public from its laying moment), own first | raw count |
| `laid_figures` | 3*n | each laid layout's card points (used - unused), longest word (letters), words | / 100, / 22, / 11 |
| `candidates` | 3*K | in the lay phase: each candidate layout's card points, longest word, words (K = `laying.MAX_CANDIDATES`; zeros past the last) | / 100, / 22, / 11 |

`observation_layout(n).view(vec)` splits a vector into these named slices. The
space's bounds: counts up to the number of copies of the face, totals within what
the configured rounds can score, everything else in [0, 1].

### Action Space

| id | move | legal when |
|---|---|---|
| 0 | draw the top card of the draw pile | draw phase (and the draw pile, or the discard pile below its top, has cards) |
| 1 | take the top card of the discard pile | draw phase |
| 2 + f | discard one card of face f (f = 0..30 in `FACES` order: A..Z, ER, CL, IN, TH, QU) | discard phase, face f in hand |
| 33 + f | discard one card of face f and go out | discard phase, the rest of the hand can all be laid in words, not in a final turn |

| 64 + k | lay candidate layout k (k = 0..K-1, K = `laying.MAX_CANDIDATES` = 16) | `layout="choose"` only: the lay phase, k < the number of candidates |

A turn is two agent steps by the same agent: draw, then discard. With
`go_out="forced"` only the go-out actions are legal when one exists.

### Laying

The player who goes out lays its words as it goes out; each other player lays
right after its final turn, in turn order; after a turn cap with nobody out, everyone
lays at the round's end in turn order from the round's first player. From that
moment every observation shows the laid words (`laid`, `laid_cards`,
`laid_figures`). With `layout="auto"` (the default) the engine lays for the player:
among the layouts of its hand, the one with the most card points (used minus unused)
plus the bonuses it would win against the layouts already laid; ties go to the longer
longest word, then to more words, then to the first in the solver's fixed order
(`quiddler_env.core.laying`). The player who went out lays every card. With
`layout="choose"` the laying is the player's own decision: right after the discard
(the go-out, or its final turn) the same agent steps once more, in the lay phase, and
chooses among its candidates: its Pareto-best layouts over (card points, longest
word, words), at most K = 16, their figures in the observation's `candidates` slice;
the actions `64 + k` are masked to them. The bonuses are decided at the round's end
among all the laid layouts.

`raw_env.step` raises `IllegalActionError` (a `ValueError`, the one illegal-action
error of the engine and every env: `quiddler_env.envs.common.IllegalActionError`)
naming the action and the legal ones when the action is illegal; `True`/`False` and
floats (`0.0` too) are never actions (numpy integers and 0-d integer arrays are). `env()` adds PettingZoo's
standard wrappers: an illegal move ends the game with reward -1 for the mover and 0
for the others (`TerminateIllegalWrapper`), an action outside `Discrete(64)` fails an
assertion (a bool or a float raises `IllegalActionError`), and the call order is enforced
(`OrderEnforcingWrapper`). They are subclasses of PettingZoo's classes that behave
the same but read `agents`, `agent_selection`, `terminations`, ... from the raw env
in one hop instead of one `__getattr__` per layer (which cost more than the game
itself), and take the base classes' path for a legal move without re-reading it
(`tests/test_env_aec.py` plays both stacks side by side).

### The engine

The game runs in the batched engine as a batch of one (`quiddler_env.core.batch.BatchGame`):
one compiled call per step plays the move and computes the next mover's legal moves and
observation. `env.unwrapped.game` is the game now as a `QuiddlerGame` (a copy, for reading;
the single-game engine is the rules' readable reference, and the batched engine replays it
move for move: `tests/test_batch_parity.py`, `benchmarks/parity.py`). `reset(seed=s)` deals
game `core.batch.game_seed(s, 0, 0)`, and each later `reset()` without a seed the next
episode, `game_seed(s, 0, k)`: the games of slot 0 of a vector env reset with seed `s`.

Errors of call order, in `raw_env` too: `step`, `last` or `observe` before `reset`
raise a `RuntimeError` saying so. Once the game is over every agent is terminated
and steps once with `None` (PettingZoo's convention; a real action for a done
agent is an `IllegalActionError`); `step` or `last` after every agent is gone raise
a `RuntimeError` ("after the game ended"), where `env()` keeps PettingZoo's warning
for `step`.

### Rewards

Given to every agent when a round ends (so the agent that ends a round is not the
only one rewarded); the episode is the whole game, every configured round.

| `reward_mode` | reward at a round end | at the game end |
|---|---|---|
| `round_score` | the points the round added to the agent's total (its round score after the score floor) x scale | 0 |
| `relative` | that minus the mean of the opponents' (sums to 0 over the table) x scale | 0 |
| `lead` | how much the agent's lead over the best other total grew: (own total - best other total) after the round minus before (x scale) | 0 |
| `win_loss` | 0 | +1 sole winner, 0 each winner of a tie on the highest total, -1 everyone else (x scale) |

With the default scale, an agent's return in `round_score` mode is its final total / 100, and in `lead`
mode its final lead / 100: positive exactly when it wins alone. With 2 players `lead` is
`relative`; with more, `relative` counts points taken from any opponent alike, `lead` only those that
change who is ahead of the agent.

### Infos

At a round end every agent's info is `{"round": k, "round_result": [...]}` with
one entry per player (seat order): `player`, `words` (each a list of card faces
such as `["QU", "I", "Z"]`), `spelled` (`"quiz"`), `unused`, `card_points`,
`unused_points`, `bonuses` (name -> points), `round_score`, `total`, `went_out`,
`lay_position` (0 for the first to lay, the player who went out).
`round_score = card_points - unused_points + sum(bonuses)`, floored at 0 by the
default `score_floor`. The info stays until that agent acts. At the game end it
also holds `"winners"` (agent names). Otherwise infos are empty.

With `infos="flat"` every agent's info at every step (from `reset` on) has the same keys,
`FLAT_INFO_KEYS`, each a number or an array of a fixed shape, as `Quiddler-v0`'s flat infos
(the same names and encodings, less `action_mask`, which the observation carries): `seat`
(the agent's), `round` (rounds scored so far), `round_ended` (a round ended since the
agent's last move: the info stays until the agent acts, as above), `round_scores` and
`round_bonuses` (int64 per seat, absolute order; zeros unless `round_ended`), `totals`
(int64 per seat, now), `winner_count` (the seats sharing the best total once the game is
over, else 0) and `illegal_action` (True in the mover's info after an illegal move ended
the game under `env()`'s `TerminateIllegalWrapper`). The round's words:
`env.unwrapped.last_round_results()` (either mode), one dict per seat as in `round_result`.

`reset(seed=None, options=None)`: the same seed gives the same game; without a
seed the env plays the next game of the last seed's stream (see The engine). A seed is an integer >= 0 (numpy
integers too); anything else is a `ValueError` before numpy sees it.
`options={"decks": [...]}` stacks the deck (one 118-card order, top first, per
round) for scripted tests; other keys are ignored (PettingZoo's API test passes
arbitrary ones); `options` that is not a mapping (or None) is a `ValueError` naming it.

### State

`state()` is the whole game as a float32 vector in `state_space` (a Box): every seat's hand,
the draw pile's cards (counts per face) and size, the discard pile and its top, the cards
each seat took from it, the totals, the round, the phase, the seat to move, the dealer, who
went out, the laid words, the mover's lay candidates, and with `challenges: true` every laid
word's cards and the referee's verdict on it. Seats are absolute (seat 0 first). It is
**privileged**: for centralised critics (MAPPO-style value functions), privileged-information
training and analysis, never for choosing a move, which reads only `observe(agent)`. The slice
table is in `quiddler_env.envs.state` (`state_layout(n).view(vec)` names the slices).

### Copies and pickles

`copy.deepcopy(env)` and `pickle.loads(pickle.dumps(env))` (of `raw_env` and of `env()`) copy
the game in play: the copy steps on exactly as the original would (same cards, same rewards,
same infos, the same stream of later unseeded games), and stepping one leaves the other as it
is. The dictionaries are not copied: a copy or an unpickled env shares the process's solvers.

### Version History

* v0: Initial release (0.1.0). In 0.2.0: words laid by the table's rule (bonus-aware, in laying order, public
  once laid), the `layout` rule option with its lay moves, and the laid-words slices of the observation.
  In 0.4.0: the batched engine under the env (the same rules and observations; a seed deals another game
  than in 0.3, `game_seed(s, 0, k)`). Unreleased (after 0.8.12): `state()` / `state_space`, deep copies and
  pickles of a game in play, `render_mode="rgb_array"`, `infos="flat"` (the observations, actions and rewards
  unchanged).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ..core import actions as A
from ..core.config import QuiddlerConfig
from ..core.engine import Game, game_seed
from ..core.game import QuiddlerGame
from ..core.scoring import RoundResult
from . import common, gym_env
from .common import IllegalActionError
from .render_image import render_rgb
from .state import encode_state, state_box
from .versions import ENV_VERSION

ILLEGAL_MOVE_REWARD = -1

FLAT_INFO_KEYS = tuple(key for key in gym_env.FLAT_INFO_KEYS if key != "action_mask")
"""The keys of every info with `infos="flat"`: `Quiddler-v0`'s (`gym_env.FLAT_INFO_KEYS`, the one declaration)
less `action_mask`, which the AEC env's observation carries."""


def env(config: str | os.PathLike | Mapping[str, Any] | QuiddlerConfig | None = None, **options: Any) -> AECEnv:
    """The Quiddler AEC env with PettingZoo's standard wrappers (see the module docstring).

    TerminateIllegalWrapper (illegal move: reward -1 for the mover, game over), AssertOutOfBoundsWrapper and
    OrderEnforcingWrapper, each in a subclass that only reads the raw env's state in one hop (see `_RawState`).
    """
    aec = raw_env(config, **options)
    aec = TerminateIllegalWrapper(aec, illegal_reward=ILLEGAL_MOVE_REWARD)
    aec = AssertOutOfBoundsWrapper(aec)
    aec = OrderEnforcingWrapper(aec)
    return aec


_RAW_STATE = ("agents", "agent_selection", "terminations", "truncations", "rewards", "infos", "_cumulative_rewards")


class _RawState:
    """Reads one public state attribute (`agents`, `terminations`, ...) straight from the raw env.

    PettingZoo's wrappers forward every attribute read through each layer's `__getattr__`: with three
    layers that is about 36 Python calls per agent step, more time than the env's own step. No wrapper
    defines these attributes, so the chain always ends at the raw env; reading it there gives the same
    value in one hop. The subclasses below also take the base classes' path for a legal move without their
    checks, which reads PettingZoo's private state: `_prev_obs`, `_prev_info`, `_terminated`
    (TerminateIllegalWrapper), `_has_reset`, `_has_updated` (OrderEnforcingWrapper). What that buys,
    `python benchmarks/bench_env.py --games 30 --runs 3` (2 players, 2026-12-05): `env()` 59,595 agent
    steps/s against 21,424 with PettingZoo's own three wrappers around the same raw env (2.8x); the raw
    env alone 66,217. `tests/test_env_aec.py` runs PettingZoo's api_test on `env()`, which would catch a
    PettingZoo release that renamed them. A non-data descriptor: assigning the attribute on a wrapper still shadows it, as
    before. Before reset() the OrderEnforcingWrapper's own error is kept (AttributeError falls back to
    its `__getattr__`).
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, wrapper: Any, owner: type | None = None) -> Any:
        if wrapper is None:
            return self
        return getattr(wrapper._raw_env, self.name)


class _RawStateAfterReset(_RawState):
    """`_RawState` for the OrderEnforcingWrapper: before reset() its own error (AttributeError falls back to
    its `__getattr__`)."""

    def __get__(self, wrapper: Any, owner: type | None = None) -> Any:
        if wrapper is None:
            return self
        if not wrapper._has_reset:
            raise AttributeError(self.name)
        return getattr(wrapper._raw_env, self.name)


def _one_hop(cls: type, before_reset_error: bool = False) -> type:
    for name in _RAW_STATE:
        # Should a future PettingZoo wrapper define one of these itself, keep its behaviour.
        if not any(name in vars(base) for base in cls.__mro__[1:]):
            setattr(cls, name, (_RawStateAfterReset if before_reset_error else _RawState)(name))
    return cls


@_one_hop
class TerminateIllegalWrapper(wrappers.TerminateIllegalWrapper):
    """PettingZoo's TerminateIllegalWrapper, reading the raw env's state in one hop."""

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        super().__init__(env, illegal_reward)
        self._raw_env = env.unwrapped

    def observe(self, agent: str) -> Any:
        if self.env is not self._raw_env:
            return super().observe(agent)
        raw = self._raw_env
        obs = raw.observe(agent)
        if agent == raw.agent_selection:  # as the base class: the mover's observation and info, kept for step()
            self._prev_obs = obs
            self._prev_info = raw.infos.get(agent, {})
        return obs

    def step(self, action: Any) -> None:
        # The base class's path for a legal move of a live agent, taken without its checks' attribute reads;
        # anything else (an illegal move, a done agent, no observation kept) goes to the base class as before.
        prev = self._prev_obs
        raw = self._raw_env
        if type(action) is int and type(prev) is dict and not self._terminated and self.env is raw:
            agent = raw.agent_selection
            if (
                agent in raw.terminations
                and not raw.terminations[agent]
                and not raw.truncations[agent]
                and "action_mask" in prev
                and prev["action_mask"][action]
            ):
                self._prev_obs = None
                self._prev_info = None
                raw.step(action)
                return
        mover = getattr(raw, "agent_selection", None)
        ended_here = not self._terminated
        super().step(action)
        if ended_here and self._terminated and getattr(raw, "_flat", False) and mover in raw.infos:
            # An illegal move ended the game: the mover's flat info says so, as Quiddler-v0's does.
            raw.infos[mover] = raw._flat_info(raw.agent_name_mapping[mover], illegal=True)


@_one_hop
class AssertOutOfBoundsWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's AssertOutOfBoundsWrapper, reading the raw env's state in one hop; a bool is refused
    (`Discrete.contains(True)` holds, and the mask lookup below would then fail obscurely)."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw_env = env.unwrapped

    def step(self, action: Any) -> None:
        if type(action) is int and 0 <= action < self._raw_env.num_actions:
            # What `Discrete.contains` holds for a Python int, without its numpy conversion (a good share of a
            # step); the base class's assertion would pass, so go on to the wrapped env as it would.
            wrappers.BaseWrapper.step(self, action)
            return
        if action is not None and common.action_id(action) is None:
            # A bool or a float (`Discrete.contains` holds True, and would fail 0.0 with no name): named here.
            what = "a bool" if isinstance(action, common.BOOL_TYPES) else f"a {type(action).__name__}"
            raise IllegalActionError(
                f"illegal action {action!r} for {self._raw_env.agent_selection}: {what} is not an action id "
                f"(0..{self._raw_env.num_actions - 1})"
            )
        super().step(action)


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper, reading the raw env's state in one hop."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw_env = env.unwrapped

    def __str__(self) -> str:
        return str(self.env)  # as the base class prints itself: the env's name

    def step(self, action: Any) -> None:
        if self._has_reset and self._raw_env.agents:  # the base class's path for a live game, in one hop
            self._has_updated = True
            self.env.step(action)
            return
        super().step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """`AECEnv.last`, reading the raw env's state directly (once reset; before, PettingZoo's error)."""
        if not self._has_reset:
            return super().last(observe)
        raw = self._raw_env
        agent = raw.agent_selection
        if agent not in raw.terminations:
            raise raw._call_order_error("last()")
        observation = self.observe(agent) if observe else None
        return (
            observation,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )


_one_hop(OrderEnforcingWrapper, before_reset_error=True)


class raw_env(AECEnv, EzPickle):
    """Quiddler for 2..8 agents, one game per episode. Illegal actions raise `IllegalActionError` (a ValueError).

    The game is the engine's handle (`core.engine.Game`): one compiled call per step plays the move and
    computes the next mover's observation and legal moves. `game` is the game as a `QuiddlerGame` (a copy,
    for reading: the rules' readable reference, which the engine replays exactly, `tests/test_batch_parity.py`).
    """

    metadata = {
        "render_modes": list(common.AEC_RENDER_MODES),
        "name": "quiddler_v0",
        "is_parallelizable": False,
        "render_fps": 1,
        "env_version": ENV_VERSION,
    }

    def __init__(
        self, config: str | os.PathLike | Mapping[str, Any] | QuiddlerConfig | None = None, **options: Any
    ) -> None:
        EzPickle.__init__(self, config, **options)
        super().__init__()
        self.config, opts = common.resolve_options(config, options, "aec")  # checked: common.ENV_OPTIONS
        self.reward_mode = opts["reward_mode"]
        self.reward_scale = opts["reward_scale"]
        self.render_mode = opts["render_mode"]
        self.render_view = opts["render_view"]
        self.max_cycles = opts["max_cycles"]
        self.info_mode = opts["infos"]  # the `infos` option (`self.infos` is PettingZoo's dict of infos)
        self._flat = self.info_mode == "flat"

        engine = self._engine = Game(self.config)
        self.num_actions = engine.num_actions
        n = self.num_players = self.config.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {agent: i for i, agent in enumerate(self.possible_agents)}
        # Built once: PettingZoo's API test wants the same space object on every call.
        self.action_spaces = {agent: spaces.Discrete(self.num_actions) for agent in self.possible_agents}
        self.observation_spaces = {
            agent: spaces.Dict(
                {"observation": common.observation_box(self.config), "action_mask": common.action_mask_box(self.config)}
            )
            for agent in self.possible_agents
        }
        self.state_space = state_box(self.config)  # what `state()` returns: privileged, for critics only
        self._seed: int | None = None
        self._episode = 0
        self._last_move: tuple[str, int, int] | None = None  # (agent, action, face taken or -1)
        self.agents = self.possible_agents[:]
        self._has_game = False

    @property
    def game(self) -> QuiddlerGame:
        """The game now, as a `QuiddlerGame` (a copy: changing it changes nothing here)."""
        return self._engine.snapshot()

    def state(self) -> np.ndarray:
        """The whole game as a float32 vector in `state_space` (`quiddler_env.envs.state` has its slice table).

        PRIVILEGED: it holds every seat's hand and the draw pile's composition. It is for centralised critics
        (MAPPO-style value functions), privileged-information training and analysis; never for choosing a move,
        which must read only `observe(agent)`. Seats are absolute (seat 0 first)."""
        if not self._has_game:
            raise common.not_started_error("state()")
        return encode_state(self._engine.snapshot())

    # -- copying and pickling -------------------------------------------------------------------

    _OPTION_ATTRIBUTES = {"infos": "info_mode"}
    """The options kept under another attribute name (the rest under their own)."""

    def __getstate__(self) -> dict[str, Any]:
        """Everything, the game in play included (a copy or a pickle plays on exactly as the original would; the
        engine's handle leaves the dictionaries and compiled tables to the process). EzPickle's state would
        rebuild a fresh env from the constructor's arguments instead."""
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        options = {name: state[self._OPTION_ATTRIBUTES.get(name, name)] for name in common.env_option_names("aec")}
        raw_env.__init__(self, state["config"], **options)
        self.__dict__.update(state)

    # -- spaces ------------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    # -- episode -----------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game. The same seed gives the same game; without a seed the games continue one stream.

        Game k after `reset(seed=s)` (k = 0 for that reset, 1 for the next reset without a seed, ...) deals as
        episode k of slot 0 of a vector env or `BatchGame` seeded s (`core.batch.game_seed(s, 0, k)`)."""
        options = common.reset_options(options)
        seed = common.check_seed(seed)
        if seed is not None or self._seed is None:
            self._seed = seed if seed is not None else int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
            self._episode = 0
        else:
            self._episode += 1
        self._engine.reset(game_seed(self._seed, 0, self._episode), decks=options.get("decks"))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        if self._flat:
            self.infos = {agent: self._flat_info(seat) for seat, agent in enumerate(self.agents)}
        else:
            self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[self._engine.current_player]
        self._rewarded = False
        self._num_steps = 0
        self._last_move = None
        self._has_game = True

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """`agent`'s observation vector and action mask (all zeros unless it is `agent`'s move)."""
        if not self._has_game:
            raise common.not_started_error("observe()")
        seat = self.agent_name_mapping[agent]
        engine = self._engine
        observation = engine.observe(seat)
        if agent == self.agent_selection and seat == engine.current_player and not engine.is_over:
            return {"observation": observation, "action_mask": engine.legal_mask.copy()}
        return {"observation": observation, "action_mask": np.zeros(self.num_actions, dtype=np.int8)}

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        """(observation, cumulative reward, terminated, truncated, info) of `agent_selection`."""
        try:
            agent = self.agent_selection
            done = self.terminations[agent], self.truncations[agent]
        except (AttributeError, KeyError):
            raise self._call_order_error("last()") from None
        return (self.observe(agent) if observe else None), self._cumulative_rewards[agent], *done, self.infos[agent]

    def step(self, action: Any) -> None:
        """Play `action` for `agent_selection` (None for an agent that is done)."""
        try:
            agent = self.agent_selection
            done = self.terminations[agent] or self.truncations[agent]
        except (AttributeError, KeyError):
            raise self._call_order_error("step()") from None
        if done:
            if action is not None:
                raise IllegalActionError(
                    f"illegal action {action!r} for {agent}: the agent is done (game over or truncated); "
                    "a done agent steps with None"
                )
            self._was_dead_step(action)
            return
        move = self._checked_action(agent, action)
        self._cumulative_rewards[agent] = 0.0
        info = self.infos[agent]
        if info and not self._flat:
            self.infos[agent] = {}  # the agent has now seen its round result
        elif self._flat and info["round_ended"]:
            self.infos[agent] = self._flat_info(self.agent_name_mapping[agent])
        if self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        engine = self._engine
        player = engine.current_player
        taken = engine.discard_top if move == A.TAKE_DISCARD else -1
        results = engine.step(move)
        self._num_steps += 1
        self._last_move = (agent, move, taken)
        if results is not None:
            self._score_round(results)
        if engine.is_over:
            self.terminations = dict.fromkeys(self.agents, True)
            self.agent_selection = self.possible_agents[(player + 1) % self.num_players]
        else:
            self.agent_selection = self.possible_agents[engine.current_player]
            if self.max_cycles is not None and self._num_steps >= self.max_cycles * self.num_players:
                self.truncations = dict.fromkeys(self.agents, True)
        if self.render_mode == "human":
            self.render()

    def _call_order_error(self, call: str) -> RuntimeError:
        if not self._has_game:
            return common.not_started_error(call)
        if not self.agents:
            return common.game_over_error(call)
        return RuntimeError(f"{call}: agent_selection {self.agent_selection!r} is not among the agents {self.agents}")

    def _checked_action(self, agent: str, action: Any) -> int:
        move = common.action_id(action)
        mask = self._engine.legal_mask
        if move is None or not (0 <= move < self.num_actions) or not mask[move]:
            legal = ", ".join(f"{a} ({A.action_name(a)})" for a in np.flatnonzero(mask).tolist())
            if action is None:
                name = ""
            elif move is None:
                name = " (a bool is not an action id)" if isinstance(action, common.BOOL_TYPES) else " (not an integer)"
            elif 0 <= move < self.num_actions:
                name = f" ({A.action_name(move)})"
            else:
                name = f" (out of range 0..{self.num_actions - 1})"
            raise IllegalActionError(f"illegal action {action!r}{name} for {agent}; legal actions: {legal}")
        return move

    def _score_round(self, results: list[RoundResult]) -> None:
        engine = self._engine
        totals_before = [r.total - g for r, g in zip(results, engine.last_gains, strict=True)]
        rewards = common.round_rewards(results, totals_before, self.reward_mode, self.reward_scale)
        info = common.round_info(results, len(engine.round_history)) if not self._flat else None
        over = engine.is_over
        if over:
            totals = [r.total for r in results]
            final = common.game_rewards(totals, self.reward_mode, self.reward_scale)
            rewards = [r + f for r, f in zip(rewards, final, strict=True)]
            if info is not None:
                best = max(totals)
                info["winners"] = [self.possible_agents[p] for p, t in enumerate(totals) if t == best]
        for agent in self.agents:
            seat = self.agent_name_mapping[agent]
            self.rewards[agent] = rewards[seat]
            self.infos[agent] = info if info is not None else self._flat_info(seat, results, over)
        self._rewarded = True
        self._accumulate_rewards()

    def _flat_info(
        self, seat: int, results: list[RoundResult] | None = None, over: bool = False, illegal: bool = False
    ) -> dict[str, Any]:
        """The `infos="flat"` info of the agent in `seat` now (`FLAT_INFO_KEYS`); `results`: the round just scored
        (its scores and bonuses), `over`: the game ended with it (the winner count)."""
        n = self.num_players
        scores = np.zeros(n, dtype=np.int64)
        bonuses = np.zeros(n, dtype=np.int64)
        totals = np.zeros(n, dtype=np.int64)
        if self._engine.round_history:
            for r in self._engine.round_history[-1]:
                totals[r.player] = r.total
        if results is not None:
            for r in results:
                scores[r.player] = r.round_score
                bonuses[r.player] = sum(r.bonuses.values())
        return {
            "seat": seat,
            "round": len(self._engine.round_history),
            "round_ended": results is not None,
            "round_scores": scores,
            "round_bonuses": bonuses,
            "totals": totals,
            "winner_count": int((totals == totals.max()).sum()) if over else 0,
            "illegal_action": illegal,
        }

    def last_round_results(self) -> list[dict[str, Any]]:
        """The last round scored this episode, one dict per seat (`RoundResult.to_dict`: words, spelled, unused,
        points, bonuses, round_score, total, ...; `info["round_result"]` of `infos="full"`); [] before the first."""
        if not self._has_game or not self._engine.round_history:
            return []
        return [r.to_dict() for r in self._engine.round_history[-1]]

    # -- rendering ---------------------------------------------------------------------------

    def render(self) -> str | np.ndarray | None:
        """'ansi': the text table; 'human': print it; 'rgb_array': the table as a uint8 image (height, width, 3)
        of a size fixed by the number of players (`render_image`). Both show the hands `render_view` names."""
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if not self._has_game:
            raise RuntimeError("render() before reset(): there is no game to show")
        if self.render_mode == "rgb_array":
            return render_rgb(self.game, self.possible_agents, self._shown_seats(), self._describe_last())
        text = common.render_table(self.game, self.possible_agents, self._shown_seats(), self._describe_last())
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def _shown_seats(self) -> list[int]:
        if self.render_view == "all":
            return list(range(self.num_players))
        if self.render_view == "current":
            return [self.agent_name_mapping[self.agent_selection]] if self.agents else []
        return [self.render_view]

    def _describe_last(self) -> str | None:
        if self._last_move is None:
            return None
        return common.describe_move(*self._last_move)

    def close(self) -> None:
        pass
