"""The few engine facts the terminal shows that are not in a view, read in ONE place.

When a name in the engines moves, only this module changes. Every function degrades to
"unknown" (None) rather than failing.
"""

from __future__ import annotations

from ..i18n import t
from ..rules import Rules

#: Catalogue key prefix of the historic scoring texts per settlement formula (rule-set data).
_HISTORIC_VALUE_KEYS = {
    "beck": "value.historic",
    "anton": "value.classic",
}


def contract_value_text(rules: Rules, contract: str, lang: str) -> str | None:
    """What a contract is worth, in words: ``5 cents from each defender`` (Modern Tapp), or the
    historic scoring rule (``each defender pays the card points over 60``); None if unknown."""
    prefix = _HISTORIC_VALUE_KEYS.get(getattr(rules, "settlement", ""))
    if prefix is not None:
        level = contract.partition(":")[0]
        key = f"{prefix}.{level}"
        from ..i18n import has

        return t(key, lang) if has(key) else None
    try:
        from ..games.tapp import modern_value

        value = modern_value(contract, getattr(rules, "frage_value", 5))
    except (ImportError, KeyError, IndexError, TypeError):
        return None
    return t("value.cents", lang, value=value)


def display_suits(rules: Rules) -> str:
    """``french`` or ``german`` suit names (a Tapp option; Tippen is always French-suited)."""
    return "german" if getattr(rules, "suits", "french") == "german" else "french"
