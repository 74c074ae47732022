"""The observation vector: what one seat may see, in named slices.

Every env (AEC, single-agent) and every bot uses this one encoding. Opponents are
listed in seat order starting with the next seat clockwise ("relative seats"), so
a policy is the same whichever seat it plays. Nothing private to another player is
encoded: opponents' hands appear only as the cards they publicly took from the
discard pile and must still hold; the draw pile only as its size.

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

A player who has not laid shows nothing in the laid slices; the candidates are the
observing player's own, and only in its lay phase.

With `challenges: true` these slices follow (W = `laying.MAX_LAID_WORDS` = 11 word slots per seat):

| slice | size | content | scale |
|---|---|---|---|
| `seat` | n | own seat, one-hot (vocabularies are per seat, so a seat knows which it has) | 0/1 |
| `vocabulary_coverage` | 1 | own vocabulary's size against the referee's list (at most 1) | ratio |
| `challenging` | 1 | 1 in own turn of the challenge phase | 0/1 |
| `candidate_bluff` | K | in the lay phase: 1 at the candidate that is the bluff (`laying.best_bluff`) | 0/1 |
| `word_cards` | 31*W*n | per seat (own first, then relative seats), per laid word in its order: the word's cards | raw count |
| `word_figures` | 2*W*n | each laid word's card points and letters | / 100, / 22 |
| `word_known` | W*n | the word is in the observing seat's own vocabulary (its knowledge, not the referee's) | 0/1 |
| `word_challenged` | W*n | the word has been challenged this round | 0/1 |
| `word_failed` | W*n | the word was challenged and the referee rejected it | 0/1 |
| `challenge_record` | 3*n | per seat (own first): challenges made, won and lost this round | raw count |

The referee's verdict on a word appears only once the word is challenged.
"""

from __future__ import annotations

import numpy as np

from .cards import COUNTS, DECK_SIZE, FACE_INDEX, NUM_FACES, POINTS
from .config import MAX_HAND_SIZE
from .game import Phase, QuiddlerGame
from .laying import MAX_LAID_WORDS
from .observation_slices import (  # the slice table, declared in core so the batched engine shares it
    LETTERS_SCALE,
    TOTAL_SCALE,
    WORDS_SCALE,
    ObservationLayout,
    observation_layout,
)
from .solver import Layout

__all__ = [
    "LETTERS_SCALE",
    "TOTAL_SCALE",
    "WORDS_SCALE",
    "ObservationLayout",
    "encode_observation",
    "layout_counts",
    "layout_figures",
    "observation_layout",
    "turns_fraction",
]

_DECK_COUNTS = np.asarray(COUNTS, dtype=np.float32)


def encode_observation(game: QuiddlerGame, player: int) -> np.ndarray:
    """The float32 observation vector of `player` in the current state of `game`."""
    n = game.num_players
    layout = observation_layout(n, game.challenges)
    s = layout.slices
    obs = np.zeros(layout.size, dtype=np.float32)
    hand = game.hands[player]
    obs[s["hand"]] = hand
    if game.discard_pile:
        obs[s["discard_top"].start + game.discard_pile[-1]] = 1.0
    obs[s["hand_size"]] = game.hand_size / MAX_HAND_SIZE
    if game.phase in (Phase.DRAW, Phase.DISCARD):
        obs[s["phase"].start + int(game.phase)] = 1.0
    elif game.phase == Phase.LAY and game.current_player == player:
        obs[s["laying"]] = 1.0
        start = s["candidates"].start
        for k, layout in enumerate(game.candidates):
            obs[start + 3 * k : start + 3 * k + 3] = layout_figures(layout)
    if game.went_out is not None:
        obs[s["final_turn"]] = 1.0
        obs[s["went_out"].start + (game.went_out - player) % n] = 1.0
    obs[s["discard_pile"]] = game.discard_counts
    taken = s["opponent_taken"].start
    known = np.zeros(NUM_FACES, dtype=np.float32)
    laid_cards, laid_figures, laid = s["laid_cards"].start, s["laid_figures"].start, s["laid"].start
    for seat in game.lay_order:  # only those who laid (most steps: nobody yet)
        k = (seat - player) % n
        layout = game.laid[seat]
        if layout is not None:
            obs[laid + k] = 1.0
            obs[laid_cards + k * NUM_FACES : laid_cards + (k + 1) * NUM_FACES] = layout_counts(layout)
            obs[laid_figures + 3 * k : laid_figures + 3 * k + 3] = layout_figures(layout)
    for k in range(1, n):
        seat = (player + k) % n
        row = game.known_taken[seat]
        obs[taken + (k - 1) * NUM_FACES : taken + k * NUM_FACES] = row
        if game.laid[seat] is None:
            known += row
        else:  # cards it surely holds: those it took from the discard pile and those it laid (they may overlap)
            known += np.maximum(row, obs[laid_cards + k * NUM_FACES : laid_cards + (k + 1) * NUM_FACES])
    unseen = _DECK_COUNTS - obs[s["hand"]] - obs[s["discard_pile"]] - known
    obs[s["unseen"]] = np.maximum(unseen, 0.0)
    obs[s["draw_pile_size"]] = len(game.draw_pile) / DECK_SIZE
    tot = s["totals"].start
    for k in range(n):
        obs[tot + k] = game.totals[(player + k) % n] / TOTAL_SCALE
    obs[s["round"]] = (game.round + 1) / game.config.num_rounds
    obs[s["seat_from_dealer"].start + (player - game.dealer) % n] = 1.0
    obs[s["turns_this_round"]] = turns_fraction(game.turns_this_round, game.config.turn_cap, n)
    if game.challenges:
        _encode_challenges(game, player, obs, s)
    return obs


