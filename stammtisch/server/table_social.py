"""The social side of a live table: who sits where (away seats, seats a stranger from the
lobby takes), chat, hints at a practice table, and the rematch."""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING

from .refusals import Refusal, RefusalKind

if TYPE_CHECKING:
    pass

log = logging.getLogger("stammtisch.server")

# Refusals of the social features: rule code → English message.
SOCIAL_MESSAGES = {
    "chat empty": "a chat line needs some text",
    "chat length": "a chat line is at most {n} characters",
    "chat rate": "you are chatting too fast; wait a moment",
    "spectator chat": "only the seats of a table chat",
    "taken": "this seat is not free (any more); choose another one",
    "no free seat": "this table has no free seat",
    "rematch": "a rematch can start when no deal is being played",
    "rematch asked": "a rematch was asked for: agree to it or decline it first",
    "rematch taken": "this table went on to a rematch, and your seat's link to it was given out "
                     "already; the rematch table's admin can make you a new one",
    "names": "another seat of this table has the name {name!r} or one that looks alike; choose another",
    "capacity": "the server holds as many tables as it may; try again later",
    "rate": "too many new tables from your address; try again in a minute",
    "quota": "your address has as many live tables as it may ({n}); close or finish one first",
    "no hints": "this table gives no hints; a practice table does",
    "hint turn": "a hint is for the seat on turn",
    "hint rate": "you are asking for hints too fast; wait a moment",
    "hint failed": "no hint could be computed just now; try again",
}


def clean_chat(text: str, limit: int) -> str:
    """A chat line as it is stored and shown: control and format characters (new lines,
    bidirectional overrides) become spaces, the ends are trimmed. Raises a Refusal when
    the line is empty or longer than ``limit`` characters."""
    line = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    if not line:
        raise Refusal("chat empty", SOCIAL_MESSAGES["chat empty"], RefusalKind.INVALID)
    if len(line) > limit:
        raise Refusal("chat length", SOCIAL_MESSAGES["chat length"].format(n=limit),
                      RefusalKind.INVALID)
    return line


def new_token() -> str:
    return secrets.token_urlsafe(24)
