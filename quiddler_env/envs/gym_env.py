"""`QuiddlerEnv` (`Quiddler-v0`): Quiddler as a single-agent Gymnasium env, the other seats played inside it.

```python
import gymnasium as gym
import quiddler_env  # registers Quiddler-v0

env = gym.make("Quiddler-v0", num_players=3, learner_seat="random", reward_mode="relative")
obs, info = env.reset(seed=0)
obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].nonzero()[0][0]))
```

- One learner seat (`learner_seat`: a seat number, or `"random"` for a new seat each
  episode drawn from the env's `np_random`). The env plays the other seats until it is
  the learner's move again, so every `step` returns the learner's next decision.
- Opponents: any object with `act(observation, action_mask) -> int` and optionally
  `reset(seed)`, or an agent spec string (`"greedy"`, `"expert:samples=8"`, `"zoo:NAME"`,
  ...: the names of `quiddler_agents.registry`, which builds one agent per seat);
  `opponents` is one such entry (it plays every other seat), or a list of
  `num_players - 1` of them in relative seat order (the seat after the learner
  first). The default is `UniformRandomPolicy`, a uniform random legal policy. Every
  opponent's `reset(seed)` gets a seed from the env's `np_random` at every reset, so
  the same `reset(seed=s)` plays the same game. A policy with the attribute
  `uses_observation = False` gets `None` instead of the observation vector (saves
  the encoding for policies that do not read it).
- An opponent with a level (`"greedy:level=2"`, or a bot built with `level=2`) in rules without
  `vocabularies`: the engine plays rules whose `vocabularies` give its seat `level-2` (and `referee` to the
  learner and the level-less seats), so it goes out and has its words laid only from its level's words, as
  tournaments lay a level bot's (`env.unwrapped.engine.config`; one engine per learner seat with
  `learner_seat="random"`). The observation and actions are the plain game's. With the rules' own
  `vocabularies` (or the challenge variant) an opponent's level is a one-line `ValueError`.
- Observation: the float32 vector of `quiddler_env.core.observation` (the same
  encoding and bounds as the AEC env's `'observation'`). Action: `Discrete(64)`, the
  action table of the AEC env. The legal actions are `env.action_masks()`
  (sb3-contrib's `MaskablePPO` convention, found through the wrappers of `gym.make` by
  `get_wrapper_attr`, as SB3's vector envs and `SubprocVecEnv` look it up; Gymnasium 1.x
  wrappers do not forward it, so on a `gym.make` env call `env.unwrapped.action_masks()`
  or `env.get_wrapper_attr("action_masks")()`) and `info["action_mask"]`; all zeros once
  the game is over.
- Reward: the learner's own reward, in the AEC env's modes (`round_score`,
  `relative`, `lead`, `win_loss`, times `reward_scale`), summed over the round ends that
  happened since its last move.
- Infos (`infos="full"`, the default): `action_mask` and `seat` every step;
  `info["round_result"]` / `info["round"]` as in the AEC env when a round ended in the
  step, `info["winners"]` (seats) at the end. `infos="flat"`: the same keys every step,
  each a number or a fixed-length array (`FLAT_INFO_KEYS`), so that collectors that stack
  infos across envs (Tianshou) can: `action_mask`, `seat`, `round` (rounds scored so far),
  `round_ended`, `round_scores` and `round_bonuses` (per seat, absolute order; zeros
  unless a round ended in the step), `totals` (per seat, now; the vector env's `totals`
  are only where a game ended), `winner_count` (seats sharing the best total once the game
  is over, else 0), `illegal_action`. The words of the last round scored:
  `env.unwrapped.last_round_results()` (either mode).
- An illegal action (an integer id the mask does not allow, in range or not) ends
  the episode (`terminated=True`) with reward `illegal_reward` (default -1) and
  `info["illegal_action"] = True`, like PettingZoo's `TerminateIllegalWrapper`. A
  value that is no action id at all (`True`/`False`, a float such as `1.5` or `0.0`, `"3"`, None) raises
  `IllegalActionError` (a `ValueError`) naming it; numpy integers and 0-d integer arrays are action ids.
  An opponent policy's illegal action raises `IllegalActionError` too.
- `step` before `reset` or after the episode ended raises a `RuntimeError` saying
  which; a seed is an integer >= 0 or None (else a `ValueError`).
- `max_cycles`: truncate after that many learner steps (default `None`).
- Options as in the AEC env: `QuiddlerConfig` fields, a YAML `config` file (or a shipped
  one's name, `config="default"`), plus `learner_seat`, `opponents` (keyword only),
  `illegal_reward` and `infos`; each is declared
  (default, doc, check) in `common.ENV_OPTIONS`, `common.env_option_names("gym")`.
- `reset(seed=..., options={"decks": [...]})` stacks the deck as in the AEC env; `options` is a mapping or
  None (else a `ValueError` naming it).
- `env.unwrapped.moves_played`: the moves of every seat this episode (the learner's
  steps are about 1/n of them); `env.unwrapped.game` is the game now as the readable `QuiddlerGame` (a copy);
  `env.unwrapped.engine` the engine's handle it plays on (`core.engine.Game`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..core import actions as A
from ..core.config import QuiddlerConfig
from ..core.engine import Game
from ..core.game import QuiddlerGame
from . import common
from .common import IllegalActionError
from .render_image import render_rgb
from .state import seat_states
from .versions import ENV_VERSION

GYM_OPTION_DEFAULTS: dict[str, Any] = common.env_option_defaults("gym")
"""This env's options and defaults (from `common.ENV_OPTIONS`)."""