def _encode_challenges(game: QuiddlerGame, player: int, obs: np.ndarray, s: dict[str, slice]) -> None:
    """The challenge variant's slices (see the module's table)."""
    n, w = game.num_players, MAX_LAID_WORDS
    obs[s["seat"].start + player] = 1.0
    obs[s["vocabulary_coverage"]] = game.vocabulary_coverage(player)
    if game.phase == Phase.CHALLENGE and game.current_player == player:
        obs[s["challenging"]] = 1.0
    if game.phase == Phase.LAY and game.current_player == player and game.candidate_bluff is not None:
        obs[s["candidate_bluff"].start + game.candidate_bluff] = 1.0
    known = game.seat_solvers[player].dictionary
    verdicts = {(c.player, c.word): c.valid for c in game.challenge_log}
    for seat in game.lay_order:
        k = (seat - player) % n
        for j, word in enumerate(game.laid[seat].words):
            slot = k * w + j
            cards = [FACE_INDEX[f] for f in word]
            start = s["word_cards"].start + slot * NUM_FACES
            np.add.at(obs[start : start + NUM_FACES], cards, 1.0)
            figures = s["word_figures"].start + 2 * slot
            obs[figures] = sum(POINTS[f] for f in cards) / TOTAL_SCALE
            obs[figures + 1] = len(game.laid[seat].spelled[j]) / LETTERS_SCALE
            obs[s["word_known"].start + slot] = float(known.lookup(cards) >= 0)
            if (seat, j) in verdicts:
                obs[s["word_challenged"].start + slot] = 1.0
                obs[s["word_failed"].start + slot] = float(not verdicts[seat, j])
    record = s["challenge_record"].start
    for c in game.challenge_log:
        k = (c.challenger - player) % n
        obs[record + 3 * k] += 1.0
        obs[record + 3 * k + (2 if c.valid else 1)] += 1.0


def plain_seats(observations: np.ndarray, num_players: int, num_rounds: int) -> np.ndarray:
    """The observing seats of plain observations (rows; no `seat` slice) of a game of `num_players` and
    `num_rounds`: the first round's dealer is seat n - 1 and the deal moves one seat left each round, so the round
    (`round`) and the seat's place from the dealer (`seat_from_dealer`) name it. int64 (rows,)."""
    obs = np.asarray(observations).reshape(-1, observation_layout(num_players).size)
    s = observation_layout(num_players).slices
    rounds = np.maximum(np.rint(obs[:, s["round"]][:, 0] * num_rounds).astype(np.int64) - 1, 0)
    return (num_players - 1 + rounds + np.argmax(obs[:, s["seat_from_dealer"]], axis=1)) % num_players


def turns_fraction(turns: int, turn_cap: int | None, num_players: int) -> float:
    """The `turns_this_round` entry: the share of the turn cap's turns (every seat's) played, capped at 1; 0 without
    a cap. The final turns after a late go-out run past the cap (a go-out on the cap's last turn but one leaves
    n - 1 of them), where the cap no longer matters: the entry stays at 1, inside the observation space, and
    below the cap it reads as it always did (`batch_kernels.observe_row` encodes it the same way)."""
    if not turn_cap:
        return 0.0
    return min(turns / (turn_cap * num_players), 1.0)


def layout_counts(layout: Layout) -> np.ndarray:
    """The cards a layout lays in words, as 31 face counts."""
    counts = np.zeros(NUM_FACES, dtype=np.float32)
    for word in layout.words:
        for face in word:
            counts[FACE_INDEX[face]] += 1
    return counts


def layout_figures(layout: Layout) -> tuple[float, float, float]:
    """A layout's three figures as the observation scales them: card points, longest word, words."""
    return (layout.score / TOTAL_SCALE, layout.longest / LETTERS_SCALE, layout.n_words / WORDS_SCALE)
