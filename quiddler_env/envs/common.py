"""What the envs share: the env options, the errors, spaces, rewards, infos, the text table.

Kept free of PettingZoo so that the Gymnasium envs do not import it. Everything
here reads the core game; nothing here changes it.

`ENV_OPTIONS` is the one declaration of every env option besides the `QuiddlerConfig`
rule fields: its default, its doc, its check and the envs that take it ("aec":
`quiddler_v0.raw_env` / `env()`, "gym": `Quiddler-v0`, "solitaire":
`QuiddlerSolitaire-v0`). Each env resolves its options through `resolve_options` /
`check_env_options`; a run config validates through the same calls.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from ..core import actions as A
from ..core.cards import COUNTS, FACES, NUM_FACES, POINTS
from ..core.config import QuiddlerConfig
from ..core.engine import COMPILED_BOTS
from ..core.files import read_yaml_mapping
from ..core.game import IllegalActionError, Phase, QuiddlerGame
from ..core.laying import MAX_LAID_WORDS
from ..core.levels import get_level
from ..core.observation import TOTAL_SCALE, observation_layout
from ..core.scoring import RoundResult

REWARD_MODES = ("round_score", "relative", "lead", "win_loss")
DEFAULT_REWARD_SCALE = {"round_score": 0.01, "relative": 0.01, "lead": 0.01, "win_loss": 1.0}
"""Round points are divided by 100 so a round's reward is about -1..2; a game result is +1/0/-1."""
RENDER_MODES = ("human", "ansi")
AEC_RENDER_MODES = (*RENDER_MODES, "rgb_array")
"""The AEC env's, `Quiddler-v0`'s and `SelfPlayEnv`'s: the text modes and "rgb_array", the table as an image
(`render_image`)."""
ILLEGAL_ACTION_MODES = ("terminate", "raise")
ENV_KINDS = ("aec", "gym", "solitaire", "vector")
"""aec: `quiddler_v0.raw_env` / `env()` (and `SelfPlayEnv`); gym: `Quiddler-v0`; solitaire: `QuiddlerSolitaire-v0`;
vector: `Quiddler-v0`'s vector entry point (`vector_env.QuiddlerVectorEnv`)."""

BOOL_TYPES = (bool, np.bool_)
"""Types refused as actions, seeds and seats although Python and numpy count them as integers."""


# -- errors -------------------------------------------------------------------------------


# `IllegalActionError` (a ValueError) is the engine's, `quiddler_env.core.game.IllegalActionError`: one class for
# an illegal action in the game and in every env (raw_env, Quiddler-v0, QuiddlerSolitaire-v0), re-exported here.


class RenderModeError(ValueError, TypeError):
    """An unsupported render mode.

    Also a TypeError because SB3's `make_vec_env(env_id)` passes render_mode="rgb_array" and retries
    without it only on a TypeError; so `make_vec_env("Quiddler-v0")` works while a direct bad value fails.
    """


def check_seed(seed: Any) -> int | None:
    """A `reset` seed: None or an integer >= 0 (numpy integers too), as a Python int."""
    if seed is None:
        return None
    if isinstance(seed, BOOL_TYPES) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")
    return int(seed)


def action_id(action: Any) -> int | None:
    """`action` as an int if it is an integer: a Python int, a numpy integer or a 0-d integer array (what a
    policy's `predict` gives for one observation); else None. A bool is no action id, nor is a float, even an
    integral one: 0.0 played as action 0 while 2.5 was refused, and a float is more likely a policy's output
    read wrong (a probability, a value) than a move."""
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]  # its scalar, of its dtype
    if isinstance(action, BOOL_TYPES) or not isinstance(action, (int, np.integer)):
        return None
    return int(action)


