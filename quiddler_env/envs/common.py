"""What the AEC env and the single-agent env share: options, spaces, rewards, infos, the text table.

Kept free of PettingZoo so that the Gymnasium env does not import it. Everything
here reads the core game; nothing here changes it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from ..core import actions as A
from ..core.cards import COUNTS, FACES, NUM_FACES, POINTS
from ..core.config import QuiddlerConfig
from ..core.game import Phase, QuiddlerGame
from ..core.scoring import RoundResult
from .observation import TOTAL_SCALE, observation_layout

REWARD_MODES = ("round_score", "relative", "win_loss")
DEFAULT_REWARD_SCALE = {"round_score": 0.01, "relative": 0.01, "win_loss": 1.0}
"""Round points are divided by 100 so a round's reward is about -1..2; a game result is +1/0/-1."""
RENDER_MODES = ("human", "ansi")

ENV_OPTION_DEFAULTS: dict[str, Any] = {
    "reward_mode": "round_score",
    "reward_scale": None,
    "render_mode": None,
    "render_view": "current",
    "max_cycles": None,
}
"""Options every env understands besides the `QuiddlerConfig` fields (None scale: the mode's default)."""


# -- options ------------------------------------------------------------------------------


def resolve_options(
    config: str | os.PathLike | Mapping[str, Any] | QuiddlerConfig | None,
    options: Mapping[str, Any],
    defaults: Mapping[str, Any],
) -> tuple[QuiddlerConfig, dict[str, Any]]:
    """Split a YAML path / mapping / config plus keyword options into a `QuiddlerConfig` and env options.

    Keyword options override the file. A key that is neither a config field nor in
    `defaults` raises a ValueError naming it and the known keys.
    """
    fields = QuiddlerConfig.field_names()
    base: dict[str, Any] = {}
    if isinstance(config, QuiddlerConfig):
        base = config.to_dict()
    elif isinstance(config, (str, os.PathLike)):
        base = _read_yaml(Path(config))
    elif isinstance(config, Mapping):
        base = dict(config)
    elif config is not None:
        raise ValueError(
            f"config must be a YAML path, a mapping or a QuiddlerConfig, got {type(config).__name__}: {config!r}"
        )
    merged = {**base, **options}
    unknown = sorted(k for k in merged if k not in fields and k not in defaults)
    if unknown:
        known = ", ".join(list(fields) + list(defaults))
        raise ValueError(f"unknown option(s) {', '.join(map(repr, unknown))}; known options: {known}")
    game_config = QuiddlerConfig.from_mapping({k: v for k, v in merged.items() if k in fields})
    env_options = {k: merged.get(k, v) for k, v in defaults.items()}
    return game_config, env_options


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ValueError(f"cannot read env config file {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"env config file {path} is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ValueError(f"env config file {path} must hold a mapping of options, got {type(data).__name__}")
    return dict(data)


def check_reward_options(mode: Any, scale: Any) -> float:
    """Validate `reward_mode` / `reward_scale`; returns the scale in use."""
    if mode not in REWARD_MODES:
        raise ValueError(f"option 'reward_mode': bad value {mode!r}; allowed: {', '.join(REWARD_MODES)}")
    if scale is None:
        return DEFAULT_REWARD_SCALE[mode]
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"option 'reward_scale': bad value {scale!r}; allowed: a positive number, or null")
    return float(scale)


class RenderModeError(ValueError, TypeError):
    """An unsupported render mode.

    Also a TypeError because SB3's `make_vec_env(env_id)` passes render_mode="rgb_array" and retries
    without it only on a TypeError; so `make_vec_env("Quiddler-v0")` works while a direct bad value fails.
    """


def check_render_mode(render_mode: Any) -> str | None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise RenderModeError(
            f"option 'render_mode': bad value {render_mode!r}; allowed: None, {', '.join(RENDER_MODES)}"
        )
    return render_mode


