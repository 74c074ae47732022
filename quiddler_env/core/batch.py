"""`BatchGame`: N games of Quiddler in arrays, stepped, masked and observed by compiled kernels.

```python
from quiddler_env.core.batch import BatchGame

games = BatchGame(num_games=1024)          # QuiddlerConfig() rules; any config works
games.reset(seed=0)                        # game i deals from game_seed(0, i)
masks = games.action_masks()               # (1024, 64) int8, the current players' legal moves
obs = games.observe()                      # (1024, obs size) float32, each current player's view
games.step(actions)                        # one action per game (IllegalActionError names the first bad one)
```

The rules are `QuiddlerGame`'s (the single-game engine stays as the readable reference;
`tests/test_batch_parity.py` replays random games in both, move by move). Every game
has its own deal generator: game i of a batch reset with `seed` is seeded
`game_seed(seed, i)`, whatever N is, and `QuiddlerGame.reset(rng=StreamGenerator(...))`
deals the same cards from the same seed, so any game of a batch can be replayed alone.
The state arrays are documented in `batch_kernels`; the properties below name them.

The challenge variant (`challenges: true`) plays too, with each seat's vocabulary, bluffs under `layout:
choose` and the challenge phase (`tests/test_batch_challenge_parity.py`), and so do the compiled bots. So do
seat vocabularies outside the variant (`vocabularies` without `challenges`: each seat lays only its words within
the referee's list; `tests/test_batch_vocabulary_parity.py`), with the variant's word tables and the plain
game's observation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numba import njit

from . import batch_bots
from . import batch_kernels as kernels
from .actions import num_actions
from .cards import DECK_SIZE, new_deck
from .config import MAX_PLAYERS, QuiddlerConfig
from .dictionary import KEY_ORDER, MAX_WORD_CARDS, Dictionary, load_dictionary
from .game import IllegalActionError, Phase, QuiddlerGame, rules_seat_solvers
from .laying import MAX_CANDIDATES, claim_unused
from .observation_slices import observation_layout
from .scoring import Challenge, RoundResult, bonuses_in_play, challenge_scores, word_points
from .solver import HandSolver, Layout, get_solver
from .solver_kernel import new_scratch
from .vocabulary import coverage

_FLOORS = {"round": kernels.FLOOR_ROUND, "total": kernels.FLOOR_TOTAL, "none": kernels.FLOOR_NONE}
_TWO_PLAYER_BONUSES = {
    "longest_word": kernels.BONUS_LONGEST,
    "most_words": kernels.BONUS_MOST_WORDS,
    "both": kernels.BONUS_LONGEST | kernels.BONUS_MOST_WORDS,
}
_U64 = 2**64
_MEMO_LIMIT = 100_000
_BONUS_BIT = {"most_words": kernels.BONUS_MOST_WORDS, "longest_word": kernels.BONUS_LONGEST}


@njit(cache=True)
def _streams(seed, slots, episodes):
    out = np.empty(slots.shape[0], np.uint64)
    for j in range(slots.shape[0]):
        out[j] = kernels.game_stream(seed, slots[j], episodes[j])
    return out


@njit(cache=True)
def _bot_stream(seed):
    return kernels.mix64(seed ^ kernels._M2)  # as `batch_kernels.reset_games` seeds a game's bots


def game_seed(seed: int, slot: int | Sequence[int] | np.ndarray, episode: int | Sequence[int] | np.ndarray = 0):
    """The deal generator's seed of episode `episode` of slot `slot` in a batch reset with `seed` (uint64).

    Scalars give an int, arrays an array: the one function behind every game's seed."""
    scalar = np.ndim(slot) == 0 and np.ndim(episode) == 0
    slots = np.atleast_1d(np.asarray(slot, dtype=np.uint64))
    episodes = np.asarray(episode, dtype=np.uint64)
    if episodes.shape != slots.shape:
        episodes = np.ascontiguousarray(np.broadcast_to(episodes, slots.shape))
    out = _streams(np.uint64(int(seed) % _U64), slots, episodes)
    return int(out[0]) if scalar else out


@njit(cache=True)
def _seat_draws(seeds, num_players):
    out = np.empty(seeds.shape[0], np.int64)
    for j in range(seeds.shape[0]):
        out[j] = kernels.seat_draw(seeds[j], num_players)
    return out


