"""`QuiddlerVectorEnv`: `Quiddler-v0` as a native Gymnasium `VectorEnv` on the batched engine.

```python
import gymnasium as gym
import quiddler_env  # registers Quiddler-v0 and its vector entry point

envs = gym.make_vec("Quiddler-v0", num_envs=1024, vectorization_mode="vector_entry_point", opponents="greedy")
obs, infos = envs.reset(seed=0)
actions = [np.flatnonzero(m)[0] for m in infos["action_mask"]]   # or envs.action_masks()
obs, rewards, terminations, truncations, infos = envs.step(actions)
```

N games of `core.batch.BatchGame` step together; one learner seat per game, the other
seats played inside the env, as in `Quiddler-v0` (same observation, action table,
rewards, options and illegal-action rule), so a policy trained on one plays the other.

- Opponents (`opponents`): `"random"` (the default) and `"greedy"` are played by compiled
  bots inside the engine, with no Python per game: with only these, a step is one compiled
  call over the games (`core.batch_bots.vector_step`). Any other policy, an object with
  `act(observation, action_mask)`, is called from Python: once per step for all the
  games waiting on it through its `act_batch(observations, masks)` if it has one, else
  once per game. One entry plays every opponent seat, or a list gives one per seat
  (relative order, the seat after the learner first); `OpponentMix([(entry, weight), ...])`
  draws an entry per game and seat at each episode.
- Seeds: `reset(seed=s)` seeds episode k of sub-env i from `core.batch.game_seed(s, i, k)`:
  its deal, its learner seat (`learner_seat="random"`: `core.batch.learner_seats`), its
  opponent draws (`numpy.random.default_rng` of that seed) and the compiled bots' choices.
  So the same seed gives the same games whatever `num_envs` is, split over workers too
  (`slot_offset`: sub-env i plays slot `slot_offset + i`), and any one of them can be
  replayed alone (`QuiddlerGame.reset(rng=StreamGenerator(...))` deals the same cards).
  Python policies keep their own generators.
- Autoreset: `autoreset_mode` NEXT_STEP (Gymnasium's default: the step after an
  episode ends resets that sub-env and ignores its action) or SAME_STEP (the new
  episode's first observation comes back at once; the final one is in
  `infos["final_obs"]`, the final infos in `infos["final_info"]`).
- The legal moves: `infos["action_mask"]` (int8, every step) and `action_masks()` (bool).
  A row always allows at least one action: for a sub-env whose episode ended in the step
  (NEXT_STEP), only action `RESET_ACTION` (0), whose step resets it and ignores the action
  (any action is ignored there; the mask only keeps masked samplers and
  `np.flatnonzero(mask)[0]` working). With SAME_STEP the rows are the new episodes' and
  `infos["final_info"]["action_mask"]` is all zero for the ended games.
- Infos (Gymnasium's vector form, each key with its `_key` mask): `seat`,
  `round_scores` and `round_bonuses` (per seat, absolute order) where a round ended in
  the step, `totals` and `winner_count` where the game ended (zeros elsewhere, as Gymnasium's
  own vector envs fill them), `illegal_action`. With `infos="full"` (the default) a key is
  there only in the steps where some sub-env has it; with `infos="flat"` every key is there
  in every step (zeros, its mask all False, where nothing happened), as `Quiddler-v0`'s
  flat infos keep their keys.
- An illegal action (an id the mask does not allow) ends that sub-env's episode with
  `illegal_reward`; actions that are not integers raise `IllegalActionError`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..core import batch_bots as BB
from ..core import batch_kernels as K
from ..core.batch import BatchGame, game_seed, learner_seats
from ..core.config import QuiddlerConfig
from . import common
from .common import COMPILED, IllegalActionError, OpponentMix
from .versions import ENV_VERSION

RESET_ACTION = BB.RESET_ACTION
"""The one action a sub-env's mask allows in the step that ended its episode (its next action is ignored)."""

__all__ = ["COMPILED", "RESET_ACTION", "OpponentMix", "QuiddlerVectorEnv"]


_NO_CODES = np.zeros(0, dtype=np.int8)
_REWARD_CODES = dict(zip(common.REWARD_MODES, (K.ROUND_SCORE, K.RELATIVE, K.LEAD, K.WIN_LOSS), strict=True))