def reset_options(options: Any) -> Mapping[str, Any]:
    """A `reset`'s `options`: None (no options) or a mapping; anything else is a ValueError naming `options`
    (a string reached `.get` and failed as an AttributeError)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"reset(options=...) must be a mapping (a dict) or None, got {type(options).__name__}")
    return options


def not_started_error(call: str) -> RuntimeError:
    return RuntimeError(f"{call} before reset(): there is no game yet; call reset() first")


def game_over_error(call: str) -> RuntimeError:
    return RuntimeError(f"{call} after the game ended: every agent is done; call reset() to deal a new game")


# -- options ------------------------------------------------------------------------------


def check_reward_mode(mode: Any) -> str:
    if mode not in REWARD_MODES:
        raise ValueError(f"option 'reward_mode': bad value {mode!r}; allowed: {', '.join(REWARD_MODES)}")
    return mode


def check_reward_options(mode: Any, scale: Any) -> float:
    """Validate `reward_mode` / `reward_scale`; returns the scale in use."""
    check_reward_mode(mode)
    if scale is None:
        return DEFAULT_REWARD_SCALE[mode]
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"option 'reward_scale': bad value {scale!r}; allowed: a positive number, or null")
    return float(scale)


def check_render_mode(render_mode: Any, modes: Sequence[str] = RENDER_MODES) -> str | None:
    if render_mode is not None and render_mode not in modes:
        raise RenderModeError(f"option 'render_mode': bad value {render_mode!r}; allowed: None, {', '.join(modes)}")
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


def check_learner_seat(seat: Any, num_players: int) -> int | str:
    """'random' or a seat 0..num_players-1 (a numpy integer becomes an int; bools and floats are refused)."""
    if isinstance(seat, str) and seat == "random":
        return seat
    if not isinstance(seat, BOOL_TYPES) and isinstance(seat, (int, np.integer)) and 0 <= seat < num_players:
        return int(seat)
    raise ValueError(f"option 'learner_seat': bad value {seat!r}; allowed: 'random' or a seat 0..{num_players - 1}")


def check_opponents(opponents: Any, num_players: int) -> list[Any] | None:
    """None (the env's default policies), one entry for every opponent seat, or a list of one per seat; an entry
    is a policy (`act(observation, action_mask)`) or an agent spec string, which `Quiddler-v0` builds
    (`gym_env.build_opponents`; a bad spec is refused there, naming the known ones)."""
    n = num_players
    if opponents is None:
        return None
    if callable(getattr(opponents, "act", None)) or (isinstance(opponents, str) and opponents.strip()):
        return [opponents] * (n - 1)
    if isinstance(opponents, Sequence) and not isinstance(opponents, str):
        policies = list(opponents)
        if len(policies) != n - 1:
            raise ValueError(
                f"option 'opponents': {len(policies)} policies given for {n - 1} opponent seat(s) of a {n}-player game"
            )
        for i, p in enumerate(policies):
            if not callable(getattr(p, "act", None)) and not (isinstance(p, str) and p.strip()):
                raise ValueError(
                    f"option 'opponents': entry {i} ({p!r}) is neither an agent spec nor a policy with "
                    "act(observation, action_mask)"
                )
        return policies
    raise ValueError(
        f"option 'opponents': bad value {opponents!r}; allowed: None, an agent spec ('greedy', 'expert:samples=8', "
        "...), a policy with act(observation, action_mask), or a list of one per opponent seat"
    )


INFO_MODES = ("full", "flat")


def check_infos(value: Any) -> str:
    if not isinstance(value, str) or value not in INFO_MODES:
        raise ValueError(f"option 'infos': bad value {value!r}; allowed: {', '.join(INFO_MODES)}")
    return value


def check_slot_offset(value: Any) -> int:
    if isinstance(value, BOOL_TYPES) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"option 'slot_offset': bad value {value!r}; allowed: an integer >= 0")
    return int(value)


def check_illegal_reward(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
        raise ValueError(f"option 'illegal_reward': bad value {value!r}; allowed: a finite number")
    return float(value)


def check_illegal_action(value: Any) -> str:
    if not isinstance(value, str) or value not in ILLEGAL_ACTION_MODES:
        raise ValueError(f"option 'illegal_action': bad value {value!r}; allowed: {', '.join(ILLEGAL_ACTION_MODES)}")
    return value


# -- the vector env's opponents -------------------------------------------------------------

COMPILED = COMPILED_BOTS
"""Opponent specs the engine plays itself."""


class OpponentMix:
    """Weighted opponent entries ("random", "greedy" or a policy object), one drawn per game and seat per episode."""

    def __init__(self, entries: Sequence[tuple[Any, float]]):
        entries = list(entries)
        if not entries:
            raise ValueError("OpponentMix needs at least one (entry, weight) pair")
        for entry, weight in entries:
            check_entry(entry)
            ok = (
                isinstance(weight, (int, float)) and not isinstance(weight, bool) and np.isfinite(weight) and weight > 0
            )
            if not ok:
                raise ValueError(f"OpponentMix: weight of {entry!r} must be a positive number, got {weight!r}")
        self.entries = [entry for entry, _ in entries]
        weights = np.asarray([w for _, w in entries], dtype=np.float64)
        self.probabilities = weights / weights.sum()

    def draw(self, rng: np.random.Generator) -> Any:
        return self.entries[int(rng.choice(len(self.entries), p=self.probabilities))]

    def __repr__(self) -> str:
        return f"OpponentMix({list(zip(self.entries, self.probabilities.round(3).tolist(), strict=True))})"


def compiled_bot(entry: str) -> tuple[str, int | None]:
    """A vector env's opponent spec as (compiled bot, level): `random`, `greedy` or `greedy:level=N` (a level's
    number or name, `core.levels`); a one-line ValueError otherwise."""
    name, _, param = entry.partition(":")
    if name in COMPILED and not param:
        return name, None
    if name == "greedy" and param.startswith("level=") and ":" not in param:
        try:
            return name, get_level(param[len("level=") :]).number
        except ValueError as exc:
            raise ValueError(f"option 'opponents': {entry!r}: {exc}") from None
    raise ValueError(
        f"option 'opponents': {entry!r} is not a compiled bot ({', '.join(COMPILED)}, greedy:level=N); pass other "
        "agents as policy objects with act(observation, action_mask)"
    )


def opponent_level(entry: Any) -> int | None:
    """The shipped level whose words an opponent knows: a compiled bot spec's (`greedy:level=2`) or a bot's
    (`quiddler_agents` agents with a `level`, which offer `seat_solver`); None for the referee's words."""
    if isinstance(entry, str):
        return compiled_bot(entry)[1] if ":" in entry else None
    level = getattr(entry, "level", None)
    return level if callable(getattr(entry, "seat_solver", None)) and isinstance(level, int) else None


