"""The `openspiel-ismcts` agent: OpenSpiel's information-set MCTS on `python_quiddler` (the openspiel extra).

At each draw and discard of a round in play, the agent builds an OpenSpiel state of
the rest of the round from its observation alone (`QuiddlerState.position`: its hand,
the discard pile, what each opponent took from it, the totals, the turns played;
the cards it has not seen dealt at random) and runs OpenSpiel's `ISMCTSBot` on it
for `simulations` simulations. Every simulation starts in a new world drawn by the
game's resampler, which uses only what the seat knows, from the agent's own
generator. The game is one round (`rounds=1`), so a move is worth the totals after
this round minus their mean.

Leaf values: by default a new node is valued by one playout of the rest of the round
with greedy in every seat; with `rollouts=k`, by OpenSpiel's `RandomRolloutEvaluator`
(k random playouts of the round) instead; with `greedy=false` and no rollouts, by
every seat's best layout of the hand it holds now (the round scored as if it ended
there). Final turns (someone went out) and lay decisions (`layout: choose`) are the
expert's, as in `search`. The challenge variant is refused.
"""

from __future__ import annotations

import numpy as np

from quiddler_env.core.cards import NUM_FACES
from quiddler_env.core.config import MAX_TURN_CAP, QuiddlerConfig
from quiddler_env.core.observation import encode_observation, observation_layout

from .base import DISCARD, DRAW, BaseAgent, SeatView, legal_list
from .expert import ExpertAgent
from .extras import require
from .params import MAX_SAMPLES, Param, check_params
from .simple import GreedyAgent

DEFAULT_SIMULATIONS = 64
MAX_UCT_C = 1000.0
MAX_ROLLOUTS = 64

_NO_CHALLENGES = "openspiel-ismcts does not play the challenge variant (challenges: true): python_quiddler has none"


