"""Option specifications shared by the Tippen and Tapp rule sets."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


class RuleError(ValueError):
    """A rule set id, option or configuration that cannot be played."""


_TRUE = {"true", "on", "yes", "1"}
_FALSE = {"false", "off", "no", "0"}


@dataclass(frozen=True)
class OptionSpec:
    """One option: its kind (bool, int, int-or-none, choice) and help text."""

    name: str
    kind: str  # "bool" | "int" | "optint" | "choice"
    help: str
    choices: tuple[str, ...] = ()

    def convert(self, raw: Any) -> Any:
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
            try:
                return int(str(raw).strip())
            except ValueError:
                extra = " or none" if self.kind == "optint" else ""
                raise RuleError(f"option {self.name} takes a whole number{extra}, not {raw!r}") from None
        if self.kind == "choice":
            text = str(raw).strip().lower()
            if text not in self.choices:
                raise RuleError(
                    f"option {self.name} takes one of {', '.join(self.choices)}, not {raw!r}"
                )
            return text
        raise AssertionError(self.kind)

    def describe_kind(self) -> str:
        if self.kind == "choice":
            return "|".join(self.choices)
        return {"bool": "true|false", "int": "integer", "optint": "integer|none"}[self.kind]


def parse_override(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise RuleError(f"option {text!r} is not of the form key=value (e.g. knocking=true)")
    key, value = text.split("=", 1)
    return key.strip(), value.strip()


def format_options(rules) -> dict[str, Any]:
    """The options of a rule set as a plain dict (for records and ``rules --json``)."""
    return {f.name: getattr(rules, f.name) for f in dataclasses.fields(rules) if f.name != "id"}


def options_differing(rules, preset: dict) -> dict[str, Any]:
    """Only the options that differ from the named preset (what a record stores).

    Defaults that the preset resolves from other options (the Tippen ``pack=auto``) count as
    not differing when they resolve to the same value for this player count.
    """
    values = format_options(rules)
    try:
        baseline = format_options(type(rules).build(rules.id, {**preset, "players": values["players"]}))
    except RuleError:
        baseline = dict(preset)
    baseline["players"] = preset.get("players")
    return {k: v for k, v in values.items() if baseline.get(k) != v}
