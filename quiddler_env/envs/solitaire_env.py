"""# Quiddler solitaire: `QuiddlerSolitaire-v0`

| Creation           | `gymnasium.make("QuiddlerSolitaire-v0")` or `QuiddlerSolitaireEnv()` |
|--------------------|-----------------------------------------------------------|
| Players            | 1                                                         |
| Actions            | `Discrete(311)`, masked                                   |
| Observation        | `Box(0, 1, (329,), float32)`                              |
| Reward             | points of the cards laid in the word (0 for a restart)    |
| Episode            | until no move is legal (at most 88 moves); never truncated |

The one-player game of RULES.md section 8, played by the rules module
`quiddler_env.core.solitaire` (its docstring states every rule, including when a
game is lost). Eight piles of five face-down cards each with one face-up card on
top; form words from the face-up tops (one card per pile), restart emptied piles
from another pile's top, and lay all 48 cards to win.

In worker processes (`SubprocVecEnv`, `make_vec_env(..., vec_env_cls=SubprocVecEnv)`)
use the id `"quiddler_env:QuiddlerSolitaire-v0"`: Gymnasium then imports the package,
which registers the id, in each worker.

### Actions

| ids | move | legal when |
|---|---|---|
| 0 .. 254 | lay the word spelled by the tops of the piles in bitmask `id + 1` (bit p = pile p) | those tops, in some order, spell a word with at least `min_word_cards` cards |
| 255 .. 310 | restart: move the top of pile `src` onto the empty pile `dst` (`restart_action(src, dst)`) | `dst` is empty and `src` has a face-down card |

Which order of the cards spells the word does not matter to the game; `info["word"]`
names the word laid (of several anagrams, the first in alphabetical order). The legal moves are `env.action_masks()` (bool, sb3-contrib's
convention, so `MaskablePPO` works through `SubprocVecEnv`) and `info["action_mask"]`
(int8). An action that is not an integer in `0..310` (out of range, a bool, `2.5`,
`"3"`) raises `IllegalActionError` (a `ValueError`, the one illegal-action error of
every env, `quiddler_env.envs.common.IllegalActionError`); numpy integers are
actions. An illegal action in range ends the episode with reward 0 and
`info["illegal_action"] = True` (the cards not yet laid are the penalty); with
`illegal_action="raise"` it raises `IllegalActionError` naming the action and the
legal ones. `step` before `reset` or after the episode ended raises a
`RuntimeError` saying which.

### Observation

One float32 vector, all values in [0, 1], in named slices (`SOLITAIRE_SLICES`,
`view_observation(vec)` splits it):

| slice | size | content | scale |
|---|---|---|---|
| `tops` | 8 x 31 | face-up top card of each pile, one-hot over faces (`FACES` order); a zero row is an empty pile | 0/1 |
| `face_down` | 8 | face-down cards under each pile's top | / 5 |
| `empty` | 8 | the pile has no cards (a restart target) | 0/1 |
| `laid` | 31 | cards of each face laid in words so far | / the face's count in the 118-card deck |
| `unseen` | 31 | cards of each face neither laid nor face up: face down in the piles, or among the 70 never dealt | / the face's count in the deck |
| `cards_laid` | 1 | cards laid in words | / 48 |
| `score` | 1 | points so far | / `MAX_SCORE` (394, the 48 most valuable cards) |
| `moves` | 1 | moves made | / 88 |

The face-down cards themselves are never encoded.

### Rewards and infos

The reward of a word move is the points of its cards (a restart scores 0), so an
episode's return is the solitaire score. Every `info` holds `action_mask`, `score`,
`cards_laid`, `cards_left`, `moves`, `won` (all 48 cards laid), `illegal_action`,
`move` (the last move's name, "" after reset) and `word` (the word just laid, "" if
none); `info["word_faces"]` and `info["word_piles"]` give its cards in spelling order
and the piles they came from.

### Arguments

`QuiddlerSolitaireEnv(render_mode=None, config=None, illegal_action=None, **rules)`:
`config` is a `QuiddlerConfig`, a mapping or the path of a YAML file, holding
`QuiddlerConfig` fields and this env's options (`render_mode`, `illegal_action`:
`"terminate"` by default, or `"raise"`; declared in `common.ENV_OPTIONS`), resolved
as the other envs resolve theirs; keyword arguments given (not None) override it.
`rules` may override `min_word_cards` (2: a lone IN is not a word; 1: it is) and
`dictionary` ("enable" or a word-list path), the only rule options solitaire uses.
`reset(seed=..., options={"piles": [[...6 faces, top first...] x 8]})` stacks the
deal; a seed is an integer >= 0 or None (else a `ValueError`).
A dealt game whose 8 first tops spell no word is lost before any move (about one
deal in 200); `reset` deals again from the same generator until a move exists and
reports how many times in `info["redeals"]` (a stacked deal without a move is a
`ValueError`).
Render modes: `ansi` (returns the table as a string) and `human` (prints it); any
other mode raises `RenderModeError`, a `ValueError` that is also a `TypeError` so that
SB3's `make_vec_env` (which tries `render_mode="rgb_array"` first and falls back on
a TypeError) works as is.

### Version history

* v0: first release.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..core.cards import COUNTS_ARRAY, FACES, NUM_FACES
from ..core.solitaire import (
    CARDS_IN_PLAY,
    FACE_DOWN_PER_PILE,
    MAX_MOVES,
    MAX_SCORE,
    NUM_ACTIONS,
    NUM_PILES,
    SolitaireGame,
    action_name,
)
from . import common
from .common import ILLEGAL_ACTION_MODES, ConfigSource, IllegalActionError, RenderModeError  # noqa: F401  (re-exported)

SOLITAIRE_RULE_KEYS = ("min_word_cards", "dictionary")
"""The rule options solitaire reads; only these may be keyword arguments (a `config` may hold every field)."""


def _build_slices() -> tuple[dict[str, slice], int]:
    sizes = [
        ("tops", NUM_PILES * NUM_FACES),
        ("face_down", NUM_PILES),
        ("empty", NUM_PILES),
        ("laid", NUM_FACES),
        ("unseen", NUM_FACES),
        ("cards_laid", 1),
        ("score", 1),
        ("moves", 1),
    ]
    slices, start = {}, 0
    for name, size in sizes:
        slices[name] = slice(start, start + size)
        start += size
    return slices, start


SOLITAIRE_SLICES, OBSERVATION_SIZE = _build_slices()
assert OBSERVATION_SIZE == 329


def view_observation(vector: np.ndarray) -> dict[str, np.ndarray]:
    """Split a solitaire observation into its named slices (views); `tops` comes back shaped (8, 31)."""
    out = {name: vector[s] for name, s in SOLITAIRE_SLICES.items()}
    out["tops"] = out["tops"].reshape(NUM_PILES, NUM_FACES)
    return out


def encode_solitaire_observation(game: SolitaireGame) -> np.ndarray:
    """The observation vector of a solitaire position (see the module docstring)."""
    obs = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
    parts = view_observation(obs)
    visible = np.zeros(NUM_FACES, dtype=np.int64)
    for p, pile in enumerate(game.piles):
        if pile:
            parts["tops"][p, pile[-1]] = 1.0
            visible[pile[-1]] += 1
            parts["face_down"][p] = (len(pile) - 1) / FACE_DOWN_PER_PILE
        else:
            parts["empty"][p] = 1.0
    laid = np.asarray(game.laid_counts, dtype=np.int64)
    parts["laid"][:] = laid / COUNTS_ARRAY
    parts["unseen"][:] = (COUNTS_ARRAY - laid - visible) / COUNTS_ARRAY
    parts["cards_laid"][0] = game.cards_laid / CARDS_IN_PLAY
    parts["score"][0] = game.score / MAX_SCORE
    parts["moves"][0] = game.moves / MAX_MOVES
    return obs


class QuiddlerSolitaireEnv(gym.Env):
    """Quiddler solitaire as a Gymnasium env; see the module docstring for spaces, rewards and infos."""

    metadata = {"render_modes": list(common.RENDER_MODES), "render_fps": 2, "name": "QuiddlerSolitaire-v0"}

    def __init__(
        self,
        render_mode: str | None = None,
        config: ConfigSource = None,
        illegal_action: str | None = None,
        **rules: Any,
    ):
        unknown = sorted(set(rules) - set(SOLITAIRE_RULE_KEYS))
        if unknown:
            raise ValueError(
                f"unknown solitaire option(s) {', '.join(map(repr, unknown))}; solitaire takes "
                f"{', '.join(SOLITAIRE_RULE_KEYS)} (or a full config=...), render_mode and illegal_action "
                f"({', '.join(ILLEGAL_ACTION_MODES)})"
            )
        given = {"render_mode": render_mode, "illegal_action": illegal_action}
        options = {**rules, **{k: v for k, v in given.items() if v is not None}}
        self.config, opts = common.resolve_options(config, options, "solitaire")  # checked: common.ENV_OPTIONS
        self.render_mode = opts["render_mode"]
        self.illegal_action = opts["illegal_action"]
        self.game = SolitaireGame(self.config)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(OBSERVATION_SIZE,), dtype=np.float32)
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._done = True
        self._has_game = False
        self._last: dict[str, Any] = {}

    # -- Gymnasium API --------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Deal a new game from the env's generator (seeded by `seed`); `options={"piles": ...}` stacks it."""
        options = dict(common.reset_options(options))
        super().reset(seed=common.check_seed(seed))
        piles = options.pop("piles", None)
        if options:
            raise ValueError(f"unknown reset option(s) {sorted(options)!r}; the only option is 'piles'")
        self.game.reset(rng=self.np_random, piles=piles)
        redeals = 0
        if self.game.is_over:
            if piles is not None:
                raise ValueError(f"the stacked deal {piles!r} has no legal move: its 8 face-up tops spell no word")
            # A deal whose first 8 tops spell no word is lost before any move (about 1 deal in 200);
            # an episode needs a move, so deal again from the same generator.
            while self.game.is_over:
                self.game.reset(rng=self.np_random)
                redeals += 1
        self._done = False
        self._has_game = True
        self._last = {"move": "", "word": "", "word_faces": (), "word_piles": (), "illegal_action": False}
        self._refresh()
        if self.render_mode == "human":
            self.render()
        return encode_solitaire_observation(self.game), {**self._info(), "redeals": redeals}

    def step(self, action):
        """Play one action id; returns (observation, reward, terminated, truncated, info)."""
        if self._done:
            if not self._has_game:
                raise common.not_started_error("step()")
            raise RuntimeError("step() after the episode ended; call reset() to deal a new game")
        a = self._check_action(action)
        reward = 0.0
        self._last = {"move": action_name(a), "word": "", "word_faces": (), "word_piles": (), "illegal_action": False}
        if not self._mask[a]:
            if self.illegal_action == "raise":
                raise IllegalActionError(
                    f"action {a} ({action_name(a)}) is illegal here; legal actions: {self.game.legal_actions()}"
                )
            self._last["illegal_action"] = True
            self._done = True
            self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        else:
            n_words = len(self.game.words_laid)
            reward = float(self.game.step(a))
            if len(self.game.words_laid) > n_words:
                laid = self.game.words_laid[-1]
                self._last.update(word=laid.word, word_faces=laid.faces, word_piles=laid.piles)
            self._refresh()
            self._done = not self._mask.any()
        if self.render_mode == "human":
            self.render()
        return encode_solitaire_observation(self.game), reward, self._done, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal actions as a bool array (all False once the episode is over)."""
        return self._mask.astype(bool)

    def render(self):
        """`ansi`: the table as a string; `human`: print it."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        if not self._has_game:
            raise common.not_started_error("render()")
        text = self._table()
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass

    # -- helpers -------------------------------------------------------------------------

    def _check_action(self, action) -> int:
        a = common.action_id(action)
        if a is None or not 0 <= a < NUM_ACTIONS:
            raise IllegalActionError(
                f"action {action!r} is not an integer in 0..{NUM_ACTIONS - 1}; legal actions: "
                f"{np.flatnonzero(self._mask).tolist()}"
            )
        return a

    def _refresh(self) -> None:
        self._mask = self.game.legal_action_mask()

    def _info(self) -> dict[str, Any]:
        g = self.game
        return {
            "action_mask": self._mask.copy(),
            "score": g.score,
            "cards_laid": g.cards_laid,
            "cards_left": g.cards_left,
            "moves": g.moves,
            "won": g.won,
            **self._last,
        }

    def _table(self) -> str:
        g = self.game
        tops = g.tops()
        header = "pile " + "".join(f"{p:>5}" for p in range(NUM_PILES))
        top_row = "top  " + "".join(f"{FACES[t] if t >= 0 else '-':>5}" for t in tops)
        down_row = "down " + "".join(f"{n:>5}" for n in g.face_down_counts())
        lines = [
            f"Quiddler solitaire  score {g.score}  cards laid {g.cards_laid}/{CARDS_IN_PLAY}  moves {g.moves}",
            header,
            top_row,
            down_row,
        ]
        if self._last.get("move"):
            last = f"last move: {self._last['move']}"
            if self._last.get("word"):
                last += f" -> {self._last['word'].upper()} ({'-'.join(self._last['word_faces'])})"
            if self._last.get("illegal_action"):
                last += " (illegal: episode over)"
            lines.append(last)
        words = [g.spell(m) for m, _ in g.word_moves()]
        if words:
            best = sorted(words, key=lambda w: (-w.points, w.word, w.piles))[:5]
            lines.append(
                f"{len(words)} words possible, best: "
                + ", ".join(f"{w.word.upper()} {w.points} (piles {'+'.join(map(str, sorted(w.piles)))})" for w in best)
            )
        restarts = g.restart_moves()
        if restarts:
            lines.append(f"{len(restarts)} restarts possible")
        if self._done:
            if g.won:
                lines.append("WON: all 48 cards laid")
            else:
                lines.append(f"game over: {g.cards_left} cards left")
        return "\n".join(lines)
