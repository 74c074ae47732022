"""Quiddler as an OpenSpiel game: `python_quiddler` (the `openspiel` extra).

Importing this module registers the game with OpenSpiel; then
`pyspiel.load_game("python_quiddler", {"players": 3})` plays it with OpenSpiel's tools.
The rules are `core.game.QuiddlerGame`'s, move for move: the state drives one
`QuiddlerGame`, and only the chance is OpenSpiel's.

**Chance nodes.** Every card that leaves the face-down stock is a chance outcome:
the deal (one card at a time, from the dealer's left, then the card turned up to
start the discard pile) and each draw from the draw pile. An outcome is a face
(0..30, `cards.FACES`), with probability its count in the stock over the stock's
size: the stock is a multiset, since nobody sees its order. When the draw pile is
empty, a draw turns the discard pile below its top into the stock (the rule book's
reshuffle) and draws from it.

**Moves** are the action table of `core.actions` (64 ids: draw, take the discard,
discard face f, go out discarding face f); words are laid by the automatic rule.

**Returns**, at the end only: each player's total minus the mean of all totals (in
points; zero-sum).

**Parameters** (OpenSpiel game parameters; `QuiddlerConfig` checks their values):

| parameter | default | rule |
|---|---|---|
| `players` | 2 | 2..8 |
| `rounds` | 8 | rounds in the game |
| `first_hand_size` | 3 | cards dealt in the first round; each round deals one more |
| `min_word_cards` | 2 | 1 or 2 |
| `two_player_bonus` | "longest_word" | "longest_word", "most_words", "both" |
| `bonus_value` | 10 | points of each bonus |
| `score_floor` | "round" | "round", "total", "none" |
| `go_out` | "optional" | "optional", "forced" |
| `dictionary` | "enable" | "enable" or a word-list path |
| `turn_cap` | 30 | turns each per round before it is scored anyway (a cap keeps the game finite) |
| `challenges` | False | the challenge variant is refused (`True` is a ValueError) |

**Observations.** `observation_tensor(p)` is the project's observation vector
(`core.observation.encode_observation`: own hand, the discard pile, what each
opponent took from it and still holds, laid words, totals; nothing private to
another seat). `information_state_tensor(p)` is that vector followed by the seat's
own moves in order (one 64-wide one-hot row per move, `max_moves` rows): the
current position plus everything the seat did. `information_state_string(p)` is
the seat's whole record, one line per event it saw (its own cards dealt and drawn,
every public move, every layout laid, the totals): perfect recall.
`observation_string(p)` is the observation in words.

**Resampling** (`resample_from_infostate`, for IS-MCTS): a state the seat cannot
tell from this one, drawn from what the seat knows only: its own hand, the discard
pile, the cards each opponent took from the discard pile and still holds
(`known_taken`), the words laid, the hand and draw-pile sizes. Every other card is
dealt at random to the opponents' free slots and the draw pile.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

try:
    import pyspiel
except ImportError:  # the base install has no OpenSpiel
    raise ImportError(
        'the OpenSpiel game needs the openspiel extra: pip install "quiddler-env[openspiel]" (missing: pyspiel)'
    ) from None

from ..core import actions as A
from ..core.cards import COUNTS, DECK_SIZE, FACES, NUM_FACES, POINTS, new_deck
from ..core.config import MAX_PLAYERS, MAX_ROUNDS, MIN_PLAYERS, QuiddlerConfig
from ..core.dictionary import load_dictionary
from ..core.game import Phase, QuiddlerGame
from ..core.observation import encode_observation, layout_counts, observation_layout
from ..core.solver import get_solver

SHORT_NAME = "python_quiddler"
DEFAULT_PARAMS = {
    "players": 2,
    "rounds": 8,
    "first_hand_size": 3,
    "min_word_cards": 2,
    "two_player_bonus": "longest_word",
    "bonus_value": 10,
    "score_floor": "round",
    "go_out": "optional",
    "dictionary": "enable",
    "turn_cap": 30,
    "challenges": False,
}
_CANONICAL_DECK = new_deck()
_CANONICAL_PILE = tuple(sorted(_CANONICAL_DECK))

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Python Quiddler",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=MAX_PLAYERS,
    min_num_players=MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMS,
)


def config_from_params(params: dict) -> QuiddlerConfig:
    """The rules the game parameters name (a one-line ValueError for the challenge variant or a bad value)."""
    p = {**DEFAULT_PARAMS, **params}
    if p["challenges"]:
        raise ValueError("python_quiddler does not play the challenge variant (challenges=True); use the AEC env")
    if not 1 <= p["rounds"] <= MAX_ROUNDS:
        raise ValueError(f"python_quiddler: rounds must be 1..{MAX_ROUNDS}, got {p['rounds']}")
    sizes = tuple(range(p["first_hand_size"], p["first_hand_size"] + p["rounds"]))
    if p["turn_cap"] < 1:
        raise ValueError(
            f"python_quiddler: turn_cap must be at least 1 (a cap keeps the game finite), got {p['turn_cap']}"
        )
    return QuiddlerConfig(
        num_players=p["players"],
        hand_sizes=sizes,
        min_word_cards=p["min_word_cards"],
        two_player_bonus=p["two_player_bonus"],
        bonus_value=p["bonus_value"],
        score_floor=p["score_floor"],
        go_out=p["go_out"],
        dictionary=p["dictionary"],
        turn_cap=p["turn_cap"],
    )


def max_moves(config: QuiddlerConfig) -> int:
    """The most moves one seat makes in a game: two a turn, the turn cap's turns and one last turn a round."""
    return 2 * (config.turn_cap + 1) * config.num_rounds


