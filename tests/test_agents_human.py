"""The human seat driven by scripted input: what it shows, what it reads, bad input, leaving."""

from __future__ import annotations

import io

import pytest

import quiddler_agents
from quiddler_agents.human import HumanAgent, HumanQuit
from quiddler_env.core import actions as A
from quiddler_env.core.cards import FACE_INDEX
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.core.game import QuiddlerGame
from quiddler_env.core.observation import encode_observation
from tests.test_agents import stacked_deck

F = FACE_INDEX


CONFIG = QuiddlerConfig(hand_sizes=(3, 4))


def human(lines: str, config: QuiddlerConfig = CONFIG, **kw) -> tuple[HumanAgent, io.StringIO]:
    out = io.StringIO()
    return HumanAgent(config=config, input_stream=io.StringIO(lines), output_stream=out, **kw), out


def tope_game() -> QuiddlerGame:
    """Seat 0 holds T O P, the discard top is E, the draw pile top is M."""
    game = QuiddlerGame(CONFIG)
    game.reset(decks=[stacked_deck([["T", "O", "P"], ["X", "Z", "J"]], "E", ["M"])])
    return game


def ask(agent: HumanAgent, game: QuiddlerGame) -> int:
    return agent.act(encode_observation(game, game.current_player), game.legal_action_mask())


def test_shows_the_table_and_names_the_moves():
    game = tope_game()
    agent, out = human("draw\n")
    assert ask(agent, game) == A.DRAW_PILE
    text = out.getvalue()
    assert "Round 1 of 2" in text and "3 cards dealt" in text
    assert "Discard pile top: E" in text and "Totals: you 0, player +1 0" in text
    assert "Your hand: O(2) P(6) T(3)" in text and "unused: none; score 11" in text
    assert "1) draw" in text and "2) take E" in text


def test_discard_phase_lists_discards_and_go_outs_by_name():
    game = tope_game()
    game.step(A.TAKE_DISCARD)  # T O P E
    agent, out = human("go out discarding E\n")
    assert ask(agent, game) == A.go_out(F["E"])
    text = out.getvalue()
    assert "discard E" in text and "discard T" in text and "go out discarding E" in text


@pytest.mark.parametrize(
    ("line", "action"),
    [
        ("draw", A.DRAW_PILE),
        ("  DRAW  ", A.DRAW_PILE),
        ("take", A.TAKE_DISCARD),
        ("take e", A.TAKE_DISCARD),
        ("2", A.TAKE_DISCARD),
    ],
)
def test_reads_draw_phase_moves(line, action):
    agent, _ = human(line + "\n")
    assert ask(agent, tope_game()) == action


@pytest.mark.parametrize(
    ("line", "action"),
    [
        ("discard P", A.discard(F["P"])),
        ("p", A.discard(F["P"])),
        ("Go Out Discarding e", A.go_out(F["E"])),
        ("go out T", A.go_out(F["T"])),
        ("out o", A.go_out(F["O"])),
    ],
)
def test_reads_discard_phase_moves(line, action):
    game = tope_game()
    game.step(A.TAKE_DISCARD)  # T O P E: every discard leaves a word (TOP, TOE, OPE, POE...)
    agent, _ = human(line + "\n")
    assert ask(agent, game) == action and game.is_legal(action)


def test_bad_input_is_explained_and_asked_again():
    game = tope_game()
    script = "\n".join(["", "blah blah", "take Z", "discard P", "go out discarding M", "9", "0", "help", "draw"])
    agent, out = human(script + "\n")
    assert ask(agent, game) == A.DRAW_PILE
    text = out.getvalue()
    assert "cannot read 'blah blah'" in text
    assert "the discard pile top is E, not Z" in text
    assert text.count("draw first") == 2  # discarding / going out before drawing
    assert "choose a move number from 1 to 2" in text
    assert text.count("Moves: 1) draw   2) take E") == 2  # the table, then the help
    assert text.count("> ") == 9


def test_bad_discards_name_the_problem():
    game = tope_game()
    game.step(A.DRAW_PILE)  # T O P M
    agent, out = human("discard QU\ndiscard K9\ngo out discarding O\ntake M\ntake\ndraw\ndiscard M\n")
    assert ask(agent, game) == A.discard(F["M"])
    text = out.getvalue()
    assert "you hold no QU" in text
    assert "no card 'K9'" in text
    assert "you cannot go out discarding O: the rest of your hand is not all words" in text
    assert "the discard pile top is E, not M" in text
    assert text.count("you have drawn already: discard a card (or go out)") == 2


def test_forced_go_out_refuses_a_plain_discard():
    config = QuiddlerConfig(hand_sizes=(3,), go_out="forced")
    game = QuiddlerGame(config)
    game.reset(decks=[stacked_deck([["T", "O", "P"], ["X", "Z", "J"]], "E", ["M"])])
    game.step(A.TAKE_DISCARD)
    agent, out = human("discard T\ngo out discarding E\n", config=config)
    assert ask(agent, game) == A.go_out(F["E"])
    assert "you must go out" in out.getvalue()


