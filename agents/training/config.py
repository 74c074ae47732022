"""The run configuration of train.py: YAML in, validated frozen dataclasses out.

A run config is a YAML mapping with these top-level keys, each optional with a default
(see `configs/quickstart.yaml`); an empty file is refused, since it would silently run
every default:

| key | content |
|---|---|
| `name` | the run's name (default: the config file's stem) |
| `backend` | `sb3` (MaskablePPO from sb3-contrib, the default) or `rllib` |
| `seed` | the run's seed: model init, env deals, opponents' draws |
| `run_dir` | output folder (default `runs/<name>`) |
| `env` | the rules (`QuiddlerConfig` fields; `RunConfig.rules`), the options of `Quiddler-v0` (`RUN_ENV_OPTIONS`: `reward_mode`, `reward_scale`, `learner_seat`, `max_cycles`, `illegal_reward`; checked by the env; `RunConfig.env_options`) and the backend's own (sb3: `layout_shaping`; `RunConfig.backend_env`) |
| `opponents` | list of `{spec, weight}`: agent specs (`random`, `greedy`, `expert`, `policy:PATH`) drawn per episode and seat with these weights |
| `league` | self-play: `enabled`, `snapshot_every`, `pool_size`, `weight` (of the pool against the bots), `deterministic` |
| `algo` | MaskablePPO hyperparameters (`PPOConfig`) |
| `train` | `total_timesteps`, `n_envs`, `vec_env` (`auto`, `dummy`, `subproc`, or `batched`: every game in the batched engine, sb3 only), `checkpoint_every`, `keep_checkpoints`, `progress_bar`, `torch_threads`, `log_interval` |
| `eval` | periodic evaluation: `every`, `games`, `opponents` (each a spec, which fills every other seat, or a list of one spec per other seat: a mixed table), `deterministic`, `seed`, `at_start` |
| `pretrain` | imitation warm start before PPO: `teacher` (an agent spec, or null: none), `games`, `epochs`, `batch_size`, `learning_rate`, `value_coef`, then `dagger_rounds` rounds of `dagger_games` games in which the learner plays and the teacher (or `dagger_teacher`) labels its decisions (DAgger; `guided` without `policy=` is guided by the learner's network: expert iteration); `soft_labels` (a temperature: fit to the teacher's values, not its moves); `eval_each_round` |
| the backend's sections | e.g. `ray` and `rllib` for `backend: rllib` (see `quiddler_agents.training.rllib.config`); declared by the backend (`quiddler_agents.training.backends`) |

Files are read with `yaml.safe_load`; nothing is evaluated. An unknown key or a bad
value raises `RunConfigError` naming the dotted key (`algo.n_steps`), the value and
what is allowed. Command-line overrides are `dotted.key=value` strings whose value
is read as YAML (`train.total_timesteps=50000`, `algo.net_arch=[64,64]`,
`eval.opponents=[random]`).

The rules are parsed once, into the `QuiddlerConfig` of `RunConfig.rules`; the trainers, the training envs, the
evaluation, the league and the pretraining all receive that object (none reads the rules back from a mapping).
`RunConfig.env` and `to_dict()` give the `env` section back in the shape a run folder's config.yaml has.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from quiddler_env.core import files
from quiddler_env.core.config import QuiddlerConfig
from quiddler_env.envs.common import check_env_options, env_option_names

from ..policies.bundle import ACTIVATIONS
from .backends import BACKENDS, backend_part
from .checks import (
    RunConfigError,
    bad,
    between,
    boolean,
    checked,
    is_int,
    known,
    mapping,
    non_negative_int,
    number,
    one_of,
    optional,
    owned,
    parse_section,
    positive_int,
    string,
)

VEC_ENVS = ("auto", "dummy", "subproc", "batched")
RUN_ENV_OPTIONS = tuple(
    n for n in env_option_names("gym") if n not in ("opponents", "render_mode", "render_view", "infos")
)
"""The options of `Quiddler-v0` a run may set besides the rules (derived from the env's own table; the opponents
have their own section, rendering is not for training, and training reads the full infos: winners, round results).
A backend adds its own (`ENV_OPTIONS` of its config)."""

SECTIONS = ("name", "backend", "seed", "run_dir", "env", "opponents", "league", "algo", "train", "eval", "pretrain")
"""The top-level keys every run config may have (a backend adds its own sections)."""


@dataclass(frozen=True)
class Schedule:
    """A value that is constant (`start == end`) or linear from `start` (step 0) to `end` (the last step)."""

    start: float
    end: float

    @property
    def constant(self) -> bool:
        return self.start == self.end

    def __call__(self, progress_remaining: float) -> float:
        # SB3's convention: progress_remaining goes from 1 (start) to 0 (end of training).
        return float(self.end + (self.start - self.end) * progress_remaining)

    def to_yaml(self) -> float | dict[str, float]:
        return self.start if self.constant else {"start": self.start, "end": self.end}

    @classmethod
    def parse(cls, key: str, v: Any, *, low: float = 0.0, open_low: bool = True) -> Schedule:
        """A number (constant) or `{start: a, end: b}` (linear over the run)."""
        if isinstance(v, Mapping):
            known(key, v, ("start", "end"))
            if "start" not in v:
                raise RunConfigError(f"config key {key + '.start'!r} is missing (a schedule is {{start: a, end: b}})")
            start = number(f"{key}.start", v["start"], low, open_low=open_low)
            end = number(f"{key}.end", v.get("end", start), 0.0)
            return cls(start, end)
        value = number(key, v, low, open_low=open_low)
        return cls(value, value)


@dataclass(frozen=True)
class OpponentEntry:
    """One agent spec of the opponent mixture and its weight."""

    spec: str
    weight: float = 1.0


def _net_arch(key: str, v: Any) -> dict[str, tuple[int, ...]]:
    """`[64, 64]` (the same layers for the policy and the value net) or `{pi: [...], vf: [...]}`."""

    def layers(k: str, x: Any) -> tuple[int, ...]:
        if isinstance(x, (str, bytes)) or not isinstance(x, Sequence) or not all(is_int(n) and n >= 1 for n in x):
            raise bad(k, x, "a list of positive layer sizes, e.g. [128, 128]")
        return tuple(x)

    if isinstance(v, Mapping):
        known(key, v, ("pi", "vf"))
        if set(v) != {"pi", "vf"}:
            raise RunConfigError(f"config key {key!r}: needs both 'pi' and 'vf' (or one list for both)")
        return {"pi": layers(f"{key}.pi", v["pi"]), "vf": layers(f"{key}.vf", v["vf"])}
    shared = layers(key, v)
    return {"pi": shared, "vf": shared}


def _device(key: str, v: Any) -> str:
    if string(key, v) not in ("cpu", "cuda", "auto") and not v.startswith("cuda:"):
        raise bad(key, v, "cpu, cuda, cuda:N or auto")
    return v


def _features(key: str, v: Any) -> str:
    from quiddler_env.features import FEATURE_SETS

    return one_of(*FEATURE_SETS)(key, v)


def _spec(key: str, v: Any) -> str:
    """An agent spec, checked against the agent registry (names and parameters, not files)."""
    from ..registry import parse_spec

    if not isinstance(v, str):
        raise bad(key, v, "an agent spec string such as random, greedy, expert:samples=16 or policy:PATH")
    try:
        name, _, _ = parse_spec(v)
    except ValueError as exc:
        raise RunConfigError(f"config key {key!r}: {exc}") from None
    if name == "human":
        raise bad(key, v, "a spec that plays by itself (not human)")
    return v


def guided_by_learner(spec: str) -> bool:
    """Whether `spec` is `guided` with no `policy=`: in a run's warm start, the search guided by the learner's own
    network (expert iteration), so there is no policy to load before the run."""
    from ..registry import parse_spec

    name, _, params = parse_spec(spec)
    return name == "guided" and "policy" not in params


def _specs(key: str, v: Any) -> tuple[str, ...]:
    if isinstance(v, str) or not isinstance(v, Sequence) or not v:
        raise bad(key, v, "a non-empty list of agent specs, e.g. [random, greedy]")
    out = tuple(_spec(f"{key}[{i}]", x) for i, x in enumerate(v))
    if len(set(out)) != len(out):
        raise bad(key, list(v), "distinct agent specs")
    return out


def _eval_opponents(key: str, v: Any) -> tuple[str | tuple[str, ...], ...]:
    """`eval.opponents`: entries that are a spec (every other seat plays it) or a list of specs (one per seat)."""
    if isinstance(v, str) or not isinstance(v, Sequence) or not v:
        raise bad(key, v, "a non-empty list of agent specs or seat lists, e.g. [greedy, [expert, greedy, greedy]]")
    out: list[str | tuple[str, ...]] = []
    for i, entry in enumerate(v):
        if isinstance(entry, str):
            out.append(_spec(f"{key}[{i}]", entry))
        elif isinstance(entry, Sequence) and entry:
            out.append(tuple(_spec(f"{key}[{i}][{j}]", x) for j, x in enumerate(entry)))
        else:
            raise bad(f"{key}[{i}]", entry, "an agent spec, or a non-empty list of one agent spec per other seat")
    if len(set(out)) != len(out):
        raise bad(key, list(v), "distinct entries")
    return tuple(out)


def eval_tables(cfg: RunConfig) -> list[tuple[str, tuple[str, ...]]]:
    """Each `eval.opponents` entry as (its name in eval.csv, the specs of the seats beside the policy)."""
    others = cfg.rules.num_players - 1
    return [
        (entry, (entry,) * others) if isinstance(entry, str) else ("+".join(entry), entry)
        for entry in cfg.eval.opponents
    ]


def _schedule(key: str, v: Any) -> Schedule:
    return Schedule.parse(key, v)


_UNIT = between(0.0, 1.0)
_NON_NEGATIVE = between(0.0)
_POSITIVE = between(0.0, open_low=True)


@dataclass(frozen=True)
class PPOConfig:
    """MaskablePPO hyperparameters (names as in sb3-contrib), each with its check."""

    n_steps: int = checked(1024, positive_int)
    batch_size: int = checked(256, positive_int)
    n_epochs: int = checked(5, positive_int)
    learning_rate: Schedule = checked(Schedule(3e-4, 3e-4), _schedule)
    gamma: float = checked(0.99, _UNIT)
    gae_lambda: float = checked(0.95, _UNIT)
    clip_range: Schedule = checked(Schedule(0.2, 0.2), _schedule)
    ent_coef: float = checked(0.01, _NON_NEGATIVE)
    vf_coef: float = checked(0.5, _NON_NEGATIVE)
    max_grad_norm: float = checked(0.5, _POSITIVE)
    target_kl: float | None = checked(None, optional(_POSITIVE))
    normalize_advantage: bool = checked(True, boolean)
    net_arch: dict[str, tuple[int, ...]] = checked(
        check=_net_arch, factory=lambda: {"pi": (128, 128), "vf": (128, 128)}
    )
    activation: str = checked("Tanh", one_of(*ACTIVATIONS))
    ortho_init: bool = checked(True, boolean)
    device: str = checked("cpu", _device)
    observation_features: str | None = checked(None, optional(_features))
    """A feature set of `quiddler_env.features` appended to the observation (e.g. solver_v1), or null."""
    privileged_critic: bool = checked(False, boolean)
    """The value network also reads the whole game (every hand, the draw pile: the AEC env's `state()`, seat-relative
    to the learner), the policy only its observation, as PerfectDou's "perfect-training, imperfect-execution"
    (`quiddler_agents.policies.privileged`). The bundle plays from the plain observation. sb3 only, without
    `pretrain.teacher`."""
    action_features: bool = checked(False, boolean)
    """The policy head also reads each move's own solver features, weighed by the state
    (`quiddler_agents.policies.action_head`): needs `observation_features` solver_v1 or solver_v2. sb3 only."""
    init_policy: str | None = checked(None, optional(string))
    """A policy bundle (its folder, a run folder or `zoo:NAME`) whose weights a new run starts from, before any
    `pretrain`: the same network and features; with `action_features` a plain bundle fills all but the new head's
    weights, which start at zero (so the run starts playing exactly as the bundle). sb3 only."""

    def to_yaml(self) -> dict[str, Any]:
        out = asdict(self)
        out["learning_rate"] = self.learning_rate.to_yaml()
        out["clip_range"] = self.clip_range.to_yaml()
        out["net_arch"] = {k: list(v) for k, v in self.net_arch.items()}
        return out


@dataclass(frozen=True)
class LeagueConfig:
    """Self-play: frozen copies of the learner join a bounded pool the opponents are drawn from."""

    enabled: bool = checked(False, boolean)
    snapshot_every: int = checked(50_000, positive_int)
    """Steps between two frozen copies joining the pool."""
    pool_size: int = checked(5, positive_int)
    """The newest `pool_size` copies stay in the pool."""
    weight: float = checked(1.0, _POSITIVE)
    """Weight of the pool as one entry of the opponent mixture (its members are drawn uniformly)."""
    deterministic: bool = checked(False, boolean)
    """Whether pool members play their most probable move (else they sample from the policy)."""


@dataclass(frozen=True)
class TrainConfig:
    """How long and how: steps, vector env, checkpoints, progress display."""

    total_timesteps: int = checked(100_000, positive_int)
    n_envs: int = checked(1, positive_int)
    vec_env: str = checked("auto", one_of(*VEC_ENVS))
    """auto: DummyVecEnv for 1 env, SubprocVecEnv for more; batched: all n_envs games in the batched engine (sb3)."""
    checkpoint_every: int = checked(50_000, positive_int)
    keep_checkpoints: int = checked(3, positive_int)
    progress_bar: bool = checked(True, boolean)
    """Training's progress: a bar on a terminal, a line every tenth elsewhere; false: neither (the phases' own lines
    stay; `--quiet` silences everything)."""
    torch_threads: int = checked(1, positive_int)
    """Threads of the learner's torch (a small MLP gains nothing from more on a busy CPU)."""
    log_interval: int = checked(1, positive_int)
    """Rollouts between two rows of train.csv / TensorBoard."""


