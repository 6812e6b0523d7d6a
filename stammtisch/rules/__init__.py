"""Rule sets as data (docs/rules-reference.md §2 and §3): options, named presets, parsing, validation.

No game logic lives here. A rule set is a frozen dataclass; ``ruleset("tippen/grupp-1975",
["knocking=true"])`` builds one from an id and ``key=value`` overrides and validates it.
Every preset is one ``Preset`` record in ``PRESETS`` (id, title, player limits, defaults, the
options it offers, how its first dealer is found).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from difflib import get_close_matches
from typing import Any, Literal

from .base import OptionSpec, OptionValue, Preset, RuleError, format_options, options_differing, parse_override
from .tapp import TAPP_PRESETS, TappRules
from .tippen import TIPPEN_PRESETS, TippenRules

PRESETS: dict[str, Preset] = {**TIPPEN_PRESETS, **TAPP_PRESETS}

Rules = TippenRules | TappRules


def ruleset_ids() -> list[str]:
    return list(PRESETS)


def preset_of(ruleset_id: str) -> Preset:
    """The preset record of a rule-set id; a clear ``RuleError`` naming close ids if unknown."""
    preset = PRESETS.get(ruleset_id) if isinstance(ruleset_id, str) else None
    if preset is None:
        text = str(ruleset_id)
        close = get_close_matches(text, PRESETS, n=3, cutoff=0.5) or [
            r for r in PRESETS if text.split("/")[-1] and text.split("/")[-1] in r]
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise RuleError(f"unknown rule set {text!r}.{hint} Known rule sets: {', '.join(PRESETS)}")
    return preset


def family_of(ruleset_id: str) -> Literal["tippen", "tapp"]:
    return preset_of(ruleset_id).family


def rules_class(ruleset_id: str) -> type[TippenRules] | type[TappRules]:
    return TippenRules if preset_of(ruleset_id).family == "tippen" else TappRules


def option_specs(ruleset_id: str) -> dict[str, OptionSpec]:
    """The options a preset offers, in order: exactly what a user may set."""
    preset = preset_of(ruleset_id)
    specs = rules_class(ruleset_id).option_specs()
    return {name: specs[name] for name in preset.options}


def ruleset(ruleset_id: str, overrides: Mapping[str, Any] | Iterable[str] | None = None) -> Rules:
    """Build and validate a rule set from its id and overrides.

    ``overrides`` is a mapping ``{key: value}`` (values may be strings as typed on a command
    line, or already typed values as in a game record) or an iterable of ``"key=value"``.
    """
    preset = preset_of(ruleset_id)
    cls = rules_class(ruleset_id)
    specs = option_specs(ruleset_id)
    values: dict[str, OptionValue] = {}
    items = overrides.items() if isinstance(overrides, Mapping) else (
        parse_override(o) for o in (overrides or []))
    for key, raw in items:
        spec = specs.get(key)
        if spec is None:
            if key in cls.option_specs():
                raise RuleError(f"option {key} does not apply to {ruleset_id}; its options are: "
                                f"{', '.join(specs)}")
            close = get_close_matches(str(key), specs, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise RuleError(f"unknown option {key!r} for {ruleset_id}{hint}; options are: "
                            f"{', '.join(specs)}")
        values[key] = spec.convert(raw)
    return cls.build(ruleset_id, {**preset.defaults, **values})


__all__ = [
    "PRESETS",
    "OptionSpec",
    "Preset",
    "RuleError",
    "Rules",
    "TappRules",
    "TippenRules",
    "family_of",
    "format_options",
    "option_specs",
    "options_differing",
    "preset_of",
    "rules_class",
    "ruleset",
    "ruleset_ids",
]