def level_rules(config: QuiddlerConfig, levels: Sequence[int | None], learner_seat: int) -> QuiddlerConfig:
    """The rules the engine plays when opponents have levels (`levels`: one per opponent seat, in relative order,
    the seat after the learner first; None: no level): the rules' `vocabularies` name `referee` for the learner
    and each level-less seat and `level-N` for a level bot's seat, so the engine finds that seat's go-out moves
    and lays its layouts only from its level's words. `config` itself when no opponent has a level; a one-line
    ValueError when the rules name the seats' words already (`vocabularies`, or the challenge variant)."""
    if all(level is None for level in levels):
        return config
    if config.vocabularies or config.challenges:
        rules = "vocabularies" if config.vocabularies else "challenge variant's vocabularies"
        raise ValueError(
            f"option 'opponents': an opponent's level and the rules' {rules} both name a seat's words: give one "
            "(a level as vocabularies: [level-N])"
        )
    n = config.num_players
    specs = ["referee"] * n
    for k, level in enumerate(levels, start=1):
        if level is not None:
            specs[(learner_seat + k) % n] = f"level-{level}"
    return dataclasses.replace(config, vocabularies=tuple(specs))


def check_entry(entry: Any) -> Any:
    if isinstance(entry, str):
        compiled_bot(entry)
        return entry
    if isinstance(entry, OpponentMix) or callable(getattr(entry, "act", None)):
        return entry
    raise ValueError(
        f"option 'opponents': bad entry {entry!r}; allowed: {', '.join(map(repr, COMPILED))}, 'greedy:level=N', a "
        "policy with act(observation, action_mask), or an OpponentMix"
    )


