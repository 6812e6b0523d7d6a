"""Names composed from catalogue texts: cards, suits, contracts, actions in words.

Action strings are the docs/rules-reference.md §0 notation (``play:HA``, ``contract:solo:C``,
``discard:?``); this module only puts them into words and never decides a rule.
``who=None`` means the reader himself ("You tap" / "Du tappst").
"""

from __future__ import annotations

from . import DEFAULT_LANGUAGE, Message, has, message, render, t

SUIT_LETTERS = "HDCS"
SUIT_SYMBOLS = {"H": "♥", "D": "♦", "C": "♣", "S": "♠"}
#: Actions that are one word (rules reference §0); each has ``act.*``, ``act.*.you``, ``choice.*`` texts.
ACTION_WORDS = frozenset({
    "tap", "pass", "shove", "deal", "sniff", "knock", "turn", "look", "drop", "stay", "rob",
    "no-rob", "hold", "tout", "no-tout", "play", "weg",
})


def is_card(text: str) -> bool:
    return len(text) == 2 and text[0] in SUIT_LETTERS and text[1] in "AKQJT98765432"


def suit_symbol(suit: str, suits: str = "french") -> Message | str:
    """A suit's mark in a short card label: ``♠``; German-suited Bells, Acorns and Leaves have
    no sign of their own and are marked by a letter of their name (Hearts keep ``♥``)."""
    if suits == "german" and suit != "H":
        return message(f"suit_symbol.german.{suit}")
    return SUIT_SYMBOLS[suit]


def suit_name(suit: str, lang: str = DEFAULT_LANGUAGE, suits: str = "french") -> str:
    """``Hearts``/``Herz``; ``suits="german"`` gives Schellen, Eichel, Laub (Bells, Acorns, Leaves)."""
    return render(suit_message(suit, suits), lang)


def suit_message(suit: str, suits: str = "french") -> Message:
    style = "german" if suits == "german" else "french"
    return message(f"suit.{style}.{suit}")


def _rank_key(rank: str, suits: str, short: bool = False) -> str:
    """The catalogue key of a rank's name: French-suited faces (Ass, Dame, Bube in German)
    or German-suited ones (Daus, Ober, Unter), which have names of their own for A, K, Q, J."""
    base = "rank_short" if short else "rank"
    return f"{base}.german.{rank}" if suits == "german" and rank in "AKQJ" else f"{base}.{rank}"


def card_name(card: str, lang: str = DEFAULT_LANGUAGE, suits: str = "french") -> str:
    """The full name: ``Ace of Hearts``, ``Herz-Ass``; German-suited ``Eichel-Ober``."""
    return render(card_message(card, suits), lang)


def card_message(card: str, suits: str = "french") -> Message | str:
    """``card_name`` before it is put into a language (not a card: the text as it is)."""
    if not is_card(card):
        return card
    return message("card.name", suit=suit_message(card[0], suits),
                   rank=message(_rank_key(card[1], suits)))


def card_short(card: str, lang: str = DEFAULT_LANGUAGE, suits: str = "french") -> str:
    """A compact label: ``♥A``, ``♥10``; in German ``♥D`` (Dame) and ``♣B`` (Bube);
    German-suited ``EO`` (Eichel-Ober), ``LU`` (Laub-Unter), ``♥D`` (Herz-Daus)."""
    if not is_card(card):
        return card
    rank = t(_rank_key(card[1], suits, short=True), lang) if card[1] in "AKQJT" else card[1]
    return t("card.short", lang, symbol=render(suit_symbol(card[0], suits), lang), rank=rank)


def cards_short(cards: list[str], lang: str = DEFAULT_LANGUAGE, suits: str = "french") -> str:
    return " ".join(card_short(c, lang, suits) for c in cards) or "—"


def cards_named(cards: list[str], lang: str = DEFAULT_LANGUAGE, suits: str = "french") -> str:
    return ", ".join(card_name(c, lang, suits) for c in cards) or t("cards.none", lang)


def _contract_key(contract: str) -> tuple[str, str | None]:
    """``solo:C`` -> (``solo_suit``, ``C``); ``herzsolo`` -> (``herzsolo``, None)."""
    name, _, suit = contract.partition(":")
    if suit:
        return f"{name}_suit", suit
    return name, None


def contract_name(contract: str | None, lang: str = DEFAULT_LANGUAGE, suits: str = "french") -> str:
    """``Clubs Solo`` / ``Kreuz-Solo``, ``Heart Rufer`` / ``Herz-Rufer``, ``Ramsch``."""
    return render(contract_message(contract, suits), lang)


def contract_message(contract: str | None, suits: str = "french") -> Message | str:
    """``contract_name`` before it is put into a language (a contract the catalogue does not
    know stays as it is)."""
    if not contract:
        return ""
    key, suit = _contract_key(contract)
    if not _known(f"contract.{key}"):
        return contract
    return message(f"contract.{key}", suit=suit_message(suit, suits) if suit else "")