FLAT_INFO_KEYS = (
    "action_mask",
    "seat",
    "round",
    "round_ended",
    "round_scores",
    "round_bonuses",
    "totals",
    "winner_count",
    "illegal_action",
)
"""The keys of every info with `infos="flat"` (each one a number or an array of a fixed shape)."""

_SEED_BOUND = 2**63 - 1


class UniformRandomPolicy:
    """Picks uniformly among the legal actions, from its own seeded generator."""

    uses_observation = False

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("UniformRandomPolicy.act: the action mask has no legal action")
        return int(legal[self.rng.integers(legal.size)])


def build_opponents(entries: list[Any] | None, config: QuiddlerConfig) -> list[Any] | None:
    """The opponents option (`common.check_opponents`' list, or None) with each agent spec string built by
    `quiddler_agents.registry.make` for `config`'s table: one agent per seat, seeded by the env at every reset."""
    if entries is None or not any(isinstance(e, str) for e in entries):
        return entries
    try:
        # The one place an env reaches the agents package, lazily and only for spec strings: the envs do not need
        # it otherwise, and `import quiddler_env` stays free of it (tests/test_imports.py).
        from quiddler_agents import registry
    except ImportError as exc:
        raise ValueError(
            f"option 'opponents': agent specs such as {next(e for e in entries if isinstance(e, str))!r} are built "
            f"by the quiddler_agents package ({exc}); pass policy objects with act(observation, action_mask)"
        ) from None
    out = []
    for entry in entries:
        if isinstance(entry, str):
            try:
                entry = registry.make(entry, config=config)
            except ValueError as exc:
                raise ValueError(f"option 'opponents': {exc}") from None
        out.append(entry)
    return out