@dataclass(frozen=True)
class EvalConfig:
    """Periodic evaluation of the learner against bots (seeded deals, the same at every evaluation)."""

    every: int = checked(50_000, positive_int)
    games: int = checked(100, positive_int)
    opponents: tuple[str | tuple[str, ...], ...] = checked(("random", "greedy"), _eval_opponents)
    """Each a spec (copies of it fill the other seats) or a list of specs, one per other seat (seats rotated)."""
    deterministic: bool = checked(True, boolean)
    seed: int = checked(12345, non_negative_int)
    at_start: bool = checked(True, boolean)
    """Also evaluate the untrained policy (the learning curve's first point)."""


@dataclass(frozen=True)
class PretrainConfig:
    """Imitation warm start (`quiddler_agents.training.sb3.pretrain`): copy a teacher bot before PPO; off without a teacher."""

    teacher: str | None = checked(None, optional(_spec))
    games: int = checked(1000, positive_int)
    epochs: int = checked(10, positive_int)
    batch_size: int = checked(256, positive_int)
    learning_rate: float = checked(1e-3, _POSITIVE)
    value_coef: float = checked(0.5, _NON_NEGATIVE)
    dagger_rounds: int = checked(0, non_negative_int)
    """DAgger: after the first fit, rounds in which the learner plays and the teacher labels its decisions."""
    dagger_games: int = checked(1000, positive_int)
    """Games the learner plays in each DAgger round."""
    soft_labels: float | None = checked(None, optional(_POSITIVE))
    """A temperature in points: fit the policy to softmax(value / T) over the moves the teacher weighed (a teacher
    that reports its values, `search`), not to its one move; null: its moves."""
    dagger_teacher: str | None = checked(None, optional(_spec))
    """The DAgger rounds' labeller (null: `teacher`). `guided` without `policy=` is the search guided by the learner's
    own network as it stands at each round: expert iteration."""
    eval_each_round: bool = checked(False, boolean)
    """Evaluate the learner (`eval.opponents`, `eval.games`) after the first fit and after each DAgger round."""