def game_info(config: QuiddlerConfig) -> pyspiel.GameInfo:
    """The game's facts for these rules: 64 moves, 31 faces, the bounds of the returns and of the length."""
    n = config.num_players
    best = sorted((p for p, c in zip(POINTS, COUNTS, strict=True) for _ in range(c)), reverse=True)
    # A round scores at most the hand's best cards plus both bonuses, at least minus them.
    bound = sum(sum(best[:h]) + 2 * abs(config.bonus_value) for h in config.hand_sizes)
    utility = 2.0 * bound * (n - 1) / n
    turns = sum((config.turn_cap + 1) * n for _ in config.hand_sizes)
    return pyspiel.GameInfo(
        num_distinct_actions=A.NUM_ACTIONS,
        max_chance_outcomes=NUM_FACES,
        num_players=n,
        min_utility=-utility,
        max_utility=utility,
        utility_sum=0.0,
        max_game_length=2 * turns,
    )


class QuiddlerOpenSpielGame(pyspiel.Game):
    """The game `python_quiddler`: its rules (`config`), solver and facts."""

    def __init__(self, params: dict | None = None):
        params = params or {}
        self.config = config_from_params(params)
        super().__init__(_GAME_TYPE, game_info(self.config), params)
        self.solver = get_solver(load_dictionary(self.config.dictionary), self.config.min_word_cards)
        self.max_moves = max_moves(self.config)
        self.observation_size = observation_layout(self.config.num_players).size
        self.start = _Rules(self.config, self.solver)
        """The engine at the start of a game, every round's deck stacked in one fixed order: the engine never
        shuffles, the chance nodes deal. Each state starts from a copy (OpenSpiel's clone makes a new state)."""
        self.start.reset(seed=0, decks=[_CANONICAL_DECK] * self.config.num_rounds)
        self.recall_observer = QuiddlerObserver(self, perfect_recall=True)

    def new_initial_state(self) -> QuiddlerState:
        return QuiddlerState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> QuiddlerObserver:
        if params:
            raise ValueError(f"python_quiddler's observer takes no parameters, got {params}")
        if iig_obs_type is not None and (
            not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(
                "python_quiddler observes one seat's view only (public_info=True, private_info=SINGLE_PLAYER), "
                f"not {iig_obs_type}"
            )
        perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return QuiddlerObserver(self, perfect_recall)


class _Rules(QuiddlerGame):
    """The engine of one state: copied by `State.clone` with its lists (one level deep, the layouts and results
    in them are immutable) and sharing its rules, solver and generator (a deep copy took 8 ms, the solver's)."""

    def __deepcopy__(self, memo) -> _Rules:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        for key, value in self.__dict__.items():
            if type(value) is list and key != "_decks":  # the stacked decks are never changed
                new.__dict__[key] = [x[:] if type(x) is list else x for x in value]
        return new


class _Record(list):
    """A list whose items are never changed in place (tuples, ints, lists copied on change): cloned shallowly."""

    def __deepcopy__(self, memo) -> _Record:
        return _Record(x[:] if type(x) is list else x for x in self)


class QuiddlerState(pyspiel.State):
    """A position of `python_quiddler`: one `QuiddlerGame` and the chance waiting to be dealt or drawn."""

    def __init__(self, game: QuiddlerOpenSpielGame):
        super().__init__(game)
        cfg = game.config
        self.rules = copy.deepcopy(game.start)
        self.stock = [0] * NUM_FACES
        """The face-down cards chance draws from (count per face): the undealt deck, then the draw pile."""
        self.deal_left = 0
        """Cards still to deal this round (the last turns up the discard pile); 0 once the round is in play."""
        self.drawing = False
        """A draw from the draw pile waits on chance."""
        self.events: list[tuple[int, str]] = _Record()
        """(seat, text) of everything that happened; seat -1: seen by all."""
        self.moves: list[list[int]] = _Record([] for _ in range(cfg.num_players))
        """Each seat's own moves, in order."""
        self._begin_deal()

    # -- chance --------------------------------------------------------------------------

    def _begin_deal(self) -> None:
        g = self.rules
        g.hands = [[0] * NUM_FACES for _ in range(g.num_players)]
        g.draw_pile = list(_CANONICAL_PILE)
        g.discard_pile = []
        g.discard_counts = [0] * NUM_FACES
        self.stock = list(COUNTS)
        self.deal_left = g.hand_size * g.num_players + 1
        self.events.append((-1, f"round {g.round + 1}: p{g.dealer} deals {g.hand_size} each"))

    def _take_from_stock(self, face: int) -> None:
        if self.stock[face] <= 0:
            raise ValueError(f"chance outcome {face} ({FACES[face]}) is not in the stock")
        self.stock[face] -= 1
        pile = self.rules.draw_pile
        pile.remove(face)
        pile.append(face)  # the engine pops the top: make it this face

    def _deal(self, face: int) -> None:
        g = self.rules
        self._take_from_stock(face)
        g.draw_pile.pop()
        self.deal_left -= 1
        if self.deal_left == 0:  # the last card starts the discard pile
            g.discard_pile.append(face)
            g.discard_counts[face] += 1
            self.events.append((-1, f"top {FACES[face]}"))
            return
        k = g.hand_size * g.num_players - self.deal_left  # cards dealt before this one
        seat = (g.dealer + 1 + k % g.num_players) % g.num_players
        g.hands[seat][face] += 1
        self.events.append((seat, f"dealt {FACES[face]}"))

    def _reshuffle(self) -> None:
        """The discard pile below its top becomes the draw pile (its order does not matter: draws are chance)."""
        g = self.rules
        top = g.discard_pile.pop()
        g.draw_pile = sorted(g.discard_pile)
        g.discard_pile = [top]
        g.discard_counts = [0] * NUM_FACES
        g.discard_counts[top] = 1
        g.reshuffles += 1
        self.stock = [0] * NUM_FACES
        for face in g.draw_pile:
            self.stock[face] += 1
        self.events.append((-1, "reshuffle"))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Each face the stock holds, with probability its count over the stock's size."""
        if self.drawing and not self.rules.draw_pile:
            counts = list(self.rules.discard_counts)
            counts[self.rules.discard_pile[-1]] -= 1  # the reshuffle keeps the top
        else:
            counts = self.stock
        total = sum(counts)
        return [(f, c / total) for f, c in enumerate(counts) if c]

    # -- the OpenSpiel API -----------------------------------------------------------------

    def current_player(self) -> int:
        if self.rules.is_over:
            return pyspiel.PlayerId.TERMINAL
        if self.deal_left or self.drawing:
            return pyspiel.PlayerId.CHANCE
        return self.rules.current_player

    def _legal_actions(self, player: int) -> list[int]:
        return self.rules.legal_actions()

    def _apply_action(self, action: int) -> None:
        g = self.rules
        if self.deal_left:
            self._deal(action)
            return
        if self.drawing:
            if not g.draw_pile:
                self._reshuffle()
            self._take_from_stock(action)
            self.drawing = False
            g.step(A.DRAW_PILE)
            self.events.append((g.current_player, f"p{g.current_player} drew {FACES[action]}"))
            return
        p = g.current_player
        self.moves[p].append(action)
        if action == A.DRAW_PILE:
            if not g.is_legal(action):
                g.step(action)  # raises the engine's one-line error
            self.drawing = True
            self.events.append((-1, f"p{p} draws"))
            return
        top = g.discard_pile[-1] if g.discard_pile else -1
        laid = len(g.lay_order)
        results = g.step(action)
        text = f"takes {FACES[top]}" if action == A.TAKE_DISCARD else A.action_name(action)
        self.events.append((-1, f"p{p} {text}"))
        if results is None:
            for q in g.lay_order[laid:]:
                self._laid_event(q, g.laid[q].spelled, g.laid[q].score)
            return
        # The step ended the round (the engine has moved on): the layouts laid in it, in laying order.
        for r in sorted((r for r in results if r.lay_position >= laid), key=lambda r: r.lay_position):
            self._laid_event(r.player, r.spelled, r.card_points - r.unused_points)
        self.events.append((-1, "totals " + " ".join(str(t) for t in g.totals)))
        if not g.is_over:
            self._begin_deal()

    def _laid_event(self, seat: int, spelled: tuple[str, ...], score: int) -> None:
        self.events.append((-1, f"p{seat} lays {' '.join(spelled) or '-'} ({score:+d})"))

    def observation_tensor(self, player: int | None = None) -> list[float]:
        """The observation vector of `player` (default: the player to move), as OpenSpiel's own call gives it.

        Called from Python, this skips OpenSpiel's generic path for Python games, which builds a new initial state
        to size the tensor on every call (8x the time of the encoding)."""
        return encode_observation(self.rules, self._seat(player)).tolist()

    def information_state_tensor(self, player: int | None = None) -> list[float]:
        """The information-state tensor of `player` (default: the player to move); see `observation_tensor`."""
        observer = self.get_game().recall_observer
        observer.set_from(self, self._seat(player))
        return observer.tensor.tolist()

    def _seat(self, player: int | None) -> int:
        player = self.current_player() if player is None else int(player)
        if not 0 <= player < self.rules.num_players:
            raise ValueError(f"python_quiddler: no seat {player} to observe (seats 0..{self.rules.num_players - 1})")
        return player

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"{'deal' if self.deal_left else 'draw'} {FACES[action]}"
        return A.action_name(action)

    def is_terminal(self) -> bool:
        return self.rules.is_over

    def returns(self) -> list[float]:
        """Each total minus the mean of all totals, once the game is over (zeros before)."""
        if not self.rules.is_over:
            return [0.0] * self.rules.num_players
        totals = self.rules.totals
        mean = sum(totals) / len(totals)
        return [t - mean for t in totals]

    def __str__(self) -> str:
        g = self.rules
        hands = " | ".join(f"p{p}: {_cards(h)}" for p, h in enumerate(g.hands))
        top = FACES[g.discard_pile[-1]] if g.discard_pile else "-"
        return (
            f"round {g.round + 1}/{g.config.num_rounds} dealer p{g.dealer} phase {g.phase.name.lower()}"
            f"{' (dealing)' if self.deal_left else ' (drawing)' if self.drawing else ''}\n"
            f"hands {hands}\ndiscard top {top} ({len(g.discard_pile)} cards), draw pile {len(g.draw_pile)}\n"
            f"totals {' '.join(map(str, g.totals))}"
        )

    # -- resampling ------------------------------------------------------------------------

    def resample_from_infostate(self, player_id: int, probability_sampler) -> QuiddlerState:
        """A state `player_id` cannot tell from this one, drawn with `probability_sampler()` (uniform in [0, 1))."""
        return self.resample(player_id, probability_sampler)

    def resample(self, player: int, uniform: Callable[[], float]) -> QuiddlerState:
        """A copy in which every card `player` has not seen is dealt again at random (see the module docstring).

        Uses only what `player` knows: its hand, the discard pile, each opponent's `known_taken` and laid
        words, and the sizes of the hands and of the draw pile. The other seats' records of their own cards
        are replaced by one line each naming the hand they now hold."""
        g = self.rules
        n = g.num_players
        must = must_hold(g, player)
        pool = list(COUNTS)
        for f in range(NUM_FACES):
            pool[f] -= g.hands[player][f] + g.discard_counts[f] + sum(m[f] for m in must)
        if min(pool) < 0:
            raise ValueError("resample: the seat's knowledge holds more cards than the deck")
        new = self.clone()
        r = new.rules
        for k in range(1, n):
            q = (player + k) % n
            hand = list(must[q])
            for _ in range(sum(g.hands[q]) - sum(hand)):
                hand[_pick(pool, uniform)] += 1
            r.hands[q] = hand
        r.draw_pile = sorted(f for f in range(NUM_FACES) for _ in range(pool[f]))
        new.stock = list(pool)  # dealing or not, the cards nobody has seen are the stock
        others = [(s, t) for s, t in self.events if s in (-1, player)]
        for k in range(1, n):
            q = (player + k) % n
            others.append((q, f"p{q} holds {_cards(r.hands[q])}"))
        new.events = _Record(others)
        r._go_out_bits = None
        return new

    # -- building a position ----------------------------------------------------------------

    @classmethod
    def position(
        cls,
        game: QuiddlerOpenSpielGame,
        *,
        hands: list[list[int]],
        discard_pile: list[int],
        known_taken: list[list[int]],
        totals: list[int],
        dealer: int,
        current_player: int,
        phase: str,
        turns_this_round: int = 0,
    ) -> QuiddlerState:
        """A state in the first round of `game`, in play: these hands (count per face), this discard pile
        (faces, top last), nobody out or laid yet; every other card is in the draw pile. `phase` is "draw"
        or "discard" (then the current player holds one card more than the others)."""
        state = game.new_initial_state()
        g = state.rules
        n = g.num_players
        g.dealer = dealer
        g.totals = list(totals)
        g.hands = [list(h) for h in hands]
        g.discard_pile = list(discard_pile)
        g.discard_counts = [0] * NUM_FACES
        for f in discard_pile:
            g.discard_counts[f] += 1
        g.known_taken = [list(k) for k in known_taken]
        stock = list(COUNTS)
        for f in range(NUM_FACES):
            stock[f] -= sum(h[f] for h in hands) + g.discard_counts[f]
        if min(stock) < 0 or sum(stock) + sum(map(sum, hands)) + len(discard_pile) != DECK_SIZE:
            raise ValueError("position: the hands and the discard pile hold more cards than the deck")
        g.draw_pile = sorted(f for f in range(NUM_FACES) for _ in range(stock[f]))
        state.stock = stock
        state.deal_left = 0
        g.current_player = current_player
        g.phase = Phase.DRAW if phase == "draw" else Phase.DISCARD
        g.turns_this_round = turns_this_round
        g._go_out_bits = None
        state.events = _Record([(-1, f"position: p{current_player} to {phase}, totals {' '.join(map(str, totals))}")])
        state.events += [(q, f"p{q} holds {_cards(hands[q])}") for q in range(n)]
        return state


def must_hold(game: QuiddlerGame, player: int) -> list[list[int]]:
    """The cards `player` knows each opponent holds (count per face; its own row is zeros): those it took from
    the discard pile and still holds, and, once it has laid, the cards of its words."""
    must = [[0] * NUM_FACES for _ in range(game.num_players)]
    for q in range(game.num_players):
        if q == player:
            continue
        row = list(game.known_taken[q])
        if game.laid[q] is not None:
            words = layout_counts(game.laid[q])
            row = [max(a, int(b)) for a, b in zip(row, words, strict=True)]
        must[q] = row
    return must


def _pick(pool: list[int], uniform: Callable[[], float]) -> int:
    """A face drawn from `pool` (count per face) with probability count / size; taken out of the pool."""
    x = uniform() * sum(pool)
    for f, c in enumerate(pool):
        if x < c:
            pool[f] -= 1
            return f
        x -= c
    f = max(f for f in range(NUM_FACES) if pool[f])  # rounding at the very end
    pool[f] -= 1
    return f


def _cards(counts) -> str:
    return " ".join(FACES[f] for f in range(NUM_FACES) for _ in range(int(counts[f]))) or "-"


class QuiddlerObserver:
    """OpenSpiel's observer: the observation vector, or with perfect recall that vector and the seat's moves."""

    def __init__(self, game: QuiddlerOpenSpielGame, perfect_recall: bool):
        self.perfect_recall = perfect_recall
        size = game.observation_size
        moves = game.max_moves * A.NUM_ACTIONS if perfect_recall else 0
        self.tensor = np.zeros(size + moves, np.float32)
        self.dict = {"observation": self.tensor[:size]}
        if perfect_recall:
            self.dict["moves"] = self.tensor[size:].reshape(game.max_moves, A.NUM_ACTIONS)

    def set_from(self, state: QuiddlerState, player: int) -> None:
        self.dict["observation"][:] = encode_observation(state.rules, player)
        if self.perfect_recall:
            rows = self.dict["moves"]
            rows.fill(0.0)
            own = state.moves[player]
            rows[np.arange(len(own)), own] = 1.0

    def string_from(self, state: QuiddlerState, player: int) -> str:
        if self.perfect_recall:
            return "\n".join([f"p{player}"] + [t for s, t in state.events if s in (-1, player)])
        return observation_string(state, player)


def observation_string(state: QuiddlerState, player: int) -> str:
    """What `player` sees now, in words."""
    g = state.rules
    n = g.num_players
    top = FACES[g.discard_pile[-1]] if g.discard_pile else "-"
    whose = "chance" if state.deal_left or state.drawing else f"p{g.current_player}"
    parts = [
        f"p{player} round {g.round + 1}/{g.config.num_rounds} dealer p{g.dealer} {whose} to {g.phase.name.lower()}",
        f"hand {_cards(g.hands[player])}",
        f"discard top {top} pile {_cards(g.discard_counts)}",
        f"draw pile {len(g.draw_pile)}",
        "totals " + " ".join(str(t) for t in g.totals),
    ]
    for k in range(1, n):
        q = (player + k) % n
        if any(g.known_taken[q]):
            parts.append(f"p{q} took {_cards(g.known_taken[q])}")
    for q in g.lay_order:
        parts.append(f"p{q} laid {' '.join(g.laid[q].spelled) or '-'} ({g.laid[q].score:+d})")
    if g.went_out is not None:
        parts.append(f"p{g.went_out} went out")
    return ", ".join(parts)


pyspiel.register_game(_GAME_TYPE, QuiddlerOpenSpielGame)