def _known(key: str) -> bool:
    return has(key)


def _person(key: str, who: str | None) -> tuple[str, dict[str, str]]:
    return (f"{key}.you", {}) if who is None else (key, {"who": who})


def action_phrase(action: str, lang: str = DEFAULT_LANGUAGE, who: str | None = None,
                  suits: str = "french") -> str:
    """An action in words: ``Anna plays Ace of Hearts``, ``Du tappst``, ``Ben spielt Herz-Solo``."""
    head, _, rest = action.partition(":")
    if action in ACTION_WORDS:
        key, params = _person(f"act.{action}", who)
        return t(key, lang, **params)
    cards = rest.split(",") if rest else []
    if head == "play" and is_card(rest):
        key, params = _person("act.play_card", who)
        return t(key, lang, card=card_name(rest, lang, suits), **params)
    if head in ("call", "give") and is_card(rest):
        key, params = _person(f"act.{head}", who)
        return t(key, lang, card=card_name(rest, lang, suits), **params)
    if head == "give" and rest == "?":
        key, params = _person("act.give_hidden", who)
        return t(key, lang, **params)
    if head == "discard" and rest == "?":
        key, params = _person("act.discard_hidden", who)
        return t(key, lang, **params)
    if head == "discard" and cards and all(is_card(c) for c in cards):
        key, params = _person("act.discard", who)
        return t(key, lang, cards=cards_named(cards, lang, suits), **params)
    if head == "exchange":
        if rest == "-":
            key, params = _person("act.exchange_none", who)
            return t(key, lang, **params)
        if rest.isdigit():
            counted = {"0": "act.exchange_none", "1": "act.exchange_one"}.get(rest, "act.exchange_count")
            key, params = _person(counted, who)
            return t(key, lang, count=rest, **params)
        if cards and all(is_card(c) for c in cards):
            key, params = _person("act.exchange", who)
            return t(key, lang, cards=cards_named(cards, lang, suits), **params)
    if head == "bid" and rest:
        key, params = _person("act.bid", who)
        return t(key, lang, contract=contract_name(rest, lang, suits), **params)
    if head == "trump" and rest in SUIT_LETTERS and rest:
        key, params = _person("act.trump", who)
        return t(key, lang, suit=suit_name(rest, lang, suits), **params)
    if head == "contract" and rest:
        if rest == "pass":
            key, params = _person("act.pass", who)
            return t(key, lang, **params)
        key, params = _person("act.contract", who)
        return t(key, lang, contract=contract_name(rest, lang, suits), **params)
    key, params = _person("act.other", who)
    return t(key, lang, action=action, **params)


def choice_text(action: str, lang: str = DEFAULT_LANGUAGE, suits: str = "french",
                value: Message | str | None = None, goal: Message | None = None) -> str:
    """A menu entry for a legal action: ``tap (play for a share of the pot)``, ``♥A spielen``,
    ``Clubs Solo: clubs are trumps; …; 5 cents from each defender``."""
    return render(choice_message(action, suits, value, goal), lang)


def choice_message(action: str, suits: str = "french", value: Message | str | None = None,
                   goal: Message | None = None) -> Message:
    """``choice_text`` before it is put into a language: the web table renders it in its
    reader's language, as the terminal does in its own. A contract's goal and value depend on
    the rule set: ``engine_facts.choice_message_for`` gives them."""
    head, _, rest = action.partition(":")
    if action in ACTION_WORDS:
        return message(f"choice.{action}")
    if head == "play" and is_card(rest):
        return message("choice.play_card", card=card_message(rest, suits))
    if head in ("call", "give") and is_card(rest):
        return message(f"choice.{head}", card=card_message(rest, suits))
    if head == "trump" and rest and rest in SUIT_LETTERS:
        return message("choice.trump", suit=suit_message(rest, suits))
    if head in ("contract", "bid") and rest:
        if rest == "pass":
            return message("choice.pass")
        name = contract_message(rest, suits)
        if head == "bid" and goal is None:
            return message("choice.bid", contract=name)
        if value:
            return message("choice.contract", contract=name, goal=goal or "", value=value)
        return message("choice.contract_no_value", contract=name, goal=goal or "")
    return message("choice.other", action=action)


def rule_text(rule: str, lang: str = DEFAULT_LANGUAGE) -> str | None:
    """A refusal's rule in words (``follow suit (Farbzwang)`` / ``Farbe bedienen``), if known."""
    return t(f"rule.{rule}", lang) if _known(f"rule.{rule}") else None


def ruleset_title(ruleset_id: str, lang: str = DEFAULT_LANGUAGE) -> str:
    """A rule set's title in ``lang`` (``Moderner Tapp (NSV): …``); the English one is the preset's."""
    return t(f"ruleset.title.{ruleset_id}", lang)