def check_vector_opponents(opponents: Any, num_players: int) -> list[Any]:
    """One entry for every opponent seat, or a list of one per seat (None: "random")."""
    if opponents is None:
        return ["random"] * (num_players - 1)
    if isinstance(opponents, Sequence) and not isinstance(opponents, str):
        entries = list(opponents)
        if len(entries) != num_players - 1:
            raise ValueError(
                f"option 'opponents': {len(entries)} entries given for {num_players - 1} opponent seat(s) of a "
                f"{num_players}-player game"
            )
        return [check_entry(e) for e in entries]
    return [check_entry(opponents)] * (num_players - 1)


def check_autoreset_mode(mode: Any) -> AutoresetMode:
    allowed = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
    for m in allowed:
        if mode == m or mode == m.value:
            return m
    raise ValueError(f"option 'autoreset_mode': bad value {mode!r}; allowed: {', '.join(m.value for m in allowed)}")


@dataclass(frozen=True)
class EnvOption:
    """One env option: its default, a one-line doc, its check and the env kinds that take it.

    `check(value, config, resolved)` returns the value as the env uses it; `resolved` holds the
    options before it in `ENV_OPTIONS` (reward_scale reads reward_mode).
    """

    name: str
    default: Any
    doc: str
    check: Callable[[Any, QuiddlerConfig, Mapping[str, Any]], Any]
    kinds: tuple[str, ...]
    kind_checks: Mapping[str, Callable[[Any, QuiddlerConfig, Mapping[str, Any]], Any]] = field(default_factory=dict)
    """A check of its own for some kinds (the vector env's opponents take more than policies)."""


ENV_OPTIONS: tuple[EnvOption, ...] = (
    EnvOption(
        "reward_mode",
        "round_score",
        "round_score, relative, lead or win_loss (the module docstring of quiddler_v0 explains each)",
        lambda v, cfg, opts: check_reward_mode(v),
        ("aec", "gym", "vector"),
    ),
    EnvOption(
        "reward_scale",
        None,
        "multiplies every reward; None: 0.01 for the point modes, 1 for win_loss (resolved to the number)",
        lambda v, cfg, opts: check_reward_options(opts["reward_mode"], v),
        ("aec", "gym", "vector"),
    ),
    EnvOption(
        "render_mode",
        None,
        "None, 'ansi' (render() returns the text table) or 'human' (prints it after every step); the AEC env "
        "and Quiddler-v0 also 'rgb_array' (the table as an RGB image)",
        lambda v, cfg, opts: check_render_mode(v),
        ("aec", "gym", "solitaire"),
        {
            "aec": lambda v, cfg, opts: check_render_mode(v, AEC_RENDER_MODES),
            "gym": lambda v, cfg, opts: check_render_mode(v, AEC_RENDER_MODES),
        },
    ),
    EnvOption(
        "render_view",
        "current",
        "whose hand the table shows: 'current', 'all', or a seat (2 or 'player_2', resolved to 2)",
        lambda v, cfg, opts: check_render_view(v, cfg.num_players),
        ("aec", "gym"),
    ),
    EnvOption(
        "max_cycles",
        None,
        "truncate after max_cycles x num_players agent steps (aec) or max_cycles learner steps (gym); None: no limit",
        lambda v, cfg, opts: check_max_cycles(v),
        ("aec", "gym", "vector"),
    ),
    EnvOption(
        "learner_seat",
        0,
        "the learner's seat, or 'random' for a new seat each episode drawn from the env's np_random",
        lambda v, cfg, opts: check_learner_seat(v, cfg.num_players),
        ("gym", "vector"),
    ),
    EnvOption(
        "opponents",
        None,
        "the policies of the other seats: one for every seat or a list of one per seat, each an object with "
        "act(observation, action_mask) or (gym) an agent spec such as 'greedy' or 'expert:samples=8'; None: uniform "
        "random (the vector env takes 'random', 'greedy' and 'greedy:level=N', its compiled bots, policy objects "
        "and OpponentMix). An opponent with a level (greedy:level=2) in rules without vocabularies: the engine lays "
        "that seat only its level's words",
        lambda v, cfg, opts: check_opponents(v, cfg.num_players),
        ("gym", "vector"),
        {"vector": lambda v, cfg, opts: check_vector_opponents(v, cfg.num_players)},
    ),
    EnvOption(
        "slot_offset",
        0,
        "sub-env i deals the games of slot slot_offset + i of the seed: envs split over workers with offsets "
        "0, N, 2N, ... play the games of one env of all the slots",
        lambda v, cfg, opts: check_slot_offset(v),
        ("vector",),
    ),
    EnvOption(
        "autoreset_mode",
        "NextStep",
        "NextStep (Gymnasium's default) or SameStep: when a finished sub-env starts its next episode",
        lambda v, cfg, opts: check_autoreset_mode(v),
        ("vector",),
    ),
    EnvOption(
        "illegal_reward",
        -1.0,
        "the learner's reward for an illegal action, which ends the episode",
        lambda v, cfg, opts: check_illegal_reward(v),
        ("gym", "vector"),
    ),
    EnvOption(
        "infos",
        "full",
        "full: the round's results (ragged word lists) at a round end, winners at the end (vector: keys only in the "
        "steps that have them); flat: the same keys every step, numbers and fixed-length arrays, which collectors "
        "can stack (the words: last_round_results())",
        lambda v, cfg, opts: check_infos(v),
        ("aec", "gym", "vector"),
    ),
    EnvOption(
        "illegal_action",
        "terminate",
        "an illegal action: 'terminate' ends the episode with reward 0, 'raise' raises IllegalActionError",
        lambda v, cfg, opts: check_illegal_action(v),
        ("solitaire",),
    ),
)
_OPTIONS_BY_KIND: dict[str, tuple[EnvOption, ...]] = {
    kind: tuple(o for o in ENV_OPTIONS if kind in o.kinds) for kind in ENV_KINDS
}