def learner_seats(game_seeds: np.ndarray, num_players: int) -> np.ndarray:
    """The learner's seat in each game when it is drawn (`learner_seat="random"`), from the games' seeds
    (`game_seed`): uniform over the seats, and each game's its own, whatever the batch."""
    return _seat_draws(np.asarray(game_seeds, dtype=np.uint64), np.int64(num_players))


class StreamGenerator:
    """One game's deal generator, with numpy's `permutation`: `QuiddlerGame.reset(rng=StreamGenerator(s))`
    deals and reshuffles exactly as a batch game seeded `s` (`game_seed`)."""

    def __init__(self, game_seed: int):
        self.state = np.zeros((1, 2), dtype=np.uint64)
        self.state[0, 0] = np.uint64(int(game_seed) % _U64)

    def permutation(self, values) -> np.ndarray:
        return kernels.permutation_kernel(self.state, np.asarray(values))


def rule_array(config: QuiddlerConfig) -> np.ndarray:
    """The rule options as the kernels read them (indices `batch_kernels.R_*`)."""
    n = config.num_players
    rules = np.zeros(kernels.R_SIZE, dtype=np.int64)
    rules[kernels.R_PLAYERS] = n
    rules[kernels.R_ROUNDS] = config.num_rounds
    rules[kernels.R_MIN_CARDS] = config.min_word_cards
    rules[kernels.R_BONUS_VALUE] = config.bonus_value
    both = kernels.BONUS_LONGEST | kernels.BONUS_MOST_WORDS
    rules[kernels.R_BONUSES] = _TWO_PLAYER_BONUSES[config.two_player_bonus] if n == 2 else both
    rules[kernels.R_FLOOR] = _FLOORS[config.score_floor]
    rules[kernels.R_FORCED] = config.go_out == "forced"
    rules[kernels.R_CAP] = config.turn_cap or 0
    rules[kernels.R_CHOOSE] = config.layout == "choose"
    rules[kernels.R_K] = MAX_CANDIDATES
    rules[kernels.R_CHALLENGES] = config.challenges
    rules[kernels.R_BLUFF] = config.challenges and config.layout == "choose"
    rules[kernels.R_PENALTY] = config.failed_go_out_penalty
    return rules


def solver_tables(solver: HandSolver) -> tuple:
    """The dictionary's trie and term arrays in the order the kernels take them (`tables`)."""
    return (
        np.asarray(KEY_ORDER, dtype=np.int64),
        *solver._trie,
        solver._term_points,
        solver._term_letters,
        solver._term_cards,
    )


def term_keys(dictionary: Dictionary) -> np.ndarray:
    """Each term's key, as `batch_kernels.key_term` reads one: its cards' labels in base 32 (the prefix codes)."""
    edge_start, edge_label, edge_child, node_term = dictionary.trie
    parents = np.repeat(np.arange(len(node_term)), np.diff(edge_start))
    codes = np.zeros(len(node_term), dtype=np.int64)
    for _ in range(MAX_WORD_CARDS):  # each pass fixes one more level of the trie (as `Dictionary.prefix_map`)
        codes[edge_child] = codes[parents] * 32 + edge_label
    keys = np.zeros(dictionary.n_terms, dtype=np.int64)
    words = np.asarray(node_term) >= 0
    keys[np.asarray(node_term)[words]] = codes[words]
    return keys


VOCABULARY_SLOTS = MAX_PLAYERS + 1
"""`Vocabularies.tables` and `.codes` always have this many entries: the referee's and at most one per seat."""


class Vocabularies(NamedTuple):
    """The seats' vocabularies as the kernels read them (rules with `vocabularies`, and the challenge variant):
    the last entry of their `tables`."""

    tables: tuple
    """Each distinct vocabulary's `solver_tables` (the referee's first), padded to `VOCABULARY_SLOTS` entries."""
    codes: tuple
    """Each one's `term_keys`: a laid word's cards from its term (padded as `tables`)."""
    seat: np.ndarray
    """Each seat's vocabulary: an index into `tables`."""
    referee: int
    """The referee's: the verdicts."""
    coverage: np.ndarray
    """Each seat's `vocabulary.coverage` (an observation entry)."""


