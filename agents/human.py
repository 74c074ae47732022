"""The `human` seat: a person plays from a terminal (or any text stream).

Each turn it shows the round, the totals, the discard top, the hand with its best
layout, and the legal moves by name and number. Accepted input (any case):

| input | move |
|---|---|
| `draw` | draw the top card of the draw pile |
| `take`, `take E` | take the top card of the discard pile |
| `discard QU`, `QU` | discard a card |
| `go out discarding M`, `go out M`, `out M` | discard a card and go out |
| `lay 2` | lay candidate layout 2 (`layout: choose`) |
| `challenge +1:2` | the challenge variant: challenge word 2 of the player one seat to the left |
| `pass` | the challenge variant: challenge no more this round |
| `1`, `2`, ... | the numbered legal move |
| `help`, `?` | show the moves again |
| `quit`, `exit` | leave the game |

Input it cannot read, or a move that is not legal now, is answered with the reason
and asked again. End of input (Ctrl-D) or Ctrl-C leaves cleanly: `HumanQuit`, a
`SystemExit`, so a terminal sees a message and no traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from quiddler_env.core import actions as A
from quiddler_env.core import laying
from quiddler_env.core.cards import FACE_INDEX, FACES, POINTS
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.scoring import RoundResult

from .base import CHALLENGE, DRAW, LAY, BaseAgent, SeatView, legal_list


class HumanQuit(SystemExit):
    """The person left the game (quit, end of input, or interrupt)."""


def move_name(action: int, discard_top: int = -1) -> str:
    """How the human seat names a move: `draw`, `take E`, `discard QU`, `go out discarding M`, `lay 2`,
    `challenge +1:2`, `pass`."""
    if action == A.TAKE_DISCARD:
        return f"take {FACES[discard_top]}" if discard_top >= 0 else "take"
    if action >= A.CHALLENGE_BASE:
        k, j = A.challenged(action)
        return f"challenge +{k}:{j + 1}"
    if A.LAY_BASE <= action < A.PASS:
        return f"lay {action - A.LAY_BASE + 1}"
    return A.action_name(action)


_PROMPT = {
    DRAW: "Draw a card.",
    LAY: "Lay your words: choose a layout.",
    CHALLENGE: "Challenge a word you doubt, or pass.",
}


_HOW = "type draw, take, discard <card>, go out discarding <card>, lay <n>, challenge +<seat>:<word>, pass, a move number, or help"


def _cards(counts: Sequence[int]) -> str:
    return " ".join(f"{FACES[f]}({POINTS[f]})" for f, c in enumerate(counts) for _ in range(c)) or "-"


class HumanAgent(BaseAgent):
    """A person at the keyboard; `input_stream`/`output_stream` default to stdin/stdout."""

    name = "human"

    def __init__(
        self,
        seed: int | None = None,
        config: QuiddlerConfig | None = None,
        *,
        input_stream: TextIO | None = None,
        output_stream: TextIO | None = None,
        max_attempts: int | None = None,
    ):
        self.input_stream = input_stream if input_stream is not None else sys.stdin
        self.output_stream = output_stream if output_stream is not None else sys.stdout
        # A scripted stream that never says anything readable must not loop forever.
        self.max_attempts = max_attempts
        super().__init__(seed, config)

    def say(self, text: str = "") -> None:
        self.output_stream.write(text + "\n")
        self.output_stream.flush()

    # -- the table, as text ----------------------------------------------------------

    def describe(self, seat: SeatView, legal: list[int]) -> str:
        """The state a player sees at the table, and the legal moves."""
        rounds = self.config.num_rounds
        round_no = int(round(seat.round_fraction * rounds))
        lines = [
            "",
            f"Round {round_no} of {rounds}: {seat.hand_size} cards dealt. {_PROMPT.get(seat.phase, 'Discard a card.')}",
            "Totals: " + ", ".join(("you" if k == 0 else f"player +{k}") + f" {t}" for k, t in enumerate(seat.totals)),
            f"Discard pile top: {FACES[seat.discard_top] if seat.discard_top >= 0 else '(empty)'}"
            f"    draw pile: {seat.draw_pile_size} cards",
        ]
        for k, taken in enumerate(seat.opponent_taken, start=1):
            if any(taken):
                lines.append(f"Player +{k} took from the discard pile and holds: {_cards(taken)}")
        if seat.final_turn and seat.went_out > 0:
            lines.append(f"Player +{seat.went_out} went out: this is your last turn of the round.")
        for k, (figures, cards) in enumerate(zip(seat.laid, seat.laid_cards, strict=True)):
            if figures is not None:
                who = "You" if k == 0 else f"Player +{k}"
                lines.append(
                    f"{who} laid {_cards(cards)}: {figures.score} points, longest word {figures.longest} letters, "
                    f"{figures.n_words} word(s)"
                )
        for k, words in enumerate(seat.words):
            for j, word in enumerate(words, start=1):
                who = "your" if k == 0 else f"+{k}:"
                verdict = " FAILED" if word.failed else " stood" if word.challenged else ""
                known = "you know it" if word.known else "not in your vocabulary"
                lines.append(
                    f"  word {who}{j}: {_cards(word.cards)} ({word.points} points, {word.letters} letters; {known})"
                    f"{' challenged:' + verdict if word.challenged else ''}"
                )
        lines.append(f"Your hand: {_cards(seat.hand)}")
        layout = self.solver.best_layout(list(seat.hand), counts=True)
        words = ", ".join(w.upper() for w in layout.spelled) or "no words"
        unused = " ".join(layout.unused) or "none"
        lines.append(f"Best layout now: {words}; unused: {unused}; score {layout.score}")
        if seat.phase == LAY:
            for k, c in enumerate(self.candidate_layouts(seat), start=1):
                spelled = ", ".join(w.upper() for w in c.spelled) or "no words"
                lines.append(
                    f"  lay {k}: {spelled}; unused {' '.join(c.unused) or 'none'}; {c.score} points, "
                    f"longest {c.longest}, {c.n_words} word(s)"
                )
        lines.append(self.moves(seat, legal))
        return "\n".join(lines)

    def candidate_layouts(self, seat: SeatView):
        """The seat's candidates with their words (from its own hand; the observation holds their figures)."""
        bluff = bool(self.challenges) and self.config.layout == "choose"
        return laying.candidates(self.solver, list(seat.hand), goes_out=seat.went_out == 0, bluff=bluff)

    @staticmethod
    def moves(seat: SeatView, legal: list[int]) -> str:
        """The legal moves, numbered."""
        return "Moves: " + "   ".join(f"{i}) {move_name(a, seat.discard_top)}" for i, a in enumerate(legal, start=1))

    def show_results(self, results: Sequence[RoundResult], seat: int) -> None:
        """Print a round's scoring (the play loop calls this when a round ends)."""
        self.say("")
        self.say("Round over:")
        for r in results:
            who = "you" if r.player == seat else f"player {r.player}"
            words = ", ".join(w.upper() for w in r.spelled) or "no words"
            bonus = ", ".join(f"+{v} {k.replace('_', ' ')}" for k, v in r.bonuses.items())
            bonus = f" bonus {bonus};" if bonus else ""
            out = " (went out)" if r.went_out else ""
            unused = " ".join(r.unused) or "none"
            self.say(f"  {who}{out}: {words}; unused {unused};{bonus} round score {r.round_score}, total {r.total}")

    # -- reading a move --------------------------------------------------------------

    def parse(self, text: str, seat: SeatView, legal: list[int]) -> int | str:
        """The action id `text` names, or a message saying why it is not a legal move now."""
        words = text.strip().lower().replace(",", " ").split()
        if not words:
            return _HOW
        if words[0].isdigit() and len(words) == 1:
            k = int(words[0])
            return legal[k - 1] if 1 <= k <= len(legal) else f"choose a move number from 1 to {len(legal)}"
        if words == ["pass"]:
            if A.PASS not in legal:
                return "there is nothing to pass now (pass ends your challenges)"
            return A.PASS
        if words[0] == "challenge":
            target = "".join(words[1:]).lstrip("+")
            seat_text, _, word_text = target.partition(":")
            if not (seat_text.isdigit() and word_text.isdigit()) or not (
                1 <= int(seat_text) < seat.num_players and 1 <= int(word_text) <= A.MAX_LAID_WORDS
            ):
                return "say 'challenge +<seat>:<word>', e.g. 'challenge +1:2' for word 2 of the next player"
            action = A.challenge(int(seat_text), int(word_text) - 1)
            return action if action in legal else f"'{move_name(action)}' is not a word you may challenge now"
        if words[0] == "lay":
            if len(words) != 2 or not words[1].isdigit() or not 1 <= int(words[1]) <= len(seat.candidates):
                return f"say 'lay 1' to 'lay {len(seat.candidates)}'" if seat.phase == LAY else "it is not time to lay"
            action = A.lay(int(words[1]) - 1)
        elif words in (["draw"], ["draw", "pile"], ["pile"]):
            action = A.DRAW_PILE
        elif words[0] == "take":
            if len(words) > 2:
                return f"cannot read {text.strip()!r}: say 'take' or 'take E'"
            if len(words) == 2:
                top = FACES[seat.discard_top] if seat.discard_top >= 0 else None
                if words[1].upper() != top:
                    return f"the discard pile top is {top or 'empty'}, not {words[1].upper()}"
            action = A.TAKE_DISCARD
        else:
            going_out = words[0] in ("go", "out")
            rest = words
            if going_out:
                rest = [w for w in words if w not in ("go", "out", "discarding", "discard")]
            elif words[0] == "discard":
                rest = words[1:]
            if len(rest) != 1 or rest[0].upper() not in FACE_INDEX:
                if len(rest) == 1 and (going_out or words[0] == "discard"):
                    return f"no card {rest[0].upper()!r}; cards are {' '.join(FACES)}"
                return f"cannot read {text.strip()!r}: {_HOW}"
            face = FACE_INDEX[rest[0].upper()]
            action = A.go_out(face) if going_out else A.discard(face)
        if action in legal:
            return action
        if seat.phase == DRAW and action >= A.DISCARD_BASE:
            return "draw first: 'draw' or 'take'"
        if seat.phase != DRAW and action < A.DISCARD_BASE:
            return "you have drawn already: discard a card (or go out)"
        if action >= A.GO_OUT_BASE:
            return (
                f"you cannot go out discarding {FACES[action - A.GO_OUT_BASE]}: the rest of your hand is not all words"
            )
        if action >= A.DISCARD_BASE:
            face = FACES[action - A.DISCARD_BASE]
            if not seat.hand[action - A.DISCARD_BASE]:
                return f"you hold no {face}"
            return f"'{move_name(action)}' is not allowed now (you must go out)"
        return f"'{move_name(action, seat.discard_top)}' is not allowed now"

    def act(self, observation, action_mask=None) -> int:
        obs, mask = self._prepare(observation, action_mask)
        legal = legal_list(mask)
        seat = self.view(obs)
        self.say(self.describe(seat, legal))
        attempts = 0
        while True:
            self.output_stream.write("> ")
            self.output_stream.flush()
            try:
                line = self.input_stream.readline()
            except KeyboardInterrupt:
                raise HumanQuit("interrupted: leaving the game") from None
            if not line:
                raise HumanQuit("end of input: leaving the game")
            command = line.strip().lower()
            if command in ("quit", "exit"):
                raise HumanQuit("you left the game")
            if command in ("help", "?"):
                self.say(self.moves(seat, legal))
                continue
            got = self.parse(line, seat, legal)
            if isinstance(got, int):
                return got
            self.say(got)
            attempts += 1
            if self.max_attempts is not None and attempts >= self.max_attempts:
                raise HumanQuit(f"no readable move after {attempts} tries: leaving the game")
