"""The `guided` bot: the `search` bot's determinized rollouts, with a trained policy guiding them.

Everything `search` does (see `quiddler_agents.search`), with a trained policy (a zoo entry or a
bundle trained at the bot's table) in three places:

- **rollouts**: after each candidate move the round is played out by the policy in every seat (with
  `policy_opponents=false`, in the bot's own seat only, greedy in the others), all determinizations and
  candidates as rows of one `BatchGame`, one forward pass a step for all the rows it moves
  (`PolicyAgent.act_batch`: its most probable legal move);
- **candidates**: beside `search`'s (both draws; every go-out and the `top` discards that keep the best
  layout now), the policy's `prior` most probable moves;
- **ties**: with `prior` > 0 the candidates are weighed in the policy's order, so equal rollout values go
  to its favourite.

With `policy_rollouts=false` the rollouts are `search`'s (greedy in every seat); with that and `prior=0`
the bot is `search`, decision for decision. Final turns, lay decisions and challenges are the expert's,
as in `search`. `ms` caps a decision's time as in `search`; the benchmark's card reports the measured
decision times.
"""

from __future__ import annotations

import numpy as np

from quiddler_env.core import batch_bots
from quiddler_env.core.batch import BatchGame
from quiddler_env.core.config import QuiddlerConfig

from .base import SeatView, Weighing, legal_list
from .params import MAX_TOP, Param, check_params
from .search import SearchAgent

DEFAULT_PRIOR = 2
"""The policy's most probable moves added to the candidates."""
DEFAULT_SAMPLES = 96
"""Determinizations a decision plays: three times search's, about as long a decision as 100 ms allows here."""
GUIDES = {2: "champion-2p", 4: "table-4p"}
"""The zoo entry that guides the bot by default, by table size (each was trained at that table)."""


class GuidedSearchAgent(SearchAgent):
    """`search` with a trained policy choosing candidates and playing the rollouts (see the module docstring)."""

    name = "guided"
    chunk = 32
    """Determinizations a rollout batch call plays: the policy's forward passes take every row of a step at once,
    so fewer, larger calls cost less."""

    PARAMS = {
        **SearchAgent.PARAMS,
        "policy": Param(str, note="a zoo entry's name or a policy bundle's path, trained at this table"),
        "prior": Param(int, 0, MAX_TOP, "the policy's most probable moves added to the candidates"),
        "policy_rollouts": Param(bool),
        "policy_opponents": Param(bool),
    }
    """The spec's parameters (`guided:samples=64:prior=3`) and their bounds. `network` (not a spec's: code's) is a
    function of the rules giving the guiding policy as an agent with `probabilities` and `act_batch` (expert
    iteration passes the network in training); it takes the place of `policy`."""

    def __init__(
        self,
        seed: int | None = None,
        config: QuiddlerConfig | None = None,
        *,
        policy: str | None = None,
        prior: int = DEFAULT_PRIOR,
        policy_rollouts: bool = True,
        policy_opponents: bool = True,
        network=None,
        samples: int = DEFAULT_SAMPLES,
        **search,
    ):
        checked = check_params(
            self.name,
            self.PARAMS,
            prior=prior,
            policy_rollouts=policy_rollouts,
            policy_opponents=policy_opponents,
            **({} if policy is None else {"policy": policy}),
        )
        self.prior = checked["prior"]
        self.policy_rollouts = checked["policy_rollouts"]
        self.policy_opponents = checked["policy_opponents"]
        self.policy = checked.get("policy")
        """The guiding policy's zoo name or bundle path (None: `GUIDES`' entry for the table)."""
        self._network = network
        self._guide = None
        self._rollout_guides: dict[int, object] = {}
        self._probs: np.ndarray | None = None
        super().__init__(seed, config, samples=samples, **search)
        if config is not None and (self.prior or self.policy_rollouts):
            self.guide()  # a missing policy, or one for another table, is refused here, before any game starts

    # -- the policy --------------------------------------------------------------------

    def _load(self, config: QuiddlerConfig):
        from . import zoo
        from .policies import load_policy

        if self._network is not None:
            return self._network(config)
        name = self._guide_name()
        path = zoo.entry_path(name) if name in zoo.entries() else name
        return load_policy(path, deterministic=True, config=config)

    def _guide_name(self) -> str | None:
        """The guiding policy's zoo name or path (None with a `network`); a ValueError at a table with none."""
        if self._network is not None or self.policy is not None:
            return self.policy
        name = GUIDES.get(self.num_players)
        if name is None:
            tables = ", ".join(str(n) for n in GUIDES)
            raise ValueError(
                f"guided: the zoo has no policy for a table of {self.num_players} (it has {tables} players); "
                "name one trained at this table with policy=PATH"
            )
        return name

    def guide(self):
        """The guiding policy, playing by this bot's rules (loaded once: when the bot is built with rules, else at
        its first decision)."""
        if self._guide is None:
            self._guide = self._load(self.config)
        return self._guide

    def _rollout_policy(self, batch: BatchGame):
        """The guiding policy for a rollout batch's rules (a one-round game: the policy's features read them)."""
        policy = self._rollout_guides.get(id(batch))
        if policy is None:
            from .policies.sb3 import PolicyAgent

            guide = self.guide()
            if isinstance(guide, PolicyAgent):  # the same network, read with the batch's rules: no second load
                policy = PolicyAgent(guide.policy, guide.observation_size, config=batch.config, features=guide.features)
            else:
                policy = self._load(batch.config)
            self._rollout_guides[id(batch)] = policy
        return policy

    # -- decisions ---------------------------------------------------------------------

    def weigh(self, observation, action_mask=None, extra=()) -> Weighing:
        obs, mask = self._prepare(observation, action_mask)
        self._probs = None
        if self.prior and len(legal_list(mask)) > 1:
            self._probs = self.guide().probabilities(obs, mask)
        return super().weigh(obs, mask, extra)

    def _candidates(self, seat: SeatView, legal: list[int]) -> list[int]:
        candidates = super()._candidates(seat, legal)
        if self._probs is None:
            return candidates
        probs = self._probs
        honest = set(self.honest(seat, legal))  # in the challenge variant the policy adds no bluff either
        favourites = [a for a in np.argsort(-probs, kind="stable").tolist() if probs[a] > 0 and a in honest]
        candidates += [a for a in favourites[: self.prior] if a not in candidates]
        # Weighed in the policy's order: the first of equal rollout values is its favourite.
        return sorted(candidates, key=lambda a: (-probs[a], a))

    # -- rollouts ----------------------------------------------------------------------

    def _play_out(self, batch: BatchGame, rows: np.ndarray) -> None:
        if not self.policy_rollouts:
            return super()._play_out(batch, rows)
        policy = self._rollout_policy(batch)
        bots = None
        if not self.policy_opponents:  # greedy in the opponents' seats, the policy in the bot's own (seat 0)
            bots = self._greedy_seats(batch).copy()
            bots[:, 0] = batch_bots.NOT_A_BOT
            moves = np.zeros(batch.num_games, dtype=np.int64)
        live = rows
        while True:
            if bots is not None:
                batch.play_bots(live, bots, moves)
            live = live[~batch.is_over[live]]
            if live.size == 0:
                return
            actions = policy.act_batch(batch.observe(games=live), batch.action_masks(live))
            batch.step(np.asarray(actions, dtype=np.int64), live)
