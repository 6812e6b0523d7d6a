"""The few engine facts a player is shown that are not in a view, read in ONE place: what a
contract is worth, and the menu entry of a legal action with it. The terminal renders them in
its language, the web table sends them as catalogue messages that each page renders in its
reader's language: both from here.

When a name in the engines moves, only this module changes. Every function degrades to
"unknown" (None) rather than failing.
"""

from __future__ import annotations

from .i18n import Message, has, message, render
from .i18n.words import choice_message
from .rules import Rules

#: Catalogue key prefix of the historic scoring texts per settlement formula (rule-set data).
_HISTORIC_VALUE_KEYS = {
    "beck": "value.historic",
    "anton": "value.classic",
}


def contract_value_message(rules: Rules, contract: str) -> Message | None:
    """What a contract is worth: ``5 cents from each defender`` (Modern Tapp), or the
    historic scoring rule (``each defender pays the card points over 60``); None if unknown."""
    prefix = _HISTORIC_VALUE_KEYS.get(getattr(rules, "settlement", ""))
    if prefix is not None:
        key = f"{prefix}.{contract.partition(':')[0]}"
        return message(key) if has(key) else None
    try:
        from .games.tapp import modern_value

        value = modern_value(contract, getattr(rules, "frage_value", 5))
    except (ImportError, KeyError, IndexError, TypeError, ValueError):
        return None
    return message("value.cents", value=value)


def contract_value_text(rules: Rules, contract: str, lang: str) -> str | None:
    """``contract_value_message`` in ``lang``."""
    value = contract_value_message(rules, contract)
    return None if value is None else render(value, lang)


def display_suits(rules: Rules) -> str:
    """``french`` or ``german`` suit names (the display option ``suits``)."""
    return "german" if getattr(rules, "suits", "french") == "german" else "french"


def choice_message_for(rules: Rules, action: str) -> Message:
    """The menu entry of a legal action at a table of ``rules``: a contract or bid with its
    goal and its value in the table's unit (``Clubs Solo: without the tapp, win 61 …; 10 cents
    from each defender``), a card by its name in the table's suits, a word as a word."""
    head, _, rest = action.partition(":")
    value = None
    if head in ("contract", "bid") and rest and rest != "pass":
        value = contract_value_message(rules, rest)
    return choice_message(action, display_suits(rules), value)