def _options_of(kind: str) -> tuple[EnvOption, ...]:
    try:
        return _OPTIONS_BY_KIND[kind]
    except (KeyError, TypeError):
        raise ValueError(f"unknown env kind {kind!r}; known: {', '.join(ENV_KINDS)}") from None


def env_option_names(kind: str) -> tuple[str, ...]:
    """The env options (not the rule fields) that env `kind` takes, in `ENV_OPTIONS` order."""
    return tuple(o.name for o in _options_of(kind))


def env_option_defaults(kind: str) -> dict[str, Any]:
    """Name -> default of every env option of `kind`."""
    return {o.name: o.default for o in _options_of(kind)}


def check_env_options(kind: str, options: Mapping[str, Any], config: QuiddlerConfig) -> dict[str, Any]:
    """Check the env options of env `kind` under the rules `config`; returns every option of `kind`,
    defaults filled in, each as the env uses it (reward_scale as a number, render_view 'player_2' as 2,
    a single opponent policy as a list of one per seat). An unknown key is a ValueError naming it."""
    table = _options_of(kind)
    names = [o.name for o in table]
    unknown = sorted(k for k in options if k not in names)
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(map(repr, unknown))} of a {kind} env; known options: {', '.join(names)}"
        )
    resolved: dict[str, Any] = {}
    for option in table:
        check = option.kind_checks.get(kind, option.check)
        resolved[option.name] = check(options.get(option.name, option.default), config, resolved)
    return resolved


def shipped_env_config_dir() -> Path | None:
    """The folder of the shipped env configs: the checkout's `configs/env/`, or where the wheel installs that
    folder (`quiddler_agents/configs/env/` beside `quiddler_env/`; data only, nothing of that package is imported)."""
    root = Path(__file__).resolve().parents[2]  # the checkout, or site-packages
    for folder in (root / "quiddler_agents" / "configs" / "env", root / "configs" / "env"):
        if (folder / "default.yaml").is_file():
            return folder
    return None


def shipped_env_configs() -> list[str]:
    """The names of the shipped env configs (`config="default"`)."""
    folder = shipped_env_config_dir()
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder else []


