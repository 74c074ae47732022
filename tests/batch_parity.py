"""Replaying games in both engines, move by move: the single-game `QuiddlerGame` and the batched `BatchGame`.

Used by `tests/test_batch_parity.py` (a few hundred games per rule set) and by
`benchmarks/parity.py` (100,000 games and more). Both engines deal from the same game
seed (`StreamGenerator`); the moves are random legal ones from the replay's own
generator, shy of going out (so rounds last, piles reshuffle and turn caps come), and
after every move both must show the same legal moves, the same observation for every
seat, the same state (`BatchGame.game`, the batch game as a `QuiddlerGame`), and at every
round end the same round results (`BatchGame.round_results`: words, bonuses, scores, totals).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quiddler_env.core import actions as A
from quiddler_env.core.batch import BatchGame, StreamGenerator, game_seed
from quiddler_env.core.cards import new_deck
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.observation import encode_observation

RULE_SETS: dict[str, dict] = {
    "default": {},
    "three_players": {"num_players": 3},
    "four_choose": {"num_players": 4, "layout": "choose"},
    "two_choose_both": {"layout": "choose", "two_player_bonus": "both"},
    "one_card_words_forced": {"min_word_cards": 1, "go_out": "forced", "num_players": 3},
    "short_cap_total_floor": {"turn_cap": 3, "score_floor": "total", "two_player_bonus": "most_words"},
    "no_floor_negative_bonus": {"score_floor": "none", "bonus_value": -5, "num_players": 5},
    "eight_big_hands": {"num_players": 8, "hand_sizes": [11, 9, 2], "turn_cap": None},
    "two_long_rounds": {"hand_sizes": [10, 11], "turn_cap": None},
}
"""Rule sets the replay covers: every option of `QuiddlerConfig` that changes how a game moves or scores."""
GO_OUT_CHANCE: dict[str, float] = {"eight_big_hands": 0.01, "two_long_rounds": 0.01}
"""How often a replay takes a legal go-out (default 0.3); rarely at eight players, so their piles run out."""


@dataclass
class ParityReport:
    games: int = 0
    moves: int = 0
    rounds: int = 0
    reshuffles: int = 0
    turn_caps: int = 0
    bluffs: int = 0
    """Bluffs laid (the challenge variant with `layout: choose`)."""
    challenges: int = 0
    failed: int = 0
    """Of the challenges, the words that failed."""


class ParityError(AssertionError):
    pass


STATE_FIELDS = (
    "hands", "draw_pile", "discard_pile", "discard_counts", "known_taken", "totals", "round", "dealer",
    "current_player", "phase", "went_out", "turns_this_round", "reshuffles", "hand_size", "laid", "lay_order",
    "candidates", "_lay_queue", "rounds_completed",
)  # fmt: skip
"""The `QuiddlerGame` fields a batch game's `QuiddlerGame` copy must match."""
CHALLENGE_FIELDS = ("challenge_log", "_challenge_queue", "candidate_bluff")
"""And with `challenges: true`, these."""


def state_differences(want: QuiddlerGame, got: QuiddlerGame) -> list[str]:
    """The names of the `STATE_FIELDS` (and `CHALLENGE_FIELDS` in the variant) on which two games differ."""
    fields = STATE_FIELDS + (CHALLENGE_FIELDS if want.challenges else ())
    return [name for name in fields if getattr(want, name) != getattr(got, name)]


