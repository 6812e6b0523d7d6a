"""The few engine facts a player is shown that are not in a view, read in ONE place: what a
contract is worth, and the menu entry of a legal action with it. The terminal renders them in
its language, the web table sends them as catalogue messages that each page renders in its
reader's language: both from here.

When a name in the engines moves, only this module changes. Every function degrades to
"unknown" (None) rather than failing.
"""

from __future__ import annotations

from dataclasses import dataclass

from .games.tapp.contracts import MODERN_CONTRACTS, MODERN_INDEX, Kind
from .i18n import Message, has, message, render
from .i18n.words import choice_message, suit_message
from .rules import Rules
from .rules.tapp import TappRules

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


@dataclass(frozen=True)
class ContractFacts:
    """What the declarer of a contract plays with and for, at one rule set."""

    trump: str | None  # the trump suit's letter; None: no trumps, or named after the auction
    names_trump: bool  # the declarer names clubs, spades or diamonds after the auction
    takes_tapp: bool  # he picks up the tapp and lays away as many cards
    aim: str  # "points", "no trick" or "every trick"
    need: int  # the card points a "points" contract needs (61)
    calls_card: bool  # Rufer: he calls a card he lacks
    open_hand: bool  # Bettel ouvert: his hand lies face up


def contract_facts(rules: Rules, contract: str) -> ContractFacts | None:
    """The facts of ``contract`` (a bid or contract as the legal actions name it) at a table of
    ``rules``, from the rule set's fields and the engine's contract table (rules reference
    §3.2–§3.4); None for a name the rule set does not have. The same word can mean different
    contracts: a historic ``solo`` is the heart solo of Württemberg Tarock, but in Classic Tapp
    a Solo in a suit the declarer names after the auction (hearts a plain suit then)."""
    if not isinstance(rules, TappRules):
        return None
    contract = contract.removesuffix("+tout")
    if rules.flow == "rounds":
        i = MODERN_INDEX.get(contract)
        if i is None:
            return None
        c = MODERN_CONTRACTS[i]
        aim = {Kind.POINTS: "points", Kind.BETTEL: "no trick", Kind.ALL: "every trick"}.get(c.kind)
        if aim is None:
            return None
        return ContractFacts(c.trump, False, c.takes_tapp, aim, rules.min_to_win, c.calls_card,
                             c.open_hand)
    name, _, suit = contract.partition(":")
    if name not in rules.bids:
        return None
    # the historic levels: Frage and Herzsolo play hearts; so does the Solo, unless the rule
    # set's Solo names its trump (then the trump is the one named, once it is)
    names = name == "solo" and rules.solo_names_trump
    trump = (suit or None) if names else "H"
    return ContractFacts(trump, names and not suit, name == "frage", "points", rules.min_to_win,
                         False, False)


def contract_goal_message(rules: Rules, contract: str) -> Message | None:
    """What the declarer of ``contract`` must do at a table of ``rules``, built from its facts
    (``contract_facts``): ``hearts are trumps; without the tapp; win 61 of the 120 card
    points``. None when the contract is not one of the rule set's."""
    facts = contract_facts(rules, contract)
    if facts is None:
        return None
    suits = display_suits(rules)
    parts: list[Message] = []
    if facts.names_trump:
        parts.append(message("goal.named_trumps", first=suit_message("C", suits),
                             second=suit_message("S", suits), third=suit_message("D", suits)))
    elif facts.trump is None:
        parts.append(message("goal.no_trumps"))
    else:
        parts.append(message("goal.trumps", suit=suit_message(facts.trump, suits)))
    if facts.aim == "points":
        parts.append(message("goal.take_tapp" if facts.takes_tapp else "goal.without_tapp"))
    if facts.calls_card:
        parts.append(message("goal.call"))
    if facts.open_hand:
        parts.append(message("goal.open_hand"))
    parts.append(message("goal.points", need=facts.need) if facts.aim == "points"
                 else message("goal.no_trick" if facts.aim == "no trick" else "goal.every_trick"))
    goal = parts[-1]
    for part in reversed(parts[:-1]):
        goal = message("goal.and", first=part, rest=goal)
    return goal


def choice_message_for(rules: Rules, action: str) -> Message:
    """The menu entry of a legal action at a table of ``rules``: a contract or bid with its
    goal and its value in the table's unit (``Clubs Solo: clubs are trumps; without the tapp;
    win 61 …; 10 cents from each defender``), a card by its name in the table's suits, a word
    as a word."""
    head, _, rest = action.partition(":")
    value = goal = None
    if head in ("contract", "bid") and rest and rest != "pass":
        value = contract_value_message(rules, rest)
        goal = contract_goal_message(rules, rest)
    return choice_message(action, display_suits(rules), value, goal)
