"""Reading a player's answer at the terminal: numbers, actions, card names, several cards at once.

Pure functions (no console): each returns what to do with one line of input, so the rules of
the prompt are tested without a terminal. Nothing here decides legality: an answer that is not
on the legal list but looks like an action goes to the engine, whose refusal names the rule.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from ..i18n import LANGUAGES, t
from ..i18n.words import ACTION_WORDS, card_short, choice_text, contract_name, is_card

#: Action kinds that take several cards, chosen from the hand instead of from a menu.
CARD_SET_KINDS = ("discard", "exchange")
QUIT_WORDS = frozenset({"q", "quit", "exit", "beenden", "ende"})
HELP_WORDS = frozenset({"?", "help", "hilfe"})
#: with hints on (``play --hints``), "?" asks for a hint and these ask for the help
HINT_HELP_WORDS = frozenset({"??", "help", "hilfe"})
YES_WORDS = frozenset({"", "y", "yes", "j", "ja"})
NO_WORDS = frozenset({"n", "no", "nein", "q", "quit"})
_PREFIXES = ("play:", "contract:", "bid:", "trump:", "call:", "give:")


@dataclass(frozen=True)
class Answer:
    """What one line of input asks for: an action to try, a message and ask again, quit, help,
    or (hints on) a hint."""

    action: str | None = None
    message: str | None = None
    quit: bool = False
    help: bool = False
    hint: bool = False


def _card_aliases(suits: str) -> dict[str, str]:
    """Every way to type a card at a table of these suits: ``HA``, ``h10``, ``♥A``, ``♥10``,
    the German ``♥D`` (Dame on French suits, Daus on German ones) and ``♥B`` (Bube)."""
    out: dict[str, str] = {}
    for suit in "HDCS":
        for rank in "AKQJT98765432":
            card = suit + rank
            out[card.lower()] = card
            if rank == "T":
                out[f"{suit}10".lower()] = card
    for lang in LANGUAGES:  # the short labels second: never shadow the notation
        for card in list(out.values()):
            out.setdefault(card_short(card, lang, suits).lower(), card)
    return out


CARD_ALIASES = {suits: _card_aliases(suits) for suits in ("french", "german")}


def card_of(token: str, suits: str = "french") -> str | None:
    """The card a token names, in notation, or None."""
    return CARD_ALIASES["german" if suits == "german" else "french"].get(token.strip().lower())


def split_tokens(raw: str) -> list[str]:
    return [tok for tok in re.split(r"[\s,;]+", raw.strip()) if tok]


def yes_no(raw: str) -> bool | None:
    """True for yes (or just Enter), False for no, None for anything else (ask again)."""
    word = raw.strip().lower()
    if word in YES_WORDS:
        return True
    if word in NO_WORDS:
        return False
    return None


def _menu_labels(legal: list[str], lang: str, suits: str) -> dict[str, str]:
    """Lower-cased words a player may type for each legal action, beside the action itself."""
    labels: dict[str, str] = {}
    for action in legal:
        labels.setdefault(action.lower(), action)
        head, _, rest = action.partition(":")
        if head in ("play", "contract", "bid", "trump", "call", "give") and rest:
            labels.setdefault(rest.lower(), action)
        if head in ("contract", "bid") and rest:
            for language in LANGUAGES:
                labels.setdefault(contract_name(rest, language, suits).lower(), action)
        if head in ("play", "call", "give") and is_card(rest):
            for language in LANGUAGES:
                labels.setdefault(card_short(rest, language, suits).lower(), action)
        labels.setdefault(choice_text(action, lang, suits).lower(), action)
    return labels


def _quit_or_help(word: str, hints: bool = False) -> Answer | None:
    """The words every prompt understands besides its own: quit and help, and with ``hints``
    "?" for a hint ("??" is the help then)."""
    if word in QUIT_WORDS:
        return Answer(quit=True)
    if hints and word == "?":
        return Answer(hint=True)
    if word in (HINT_HELP_WORDS if hints else HELP_WORDS):
        return Answer(help=True)
    return None


def read_menu_answer(raw: str, legal: list[str], lang: str = "en", suits: str = "french",
                     hints: bool = False) -> Answer:
    """One answer to a menu of legal actions (numbered from 1); ``hints``: "?" asks for a hint."""
    text = raw.strip()
    word = text.lower()
    if not text:
        return Answer(message=t("play.choose_range", lang, last=len(legal)))
    understood = _quit_or_help(word, hints)
    if understood is not None:
        return understood
    if text.isdigit():
        number = int(text)
        if 1 <= number <= len(legal):
            return Answer(action=legal[number - 1])
        return Answer(message=t("play.choose_range", lang, last=len(legal)))
    if all(tok.isdigit() for tok in split_tokens(text)):
        return Answer(message=t("play.choose_range", lang, last=len(legal)))
    labels = _menu_labels(legal, lang, suits)
    if word in labels:
        return Answer(action=labels[word])
    card = card_of(text, suits)
    if card is not None:
        for prefix in _PREFIXES:
            if prefix + card in legal:
                return Answer(action=prefix + card)
        played = [a for a in legal if a.startswith("play:")]
        if played:  # a card not playable now: the engine says why (not held, follow suit…)
            return Answer(action="play:" + card)
    if ":" in text or word in ACTION_WORDS:
        return Answer(action=_canonical_case(text))
    close = difflib.get_close_matches(word, list(labels), n=1, cutoff=0.6)
    if close:
        return Answer(message=t("play.did_you_mean", lang, text=text, suggestion=labels[close[0]]))
    return Answer(message=t("play.unknown_input", lang, text=text))


def _canonical_case(text: str) -> str:
    """``play:ha`` -> ``play:HA``: words lower case, cards upper case."""
    head, sep, rest = text.partition(":")
    if not sep:
        return text.lower()
    parts = [p.upper() if card_of(p) else p.lower() for p in re.split(r"([:,])", rest)]
    return head.lower() + ":" + "".join(parts)


@dataclass(frozen=True)
class CardSetChoice:
    """A choice of several cards from the hand (a discard, an exchange), from its legal actions."""

    kind: str
    options: frozenset[frozenset[str]] = field(default_factory=frozenset)

    @classmethod
    def from_legal(cls, legal: list[str]) -> CardSetChoice | None:
        """The choice, when every legal action is one card-set action of the same kind."""
        kinds = {a.partition(":")[0] for a in legal}
        if len(kinds) != 1 or not kinds <= set(CARD_SET_KINDS):
            return None
        options = frozenset(frozenset(c for c in a.partition(":")[2].split(",") if is_card(c)) for a in legal)
        return cls(kinds.pop(), options)

    @property
    def sizes(self) -> set[int]:
        return {len(o) for o in self.options}

    def action(self, cards: list[str]) -> str:
        return f"{self.kind}:{','.join(cards) if cards else '-'}"


def read_card_set_answer(raw: str, hand: list[str], choice: CardSetChoice, lang: str = "en",
                         suits: str = "french", hints: bool = False) -> Answer:
    """One answer to "choose N of your cards": numbers into the shown hand and/or card names;
    ``hints``: "?" asks for a hint."""
    text = raw.strip()
    word = text.lower()
    understood = _quit_or_help(word, hints)
    if understood is not None:
        return understood
    head, sep, rest = text.partition(":")
    if sep and head.lower() == choice.kind:
        text = rest
    tokens = [] if text.strip() in ("-", "") else split_tokens(text)
    if not tokens and 0 not in choice.sizes:
        return Answer(message=_count_message(choice, 0, lang))
    cards: list[str] = []
    for tok in tokens:
        if tok.isdigit():
            number = int(tok)
            if not 1 <= number <= len(hand):
                return Answer(message=t("play.choose_range", lang, last=len(hand)))
            card = hand[number - 1]
        else:
            named = card_of(tok, suits)
            if named is None:
                close = difflib.get_close_matches(tok.lower(), [c.lower() for c in hand], n=1, cutoff=0.5)
                if close:
                    return Answer(message=t("play.did_you_mean", lang, text=tok, suggestion=close[0].upper()))
                return Answer(message=t("play.unknown_input", lang, text=tok))
            if named not in hand:
                return Answer(message=t("play.not_in_hand", lang, card=card_short(named, lang, suits)))
            card = named
        if card in cards:
            return Answer(message=t("play.twice", lang, card=card_short(card, lang, suits)))
        cards.append(card)
    if len(cards) not in choice.sizes:
        return Answer(message=_count_message(choice, len(cards), lang))
    return Answer(action=choice.action(cards))


def _count_message(choice: CardSetChoice, given: int, lang: str) -> str:
    sizes = choice.sizes
    if len(sizes) == 1:
        return t("play.wrong_count", lang, count=next(iter(sizes)), given=given)
    return t("play.too_many", lang, most=max(sizes), given=given)