def replay(
    config: QuiddlerConfig,
    seed: int,
    games: int,
    *,
    go_out_chance: float = 0.3,
    stacked: bool = False,
    every_seat: bool = True,
) -> ParityReport:
    """Replay `games` random games of `config` in both engines (batch game i is seeded `game_seed(seed, i)`);
    `stacked`: every round deals a stacked deck (drawn from the replay's generator), as tournaments deal.
    `every_seat`: compare every seat's observation after every move (else the mover's after every move, and
    every seat's at the first move of each round, in the lay phase and at the end)."""
    report = ParityReport()
    rng = np.random.default_rng(seed)
    batch = BatchGame(config, num_games=games)
    decks = None
    if stacked:
        deck = np.asarray(new_deck(), dtype=np.int8)
        decks = np.stack([[rng.permutation(deck) for _ in range(config.num_rounds)] for _ in range(games)])
    batch.reset(seed=seed, decks=decks)
    single = QuiddlerGame(config, solver=batch.solver)
    n = config.num_players
    for i in range(games):
        game = np.asarray([i])
        single.reset(rng=StreamGenerator(game_seed(seed, i)), decks=None if decks is None else decks[i].tolist())
        moves = 0
        while not single.is_over:
            mask = single.legal_action_mask()
            got = batch.action_masks(game)[0]
            if not np.array_equal(mask, got):
                raise ParityError(
                    f"game {i} move {moves}: masks differ: {np.flatnonzero(mask)} vs {np.flatnonzero(got)}"
                )
            seats = range(n) if every_seat or single.turns_this_round == 0 or mask[A.LAY_BASE :].any() else ()
            if seats:
                differ = state_differences(single, batch.game(i))
                if differ:
                    raise ParityError(f"game {i} move {moves}: the state differs in {differ}")
            for p in seats or (single.current_player,):
                want = encode_observation(single, p)
                obs = batch.observe(np.asarray([p]), game)[0]
                if not np.array_equal(want, obs):
                    raise ParityError(
                        f"game {i} move {moves}: seat {p}'s observation differs at {np.flatnonzero(want != obs)}"
                    )
            legal = np.flatnonzero(mask)
            plain = legal[legal < A.GO_OUT_BASE] if rng.random() > go_out_chance else legal
            action = int((plain if plain.size else legal)[rng.integers((plain if plain.size else legal).size)])
            report.reshuffles += action == A.DRAW_PILE and not single.draw_pile
            report.bluffs += single.candidate_bluff is not None and action == A.lay(single.candidate_bluff)
            results = single.step(action)
            batch.step(np.asarray([action]), game)
            moves += 1
            if action >= A.CHALLENGE_BASE:
                report.challenges += 1
                report.failed += not (single.challenge_log or single.challenge_history[-1])[-1].valid
            if results is not None:
                report.rounds += 1
                report.turn_caps += not any(r.went_out for r in results)  # nobody went out: the cap came
                want = [(r.round_score, sum(r.bonuses.values()), r.total) for r in results]
                got_round = list(
                    zip(
                        batch.round_scores[i].tolist(), batch.bonuses[i].tolist(), batch.totals[i].tolist(), strict=True
                    )
                )
                if want != got_round:
                    raise ParityError(f"game {i} round {report.rounds}: results differ: {want} vs {got_round}")
                if batch.round_results(i) != results:
                    raise ParityError(f"game {i} round {report.rounds}: round results differ: {results}")
        for p in range(n):  # the final state, as every seat sees it
            if not np.array_equal(encode_observation(single, p), batch.observe(np.asarray([p]), game)[0]):
                raise ParityError(f"game {i}: seat {p}'s final observation differs")
        if single.totals != batch.totals[i].tolist() or not batch.is_over[i]:
            raise ParityError(f"game {i}: totals differ at the end: {single.totals} vs {batch.totals[i].tolist()}")
        report.games += 1
        report.moves += moves
    return report


def vector_env_phases(env, steps: int, seed: int = 0) -> set[int]:
    """Play a `QuiddlerVectorEnv` by random legal moves for `steps` steps, asserting at each that every learner's
    observation and mask are the reference's (`encode_observation` of its game as a `QuiddlerGame`); the phases
    the learners were checked in."""
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    checked: set[int] = set()
    for _ in range(steps):
        masks = env.action_masks()
        for i in np.flatnonzero(~env.games.is_over).tolist():
            game, seat = env.games.game(i), int(env.seats[i])
            assert game.current_player == seat
            assert np.array_equal(encode_observation(game, seat), obs[i])
            assert np.array_equal(game.legal_action_mask().astype(bool), masks[i].astype(bool))
            checked.add(int(game.phase))
        obs, *_ = env.step(np.asarray([rng.choice(np.flatnonzero(m)) for m in masks]))
    return checked
