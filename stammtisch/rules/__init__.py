"""Rule sets as data (RULES.md sections 2 and 3): options, named presets, parsing, validation.

No game logic lives here. A rule set is a frozen dataclass; ``ruleset("tippen/grupp-1975",
["knocking=true"])`` builds one from an id and ``key=value`` overrides and validates it.
"""

from __future__ import annotations

from .base import (
    OptionSpec,
    RuleError,
    format_options,
    parse_override,
)
from .tapp import TAPP_PRESETS, TappRules
from .tippen import TIPPEN_PRESETS, TippenRules

PRESETS: dict[str, dict] = {**TIPPEN_PRESETS, **TAPP_PRESETS}

Rules = TippenRules | TappRules


def ruleset_ids() -> list[str]:
    return list(PRESETS)


def family_of(ruleset_id: str) -> str:
    return ruleset_id.split("/", 1)[0]


def rules_class(ruleset_id: str):
    if ruleset_id not in PRESETS:
        close = [r for r in PRESETS if ruleset_id.split("/")[-1] in r]
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise RuleError(
            f"unknown rule set {ruleset_id!r}.{hint} Known rule sets: {', '.join(PRESETS)}"
        )
    return TippenRules if family_of(ruleset_id) == "tippen" else TappRules


def ruleset(ruleset_id: str, overrides=None) -> Rules:
    """Build and validate a rule set from its id and overrides.

    ``overrides`` is a mapping ``{key: value}`` (values may be strings as typed on a command
    line, or already typed values as in a game record) or an iterable of ``"key=value"``.
    """
    cls = rules_class(ruleset_id)
    values = dict(PRESETS[ruleset_id])
    specs = cls.option_specs()
    items = overrides.items() if isinstance(overrides, dict) else (
        parse_override(o) for o in (overrides or [])
    )
    for key, raw in items:
        spec = specs.get(key)
        if spec is None:
            raise RuleError(
                f"unknown option {key!r} for {ruleset_id}; options are: {', '.join(specs)}"
            )
        values[key] = spec.convert(raw)
    return cls.build(ruleset_id, values)


__all__ = [
    "OptionSpec",
    "PRESETS",
    "RuleError",
    "Rules",
    "TappRules",
    "TippenRules",
    "family_of",
    "format_options",
    "ruleset",
    "ruleset_ids",
]