def env_config_path(config: str | os.PathLike) -> Path:
    """`config` itself when it is a file or names a folder (then it must exist: a ValueError naming the shipped
    configs otherwise); a bare name (`default`, `default.yaml`) that is no file here is the shipped env config of
    that name, else a ValueError listing them."""
    given = Path(config)
    if given.is_file() or given.parent != Path("."):
        if not os.path.lexists(given):
            raise ValueError(
                f"env config file {given} does not exist (the shipped env configs go by name: "
                f"{', '.join(map(repr, shipped_env_configs())) or 'none'})"
            )
        return given
    folder = shipped_env_config_dir()
    shipped = folder / f"{given.stem}.yaml" if folder and given.suffix in ("", ".yaml") else None
    if shipped is not None and shipped.is_file():
        return shipped
    raise ValueError(
        f"env config {str(config)!r}: no such file, and no shipped env config of that name "
        f"(shipped: {', '.join(shipped_env_configs()) or 'none'})"
    )


ENV_OPTION_DEFAULTS: dict[str, Any] = env_option_defaults("aec")
"""The AEC env's options and defaults (from `ENV_OPTIONS`; None scale: the mode's default)."""

ConfigSource = str | os.PathLike | Mapping[str, Any] | QuiddlerConfig | None


def resolve_options(
    config: ConfigSource,
    options: Mapping[str, Any],
    defaults: str | Mapping[str, Any] = "aec",
) -> tuple[QuiddlerConfig, dict[str, Any]]:
    """Split a YAML path (or a shipped env config's name, `env_config_path`) / mapping / config plus keyword
    options into a `QuiddlerConfig` and env options.

    Keyword options override the file. `defaults` is an env kind ("aec", "gym", "solitaire"):
    the env options come back checked by `check_env_options`; or a mapping of option defaults:
    they come back unchecked, defaults filled in. A key that is neither a config field nor an
    option raises a ValueError naming it and the known keys.
    """
    kind = defaults if isinstance(defaults, str) else None
    names = env_option_names(kind) if kind is not None else tuple(defaults)
    fields = QuiddlerConfig.field_names()
    base: dict[str, Any] = {}
    if isinstance(config, QuiddlerConfig):
        base = config.to_dict()
    elif isinstance(config, (str, os.PathLike)):
        base = read_yaml_mapping(env_config_path(config), what="env config file")
    elif isinstance(config, Mapping):
        base = dict(config)
    elif config is not None:
        raise ValueError(
            f"config must be a YAML path, a mapping or a QuiddlerConfig, got {type(config).__name__}: {config!r}"
        )
    merged = {**base, **options}
    unknown = sorted((k for k in merged if k not in fields and k not in names), key=str)
    if unknown:
        known = ", ".join(list(fields) + list(names))
        raise ValueError(f"unknown option(s) {', '.join(map(repr, unknown))}; known options: {known}")
    game_config = QuiddlerConfig.from_mapping({k: v for k, v in merged.items() if k in fields})
    if kind is not None:
        return game_config, check_env_options(kind, {k: merged[k] for k in names if k in merged}, game_config)
    return game_config, {k: merged.get(k, v) for k, v in defaults.items()}


# -- spaces -------------------------------------------------------------------------------


def observation_bounds(config: QuiddlerConfig) -> tuple[np.ndarray, np.ndarray]:
    """Per-entry (low, high) float32 bounds of the observation vector under `config`."""
    n = config.num_players
    layout = observation_layout(n, config.challenges)
    s = layout.slices
    low = np.zeros(layout.size, dtype=np.float32)
    high = np.ones(layout.size, dtype=np.float32)
    counts = np.asarray(COUNTS, dtype=np.float32)
    for name in ("hand", "discard_pile", "unseen"):
        high[s[name]] = counts
    high[s["opponent_taken"]] = np.tile(counts, n - 1)
    high[s["laid_cards"]] = np.tile(counts, n)
    # A layout's card points lie within +- the points of the largest hand (used minus unused).
    points = max(config.hand_sizes) * max(POINTS) / TOTAL_SCALE
    for name in ("laid_figures", "candidates"):
        figures = s[name]
        low[figures.start : figures.stop : 3] = -points
        high[figures.start : figures.stop : 3] = points
    # A round adds at most every card's points plus both bonuses; floors decide whether it can lose points.
    bonus = 2 * abs(config.bonus_value)
    best = sum(size * max(POINTS) + bonus for size in config.hand_sizes)
    worst = 0 if config.score_floor != "none" else -best
    if config.challenges and config.score_floor == "none":
        # A challenger also loses the points of every word of the others it challenged that stood (each of them
        # lays a hand's cards at most), and the one who went out the penalty for a word that failed.
        worst -= sum((n - 1) * size * max(POINTS) + config.failed_go_out_penalty for size in config.hand_sizes)
    low[s["totals"]] = worst / TOTAL_SCALE
    high[s["totals"]] = best / TOTAL_SCALE
    if config.challenges:
        high[s["word_cards"]] = np.tile(counts, n * MAX_LAID_WORDS)
        high[s["word_figures"].start : s["word_figures"].stop : 2] = points
        high[s["challenge_record"]] = (n - 1) * MAX_LAID_WORDS  # every word of the others, challenged once
    return low, high