def vocabularies(referee: HandSolver, seat_solvers: Sequence[HandSolver]) -> Vocabularies:
    """The `Vocabularies` of a referee and the seats' solvers."""
    distinct: dict[str, int] = {}
    solvers = []
    for solver in (referee, *seat_solvers):
        if solver.dictionary.identity not in distinct:
            distinct[solver.dictionary.identity] = len(solvers)
            solvers.append(solver)
    tables = [solver_tables(solver) for solver in solvers]
    # One type for all (the kernels index them at run time), whatever dtypes an index was stored with.
    tables = [tuple(np.asarray(a, dtype=r.dtype) for a, r in zip(t, tables[0], strict=True)) for t in tables]
    codes = [term_keys(solver.dictionary) for solver in solvers]
    # One length for all too: a tuple's length is part of its numba type, so a count of distinct vocabularies of
    # its own would compile every kernel that takes `tables` again (minutes). Padded with the referee's (the same
    # arrays, no copy), which no seat's index points at.
    pad = VOCABULARY_SLOTS - len(solvers)
    return Vocabularies(
        tables=tuple(tables + [tables[0]] * pad),
        codes=tuple(codes + [codes[0]] * pad),
        seat=np.asarray([distinct[s.dictionary.identity] for s in seat_solvers], dtype=np.int64),
        referee=0,
        coverage=np.asarray([coverage(s.dictionary, referee.dictionary) for s in seat_solvers], dtype=np.float64),
    )