@dataclass(frozen=True)
class RunConfig:
    """Everything about one training run (see the module docstring)."""

    name: str
    backend: str = "sb3"
    seed: int = 0
    run_dir: str | None = None
    rules: QuiddlerConfig = QuiddlerConfig()
    """The rules of the run (the `QuiddlerConfig` fields of the `env` section), built and checked once when the
    config is parsed; every part of the run receives this object."""
    env_options: dict[str, Any] = field(default_factory=dict)
    """The options of `Quiddler-v0` (`RUN_ENV_OPTIONS`: reward mode, learner seat, ...), each as checked by the env,
    every one present."""
    backend_env: dict[str, Any] = field(default_factory=dict)
    """The env options the backend declares itself (its config's `ENV_OPTIONS`, e.g. sb3's `layout_shaping`),
    each checked by the backend, every one present."""
    opponents: tuple[OpponentEntry, ...] = (OpponentEntry("random", 1.0),)
    league: LeagueConfig = LeagueConfig()
    algo: PPOConfig = PPOConfig()
    train: TrainConfig = TrainConfig()
    eval: EvalConfig = EvalConfig()
    pretrain: PretrainConfig = PretrainConfig()
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The backend's own sections (e.g. `ray` and `rllib` for `backend: rllib`), resolved by its config module."""

    # -- derived -----------------------------------------------------------------------------

    @property
    def env(self) -> dict[str, Any]:
        """The `env` section as a run folder's config.yaml writes it: every rule, then every env option, then the
        backend's own (a new dict each time; the parts are `rules`, `env_options` and `backend_env`)."""
        return {**self.rules.to_dict(), **copy.deepcopy(self.env_options), **copy.deepcopy(self.backend_env)}

    @property
    def num_players(self) -> int:
        return self.rules.num_players

    def output_dir(self) -> Path:
        return Path(self.run_dir) if self.run_dir else Path("runs") / self.name

    def to_dict(self) -> dict[str, Any]:
        """Plain types, the resolved config as written to the run folder (reads back to an equal config)."""
        out = {
            "name": self.name,
            "backend": self.backend,
            "seed": self.seed,
            "run_dir": self.run_dir,
            "env": self.env,
            "opponents": [{"spec": o.spec, "weight": o.weight} for o in self.opponents],
            "league": asdict(self.league),
            "algo": self.algo.to_yaml(),
            "train": asdict(self.train),
            "eval": {
                **asdict(self.eval),
                "opponents": [e if isinstance(e, str) else list(e) for e in self.eval.opponents],
            },
            "pretrain": asdict(self.pretrain),
        }
        out.update(copy.deepcopy(self.sections))
        return out

    # -- parsing -------------------------------------------------------------------------------

    @classmethod
    def from_yaml(cls, path: str | os.PathLike, overrides: Sequence[str] = ()) -> RunConfig:
        """A run config file (or a shipped config by name) with `dotted.key=value` overrides (`load_run_config`)."""
        return load_run_config(path, overrides)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, default_name: str = "run") -> RunConfig:
        """Validate a parsed YAML mapping; errors name the dotted key."""
        data = mapping("", data)
        backend = data.get("backend", "sb3")
        if backend not in BACKENDS:
            raise bad("backend", backend, ", ".join(BACKENDS))
        backend_config = backend_part(backend, "config")
        shared = list(SECTIONS)
        foreign = [k for k in data if k not in shared and k not in backend_config.SECTIONS]
        if foreign and any(foreign[0] in backend_part(b, "config").SECTIONS for b in BACKENDS if b != backend):
            raise RunConfigError(f"config key {foreign[0]!r}: not a section of backend {backend!r}")
        known("", data, shared + list(backend_config.SECTIONS))
        name = data.get("name", default_name)
        if not isinstance(name, str) or not name or any(c in name for c in "/\\") or name in (".", ".."):
            raise bad("name", name, "a non-empty name without slashes")
        seed = data.get("seed", 0)
        if not is_int(seed) or seed < 0:
            raise bad("seed", seed, "a non-negative integer")
        run_dir = data.get("run_dir")
        if run_dir is not None and (not isinstance(run_dir, (str, os.PathLike)) or not str(run_dir)):
            raise bad("run_dir", run_dir, "a folder path, or null for runs/<name>")
        rules, env_options, backend_env = _parse_env(mapping("env", data.get("env")), backend_config.ENV_OPTIONS)
        opponents = _parse_opponents(data.get("opponents", [{"spec": "random", "weight": 1.0}]))
        league = parse_section(LeagueConfig, "league", mapping("league", data.get("league")))
        algo = parse_section(PPOConfig, "algo", mapping("algo", data.get("algo")))
        train = parse_section(TrainConfig, "train", mapping("train", data.get("train")))
        evaluation = parse_section(EvalConfig, "eval", mapping("eval", data.get("eval")))
        pretrain = parse_section(PretrainConfig, "pretrain", mapping("pretrain", data.get("pretrain")))
        sections = backend_config.resolve_sections({k: mapping(k, data.get(k)) for k in backend_config.SECTIONS})
        cfg = cls(
            name=name,
            backend=backend,
            seed=seed,
            run_dir=str(run_dir) if run_dir is not None else None,
            rules=rules,
            env_options=env_options,
            backend_env=backend_env,
            opponents=opponents,
            league=league,
            algo=algo,
            train=train,
            eval=evaluation,
            pretrain=pretrain,
            sections=sections,
        )
        _check_variant(cfg)
        _check_eval_tables(cfg)
        backend_config.check_run(cfg)
        return cfg


def _check_eval_tables(cfg: RunConfig) -> None:
    """A seat list in `eval.opponents` names one spec for each seat beside the policy."""
    n = cfg.rules.num_players
    for i, entry in enumerate(cfg.eval.opponents):
        if not isinstance(entry, str) and len(entry) != n - 1:
            raise bad(f"eval.opponents[{i}]", list(entry), f"{n - 1} specs, one per other seat of a {n}-player table")


def eval_specs(cfg: RunConfig) -> list[tuple[str, str]]:
    """Every spec in `eval.opponents`, with its dotted key (for the checks that look at each spec)."""
    return [
        (f"eval.opponents[{i}]" + ("" if isinstance(e, str) else f"[{j}]"), spec)
        for i, e in enumerate(cfg.eval.opponents)
        for j, spec in enumerate((e,) if isinstance(e, str) else e)
    ]


def _check_variant(cfg: RunConfig) -> None:
    """What the challenge variant (`env.challenges: true`) cannot run with: the solver features (they read the
    referee's words, not the seat's vocabulary)."""
    if not cfg.rules.challenges:
        return
    if cfg.algo.observation_features is not None:
        raise bad(
            "algo.observation_features",
            cfg.algo.observation_features,
            "null with env.challenges: true (the features read the referee's words, not the seat's vocabulary)",
        )


def _parse_env(
    env: dict[str, Any], backend_options: Mapping[str, Any]
) -> tuple[QuiddlerConfig, dict[str, Any], dict[str, Any]]:
    """The `env` section split by owner and checked by it: the rules (`QuiddlerConfig`), the options of
    `Quiddler-v0` (the env's own table, every one resolved) and the backend's own (every one resolved)."""
    fields = QuiddlerConfig.field_names()
    known("env", env, list(fields) + list(RUN_ENV_OPTIONS) + list(backend_options))
    try:
        rules = QuiddlerConfig.from_mapping({k: v for k, v in env.items() if k in fields})
    except ValueError as exc:
        raise RunConfigError(str(exc).replace("config key '", "config key 'env.")) from None
    # Training's one default of its own: the learner sits at a random seat each game (the env's default is seat 0).
    given = {"learner_seat": "random", **{k: env[k] for k in RUN_ENV_OPTIONS if k in env}}
    checked_options = owned("env.", check_env_options, "gym", given, rules)
    # Every option is resolved, so a run folder's config.yaml names each one.
    options = {k: checked_options[k] for k in RUN_ENV_OPTIONS}
    backend_env = {k: owned("env.", check, env.get(k, default)) for k, (default, check) in backend_options.items()}
    return rules, options, backend_env


def _parse_opponents(v: Any) -> tuple[OpponentEntry, ...]:
    if isinstance(v, str) or not isinstance(v, Sequence) or not v:
        raise bad("opponents", v, "a non-empty list of {spec: ..., weight: ...}")
    out = []
    for i, item in enumerate(v):
        key = f"opponents[{i}]"
        if isinstance(item, str):  # a bare spec: weight 1
            item = {"spec": item}
        if not isinstance(item, Mapping):
            raise bad(key, item, "{spec: <agent spec>, weight: <positive number>}")
        known(key, item, ("spec", "weight"))
        if "spec" not in item:
            raise RunConfigError(f"config key {key + '.spec'!r} is missing")
        spec = _spec(f"{key}.spec", item["spec"])
        weight = number(f"{key}.weight", item.get("weight", 1.0), 0.0, open_low=True)
        out.append(OpponentEntry(spec, weight))
    specs = [o.spec for o in out]
    if len(set(specs)) != len(specs):
        raise bad("opponents", specs, "distinct specs (merge their weights)")
    return tuple(out)


# -- reading, overrides ----------------------------------------------------------------------------


def parse_override(text: str) -> tuple[list[str], Any]:
    """`a.b.c=value` -> (['a', 'b', 'c'], value read as YAML)."""
    key, eq, raw = text.partition("=")
    key = key.strip()
    if not eq or not key:
        raise RunConfigError(f"override {text!r}: expected dotted.key=value, e.g. train.total_timesteps=50000")
    parts = key.split(".")
    if any(not p for p in parts):
        raise RunConfigError(f"override {text!r}: bad dotted key {key!r}")
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError as exc:
        raise RunConfigError(f"override {text!r}: the value is not valid YAML: {exc}") from None
    except RecursionError:  # the composer recurses once per level of nesting
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise RunConfigError(f"override {shown!r}: the value is not valid YAML: it nests too deeply to read") from None
    return parts, value


def apply_overrides(data: Mapping[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """A deep copy of `data` with each `dotted.key=value` set (sections are created as needed)."""
    out = copy.deepcopy(dict(data))
    for text in overrides:
        parts, value = parse_override(text)
        node = out
        for i, part in enumerate(parts[:-1]):
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                where = ".".join(parts[: i + 1])
                raise RunConfigError(f"override {text!r}: config key {where!r} is not a section")
            node = child
        node[parts[-1]] = value
    return out


def read_yaml(path: str | os.PathLike) -> dict[str, Any]:
    """A run config file: a YAML mapping; an empty file is an error (a run needs at least a name or a setting)."""
    try:
        return files.read_yaml_mapping(path, "config file", allow_empty=False)
    except ValueError as exc:
        raise RunConfigError(str(exc)) from None


def shipped_config_dir() -> Path | None:
    """The folder of the shipped run configs: in the installed package, or the checkout's `configs/`."""
    package = Path(__file__).resolve().parents[1]  # agents/ (a checkout) or quiddler_agents/ (installed)
    for folder in (package / "configs", package.parent / "configs"):
        if (folder / "quickstart.yaml").is_file():
            return folder
    return None


def shipped_configs() -> list[str]:
    """The names of the shipped run configs (`--config quickstart`)."""
    folder = shipped_config_dir()
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder else []


def resolve_config_path(path: str | os.PathLike) -> Path:
    """`path` itself when it is a file; else the shipped config of that name (`quickstart`, `quickstart.yaml`)."""
    given = Path(path)
    if given.is_file() or given.parent != Path("."):
        return given
    folder = shipped_config_dir()
    shipped = folder / f"{given.stem}.yaml" if folder and given.suffix in ("", ".yaml") else None
    if shipped is not None and shipped.is_file():
        return shipped
    raise RunConfigError(
        f"config {str(path)!r}: no such file, and no shipped config of that name (shipped: {', '.join(shipped_configs())})"
    )


def load_run_config(path: str | os.PathLike, overrides: Sequence[str] = ()) -> RunConfig:
    """Read a run config file (or a shipped one by name), apply `dotted.key=value` overrides, validate."""
    path = resolve_config_path(path)
    data = apply_overrides(read_yaml(path), overrides)
    try:
        return RunConfig.from_mapping(data, default_name=Path(path).stem)
    except RunConfigError as exc:
        raise RunConfigError(f"{path}: {exc}") from None


def dump_yaml(cfg: RunConfig) -> str:
    """The resolved config as YAML text (sections in a fixed order)."""
    return yaml.safe_dump(cfg.to_dict(), sort_keys=False, default_flow_style=False, width=120)