def check_render_view(view: Any, num_players: int) -> str | int:
    """'current', 'all', a seat number or 'player_k' (normalised to the seat number)."""
    if view in ("current", "all"):
        return view
    seat = view
    if isinstance(view, str) and view.startswith("player_") and view[7:].isdigit():
        seat = int(view[7:])
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < num_players:
        return seat
    raise ValueError(
        f"option 'render_view': bad value {view!r}; allowed: 'current', 'all', or a seat 0..{num_players - 1} "
        "(or 'player_k')"
    )


def check_max_cycles(max_cycles: Any) -> int | None:
    if max_cycles is None:
        return None
    if isinstance(max_cycles, bool) or not isinstance(max_cycles, int) or max_cycles < 1:
        raise ValueError(f"option 'max_cycles': bad value {max_cycles!r}; allowed: a positive integer, or null")
    return max_cycles


# -- spaces -------------------------------------------------------------------------------


def observation_bounds(config: QuiddlerConfig) -> tuple[np.ndarray, np.ndarray]:
    """Per-entry (low, high) float32 bounds of the observation vector under `config`."""
    n = config.num_players
    layout = observation_layout(n)
    s = layout.slices
    low = np.zeros(layout.size, dtype=np.float32)
    high = np.ones(layout.size, dtype=np.float32)
    counts = np.asarray(COUNTS, dtype=np.float32)
    for name in ("hand", "discard_pile", "unseen"):
        high[s[name]] = counts
    high[s["opponent_taken"]] = np.tile(counts, n - 1)
    # A round adds at most every card's points plus both bonuses; floors decide whether it can lose points.
    bonus = 2 * abs(config.bonus_value)
    best = sum(size * max(POINTS) + bonus for size in config.hand_sizes)
    worst = 0 if config.score_floor != "none" else -best
    low[s["totals"]] = worst / TOTAL_SCALE
    high[s["totals"]] = best / TOTAL_SCALE
    return low, high


def observation_box(config: QuiddlerConfig) -> spaces.Box:
    low, high = observation_bounds(config)
    return spaces.Box(low=low, high=high, dtype=np.float32)


def action_mask_box() -> spaces.Box:
    return spaces.Box(low=0, high=1, shape=(A.NUM_ACTIONS,), dtype=np.int8)


def _draw_mask(draw: bool, take: bool) -> np.ndarray:
    mask = np.zeros(A.NUM_ACTIONS, dtype=np.int8)
    mask[A.DRAW_PILE], mask[A.TAKE_DISCARD] = draw, take
    mask.flags.writeable = False  # shared: callers hand out copies
    return mask


_DRAW_MASKS = {(d, t): _draw_mask(d, t) for d in (False, True) for t in (False, True)}


def legal_action_mask(game: QuiddlerGame) -> np.ndarray:
    """`game.legal_action_mask()`, read-only; a draw phase is answered by the game's own `is_legal`
    for its two actions and served from a cache (every other turn, so it saves a good share of mask time)."""
    if game.phase == Phase.DRAW:
        return _DRAW_MASKS[game.is_legal(A.DRAW_PILE), game.is_legal(A.TAKE_DISCARD)]
    mask = game.legal_action_mask()
    mask.flags.writeable = False
    return mask


# -- rewards and infos ----------------------------------------------------------------------


def round_rewards(results: Sequence[RoundResult], totals_before: Sequence[int], mode: str, scale: float) -> list[float]:
    """Each seat's reward for a scored round.

    round_score: the points the round added to the seat's total (its round score, after
    the score floor), times `scale`; relative: that minus the opponents' mean; win_loss: 0.
    """
    if mode == "win_loss":
        return [0.0] * len(results)
    gains = [r.total - before for r, before in zip(results, totals_before, strict=True)]
    if mode == "round_score":
        return [g * scale for g in gains]
    n = len(gains)
    everyone = sum(gains)
    return [(g - (everyone - g) / (n - 1)) * scale for g in gains]


