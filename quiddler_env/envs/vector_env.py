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
  bots inside the engine, with no Python per game: a step is one compiled call over the
  games (`core.engine.LearnerGames.step`). Any other policy, an object with
  `act(observation, action_mask)`, is called from Python for the games the compiled step
  leaves waiting on it: once for all of them through its `act_batch(observations, masks)`
  if it has one, else once per game; a second compiled call then ends those games' step. One entry plays every opponent seat, or a list gives one per seat
  (relative order, the seat after the learner first); `OpponentMix([(entry, weight), ...])`
  draws an entry per game and seat at each episode.
- An opponent with a level (`"greedy:level=2"`, the compiled greedy bot knowing level 2's words, or a bot
  object built with a level) in rules without `vocabularies`: the engine plays rules whose `vocabularies` give
  its seat `level-2` (and `referee` to the learner and the level-less seats), so it goes out and has its
  words laid only from its level's words; the observation and actions are the plain game's. The engine's
  words are per seat and shared by its games, so this needs a fixed `learner_seat` (not `"random"`) and no
  level inside an `OpponentMix`, and `set_opponents` keeps the levels the env was built with; else a
  one-line `ValueError` (give the rules' `vocabularies` instead). With the rules' own `vocabularies` (or the
  challenge variant) an opponent's level is a one-line `ValueError`.
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
- Privileged states, for critics (never for a policy): `states()` gives each learner's
  seat-relative state (`envs.state.seat_states`: the AEC env's `state()` with the learner's
  seat first), computed over all games from the engine's arrays. With `final_states = True`
  (SAME_STEP) a step also puts the ended games' final states in `infos["final_state"]`
  (rows of the ended games, mask `_final_state`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..core.batch import learner_seats
from ..core.config import QuiddlerConfig
from ..core.engine import NOT_A_BOT, RESET_ACTION, LearnerGames
from . import common
from .common import COMPILED, IllegalActionError, OpponentMix
from .state import seat_states, state_layout
from .versions import ENV_VERSION

__all__ = ["COMPILED", "RESET_ACTION", "OpponentMix", "QuiddlerVectorEnv"]


_NO_CODES = np.zeros(0, dtype=np.int8)


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
        self.reward_scale = opts["reward_scale"]
        self.max_cycles = opts["max_cycles"]
        self.learner_seat_option = opts["learner_seat"]
        self.illegal_reward = opts["illegal_reward"]
        self.infos = opts["infos"]
        self.autoreset_mode = opts["autoreset_mode"]
        self.slot_offset = opts["slot_offset"]
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.engine_config = self._level_rules(common.check_vector_opponents(opts["opponents"], n))
        """The rules the engine plays: the config, with the opponents' levels as seat vocabularies (`_level_rules`)."""
        self.learners = LearnerGames(
            self.engine_config, N, reward_mode=self.reward_mode, reward_scale=self.reward_scale,
            illegal_reward=self.illegal_reward, max_cycles=self.max_cycles, learner_seat=self.learner_seat_option,
            slot_offset=self.slot_offset,
        )  # fmt: skip
        self.set_opponents(opts["opponents"])
        self.games = self.learners.games
        self.num_actions = self.learners.num_actions
        self.single_observation_space = common.observation_box(self.config)
        self.single_action_space = spaces.Discrete(self.num_actions)
        self.state_size = state_layout(n, self.config.challenges).size
        self.observation_space = batch_space(self.single_observation_space, N)
        self.action_space = batch_space(self.single_action_space, N)
        self.render_mode = None

        learners = self.learners
        # The engine's arrays, by game (`LearnerGames`), under the env's names.
        self.seats, self.bots, self.moves = learners.seats, learners.bots, learners.moves
        self.steps, self.episodes, self.masks = learners.steps, learners.episodes, learners.masks
        self.policies: list[list[Any]] = [[None] * n for _ in range(N)]
        self._needs_reset = np.zeros(N, dtype=bool)
        self._seed: int | None = None
        self.final_states = False
        """SAME_STEP: whether a step puts the ended games' final states in `infos["final_state"]` (privileged)."""

    def _level_rules(self, opponents: list[Any]) -> QuiddlerConfig:
        """The rules for opponents with levels (`common.level_rules`), which fix each seat's words in the engine:
        only with a fixed learner seat and no level inside an `OpponentMix`."""
        mixed = [e for o in opponents if isinstance(o, OpponentMix) for e in o.entries]
        levels = [common.opponent_level(o) for o in opponents]
        if any(common.opponent_level(e) is not None for e in mixed) or (
            self.learner_seat_option == "random" and any(level is not None for level in levels)
        ):
            raise ValueError(
                "option 'opponents': an opponent with a level needs a fixed learner_seat and no level inside an "
                "OpponentMix in the vector env (its engine's seat words are shared by every game); give the rules' "
                "vocabularies instead"
            )
        seat = 0 if self.learner_seat_option == "random" else self.learner_seat_option
        return common.level_rules(self.config, levels, seat)

    def set_opponents(self, opponents: Any) -> None:
        """New opponents (as the `opponents` option), for the episodes that start from now on. Their levels must be
        those the env was built with (`engine_config`: they name the engine's seat words)."""
        checked = common.check_vector_opponents(opponents, self.num_players)
        if self._level_rules(checked) != self.engine_config:
            raise ValueError(
                "set_opponents: the opponents' levels name the engine's seat words, fixed when the env was built; "
                "build a new env for other levels"
            )
        self.opponents = checked
        # The compiled bots' codes, seat by seat, when every opponent is one by name (episodes start in one call).
        named = all(isinstance(entry, str) for entry in self.opponents)
        self._codes = self.learners.bot_codes(self._bot_names(self.opponents)) if named else None
        entries = [e for o in self.opponents for e in (o.entries if isinstance(o, OpponentMix) else [o])]
        # Sticky: games already dealt may still seat the Python policies of the earlier opponents.
        self._any_python = getattr(self, "_any_python", False) or any(not isinstance(e, str) for e in entries)

    def states(self, slots: np.ndarray | None = None) -> np.ndarray:
        """The learners' seat-relative states now (float32 (games, state size), every game or `slots`): the whole
        game as the AEC env's `state()` holds it, the learner's seat first (`envs.state`). PRIVILEGED: for
        critics, never for a policy."""
        slots = self.games.all_games if slots is None else np.asarray(slots, dtype=np.int64)
        return seat_states(
            self.learners.hidden_arrays(slots),
            self.seats[slots],
            self.observations[slots],
            self.num_players,
            self.config.challenges,
        )

    @staticmethod
    def _bot_names(entries: list[str]) -> list[str]:
        """The compiled bots of opponent specs (`greedy:level=2` is the compiled greedy: its seat's words are the
        engine's)."""
        return [common.compiled_bot(entry)[0] for entry in entries]

    @property
    def observations(self) -> np.ndarray:
        """The learners' observations now (the array the last reset or step returned)."""
        return self.learners.observations

    # -- episodes ----------------------------------------------------------------------------

    def _start(self, slots: np.ndarray) -> None:
        """Deal a new episode in each of `slots`: its seed, learner seat and opponents, then play up to the learner;
        its mask and observation are written."""
        n = self.num_players
        if self._codes is not None:  # compiled bots only: one call for it all
            self.learners.start_bot_episodes(slots, self._codes)
            return
        seeds = self.learners.deal(slots)
        if self.learner_seat_option == "random":
            seats = learner_seats(seeds, n)
        else:
            seats = np.full(slots.size, self.learner_seat_option, dtype=np.int64)
        self.seats[slots] = seats
        self.bots[slots, seats] = NOT_A_BOT
        for i, s, seat in zip(slots.tolist(), seeds.tolist(), seats.tolist(), strict=True):
            # One generator per episode, from the episode's seed: its opponent draws are its own.
            rng = np.random.default_rng(s)
            self.policies[i][seat] = None
            for k, entry in enumerate(self.opponents, start=1):
                if isinstance(entry, OpponentMix):
                    entry = entry.draw(rng)
                other = (seat + k) % n
                self.bots[i, other] = (
                    self.learners.bot_codes(self._bot_names([entry]))[0] if isinstance(entry, str) else NOT_A_BOT
                )
                self.policies[i][other] = entry
        self._advance(slots)
        self.learners.refresh(slots)

    def _advance(self, slots: np.ndarray) -> None:
        """Play the opponents of `slots` until each is at its learner's move or over."""
        g = self.games
        while True:
            g.play_bots(slots, self.bots, self.moves)
            if not self._any_python:
                return
            cur = g.current_player[slots]
            turn = (~g.is_over[slots]) & (cur != self.seats[slots])
            if not turn.any():
                return
            groups: dict[int, tuple[Any, list[int]]] = {}
            for i, seat in zip(slots[turn].tolist(), cur[turn].tolist(), strict=True):
                policy = self.policies[i][seat]
                groups.setdefault(id(policy), (policy, []))[1].append(i)
            for policy, members in groups.values():
                self._play_python(policy, np.asarray(members, dtype=np.int64))

    def _play_python(self, policy: Any, slots: np.ndarray) -> None:
        g = self.games
        masks = g.action_masks(slots)
        seats = g.current_player[slots]
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
                    f"opponent policy {policy!r} in seat {int(seats[j])} of sub-env {int(slots[j])} "
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
            self.learners.seed = np.uint64(self._seed)
        mask = options.get("reset_mask")
        slots = self.games.all_games if mask is None else np.flatnonzero(np.asarray(mask, dtype=bool))
        self.learners.observations = self.observations.copy()  # the array the last step returned stays the caller's
        self._start(slots)
        self._needs_reset[slots] = False
        nothing = np.zeros(self.num_envs, dtype=bool)
        return self.observations, self._infos(nothing, nothing, self._new_figures())

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
        learners = self.learners
        results = learners.new_results()
        rewards, terminated, truncated, illegal = (
            results.rewards,
            results.terminated,
            results.truncated,
            results.illegal,
        )
        round_ended, over = results.round_ended, results.over
        figures = (results.scores, results.bonuses, results.totals, results.winners)
        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        # Every row of the observations is written below (the restarted games' too), so they go into a new
        # array, which is returned as it is: the one the last step returned stays the caller's.
        learners.observations = np.empty_like(learners.observations)
        # Per game: 0 plays its move; 1 starts its next episode in the same call (next-step autoreset, the
        # opponents compiled bots by name); 2 waits, its next episode dealt below (mixes and Python policies).
        restart = self._needs_reset.view(np.int8) * (1 if self._codes is not None else 2)
        if not next_step:
            restart[:] = 0
        codes = self._codes if self._codes is not None else _NO_CODES
        waiting, rounds_before = learners.step(actions, restart, codes, results)
        if waiting.size:  # games at a Python policy's move: play them up to the learner's, then end their step
            self._advance(waiting)
            learners.finish(waiting, rounds_before, results)
        if self._codes is None and next_step and self._needs_reset.any():
            self._start(np.flatnonzero(self._needs_reset))
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
            if self.final_states:
                final_state = infos["final_state"] = np.zeros((N, self.state_size), dtype=np.float32)
                final_state[ended] = self.states(ended)
                infos["_final_state"] = done.copy()
            self._start(ended)
        infos["action_mask"] = self.masks.copy()
        infos["seat"] = self.seats.copy()
        return self.observations, rewards, terminated, truncated, infos

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