class QuiddlerVectorEnv(VectorEnv):
    """N games of Quiddler for one learner seat each, the other seats inside (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": [], "env_version": ENV_VERSION}

    def __init__(
        self,
        num_envs: int = 1,
        config: str | os.PathLike | Mapping[str, Any] | QuiddlerConfig | None = None,
        *,
        opponents: Any = None,
        **options: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if opponents is not None:
            options = {**options, "opponents": opponents}
        self.config, opts = common.resolve_options(config, options, "vector")  # checked: common.ENV_OPTIONS
        self.num_envs = N = int(num_envs)
        n = self.num_players = self.config.num_players
        self.reward_mode = opts["reward_mode"]
        self._reward_code = _REWARD_CODES[self.reward_mode]
        self.reward_scale = opts["reward_scale"]
        self.max_cycles = opts["max_cycles"]
        self.learner_seat_option = opts["learner_seat"]
        self._seat_code = -1 if self.learner_seat_option == "random" else int(self.learner_seat_option)
        self.illegal_reward = opts["illegal_reward"]
        self.infos = opts["infos"]
        self.autoreset_mode = opts["autoreset_mode"]
        self.slot_offset = opts["slot_offset"]
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.set_opponents(opts["opponents"])
        self.games = BatchGame(self.config, N)
        self.num_actions = self.games.num_actions
        self.single_observation_space = common.observation_box(self.config)
        self.single_action_space = spaces.Discrete(self.num_actions)
        self.observation_space = batch_space(self.single_observation_space, N)
        self.action_space = batch_space(self.single_action_space, N)
        self.render_mode = None

        self.seats = np.zeros(N, dtype=np.int64)
        self.bots = np.full((N, n), BB.NOT_A_BOT, dtype=np.int8)
        self.policies: list[list[Any]] = [[None] * n for _ in range(N)]
        self.moves = np.zeros(N, dtype=np.int64)
        self.steps = np.zeros(N, dtype=np.int64)
        self.episodes = np.zeros(N, dtype=np.int64)
        self.masks = np.zeros((N, self.num_actions), dtype=np.int8)
        self._reset_mask = np.zeros(self.num_actions, dtype=np.int8)
        self._reset_mask[BB.RESET_ACTION] = 1
        self.observations = np.zeros((N, self.games.observation_size), dtype=np.float32)
        self._needs_reset = np.zeros(N, dtype=bool)
        self._seed: int | None = None

    def set_opponents(self, opponents: Any) -> None:
        """New opponents (as the `opponents` option), for the episodes that start from now on."""
        self.opponents = common.check_vector_opponents(opponents, self.num_players)
        # The compiled bots' codes, seat by seat, when every opponent is one by name (episodes start in one call).
        named = all(isinstance(entry, str) for entry in self.opponents)
        self._codes = np.asarray([BB.BOT_CODES[e] for e in self.opponents], dtype=np.int8) if named else None
        entries = [e for o in self.opponents for e in (o.entries if isinstance(o, OpponentMix) else [o])]
        # Sticky: games already dealt may still seat the Python policies of the earlier opponents.
        self._any_python = getattr(self, "_any_python", False) or any(not isinstance(e, str) for e in entries)

    # -- episodes ----------------------------------------------------------------------------

    def _start(self, slots: np.ndarray) -> None:
        """Deal a new episode in each of `slots`: its seed, learner seat and opponents, then play up to the learner;
        its mask and observation are written."""
        n = self.num_players
        if self._codes is not None:  # compiled bots only: one call for it all
            g = self.games
            BB.start_episodes(
                slots, np.uint64(self._seed), np.int64(self.slot_offset), self.episodes, np.int64(self._seat_code),
                self._codes, self.seats, self.bots, self.moves, self.steps, self.masks, self.observations,
                g.cards, g.ints, g.rng, g.go, g.L, g.R, g.sizes, g.S, g.obs_starts, self.num_actions, g.best_memo,
                g.table_memo,
            )  # fmt: skip
            return
        seeds = game_seed(self._seed, slots + self.slot_offset, self.episodes[slots])
        self.games.reset(games=slots, seeds=seeds)
        if self.learner_seat_option == "random":
            seats = learner_seats(seeds, n)
        else:
            seats = np.full(slots.size, self.learner_seat_option, dtype=np.int64)
        self.seats[slots] = seats
        self.bots[slots, seats] = BB.NOT_A_BOT
        for i, s, seat in zip(slots.tolist(), seeds.tolist(), seats.tolist(), strict=True):
            # One generator per episode, from the episode's seed: its opponent draws are its own.
            rng = np.random.default_rng(s)
            self.policies[i][seat] = None
            for k, entry in enumerate(self.opponents, start=1):
                if isinstance(entry, OpponentMix):
                    entry = entry.draw(rng)
                other = (seat + k) % n
                self.bots[i, other] = BB.BOT_CODES[entry] if isinstance(entry, str) else BB.NOT_A_BOT
                self.policies[i][other] = entry
        self.episodes[slots] += 1
        self.steps[slots] = 0
        self.moves[slots] = 0
        self.games.take_gains(slots)
        self._advance(slots)
        self._refresh(slots)

    def _advance(self, slots: np.ndarray) -> None:
        """Play the opponents of `slots` until each is at its learner's move or over."""
        g = self.games
        while True:
            g.play_bots(slots, self.bots, self.moves)
            if not self._any_python:
                return
            cur = g.current_player[slots]
            waiting = slots[(~g.is_over[slots]) & (cur != self.seats[slots])]
            if waiting.size == 0:
                return
            groups: dict[int, tuple[Any, list[int]]] = {}
            for i in waiting.tolist():
                policy = self.policies[i][int(g.ints[i, K.I_CUR])]
                groups.setdefault(id(policy), (policy, []))[1].append(i)
            for policy, members in groups.values():
                self._play_python(policy, np.asarray(members, dtype=np.int64))

    def _play_python(self, policy: Any, slots: np.ndarray) -> None:
        g = self.games
        masks = g.action_masks(slots)
        wants_obs = getattr(policy, "uses_observation", True)
        obs = g.observe(games=slots) if wants_obs else None
        if callable(getattr(policy, "act_batch", None)):
            choices = list(policy.act_batch(obs, masks.copy()))
        else:
            choices = [policy.act(obs[j] if obs is not None else None, masks[j].copy()) for j in range(slots.size)]
        actions = np.empty(slots.size, dtype=np.int64)
        for j, choice in enumerate(choices):
            move = common.action_id(choice)
            if move is None or not (0 <= move < self.num_actions and masks[j, move]):
                raise IllegalActionError(
                    f"opponent policy {policy!r} in seat {int(g.ints[slots[j], K.I_CUR])} of sub-env {int(slots[j])} "
                    f"chose illegal action {choice!r}; legal: {np.flatnonzero(masks[j]).tolist()}"
                )
            actions[j] = move
        g.step(actions, slots)
        self.moves[slots] += 1

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal a new game in every sub-env (or those of `options["reset_mask"]`)."""
        options = common.reset_options(options)
        seed = common.check_seed(seed)
        if seed is not None or self._seed is None:
            self._seed = seed if seed is not None else int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
            self.episodes[:] = 0
        mask = options.get("reset_mask")
        slots = self.games.all_games if mask is None else np.flatnonzero(np.asarray(mask, dtype=bool))
        self.observations = self.observations.copy()  # the array the last step returned stays the caller's
        self._start(slots)
        self._needs_reset[slots] = False
        nothing = np.zeros(self.num_envs, dtype=bool)
        return self.observations, self._infos(nothing, nothing, self._new_figures())

    def _refresh(self, slots: np.ndarray) -> None:
        # Straight into the env's arrays, row by game (a game that is over gets an all-zero mask).
        self.games.action_masks(slots, self.masks, at_games=True)
        self.games.observe(self.seats, slots, self.observations, at_games=True)

    def step(self, actions: Any):
        """Play each sub-env's learner action, then its opponents up to the learner's next move (see the docstring)."""
        if self._seed is None:
            raise common.not_started_error("step()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not (
            np.issubdtype(actions.dtype, np.integer) and actions.dtype != np.bool_
        ):
            raise IllegalActionError(
                f"actions must be {self.num_envs} integer action ids (shape ({self.num_envs},)), got {actions.dtype} "
                f"array of shape {actions.shape}"
            )
        N = self.num_envs
        rewards = np.zeros(N, dtype=np.float64)
        terminated = np.zeros(N, dtype=bool)
        truncated = np.zeros(N, dtype=bool)
        illegal = np.zeros(N, dtype=bool)
        round_ended = np.zeros(N, dtype=bool)
        over = np.zeros(N, dtype=bool)
        figures = self._new_figures()
        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        g = self.games
        # Every row of the observations is written below (the restarted games' too), so they go into a new
        # array, which is returned as it is: the one the last step returned stays the caller's.
        self.observations = np.empty_like(self.observations)
        if not self._any_python:  # every opponent a compiled bot: the whole step of each game in one call
            # Per game: 0 plays its move; 1 starts its next episode in the same call (next-step autoreset, the
            # opponents compiled bots by name); 2 waits, its next episode dealt below (mixes draw from numpy).
            restart = self._needs_reset.view(np.int8) * (1 if self._codes is not None else 2)
            if not next_step:
                restart[:] = 0
            BB.vector_step(
                actions.astype(np.int64, copy=False), restart, np.uint64(self._seed), np.int64(self.slot_offset),
                self.episodes, np.int64(self._seat_code), self._codes if self._codes is not None else _NO_CODES,
                self.seats, self.bots, self.moves, self.steps, self.max_cycles or 0, self._reward_code,
                self.reward_scale, self.illegal_reward, self.masks, self.observations, rewards, terminated,
                truncated, illegal, round_ended, over, figures, g.cards, g.ints, g.rng, g.go, g.L, g.R, g.sizes, g.S,
                g.obs_starts, self.num_actions, g.best_memo, g.table_memo,
            )  # fmt: skip
            if self._codes is None and next_step and self._needs_reset.any():
                self._start(np.flatnonzero(self._needs_reset))
        else:
            restart = np.flatnonzero(self._needs_reset) if next_step else np.empty(0, np.int64)
            playing = np.ones(N, dtype=bool)
            playing[restart] = False
            slots = np.flatnonzero(playing)
            acts = actions[slots].astype(np.int64)
            legal = (acts >= 0) & (acts < self.num_actions)
            legal[legal] = self.masks[slots[legal], acts[legal]] > 0
            bad = slots[~legal]
            illegal[bad] = True
            terminated[bad] = True
            rewards[bad] = self.illegal_reward
            good = slots[legal]
            rounds_before = g.rounds_completed.copy()
            if good.size:
                g.step(acts[legal], good)
                self.moves[good] += 1
                self._advance(good)
                self.steps[good] += 1
                rewards[good] = self._rewards(good)
                terminated[good[g.is_over[good]]] = True
                if self.max_cycles is not None:
                    cut = good[(~g.is_over[good]) & (self.steps[good] >= self.max_cycles)]
                    truncated[cut] = True
            round_ended = g.rounds_completed != rounds_before
            K.round_figures(round_ended, terminated & ~illegal, over, *figures, g.ints, g.L, g.R)
            self._refresh(slots)
            self.masks[terminated | truncated] = self._reset_mask  # as the compiled step: only RESET_ACTION
            if restart.size:
                self._start(restart)
        done = terminated | truncated
        infos = self._infos(round_ended, over, figures, illegal=illegal, masks=False)
        if next_step:
            self._needs_reset = done
        elif done.any():
            ended = np.flatnonzero(done)
            infos["action_mask"] = self.masks.copy()
            infos["action_mask"][ended] = 0  # the final infos' masks: the ended games have no legal move
            infos["seat"] = self.seats.copy()
            final_obs = np.empty(N, dtype=object)
            for i in ended.tolist():
                final_obs[i] = self.observations[i].copy()
            infos["final_info"] = dict(infos)
            infos["_final_info"] = done.copy()
            infos["final_obs"] = final_obs
            infos["_final_obs"] = done.copy()
            self._start(ended)
        infos["action_mask"] = self.masks.copy()
        infos["seat"] = self.seats.copy()
        return self.observations, rewards, terminated, truncated, infos

    def _rewards(self, slots: np.ndarray) -> np.ndarray:
        """The learners' rewards in `slots` from the round ends since their last moves (`K.learner_reward`)."""
        out = np.empty(slots.size, dtype=np.float64)
        g = self.games
        K.learner_rewards(slots, self.seats, self._reward_code, self.reward_scale, out, g.ints, g.L, g.R)
        return out

    def _new_figures(self) -> tuple[np.ndarray, ...]:
        """Zeroed arrays for the infos' figures of a step: round scores, round bonuses, totals, winner counts."""
        N, n = self.num_envs, self.num_players
        return (*(np.zeros((N, n), dtype=np.int64) for _ in range(3)), np.zeros(N, dtype=np.int64))

    def _infos(
        self,
        round_ended: np.ndarray,
        over: np.ndarray,
        figures: tuple[np.ndarray, ...],
        *,
        illegal: np.ndarray | None = None,
        masks: bool = True,
    ):
        """The infos of a reset or a step: the figures (`K.figures_row`) where a round ended or the game is
        `over`; `masks`: with the masks and seats now (a step sets its own)."""
        everyone = np.ones(self.num_envs, dtype=bool)
        infos: dict[str, Any] = {"_action_mask": everyone, "_seat": everyone}
        if masks:
            infos["action_mask"] = self.masks.copy()
            infos["seat"] = self.seats.copy()
        scores, bonuses, totals, winners = figures
        flat = self.infos == "flat"  # every key in every step, its `_key` mask all False where nothing happened
        if flat or round_ended.any():
            infos["round_scores"] = scores
            infos["_round_scores"] = round_ended.copy()
            infos["round_bonuses"] = bonuses
            infos["_round_bonuses"] = round_ended.copy()
        if flat or over.any():
            infos["totals"] = totals
            infos["_totals"] = over.copy()
            infos["winner_count"] = winners
            infos["_winner_count"] = over.copy()
        if illegal is None and flat:
            illegal = np.zeros(self.num_envs, dtype=bool)
        if illegal is not None and (flat or illegal.any()):
            infos["illegal_action"] = illegal.copy()
            infos["_illegal_action"] = illegal.copy()
        return infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal moves now, bool (num_envs, num_actions) (sb3-contrib's MaskablePPO convention)."""
        return self.masks.astype(bool)

    def close_extras(self, **kwargs: Any) -> None:
        pass
