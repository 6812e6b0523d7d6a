"""What the Tippen and Tapp rule sets share: option specifications, preset records,
``key=value`` parsing, and the options of a rule set as plain data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

OptionKind = Literal["bool", "int", "optint", "choice"]
OptionValue = bool | int | str | None
#: How the first dealer of a session is found (docs/rules-reference.md §2.1: the first Ace dealt face
#: up; §3.4: by lot).
FirstDealer = Literal["ace", "lot"]


class RuleError(ValueError):
    """A rule set id, option or configuration that cannot be played."""


_TRUE = {"true", "on", "yes", "1"}
_FALSE = {"false", "off", "no", "0"}


@dataclass(frozen=True)
class OptionSpec:
    """One option: its kind (bool, int, int-or-none, choice), help text and, for numbers,
    the documented bounds (a number outside them is refused before any deal)."""

    name: str
    kind: OptionKind
    help: str
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None

    def convert(self, raw: Any) -> OptionValue:
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise RuleError(f"option {self.name} takes true or false, not {raw!r}")
        if self.kind in ("int", "optint"):
            if self.kind == "optint" and (raw is None or str(raw).strip().lower() in ("none", "off", "")):
                return None
            if isinstance(raw, bool):
                raise RuleError(f"option {self.name} takes a whole number, not {raw!r}")
            text = str(raw).strip()
            # a bound on the text first: int() of a 4,300-digit string is refused by Python
            if len(text) > 12 or not text.lstrip("+-").isdigit():
                extra = " or none" if self.kind == "optint" else ""
                raise RuleError(f"option {self.name} takes a whole number{extra}"
                                f"{self._bounds_text()}, not {text[:20]!r}")
            value = int(text)
            if (self.minimum is not None and value < self.minimum) or (
                    self.maximum is not None and value > self.maximum):
                raise RuleError(f"option {self.name} must be{self._bounds_text()}, not {value}")
            return value
        if self.kind == "choice":
            text = str(raw).strip().lower()
            if text not in self.choices:
                raise RuleError(
                    f"option {self.name} takes one of {', '.join(self.choices)}, not {raw!r}"
                )
            return text
        raise AssertionError(self.kind)

    def _bounds_text(self) -> str:
        if self.minimum is not None and self.maximum is not None:
            return f" from {self.minimum} to {self.maximum}"
        if self.minimum is not None:
            return f" of at least {self.minimum}"
        return ""

    def describe_kind(self) -> str:
        if self.kind == "choice":
            return "|".join(self.choices)
        kind = {"bool": "true|false", "int": "integer", "optint": "integer|none"}[self.kind]
        if self.kind != "bool" and self.minimum is not None and self.maximum is not None:
            kind += f" {self.minimum}–{self.maximum}"
        return kind


@dataclass(frozen=True)
class Preset:
    """One named rule set: everything about it in one record.

    ``defaults`` holds a value for every field of the family's rules class (options and the
    fixed structure of the rule set); ``options`` names the fields a user may set for this
    preset, in the order they are listed; the rest is fixed by the rule set.
    """

    id: str
    family: Literal["tippen", "tapp"]
    title: str
    min_players: int
    max_players: int
    defaults: Mapping[str, Any]
    options: tuple[str, ...]
    first_dealer: FirstDealer
    #: Tippen only: the most players with the 52-card pack (the rule set's extension).
    max_players_whist52: int | None = None
    summary: str = field(default="")

    def __post_init__(self) -> None:
        missing = [o for o in self.options if o not in self.defaults]
        if missing:
            raise AssertionError(f"{self.id}: options without a default: {missing}")


class RuleSet(Protocol):
    """What every rules class offers (``TippenRules``, ``TappRules``): read-only, as the
    rules classes are frozen dataclasses."""

    @property
    def id(self) -> str: ...

    @property
    def players(self) -> int: ...

    @property
    def pack(self) -> str: ...

    @property
    def family(self) -> Literal["tippen", "tapp"]: ...

    @property
    def preset(self) -> Preset: ...

    @classmethod
    def build(cls, ruleset_id: str, values: dict[str, Any]) -> RuleSet:
        """A validated rule set of this class from every field's value."""
        ...


def parse_override(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise RuleError(f"option {text!r} is not of the form key=value (e.g. knocking=true)")
    key, value = text.split("=", 1)
    return key.strip(), value.strip()


def format_options(rules: RuleSet) -> dict[str, OptionValue]:
    """The options of a rule set as a plain dict (for records, views and ``rules --json``):
    the ones its preset offers, not the fixed structure."""
    return {name: getattr(rules, name) for name in rules.preset.options}


def options_differing(rules: RuleSet) -> dict[str, OptionValue]:
    """Only the options that differ from the rule set's preset (what a record stores).

    Defaults that the preset resolves from other options (the Tippen ``pack=auto``) count as
    not differing when they resolve to the same value for this player count.
    """
    preset = rules.preset
    values = format_options(rules)
    try:
        baseline = format_options(type(rules).build(rules.id, {**preset.defaults, "players": values["players"]}))
    except RuleError:
        baseline = {k: preset.defaults[k] for k in preset.options}
    baseline["players"] = preset.defaults.get("players")
    return {k: v for k, v in values.items() if baseline.get(k) != v}