class ISMCTSAgent(BaseAgent):
    """OpenSpiel's IS-MCTS over the rest of the round (see the module docstring)."""

    name = "openspiel-ismcts"

    PARAMS = {
        "simulations": Param(int, 1, MAX_SAMPLES),
        "uct_c": Param(float, 0, MAX_UCT_C, "points: values are in points"),
        "rollouts": Param(int, 0, MAX_ROLLOUTS, "random playouts a leaf, instead of the greedy one; 0: none"),
        "greedy": Param(bool),
    }
    """The spec's parameters (`openspiel-ismcts:simulations=128:uct_c=5`) and their bounds."""

    def __init__(
        self,
        seed: int | None = None,
        config: QuiddlerConfig | None = None,
        *,
        simulations: int = DEFAULT_SIMULATIONS,
        uct_c: float = 2.0,
        rollouts: int = 0,
        greedy: bool = True,
    ):
        checked = check_params(
            self.name, self.PARAMS, simulations=simulations, uct_c=uct_c, rollouts=rollouts, greedy=greedy
        )
        if config is not None and config.challenges:
            raise ValueError(_NO_CHALLENGES)
        require("openspiel", "pyspiel", what="the openspiel-ismcts agent")
        self.simulations = checked["simulations"]
        self.uct_c = checked["uct_c"]
        self.rollouts = checked["rollouts"]
        self.greedy = checked["greedy"]
        self._games: dict[tuple[int, int], object] = {}
        self._expert = ExpertAgent(seed, config)
        self._greedy = GreedyAgent(seed, config)
        super().__init__(seed, config)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        expert = getattr(self, "_expert", None)
        if expert is not None:  # its own stream, derived from the same seed
            expert.reset(None if seed is None else [int(seed), 1])
            self._greedy.reset(None if seed is None else [int(seed), 2])

    def act(self, observation, action_mask=None) -> int:
        obs, mask = self._prepare(observation, action_mask)
        if self.challenges:
            raise ValueError(_NO_CHALLENGES)
        legal = legal_list(mask)
        if len(legal) == 1:
            return legal[0]
        seat = self.view(obs)
        if seat.phase not in (DRAW, DISCARD) or seat.final_turn:
            self._expert.num_players = self.num_players
            return self._expert.act(obs, mask)
        self._greedy.num_players = self.num_players
        state = self.position(seat, self._turns(obs))
        action = int(self._bot(state).step(state))
        return action if action in legal else legal[0]

    # -- the OpenSpiel side ---------------------------------------------------------------

    def game(self, hand_size: int):
        """The one-round `python_quiddler` of these rules at this hand size (built once)."""
        import pyspiel

        from quiddler_env.envs import openspiel as O  # registers python_quiddler

        key = (self.num_players, hand_size)
        game = self._games.get(key)
        if game is None:
            cfg = self.config
            params = {
                "players": self.num_players,
                "rounds": 1,
                "first_hand_size": hand_size,
                "min_word_cards": cfg.min_word_cards,
                "two_player_bonus": cfg.two_player_bonus,
                "bonus_value": cfg.bonus_value,
                "score_floor": cfg.score_floor,
                "go_out": cfg.go_out,
                "dictionary": cfg.dictionary,
                "turn_cap": cfg.turn_cap or MAX_TURN_CAP,
            }
            game = self._games[key] = pyspiel.load_game(O.SHORT_NAME, params)
        return game

    def position(self, seat: SeatView, turns: int):
        """The OpenSpiel state of this round as the seat sees it: own seat 0, opponents in relative order, the
        cards it has not seen dealt at random (the search deals them again for every simulation)."""
        from quiddler_env.envs.openspiel import QuiddlerState

        n = self.num_players
        pool = np.repeat(np.arange(NUM_FACES), seat.unseen)
        self.rng.shuffle(pool)
        hands, taken = [list(seat.hand)], 0
        for k in range(1, n):
            hand = list(seat.opponent_taken[k - 1])
            hidden = seat.hand_size - sum(hand)
            for f in pool[taken : taken + hidden]:
                hand[f] += 1
            taken += hidden
            hands.append(hand)
        below = [f for f in range(NUM_FACES) for _ in range(seat.discard_pile[f])]
        if seat.discard_top >= 0:
            below.remove(seat.discard_top)
            below.append(seat.discard_top)
        return QuiddlerState.position(
            self.game(seat.hand_size),
            hands=hands,
            discard_pile=below,
            known_taken=[[0] * NUM_FACES] + [list(row) for row in seat.opponent_taken],
            totals=list(seat.totals),
            dealer=(-seat.seat_from_dealer) % n,
            current_player=0,
            phase=seat.phase,
            turns_this_round=turns,
        )

    def _bot(self, state):
        from open_spiel.python.algorithms import ismcts, mcts

        game = state.get_game()
        random_state = np.random.RandomState(int(self.rng.integers(2**31)))
        if self.rollouts:
            evaluator = mcts.RandomRolloutEvaluator(self.rollouts, random_state)
        elif self.greedy:
            evaluator = GreedyPlayoutEvaluator(self._greedy, self.rng)
        else:
            evaluator = LayoutEvaluator()
        bot = ismcts.ISMCTSBot(game, evaluator, self.uct_c, self.simulations, random_state=random_state)
        bot.set_resampler(lambda s, player: s.resample(player, self.rng.random))
        return bot

    def _turns(self, obs: np.ndarray) -> int:
        cap = self.config.turn_cap
        if not cap:
            return 0
        fraction = float(observation_layout(self.num_players).view(obs)["turns_this_round"][0])
        return int(round(fraction * cap * self.num_players))


class LayoutEvaluator:
    """An IS-MCTS evaluator without playouts: each seat's total plus its best layout of the hand it holds now,
    minus the mean of those (the round scored as if it ended here); uniform priors."""

    def evaluate(self, state) -> np.ndarray:
        if state.is_terminal():
            return np.asarray(state.returns())
        g = state.rules
        values = np.asarray(
            [t + g.solver.best_layout(h, counts=True).score for t, h in zip(g.totals, g.hands, strict=True)],
            dtype=float,
        )
        return values - values.mean()

    def prior(self, state) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


class GreedyPlayoutEvaluator:
    """An IS-MCTS evaluator: one playout of the rest of the round with greedy in every seat (each acting on its
    own seat's observation), chance drawn from `rng`; uniform priors."""

    def __init__(self, greedy: GreedyAgent, rng: np.random.Generator):
        self.greedy, self.rng = greedy, rng

    def evaluate(self, state) -> np.ndarray:
        state = state.clone()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(outcomes[int(self.rng.choice(len(outcomes), p=probs))])
                continue
            g = state.rules
            state.apply_action(self.greedy.act(encode_observation(g, g.current_player), g.legal_action_mask()))
        return np.asarray(state.returns())

    def prior(self, state) -> list[tuple[int, float]]:
        return LayoutEvaluator.prior(self, state)
