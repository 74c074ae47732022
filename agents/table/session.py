"""`TableGame`: one game at the browser table, kept by the server, which is its only authority.

A table seats one human and agent specs (`greedy`, `expert`, `search`, `policy:PATH`,
`zoo:NAME`, ...). The server owns the `QuiddlerGame`: the page only asks for the
human's view (`view()`) and sends moves (`move(seat, action)`); a move out of turn or
not legal now raises `MoveRefused` and changes nothing. After each human move the
agents play up to the human's next move (or the game's end), and every move lands in
the record.

The record is the saved game: the rules, the deal seed (`evaluation.schedule.deal_cards`,
the decks of every round and the reshuffle stream, as `evaluate.py --save-games` deals),
the seats and every move, the same fields as a line of `games.jsonl`, so the replay viewer
and `evaluate.py --replay` read both. `TableGame.from_record` replays the moves to rebuild
the game exactly; the agents are made again from their specs and seeds, so an agent with a
memory of the game (none of the shipped bots keeps one beyond its generator) starts afresh.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from quiddler_env.core import actions as A
from quiddler_env.core.cards import FACES, POINTS
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import Phase, QuiddlerGame
from quiddler_env.core.observation import encode_observation, observation_layout
from quiddler_env.core.scoring import RoundResult

from ..arena import seat_solver_of
from ..evaluation.schedule import agent_seed, deal_cards
from ..human import move_name
from ..registry import make, one_torch_thread

RECORD_FORMAT = "quiddler-table-1"
HUMAN = "human"


class MoveRefused(ValueError):
    """A move the server will not play (out of turn, not legal, game over); the game is unchanged."""


def _cards(counts: Sequence[int]) -> list[dict[str, Any]]:
    return [{"face": FACES[f], "points": POINTS[f]} for f, c in enumerate(counts) for _ in range(int(c))]


def _kind(action: int) -> dict[str, Any]:
    """What a move is, for the page's cards: its kind and, for a discard, the card's face."""
    if action == A.DRAW_PILE:
        return {"kind": "draw"}
    if action == A.TAKE_DISCARD:
        return {"kind": "take"}
    if A.DISCARD_BASE <= action < A.GO_OUT_BASE:
        return {"kind": "discard", "face": FACES[action - A.DISCARD_BASE]}
    if A.GO_OUT_BASE <= action < A.NUM_ACTIONS:
        return {"kind": "go_out", "face": FACES[action - A.GO_OUT_BASE]}
    if A.LAY_BASE <= action < A.PASS:
        return {"kind": "lay", "candidate": action - A.LAY_BASE}
    return {"kind": "pass" if action == A.PASS else "challenge"}


def _result(result: RoundResult) -> dict[str, Any]:
    return result.to_dict() | {"spelled": [w.upper() for w in result.spelled]}


class TableGame:
    """One game: a human seat and agents, the rules, the deal seed; see the module docstring."""

    def __init__(self, seats: Sequence[str], rules: QuiddlerConfig | None = None, seed: int = 0) -> None:
        seats = [str(s) for s in seats]
        if seats.count(HUMAN) != 1:
            raise ValueError(f"a table seats exactly one {HUMAN!r}, got seats {seats}")
        config = dataclasses.replace(rules or QuiddlerConfig(), num_players=len(seats))  # checked by QuiddlerConfig
        self.config = config
        self.seats = seats
        self.human = seats.index(HUMAN)
        self.seed = int(seed)
        self.agents: dict[int, Any] = {}
        one_torch_thread(seats)  # a seat that plays a network answers in milliseconds, not tens of them
        for p, spec in enumerate(seats):
            if p != self.human:
                agent = make(spec, seed=agent_seed(self.seed, 0, p), config=config)
                self.agents[p] = agent
        self._deal()

    def _deal(self) -> None:
        """The game as dealt, before any move (the deal comes from the seed alone)."""
        decks, rng = deal_cards(self.seed, self.config.num_rounds)
        self._decks = decks
        self.game = QuiddlerGame(self.config)
        if not self.game.seat_words:  # a bot's level: the engine lays only its words (rules without vocabularies)
            self.game.set_seat_solvers([seat_solver_of(self.agents.get(p)) for p in range(self.config.num_players)])
        self.game.reset(rng=rng, decks=decks)
        self.actions: list[tuple[int, int]] = []
        self.log: list[dict[str, Any]] = []
        self.results: list[list[dict[str, Any]]] = []
        self.totals_history: list[list[int]] = [[0] * self.config.num_players]

    # -- playing ----------------------------------------------------------------------------------

    def move(self, seat: int, action: int) -> None:
        """The human's move (then the agents' up to the human's next move); `MoveRefused` changes nothing."""
        game = self.game
        if game.is_over:
            raise MoveRefused("the game is over")
        if seat != self.human:
            raise MoveRefused(f"seat {seat} is not the human's seat ({self.human})")
        if game.current_player != self.human:
            raise MoveRefused(
                f"it is not your turn: {self.seats[game.current_player]} (seat {game.current_player}) is to move"
            )
        if isinstance(action, bool) or not isinstance(action, int) or not game.is_legal(action):
            legal = ", ".join(f"{a} ({self.name(a)})" for a in game.legal_actions())
            raise MoveRefused(f"move {action!r} is not legal now; legal: {legal}")
        self._play(action)
        self.play_agents()

    def rewind(self, moves: int) -> None:
        """Back to the position after the first `moves` moves: a move whose agents' replies failed is undone whole.

        The game is dealt again and the kept moves replayed, so nothing of the undone ones remains.
        """
        kept = self.actions[:moves]
        self._deal()
        for _, action in kept:
            self._play(action)

    def play_agents(self) -> None:
        """Let the agents move until it is the human's turn or the game is over."""
        game = self.game
        while not game.is_over and game.current_player != self.human:
            p = game.current_player
            action = int(self.agents[p].act(encode_observation(game, p), game.legal_action_mask()))
            if not game.is_legal(action):
                raise RuntimeError(f"agent {self.seats[p]} (seat {p}) chose illegal move {action}")
            self._play(action)

    def _play(self, action: int) -> None:
        game = self.game
        p = game.current_player
        taken = game.discard_pile[-1] if action == A.TAKE_DISCARD and game.discard_pile else -1
        name = self.name(action, taken)
        self.round_of_move = game.round + 1
        challenges_before = len(game.challenge_log)
        results = game.step(action)
        if action >= A.CHALLENGE_BASE:  # the referee's verdict is public once the challenge is made
            made = (game.challenge_history[-1] if results is not None else game.challenge_log)[challenges_before]
            name += ": it stands" if made.valid else ": it fails"
        self.actions.append((p, action))
        self.log.append({"round": self.round_of_move, "seat": p, "move": name})
        if results is not None:
            self.results.append([_result(r) for r in results])
            self.totals_history.append(list(game.totals))

    def name(self, action: int, taken: int | None = None) -> str:
        """A move's name as the page shows it (`draw`, `take E`, `discard QU`, `go out discarding M`, `lay 2`)."""
        top = taken if taken is not None else (self.game.discard_pile[-1] if self.game.discard_pile else -1)
        if action >= A.CHALLENGE_BASE:
            k, j = A.challenged(action)
            q = (self.game.current_player + k) % self.game.num_players
            return f"challenge {self.game.laid[q].spelled[j].upper()} ({self.seats[q]})"
        return move_name(action, top)

    # -- what the page sees -----------------------------------------------------------------------

    def view(self) -> dict[str, Any]:
        """The human's view: public information and the human's own hand, as JSON-ready data."""
        game = self.game
        n = game.num_players
        h = self.human
        obs = observation_layout(n, game.challenges).view(encode_observation(game, h))
        over = game.is_over
        seats = []
        for p in range(n):
            rel = (p - h) % n
            laid = None if over else game.laid[p]
            # Cards taken from the discard pile and still held (once laid, they are in the laid words).
            held = p != h and not over and laid is None
            taken = _cards([round(x) for x in obs["opponent_taken"][rel - 1]]) if held else []
            seats.append(
                {
                    "seat": p,
                    "label": self.seats[p],
                    "cards": 0 if over else sum(game.hands[p]),
                    "taken": taken,
                    "total": game.totals[p],
                    "laid": None
                    if laid is None
                    else {
                        "words": [w.upper() for w in laid.spelled],
                        "cards": [list(w) for w in laid.words],
                        "unused": list(laid.unused),
                    },
                    "went_out": (not over) and game.went_out == p,
                }
            )
        view: dict[str, Any] = {
            "seats": seats,
            "human": h,
            "round": min(game.round + 1, game.config.num_rounds),
            "rounds": game.config.num_rounds,
            "game_over": over,
            "played": len(self.actions),
            "log": self.log[-40:],
            "results": self.results,
            "totals_history": self.totals_history,
            "rules": game.config.to_dict(),
            "points": dict(zip(FACES, POINTS, strict=True)),
        }
        if over:
            view["winners"] = game.winners()
            return view
        best = game.best_layout(h)
        view |= {
            "hand_size": game.hand_size,
            "hand": _cards(game.hands[h]),
            "discard_top": _cards([int(f == game.discard_pile[-1]) for f in range(len(FACES))])[0]
            if game.discard_pile
            else None,
            "draw_pile": len(game.draw_pile),
            "to_move": game.current_player,
            "phase": game.phase.name.lower(),
            "final_turn": game.in_final_turn,
            "best_layout": {
                "words": [w.upper() for w in best.spelled],
                "cards": [list(w) for w in best.words],
                "unused": list(best.unused),
                "score": best.score,
            },
            "moves": [
                {"action": a, "name": self.name(a), **_kind(a)}
                for a in (game.legal_actions() if game.current_player == h else [])
            ],
        }
        if game.challenges:
            view["challenges"] = [c.to_dict() for c in game.challenge_log]
        if game.phase == Phase.LAY and game.current_player == h:
            view["candidates"] = [
                {
                    "words": [w.upper() for w in c.spelled],
                    "cards": [list(w) for w in c.words],
                    "unused": list(c.unused),
                    "score": c.score,
                }
                for c in game.candidates
            ]
        return view

    # -- the saved game ---------------------------------------------------------------------------

    def record(self) -> dict[str, Any]:
        """The saved game: the fields of a `games.jsonl` line (rules, deal seed, decks, seats, moves, totals)."""
        return {
            "format": RECORD_FORMAT,
            "game": 0,
            "seats": list(self.seats),
            "rules": self.config.to_dict(),
            "deal_seed": self.seed,
            "decks": [[FACES[f] for f in deck] for deck in self._decks],
            "actions": [list(m) for m in self.actions],
            "totals": list(self.game.totals) if self.game.is_over else None,
            "over": self.game.is_over,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> TableGame:
        """Rebuild a saved game by replaying its moves (each checked legal); a ValueError names a bad record."""
        if not isinstance(record, dict):
            raise ValueError(f"not a saved table game (a JSON {type(record).__name__}, not an object)")
        try:
            if record.get("format") != RECORD_FORMAT:
                raise ValueError(f"not a saved table game (format {record.get('format')!r})")
            table = cls(record["seats"], QuiddlerConfig.from_mapping(record["rules"]), int(record["deal_seed"]))
            if record["decks"] != [[FACES[f] for f in deck] for deck in table._decks]:
                raise ValueError("its decks do not match its deal seed")
            for k, (seat, action) in enumerate(record["actions"]):
                if table.game.is_over or seat != table.game.current_player or not table.game.is_legal(int(action)):
                    raise ValueError(f"move {k} ({seat}, {action}) is not legal in the replay")
                table._play(int(action))
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise ValueError(f"the saved game is incomplete or malformed: {exc!r}") from None
        return table