def observation_box(config: QuiddlerConfig) -> spaces.Box:
    low, high = observation_bounds(config)
    return spaces.Box(low=low, high=high, dtype=np.float32)


def action_mask_box(config: QuiddlerConfig | None = None) -> spaces.Box:
    """The mask's space: one int8 per action of the table under `config`'s layout rule."""
    size = A.num_actions(config.layout, config.challenges) if config is not None else A.NUM_ACTIONS
    return spaces.Box(low=0, high=1, shape=(size,), dtype=np.int8)


def _draw_mask(draw: bool, take: bool, size: int) -> np.ndarray:
    mask = np.zeros(size, dtype=np.int8)
    mask[A.DRAW_PILE], mask[A.TAKE_DISCARD] = draw, take
    mask.flags.writeable = False  # shared: callers hand out copies
    return mask


_DRAW_MASKS = {
    (d, t, size): _draw_mask(d, t, size)
    for d in (False, True)
    for t in (False, True)
    for size in {A.num_actions(layout, challenges) for layout in ("auto", "choose") for challenges in (False, True)}
}


def legal_action_mask(game: QuiddlerGame) -> np.ndarray:
    """`game.legal_action_mask()`, read-only; a draw phase is answered by the game's own `is_legal`
    for its two actions and served from a cache (every other turn, so it saves a good share of mask time)."""
    if game.phase == Phase.DRAW:
        return _DRAW_MASKS[game.is_legal(A.DRAW_PILE), game.is_legal(A.TAKE_DISCARD), game.num_actions]
    mask = game.legal_action_mask()
    mask.flags.writeable = False
    return mask


# -- rewards and infos ----------------------------------------------------------------------


def leads(totals: Sequence[int]) -> list[int]:
    """Each seat's lead: its total minus the best total among the other seats (negative when behind)."""
    return [t - max(totals[:p] + totals[p + 1 :]) for p, t in enumerate(totals)]


def round_rewards(results: Sequence[RoundResult], totals_before: Sequence[int], mode: str, scale: float) -> list[float]:
    """Each seat's reward for a scored round.

    round_score: the points the round added to the seat's total (its round score, after
    the score floor), times `scale`; relative: that minus the opponents' mean; lead: how
    much the seat's lead over the best other total grew (so a game's rewards add up to its
    final lead: positive exactly when it won alone); win_loss: 0.
    """
    if mode == "win_loss":
        return [0.0] * len(results)
    totals_after = [r.total for r in results]
    if mode == "lead":
        before = leads(list(totals_before))
        return [(a - b) * scale for a, b in zip(leads(totals_after), before, strict=True)]
    gains = [after - before for after, before in zip(totals_after, totals_before, strict=True)]
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
    if action >= A.LAY_BASE:  # lay, pass and challenge moves: their table names
        return f"{agent}: {A.action_name(action)}"
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
        phase = game.phase.name.lower()
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
    "ENV_OPTIONS",
    "ENV_OPTION_DEFAULTS",
    "REWARD_MODES",
    "EnvOption",
    "IllegalActionError",
    "RenderModeError",
    "check_env_options",
    "check_learner_seat",
    "check_seed",
    "env_option_names",
    "reset_options",
    "observation_bounds",
    "observation_box",
    "resolve_options",
    "round_rewards",
    "game_rewards",
    "render_table",
]