class BatchGame:
    """N games under one rule set. Call `reset` before playing; see the module docstring."""

    def __init__(self, config: QuiddlerConfig | None = None, num_games: int = 1, solver: HandSolver | None = None):
        if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 1:
            raise ValueError(f"num_games must be a positive integer, got {num_games!r}")
        cfg = self.config = config or QuiddlerConfig()
        self.solver = solver or get_solver(load_dictionary(cfg.dictionary), cfg.min_word_cards)
        self.num_games = int(num_games)
        n = self.num_players = cfg.num_players
        self.challenges = cfg.challenges
        self.seat_words = cfg.challenges or bool(cfg.vocabularies)
        """Whether seats have words of their own (the kernels' `tables` then end with the `Vocabularies`)."""
        self.seat_solvers = rules_seat_solvers(cfg, self.solver)  # as `QuiddlerGame.seat_solvers`
        self.num_actions = num_actions(cfg.layout, cfg.challenges)
        self.offsets = kernels.layout_offsets(n, MAX_CANDIDATES, cfg.num_rounds, cfg.challenges)
        self.rules = rule_array(cfg)
        self.sizes = np.asarray(cfg.hand_sizes, dtype=np.int64)
        self.tables = (*solver_tables(self.solver), new_scratch())  # the word tables, then scratch space
        if self.seat_words:  # then the vocabularies (`batch_kernels.seat_tables`)
            self.tables += (vocabularies(self.solver, self.seat_solvers),)
        layout = observation_layout(n, cfg.challenges)
        self.observation_size = layout.size
        self.obs_starts = np.asarray([s.start for s in layout.slices.values()], dtype=np.int64)
        N = self.num_games
        self.cards = np.zeros((N, int(self.offsets[kernels.L_CARDS_W])), dtype=np.int8)
        self.ints = np.zeros((N, int(self.offsets[kernels.L_INTS_W])), dtype=np.int32)
        self.rng = np.zeros((N, 2), dtype=np.uint64)
        self.go = np.zeros(N, dtype=np.int64)
        self.ints[:, kernels.I_PHASE] = kernels.GAME_OVER
        self.all_games = np.arange(N, dtype=np.int64)
        self.best_memo, self.table_memo = batch_bots.new_memo(N, n)
        # The same arrays, named, as the bots' and the vector env's kernels take them (from Python as a plain
        # tuple, `kernel_args`: see `batch_bots.GameArrays`); built once, as the kernels write the arrays in place
        # and none is ever replaced.
        self.arrays = batch_bots.GameArrays(
            self.cards, self.ints, self.rng, self.go, self.offsets, self.rules, self.sizes, self.tables,
            self.obs_starts, self.best_memo, self.table_memo, np.int64(self.num_actions),
        )  # fmt: skip
        self.kernel_args = tuple(self.arrays)
        self._layouts: dict[tuple, Layout] = {}  # recorded layouts, built once (they repeat across rounds)

    # -- the compiled bots ---------------------------------------------------------------

    def play_bots(self, games: np.ndarray, bots: np.ndarray, moves: np.ndarray) -> None:
        """Move each of `games` while its current seat is a compiled bot (`bots[i, seat]`, `batch_bots` codes,
        -1 for a seat the bots do not play) and it is not over; `moves[i]` counts the moves."""
        batch_bots.play_bots(np.ascontiguousarray(games, dtype=np.int64), bots, moves, self.kernel_args)

    def bot_actions(self, games: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """The move bot `codes[j]` picks in game games[j] now (nothing moves; the bot's generator advances)."""
        games = np.ascontiguousarray(games, dtype=np.int64)
        out = np.empty(games.shape[0], dtype=np.int64)
        batch_bots.bot_actions(games, np.ascontiguousarray(codes, dtype=np.int64), out, self.kernel_args)
        return out

    # -- setting up ------------------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        *,
        games: np.ndarray | None = None,
        seeds: np.ndarray | None = None,
        decks: np.ndarray | None = None,
    ) -> None:
        """Deal new games: every game (or `games`), game i seeded `game_seed(seed, i)`, or from `seeds` (uint64).

        `decks` stacks the decks, as `QuiddlerGame.reset(decks=...)`: faces (len(games), rounds, 118), each
        round's card order top first, for the first `rounds` (at most `num_rounds`) rounds; later rounds are
        shuffled, and reshuffles still draw from each game's generator."""
        games = self.all_games if games is None else np.ascontiguousarray(games, dtype=np.int64)
        if seeds is None:
            if seed is None:
                seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
            seeds = game_seed(seed, games)
        seeds = np.ascontiguousarray(seeds, dtype=np.uint64)
        if seeds.shape != games.shape:
            raise ValueError(f"reset: {seeds.shape[0]} seeds for {games.shape[0]} games")
        stacked = np.zeros(games.shape[0], dtype=np.int32)
        if decks is not None:
            decks = np.asarray(decks)
            if decks.ndim != 3 or decks.shape[0] != games.shape[0] or decks.shape[2] != DECK_SIZE:
                raise ValueError(
                    f"reset: decks of shape {decks.shape}, expected ({games.shape[0]}, rounds, {DECK_SIZE}) "
                    "(games, rounds, cards)"
                )
            if decks.shape[1] > self.config.num_rounds:
                raise ValueError(f"reset: {decks.shape[1]} stacked decks for {self.config.num_rounds} rounds")
            if not (np.sort(decks, axis=2) == np.asarray(new_deck())).all():
                raise ValueError(f"a stacked deck must hold all {DECK_SIZE} cards exactly once each")
            start = int(self.offsets[kernels.L_STACK])
            self.cards[games, start : start + decks[0].size] = decks.reshape(games.shape[0], -1)
            stacked[:] = decks.shape[1]
        kernels.reset_games(
            games, seeds, stacked, self.cards, self.ints, self.rng, self.go, self.offsets, self.rules, self.sizes
        )

    # -- moving -------------------------------------------------------------------------

    def step(self, actions: np.ndarray, games: np.ndarray | None = None) -> None:
        """Play one action in each game (or in each of `games`); nothing moves if any is illegal."""
        games = self.all_games if games is None else np.ascontiguousarray(games, dtype=np.int64)
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        if actions.shape != games.shape:
            raise ValueError(f"step: {actions.size} actions for {games.shape[0]} games")
        bad = kernels.step_games(
            games, actions, self.cards, self.ints, self.rng, self.go, self.offsets, self.rules, self.sizes, self.tables
        )
        if bad >= 0:
            i, a = int(games[bad]), int(actions[bad])
            legal = np.flatnonzero(self.action_masks(np.asarray([i]))[0]).tolist()
            raise IllegalActionError(
                f"illegal action {a} for player {int(self.ints[i, kernels.I_CUR])} in game {i}; legal: {legal or 'none'}"
            )

    def action_masks(
        self, games: np.ndarray | None = None, out: np.ndarray | None = None, *, at_games: bool = False
    ) -> np.ndarray:
        """The current players' legal moves, int8 (len(games), num_actions); all zero in a game that is over.

        `at_games`: game i's row goes to out[i] (out has a row per game of the batch), the others stay as they are.
        """
        games = self.all_games if games is None else np.ascontiguousarray(games, dtype=np.int64)
        if at_games:
            kernels.masks_at(games, out, self.cards, self.ints, self.go, self.offsets, self.rules, self.tables)
            return out
        if out is None:
            out = np.empty((games.shape[0], self.num_actions), dtype=np.int8)
        kernels.masks(games, out, self.cards, self.ints, self.go, self.offsets, self.rules, self.tables)
        return out

    def observe(
        self,
        players: np.ndarray | None = None,
        games: np.ndarray | None = None,
        out: np.ndarray | None = None,
        *,
        at_games: bool = False,
    ) -> np.ndarray:
        """Each game's observation for `players` (default: its current player), float32 (len(games), size).

        `at_games`: players[i] is game i's observer and its row goes to out[i] (both a row per game of the batch).
        """
        games = self.all_games if games is None else np.ascontiguousarray(games, dtype=np.int64)
        if at_games:
            kernels.observe_at(
                games, np.ascontiguousarray(players, dtype=np.int64), out, self.cards, self.ints, self.offsets, self.rules,
                self.obs_starts, self.tables,
            )  # fmt: skip
            return out
        players = self.current_player[games] if players is None else np.ascontiguousarray(players, dtype=np.int64)
        if out is None:
            out = np.empty((games.shape[0], self.observation_size), dtype=np.float32)
        kernels.observe(
            games,
            players.astype(np.int64),
            out,
            self.cards,
            self.ints,
            self.offsets,
            self.rules,
            self.obs_starts,
            self.tables,
        )
        return out

    # -- the state, by name ---------------------------------------------------------------

    def _column(self, index: int) -> np.ndarray:
        return self.ints[:, index]

    def _block(self, name: int, width: int) -> np.ndarray:
        start = int(self.offsets[name])
        return self.ints[:, start : start + width]

    @property
    def current_player(self) -> np.ndarray:
        return self._column(kernels.I_CUR).astype(np.int64)

    @property
    def phase(self) -> np.ndarray:
        """Each game's `game.Phase` value."""
        return self._column(kernels.I_PHASE)

    @property
    def is_over(self) -> np.ndarray:
        return self._column(kernels.I_PHASE) == kernels.GAME_OVER

    @property
    def round(self) -> np.ndarray:
        return self._column(kernels.I_ROUND)

    @property
    def rounds_completed(self) -> np.ndarray:
        return self._column(kernels.I_ROUNDS_DONE)

    @property
    def went_out(self) -> np.ndarray:
        """The seat that went out this round, -1 if nobody."""
        return self._column(kernels.I_WENT_OUT)

    @property
    def totals(self) -> np.ndarray:
        """(N, players) running totals."""
        return self._block(kernels.L_TOTALS, self.num_players)

    @property
    def round_scores(self) -> np.ndarray:
        """(N, players) each player's score in the game's last scored round."""
        return self._block(kernels.L_ROUND_SCORE, self.num_players)

    @property
    def bonuses(self) -> np.ndarray:
        """(N, players) the bonus points each player won in the game's last scored round."""
        return self._block(kernels.L_BONUS, self.num_players)

    @property
    def laid_figures(self) -> np.ndarray:
        """(N, players, 5) the last laid layouts: score, longest word, words, card points used, unused."""
        return self._block(kernels.L_LAID_FIG, self.num_players * kernels.FIG).reshape(
            -1, self.num_players, kernels.FIG
        )

    @property
    def gains(self) -> np.ndarray:
        """(N, players) what round ends added to the totals since `take_gains` last ran (its reward source)."""
        return self._block(kernels.L_GAIN, self.num_players)

    def take_gains(self, games: np.ndarray | None = None) -> np.ndarray:
        """The gains of `games` (all by default), and zero them."""
        games = self.all_games if games is None else np.ascontiguousarray(games, dtype=np.int64)
        out = np.empty((games.shape[0], self.num_players), dtype=np.int64)
        kernels.take_gains(games, out, self.ints, self.offsets)
        return out

    def hands(self) -> np.ndarray:
        """(N, players, 31) every hand (not for policies: they see only `observe`)."""
        start = int(self.offsets[kernels.L_HANDS])
        return self.cards[:, start : start + self.num_players * kernels.FACES].reshape(
            -1, self.num_players, kernels.FACES
        )

    @property
    def draw_pile_size(self) -> np.ndarray:
        return self._column(kernels.I_DRAW_LEN)

    @property
    def reshuffles(self) -> np.ndarray:
        return self._column(kernels.I_RESHUFFLES)

    # -- the laid words, the round results and one game as a `QuiddlerGame` ---------------------------

    def _layout(self, i: int, rec: int, urec: int, seat: int = 0, bluff: bool = False) -> Layout:
        """The layout recorded at ints offset rec (`batch_kernels.REC`) and cards offset urec of game i, by `seat`'s
        vocabulary; `bluff`: the recorded layout with its unused cards claimed as a word (`laying.best_bluff`)."""
        record = self.ints[i, rec : rec + kernels.REC].tolist()
        unused_faces = self.cards[i, urec : urec + kernels.UREC].tolist()
        key = (
            *record[kernels.RC_USED : kernels.RC_UNUSED + 1],
            *record[kernels.RC_TERMS : kernels.RC_TERMS + record[kernels.RC_N_TERMS]],
            -1,
        )
        key += tuple(unused_faces[1 : 1 + unused_faces[0]])
        solver = self.seat_solvers[seat]
        if self.seat_words:
            key += (solver.dictionary.identity, bluff)
        layout = self._layouts.get(key)
        if layout is None:
            if len(self._layouts) >= _MEMO_LIMIT:
                self._layouts.clear()
            used, unused = record[kernels.RC_USED], record[kernels.RC_UNUSED]
            terms = record[kernels.RC_TERMS : kernels.RC_TERMS + record[kernels.RC_N_TERMS]]
            layout = solver.recorded_layout(used, terms, unused_faces[1 : 1 + unused_faces[0]], used + unused)
            if bluff:
                layout = claim_unused(layout)
            self._layouts[key] = layout
        return layout

    def _laid_layout(self, i: int, q: int) -> Layout:
        """The layout player q of game i laid last."""
        rec, urec = (
            int(self.offsets[kernels.L_LAID_REC]) + q * kernels.REC,
            int(self.offsets[kernels.L_LAID_UNUSED]) + q * kernels.UREC,
        )
        bluff = self.challenges and bool(self.cards[i, int(self.offsets[kernels.L_LAID_BLUFF]) + q])
        return self._layout(i, rec, urec, q, bluff)

    def laid(self, i: int) -> list[Layout | None]:
        """Game i's layouts laid this round, by seat (None: not laid yet), as `QuiddlerGame.laid`."""
        out: list[Layout | None] = [None] * self.num_players
        for q in self.lay_order(i):
            out[q] = self._laid_layout(i, q)
        return out

    def challenge_log(self, i: int, seats: Sequence[int] | None = None) -> list[Challenge]:
        """The challenges of game i's words laid this round (of `seats`' words), in order, as
        `QuiddlerGame.challenge_log` (after the round, those of the round until the next challenge phase)."""
        if not self.challenges:
            return []
        L, W = self.offsets, kernels.WORDS
        made = []
        for q in self.lay_order(i) if seats is None else seats:
            by = self.cards[i, L[kernels.L_WORD_BY] + q * W : L[kernels.L_WORD_BY] + (q + 1) * W].tolist()
            layout = None
            for j, challenger in enumerate(by):
                if challenger:
                    layout = layout or self._laid_layout(i, q)
                    failed = bool(self.cards[i, L[kernels.L_WORD_FAILED] + q * W + j])
                    order = int(self.cards[i, L[kernels.L_WORD_ORDER] + q * W + j])
                    challenge = Challenge(
                        challenger - 1, q, j, layout.spelled[j], word_points(layout.words[j]), not failed
                    )
                    made.append((order, challenge))
        return [challenge for _, challenge in sorted(made, key=lambda item: item[0])]

    def lay_order(self, i: int) -> list[int]:
        """The seats of game i that laid this round, in laying order."""
        start = int(self.offsets[kernels.L_LAY_ORDER])
        return self.cards[i, start : start + self.ints[i, kernels.I_N_LAID]].tolist()

    def candidates(self, i: int) -> tuple[Layout, ...]:
        """In game i's lay phase (`layout: choose`): its current player's candidates, as `QuiddlerGame.candidates`."""
        rec, urec = int(self.offsets[kernels.L_CAND_REC]), int(self.offsets[kernels.L_CAND_UNUSED])
        p, bluff = int(self.ints[i, kernels.I_CUR]), self._candidate_bluff(i)
        return tuple(
            self._layout(i, rec + k * kernels.REC, urec + k * kernels.UREC, p, k == bluff)
            for k in range(self.ints[i, kernels.I_CAND_N])
        )

    def _candidate_bluff(self, i: int) -> int | None:
        """In game i's lay phase with bluffing: the index of the bluff among the candidates (None without one)."""
        if (
            not self.challenges
            or self.ints[i, kernels.I_PHASE] != kernels.LAY
            or self.ints[i, kernels.I_CAND_BLUFF] < 0
        ):
            return None
        return int(self.ints[i, kernels.I_CAND_BLUFF])

    def round_results(self, i: int) -> list[RoundResult]:
        """The results of game i's last scored round, as `scoring.score_round` gives them (read them before any
        player of the next round lays)."""
        v = self.ints[i]
        base = int(self.offsets[kernels.L_LAID_REC])
        bv = self.config.bonus_value
        n = self.num_players
        layouts = [self._laid_layout(i, p) for p in range(n)]
        scores = None
        if self.challenges:  # every seat laid in the round, so its words' challenges are still there
            went_out = None if v[kernels.I_LAST_OUT] < 0 else int(v[kernels.I_LAST_OUT])
            scores, layouts = challenge_scores(layouts, self.challenge_log(i, range(n)), self.config, went_out)
        out = []
        for p in range(n):
            rec = base + p * kernels.REC
            lay = layouts[p]
            bits = int(v[rec + kernels.RC_BONUS_BITS])
            bonuses = {name: bv for name in bonuses_in_play(self.config, self.num_players) if bits & _BONUS_BIT[name]}
            out.append(
                RoundResult.of_layout(
                    p,
                    lay,
                    bonuses=bonuses,
                    round_score=int(v[int(self.offsets[kernels.L_ROUND_SCORE]) + p]),
                    total=int(v[int(self.offsets[kernels.L_TOTALS]) + p]),
                    went_out=int(v[kernels.I_LAST_OUT]) == p,
                    lay_position=int(v[rec + kernels.RC_POSITION]),
                    challenge=None if scores is None else scores[p],
                )
            )
        return out

    def game(
        self,
        i: int,
        round_history: Sequence[Sequence[RoundResult]] = (),
        challenge_history: Sequence[Sequence[Challenge]] = (),
    ) -> QuiddlerGame:
        """Game i as a `QuiddlerGame` (a copy: changing one changes nothing in the other). It plays on exactly as
        game i would (its deal generator is a copy of game i's); `round_history` (and `challenge_history`) are
        the rounds before, which the batch does not keep."""
        c, v, L = self.cards[i], self.ints[i], self.offsets
        n = self.num_players
        game = QuiddlerGame(self.config, self.solver)
        rng = StreamGenerator(0)
        rng.state[0] = self.rng[i]
        game.rng = rng
        stacked = int(v[kernels.I_STACKED])
        stack = c[L[kernels.L_STACK] : L[kernels.L_STACK] + stacked * DECK_SIZE].reshape(stacked, DECK_SIZE)
        game._decks = [row.tolist() for row in stack] if stacked else None
        game.totals = self.totals[i].tolist()
        game.round = int(v[kernels.I_ROUND])
        game.dealer = int(v[kernels.I_DEALER])
        game.round_history = [list(results) for results in round_history]
        game.last_round_results = game.round_history[-1] if game.round_history else None
        game.rounds_completed = int(v[kernels.I_ROUNDS_DONE])
        game.draw_pile = c[L[kernels.L_DRAW] : L[kernels.L_DRAW] + v[kernels.I_DRAW_LEN]].tolist()
        game.discard_pile = c[L[kernels.L_DISC] : L[kernels.L_DISC] + v[kernels.I_DISC_LEN]].tolist()
        game.discard_counts = c[L[kernels.L_DISC_COUNTS] : L[kernels.L_DISC_COUNTS] + kernels.FACES].tolist()
        game.hand_size = int(v[kernels.I_HAND_SIZE])
        game.hands = self.hands()[i].tolist()
        game.known_taken = (
            c[L[kernels.L_KNOWN] : L[kernels.L_KNOWN] + n * kernels.FACES].reshape(n, kernels.FACES).tolist()
        )
        game.current_player = int(v[kernels.I_CUR])
        game.phase = Phase(int(v[kernels.I_PHASE]))
        game.went_out = None if v[kernels.I_WENT_OUT] < 0 else int(v[kernels.I_WENT_OUT])
        game.turns_this_round = int(v[kernels.I_TURNS])
        game.reshuffles = int(v[kernels.I_RESHUFFLES])
        game.last_action = None
        game._go_out_bits = None
        game.laid = self.laid(i)
        game.lay_order = self.lay_order(i)
        game.candidates = self.candidates(i) if game.phase == Phase.LAY else ()
        game._lay_queue = c[L[kernels.L_QUEUE] + v[kernels.I_Q_HEAD] : L[kernels.L_QUEUE] + v[kernels.I_Q_LEN]].tolist()
        game.challenge_history = [list(challenges) for challenges in challenge_history]
        game.challenge_log = self.challenge_log(i)
        game.candidate_bluff = self._candidate_bluff(i)
        game._challenge_queue = []
        if game.phase == Phase.CHALLENGE:
            head, left = int(v[kernels.I_CHALLENGER]), int(v[kernels.I_CHALLENGERS_LEFT])
            game._challenge_queue = [(head + k) % n for k in range(left)]
        return game

    def load(self, i: int, game: QuiddlerGame, seed: int = 0) -> None:
        """Write `game`'s state into row i: a position to play on from (search, tests), in a draw or discard
        phase before anyone has laid. Its round must be one of this batch's rounds with the same hand size;
        row i's generators are seeded `seed` (`game_seed` form), so play on from it draws its own cards."""
        if game.phase not in (Phase.DRAW, Phase.DISCARD) or game.lay_order or game.went_out is not None:
            raise ValueError("load: only a draw or discard phase before anyone went out or laid can be loaded")
        if game.num_players != self.num_players or not 0 <= game.round < self.config.num_rounds:
            raise ValueError(f"load: a game of {game.num_players} players in round {game.round + 1} does not fit")
        if game.hand_size != self.config.hand_sizes[game.round]:
            raise ValueError(f"load: round {game.round + 1} deals {self.config.hand_sizes[game.round]} cards here")
        if game.card_count() != DECK_SIZE:
            raise ValueError(f"load: the game holds {game.card_count()} cards, not {DECK_SIZE}")
        n, L, F = self.num_players, self.offsets, kernels.FACES
        c = self.cards[i]
        v = self.ints[i]
        c[:] = 0
        v[:] = 0
        c[L[kernels.L_HANDS] : L[kernels.L_HANDS] + n * F] = np.asarray(game.hands).reshape(-1)
        c[L[kernels.L_KNOWN] : L[kernels.L_KNOWN] + n * F] = np.asarray(game.known_taken).reshape(-1)
        c[L[kernels.L_DISC_COUNTS] : L[kernels.L_DISC_COUNTS] + F] = game.discard_counts
        c[L[kernels.L_DRAW] : L[kernels.L_DRAW] + len(game.draw_pile)] = game.draw_pile
        c[L[kernels.L_DISC] : L[kernels.L_DISC] + len(game.discard_pile)] = game.discard_pile
        for index, value in (
            (kernels.I_ROUND, game.round),
            (kernels.I_DEALER, game.dealer),
            (kernels.I_CUR, game.current_player),
            (kernels.I_PHASE, int(game.phase)),
            (kernels.I_WENT_OUT, -1),
            (kernels.I_TURNS, game.turns_this_round),
            (kernels.I_RESHUFFLES, game.reshuffles),
            (kernels.I_DRAW_LEN, len(game.draw_pile)),
            (kernels.I_DISC_LEN, len(game.discard_pile)),
            (kernels.I_HAND_SIZE, game.hand_size),
            (kernels.I_ROUNDS_DONE, game.rounds_completed),
            (kernels.I_LAST_OUT, -1),
        ):
            v[index] = value
        v[L[kernels.L_TOTALS] : L[kernels.L_TOTALS] + n] = game.totals
        self.rng[i, 0] = np.uint64(int(seed) % _U64)
        self.rng[i, 1] = _bot_stream(np.uint64(int(seed) % _U64))
        self.go[i] = kernels.GO_UNKNOWN if game.phase == Phase.DISCARD else 0

    def nbytes(self) -> int:
        """Bytes held by the state arrays."""
        return self.cards.nbytes + self.ints.nbytes + self.rng.nbytes + self.go.nbytes