def game_rewards(totals: Sequence[int], mode: str, scale: float) -> list[float]:
    """Each seat's extra reward at the end of the game: win_loss gives +1 to a sole winner,
    0 to winners tied on the highest total, -1 to everyone else (times `scale`); other modes 0."""
    if mode != "win_loss":
        return [0.0] * len(totals)
    best = max(totals)
    winners = sum(t == best for t in totals)
    return [(0.0 if winners > 1 else 1.0) * scale if t == best else -scale for t in totals]


def round_info(results: Sequence[RoundResult], round_number: int) -> dict[str, Any]:
    """The info every agent gets at a round end (one shared dict; treat it as read-only)."""
    return {"round": round_number, "round_result": [r.to_dict() for r in results]}


# -- rendering ------------------------------------------------------------------------------


def describe_move(agent: str, action: int, taken: int) -> str:
    """'player_1 took QU from the discard pile', 'player_0 discarded E', ..."""
    if action == A.DRAW_PILE:
        return f"{agent} drew from the draw pile"
    if action == A.TAKE_DISCARD:
        return f"{agent} took {FACES[taken]} from the discard pile"
    if action >= A.GO_OUT_BASE:
        return f"{agent} discarded {FACES[action - A.GO_OUT_BASE]} and went out"
    return f"{agent} discarded {FACES[action - A.DISCARD_BASE]}"


def _faces(counts: Sequence[int]) -> str:
    return " ".join(FACES[f] for f in range(NUM_FACES) for _ in range(counts[f])) or "-"


def render_table(game: QuiddlerGame, names: Sequence[str], shown: Sequence[int], last_move: str | None) -> str:
    """A readable text table of the game as seen by the seats in `shown` (their hands are printed)."""
    n = game.num_players
    cfg = game.config
    lines = []
    if game.phase == Phase.GAME_OVER:
        winners = ", ".join(names[p] for p in game.winners())
        lines.append(f"Quiddler: game over after {game.rounds_completed} round(s); winner(s): {winners}")
    else:
        phase = "draw" if game.phase == Phase.DRAW else "discard"
        final = "  [final turns]" if game.went_out is not None else ""
        lines.append(
            f"Quiddler round {game.round + 1}/{cfg.num_rounds} ({game.hand_size} cards), dealer {names[game.dealer]}, "
            f"to move: {names[game.current_player]} ({phase}){final}"
        )
        top = FACES[game.discard_pile[-1]] if game.discard_pile else "-"
        lines.append(
            f"draw pile: {len(game.draw_pile)} cards   discard pile: {len(game.discard_pile)} cards, top {top}"
        )
    width = max(len(name) for name in names) + 2
    lines.append(f"{'player':<{width}} {'total':>5}  hand")
    for p in range(n):
        mark = "*" if p == game.current_player and game.phase != Phase.GAME_OVER else " "
        if p in shown:
            hand = _faces(game.hands[p])
        else:
            taken = _faces(game.known_taken[p])
            hand = f"({sum(game.hands[p])} cards; known from the discard pile: {taken})"
        if game.went_out == p:
            hand += "  [went out]"
        lines.append(f"{names[p] + mark:<{width}} {game.totals[p]:>5}  {hand}")
    if game.round_history:
        lines.append(f"round {len(game.round_history)} result:")
        for r in game.round_history[-1]:
            words = " ".join(w.upper() for w in r.spelled) or "-"
            unused = " ".join(r.unused) or "-"
            bonus = "".join(f" +{v} {k}" for k, v in r.bonuses.items())
            lines.append(f"  {names[r.player]:<{width}} {r.round_score:>4}  words: {words}  unused: {unused}{bonus}")
    if last_move:
        lines.append(f"last move: {last_move}")
    return "\n".join(lines)


__all__ = [
    "DEFAULT_REWARD_SCALE",
    "ENV_OPTION_DEFAULTS",
    "REWARD_MODES",
    "observation_bounds",
    "observation_box",
    "resolve_options",
    "round_rewards",
    "game_rewards",
    "render_table",
]