def test_end_of_input_and_quit_leave_cleanly():
    for script in ("", "blah\n", "quit\n", "EXIT\n"):
        agent, out = human(script)
        with pytest.raises(HumanQuit) as info:
            ask(agent, tope_game())
        assert isinstance(info.value, SystemExit)  # uncaught, the terminal sees the message and no traceback
        assert "leav" in str(info.value.code) or "left" in str(info.value.code)


def test_interrupt_leaves_cleanly():
    class Interrupted(io.StringIO):
        def readline(self, *args):
            raise KeyboardInterrupt

    agent = HumanAgent(config=CONFIG, input_stream=Interrupted(), output_stream=io.StringIO())
    with pytest.raises(HumanQuit, match="interrupted"):
        ask(agent, tope_game())


def test_max_attempts_bounds_a_stream_of_nonsense():
    agent, _ = human("x\n" * 10, max_attempts=3)
    with pytest.raises(HumanQuit, match="3 tries"):
        ask(agent, tope_game())


def test_a_scripted_human_plays_a_whole_game_against_greedy():
    # Always the first listed move: draw, then the first discard (never crashes, always legal).
    config = QuiddlerConfig()
    out = io.StringIO()
    person = quiddler_agents.make("human", num_players=2, input_stream=io.StringIO("1\n" * 2000), output_stream=out)
    record = quiddler_agents.play_game(
        [person, quiddler_agents.make("greedy", seed=0, num_players=2)], seed=2, config=config
    )
    assert record.decisions > 16 and out.getvalue().count("Round 8 of 8") >= 1


def test_show_results_prints_the_round():
    game = tope_game()
    game.step(A.TAKE_DISCARD)
    game.step(A.go_out(F["E"]))
    game.step(A.DRAW_PILE)
    results = game.step(game.legal_actions()[0])
    agent, out = human("")
    agent.show_results(results, seat=0)
    text = out.getvalue()
    assert "you (went out): " in text and "; unused none; bonus +10 longest word; round score 21, total 21" in text
    assert "player 1: no words; unused" in text


def test_lays_its_words_by_name_under_layout_choose():
    """With `layout: choose` the seat lists its candidate layouts with their words and reads `lay N`."""
    config = QuiddlerConfig(hand_sizes=(5,), layout="choose")
    game = QuiddlerGame(config)
    game.reset(decks=[stacked_deck([list("THERE"), list("BEADQ")], "Z", ["X", "V"])])
    game.step(A.DRAW_PILE)
    game.step(A.go_out(F["X"]))
    agent, out = human("lay 9\nlay 1\n", config=config)
    assert ask(agent, game) == A.lay(0)
    text = out.getvalue()
    assert "Lay your words: choose a layout." in text
    assert "lay 1: " in text and "longest 5, 1 word(s)" in text  # ETHER (or THERE, THREE): one 5-letter word
    assert f"say 'lay 1' to 'lay {len(game.candidates)}'" in text  # lay 9 is no candidate
    game.step(A.lay(0))
    agent, out = human("draw\n", config=config)
    ask(agent, game)
    assert "Player +1 laid E(2) E(2) H(7) R(5) T(3): 19 points, longest word 5 letters, 1 word(s)" in out.getvalue()


def test_the_challenge_variant_reads_pass_and_challenge_by_seat_and_word(tmp_path):
    vocab = tmp_path / "v.txt"
    vocab.write_text("eeo\n")
    config = QuiddlerConfig(hand_sizes=(3,), challenges=True, vocabularies=[str(vocab), "referee"])
    game = QuiddlerGame(config)
    deck = ["E", "C", "E", "A", "O", "T", "R", "S", "I"]
    from quiddler_env.core.cards import FACES, new_deck

    rest = [FACES[f] for f in new_deck()]
    for face in deck:
        rest.remove(face)
    game.reset(decks=[deck + rest])
    for action in (A.DRAW_PILE, A.go_out(F["S"]), A.DRAW_PILE, A.discard(F["I"])):
        game.step(action)
    agent, out = human("challenge +2:1\nchallenge +1:1\n", config)
    assert ask(agent, game) == A.challenge(1, 0)
    text = out.getvalue()
    assert "not in your vocabulary" in text and "1) pass" in text and "2) challenge +1:1" in text
    assert "say 'challenge +<seat>:<word>'" in text  # +2 is no seat at a table of two
    game.step(A.challenge(1, 0))
    agent, out = human("pass\n", config)
    assert ask(agent, game) == A.PASS
    assert "2) challenge +1:1" in out.getvalue()  # seat 0 may challenge ACT; the scripted person passes