class QuiddlerEnv(gym.Env):
    """Quiddler for one learner against policies inside the env (see the module docstring)."""

    metadata = {"render_modes": list(common.AEC_RENDER_MODES), "render_fps": 1, "env_version": ENV_VERSION}

    def __init__(
        self,
        config: str | os.PathLike | Mapping[str, Any] | QuiddlerConfig | None = None,
        *,
        opponents: Any = None,
        **options: Any,
    ) -> None:
        if opponents is not None:
            options = {**options, "opponents": opponents}
        self.config, opts = common.resolve_options(config, options, "gym")  # checked: common.ENV_OPTIONS
        n = self.num_players = self.config.num_players
        self.reward_mode = opts["reward_mode"]
        self.reward_scale = opts["reward_scale"]
        self.render_mode = opts["render_mode"]
        self.render_view = opts["render_view"]
        self.max_cycles = opts["max_cycles"]
        seat = self.learner_seat_option = opts["learner_seat"]
        self.illegal_reward = opts["illegal_reward"]
        self.infos = opts["infos"]
        opponents = build_opponents(opts["opponents"], self.config)
        self.opponents = opponents or [UniformRandomPolicy() for _ in range(n - 1)]
        self._levels = [common.opponent_level(policy) for policy in self.opponents]
        self._engines: dict[tuple[str, ...], Game] = {}
        self.seat = seat if seat != "random" else 0
        self.engine = self._engine(self.seat)
        self.num_actions = self.engine.num_actions
        self.action_space = spaces.Discrete(self.num_actions)
        self.observation_space = common.observation_box(self.config)
        self.names = [f"player_{i}" for i in range(n)]
        self._no_moves = np.zeros(self.num_actions, dtype=np.int8)
        self._mask = self._no_moves
        self._done = True
        self._has_game = False
        self._round_ended = False
        self._last_move: tuple[str, int, int] | None = None

    def _engine(self, seat: int) -> Game:
        """The engine for the learner in `seat`: the rules, with the opponents' levels as the seats' vocabularies
        (`common.level_rules`; one engine per seat arrangement, built once)."""
        rules = common.level_rules(self.config, self._levels, seat)
        engine = self._engines.get(rules.vocabularies)
        if engine is None:
            engine = self._engines[rules.vocabularies] = Game(rules)
        return engine

    @property
    def game(self) -> QuiddlerGame:
        """The game now, as the readable `QuiddlerGame` (a copy: changing it changes nothing here)."""
        return self.engine.snapshot()

    # -- episode -----------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal a new game and play the opponents up to the learner's first move."""
        options = common.reset_options(options)  # checked before anything changes, as the seed
        super().reset(seed=common.check_seed(seed))
        rng = self.np_random
        if self.learner_seat_option == "random":
            self.seat = int(rng.integers(self.num_players))
            self.engine = self._engine(self.seat)
        # Opponents draw their seeds from np_random, so one env seed fixes the whole game.
        seen: set[int] = set()
        for policy in self.opponents:
            policy_seed = int(rng.integers(_SEED_BOUND))
            if id(policy) not in seen and callable(getattr(policy, "reset", None)):
                seen.add(id(policy))
                policy.reset(seed=policy_seed)
        self.engine.reset(int(rng.integers(_SEED_BOUND)), decks=options.get("decks"))
        self._done = False
        self._has_game = True
        self._steps = 0
        self.moves_played = 0  # every seat's moves this episode (the learner's steps are fewer)
        self._last_move = None
        self._round_ended = False
        # No round can end before the learner's first move (everyone moves in every round).
        _, info = self._play_opponents(0.0, {})
        return self._observation(), self._info(info)

    def step(self, action: Any):
        """Play the learner's `action`, then the opponents until the learner's next move or the game end."""
        if self._done:
            if not self._has_game:
                raise common.not_started_error("step()")
            raise RuntimeError("step() after the episode ended; call reset() to deal a new game")
        engine = self.engine
        move = common.action_id(action)
        if move is None:
            raise IllegalActionError(
                f"action {action!r} for the learner (seat {self.seat}) is not an action id (an integer 0..{self.num_actions - 1}); "
                f"legal actions: {np.flatnonzero(self._mask).tolist()}"
            )
        self._steps += 1
        self._round_ended = False
        if not (0 <= move < self.num_actions and self._mask[move]):
            self._done = True
            self._mask = self._no_moves
            if self.infos == "flat":
                info = self._flat_info(illegal=True)
            else:
                info = {"illegal_action": True, "action_mask": self._no_moves.copy(), "seat": self.seat}
            return engine.observe(self.seat), self.illegal_reward, True, False, info
        reward, info = self._apply(move, 0.0, {})
        reward, info = self._play_opponents(reward, info)
        terminated = engine.is_over
        truncated = not terminated and self.max_cycles is not None and self._steps >= self.max_cycles
        self._done = terminated or truncated
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, terminated, truncated, self._info(info)

    def _apply(self, move: int, reward: float, info: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        engine = self.engine
        player = engine.current_player
        taken = engine.discard_top if move == A.TAKE_DISCARD else -1
        results = engine.step(move)
        self.moves_played += 1
        self._last_move = (self.names[player], move, taken)
        if results is not None:
            self._round_ended = True
            totals_before = [r.total - g for r, g in zip(results, engine.last_gains, strict=True)]
            rewards = common.round_rewards(results, totals_before, self.reward_mode, self.reward_scale)
            info = common.round_info(results, len(engine.round_history))
            if engine.is_over:
                rewards[self.seat] += common.game_rewards(engine.totals, self.reward_mode, self.reward_scale)[self.seat]
                info["winners"] = engine.winners()
            reward += rewards[self.seat]
        return reward, info

    def _play_opponents(self, reward: float, info: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        engine = self.engine
        n = self.num_players
        while not engine.is_over and engine.current_player != self.seat:
            seat = engine.current_player
            policy = self.opponents[(seat - self.seat) % n - 1]
            mask = engine.legal_mask.copy()
            obs = engine.observation.copy() if getattr(policy, "uses_observation", True) else None
            choice = policy.act(obs, mask)
            move = common.action_id(choice)
            if move is None or not (0 <= move < self.num_actions and mask[move]):
                raise IllegalActionError(
                    f"opponent policy {policy!r} in seat {seat} chose illegal action {choice!r}; "
                    f"legal: {np.flatnonzero(mask).tolist()}"
                )
            reward, info = self._apply(move, reward, info)
        self._mask = engine.legal_mask.copy() if not engine.is_over else self._no_moves
        return reward, info

    def _observation(self) -> np.ndarray:
        return self.engine.observe(self.seat)

    def state(self) -> np.ndarray:
        """The whole game now, seat-relative to the learner (float32): the AEC env's `state()` with the learner's
        seat first (`envs.state.seat_relative`). PRIVILEGED (every hand, the draw pile): for critics, never for
        a policy. Read it after `reset` or `step`, at the learner's move or the game's end."""
        if not self._has_game:
            raise common.not_started_error("state()")
        return seat_states(
            self.engine.hidden_arrays(),
            np.asarray([self.seat]),
            self._observation()[None],
            self.num_players,
            self.config.challenges,
        )[0]

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        if self.infos == "flat":
            return self._flat_info()
        out = dict(info)
        out["action_mask"] = self._mask.copy()
        out["seat"] = self.seat
        return out

    def _flat_info(self, illegal: bool = False) -> dict[str, Any]:
        """The `infos="flat"` info now: `FLAT_INFO_KEYS`, numbers and arrays of fixed shapes."""
        engine = self.engine
        n = self.num_players
        scores = np.zeros(n, dtype=np.int64)
        bonuses = np.zeros(n, dtype=np.int64)
        if self._round_ended:
            for r in engine.round_history[-1]:
                scores[r.player] = r.round_score
                bonuses[r.player] = sum(r.bonuses.values())
        winners = len(engine.winners()) if engine.is_over else 0
        return {
            "action_mask": self._mask.copy(),
            "seat": self.seat,
            "round": len(engine.round_history),
            "round_ended": self._round_ended,
            "round_scores": scores,
            "round_bonuses": bonuses,
            "totals": np.asarray(engine.totals, dtype=np.int64),
            "winner_count": winners,
            "illegal_action": illegal,
        }

    def last_round_results(self) -> list[dict[str, Any]]:
        """The last round scored this episode, one dict per seat (`RoundResult.to_dict`: words, spelled, unused,
        points, bonuses, round_score, total, ...; `info["round_result"]` of `infos="full"`); [] before the first."""
        if not self._has_game or not self.engine.round_history:
            return []
        return [r.to_dict() for r in self.engine.round_history[-1]]

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (bool, 64); all False when the game is over."""
        return self._mask.astype(bool)

    # -- rendering ---------------------------------------------------------------------------

    def render(self) -> str | np.ndarray | None:
        """'ansi': the text table (the learner's hand, or as `render_view` says); 'human': print it;
        'rgb_array': the table as an image (`render_image`), for Gymnasium's `RecordVideo`."""
        if self.render_mode is None:
            gym.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if not self._has_game:
            raise RuntimeError("render() before reset(): there is no game to show")
        if self.render_view == "all":
            shown = list(range(self.num_players))
        elif self.render_view == "current":
            shown = [self.seat]
        else:
            shown = [self.render_view]
        last = common.describe_move(*self._last_move) if self._last_move else None
        game = self.game
        if self.render_mode == "rgb_array":
            return render_rgb(game, self.names, shown, last)
        text = common.render_table(game, self.names, shown, last)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass
