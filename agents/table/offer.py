"""What a page may ask the table server to load: the seats' agents and the rules' word lists.

A request names things the server then opens, so the page may only pick from what the
server offers: the registry's bots (their parameters within the registry's bounds), the
zoo's policies, and the policy bundles and word lists that the person who started the
server named on its command line (`--policy`, `--word-list`) or put in the games folder.
Any other path is refused with a one-line reason, so a page cannot make the server open
`/dev/zero` as a dictionary or unpickle a file as a policy.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from quiddler_env.core.dictionary import DEFAULT_NAME
from quiddler_env.core.levels import LEVELS, VOCABULARY_PREFIX
from quiddler_env.core.vocabulary import REFEREE, parse_vocabulary_spec

from ..registry import REGISTRY, parse_spec
from ..zoo import entries, summary

HUMAN = "human"


class NotOffered(ValueError):
    """A seat or rule naming something the table does not offer."""


class Offer:
    """The bundles and word lists a table may load: those given on its command line and those in its games folder."""

    def __init__(self, games_dir: Path, policies: Iterable[Path] = (), word_lists: Iterable[Path] = ()) -> None:
        self.games_dir = Path(games_dir).resolve()
        self.policies = {Path(p).resolve() for p in policies}
        self.word_lists = {Path(p).resolve() for p in word_lists}

    def agents(self) -> list[str]:
        """The seats the page lists: the registry's bots, the zoo's policies and the offered bundles."""
        bots = [name for name, spec in REGISTRY.items() if name not in (HUMAN, "policy", "zoo")]
        return bots + [f"zoo:{e}" for e in entries()] + [f"policy:{p}" for p in sorted(map(str, self.policies))]

    def levels(self) -> list[dict[str, Any]]:
        """The shipped levels a bot's seat may take (`quiddler_env.core.levels.LEVELS`), weakest first."""
        return [{"number": lv.number, "name": lv.name, "words": lv.words} for lv in LEVELS]

    def leveled(self) -> list[str]:
        """The offered bots that take a `level` (the registry's parameters): `greedy`, `expert`, `search`, `guided`."""
        return [name for name in self.agents() if name in REGISTRY and "level" in REGISTRY[name].params]

    def about(self) -> dict[str, str]:
        """What each offered seat is, in a line (the registry's summary, the zoo entry's evaluation headline)."""
        about = {}
        for spec in self.agents():
            name, _, rest = spec.partition(":")
            if name == "zoo":
                try:
                    about[spec] = summary(rest)
                except (OSError, ValueError):
                    about[spec] = "a shipped policy"
            elif name == "policy":
                about[spec] = "a policy bundle this table was started with"
            else:
                about[spec] = REGISTRY[name].summary
        return about

    def seat(self, spec: Any) -> str:
        """The seat's spec if the table offers it (a ValueError names the problem otherwise)."""
        if not isinstance(spec, str):
            raise NotOffered(f"a seat is an agent spec (a text), got {spec!r}")
        if spec == HUMAN:
            return spec
        name = spec.strip().partition(":")[0].strip()
        if name not in REGISTRY:  # said in one line, with what the table offers (the registry's list is long)
            offered = ", ".join([HUMAN, *self.agents(), "policy:PATH"])
            raise NotOffered(f"unknown agent {name!r} in seat {spec!r}; this table offers: {offered}")
        name, path, _ = parse_spec(spec)  # names, parameters and their bounds are the registry's
        if name == HUMAN:
            raise NotOffered(f"seat {spec!r}: the human seat is written 'human'")
        if name == "policy":  # the bundle by its full path: the page's name may be relative to the games folder
            bundle = self._path(path, self.policies, "policy bundle", "--policy")
            return f"policy:{bundle}{spec.strip()[len('policy:') + len(path) :]}"
        return spec

    def rules(self, rules: dict[str, Any]) -> dict[str, Any]:
        """The rules with each word list checked against what the table offers, named by its full path."""
        rules = dict(rules)
        dictionary = rules.get("dictionary", DEFAULT_NAME)
        if dictionary != DEFAULT_NAME:
            rules["dictionary"] = str(self._path(dictionary, self.word_lists, "word list", "--word-list", "dictionary"))
        vocabularies = rules.get("vocabularies") or []
        if isinstance(vocabularies, str):
            vocabularies = [vocabularies]
        if not isinstance(vocabularies, list):
            raise NotOffered("rules: vocabularies must be a list of vocabulary specs")
        checked = []
        for spec in vocabularies:
            if not isinstance(spec, str):
                raise NotOffered(f"rules: vocabularies: {spec!r} is not a vocabulary spec")
            try:
                source, _, _ = parse_vocabulary_spec(spec)
            except ValueError as exc:
                raise NotOffered(f"rules: vocabularies: {exc}") from None
            if source not in (REFEREE, DEFAULT_NAME) and not source.startswith(VOCABULARY_PREFIX):  # level-N: shipped
                words = self._path(source, self.word_lists, "word list", "--word-list", "vocabularies")
                spec = f"{words}{spec[len(source) :]}"  # the subset's :P:SEED, if any, kept
            checked.append(spec)
        if "vocabularies" in rules:
            rules["vocabularies"] = checked
        return rules

    def _path(self, text: Any, given: set[Path], what: str, flag: str, field: str | None = None) -> Path:
        """The offered file `text` names (absolute, or relative to the games folder)."""
        where = f"rules: {field}: " if field else ""
        if not isinstance(text, str) or not text:
            raise NotOffered(f"{where}a {what} is named by a text, got {text!r}")
        path = Path(text)
        resolved = (path if path.is_absolute() else self.games_dir / path).resolve()
        if resolved in given or resolved.is_relative_to(self.games_dir):
            return resolved
        raise NotOffered(
            f"{where}{what} {text!r} is not offered: this table loads those named with {flag} "
            f"when it was started, or kept in its games folder"
        )
