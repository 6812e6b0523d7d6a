"""The WebSocket protocol of the web table: every message a client may send and every message
the server sends, as types, and the one parser of a client's message (``parse_client``).

docs/protocol.md is rendered from the types here (``render_protocol``;
scripts/protocol_doc.py writes it, a test checks it is up to date). Every message the server
sends is made by its type's ``encode`` here and nowhere else (a state message from the parts
the fan-out serialised and keeps: ``State.encode``).
"""

from __future__ import annotations

import json
import re
from enum import IntEnum
from typing import Any, ClassVar, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from .refusals import MESSAGES, Refusal, RefusalKind

Seq = int | str | None


class ClientMessage(BaseModel):
    """A client's message. ``seq`` (optional, any message): the client's own number for it,
    sent back with the answer or refusal (a string of at most 64 characters or an integer a
    browser holds exactly; anything else is taken as none)."""

    model_config = ConfigDict(frozen=True)
    type: str
    seq: Seq = Field(default=None, description="the client's own number, sent back with the answer")
    #: whether a spectator may send it
    spectator: ClassVar[bool] = False


class ClientHello(ClientMessage):
    """The first message of every connection, and only the first: the table's token (a seat's,
    the spectator's or the admin's). It must come within ``ServerLimits.header_timeout``
    seconds of the connection's start; the server answers with its own ``hello``. A token in
    the URL (``?token=…``) is refused (close code 4400): a URL is written to the logs of every
    proxy on the way."""

    type: Literal["hello"] = "hello"
    token: str = Field(max_length=200, description="the table's token (what follows # in its link)")


class Action(ClientMessage):
    """An action of the seat, answering the state numbered ``event``: a stale one is refused
    with rule "stale" and the current state is sent again."""

    type: Literal["action"] = "action"
    action: str = Field(min_length=1, max_length=200, description='the action, e.g. "play:HA"')
    event: int = Field(description="the number of the state the action answers")


class Next(ClientMessage):
    """Start the next deal now (a seated human, after a deal is over)."""

    type: Literal["next"] = "next"


class Start(ClientMessage):
    """Start the table (a seated human, before deal 1)."""

    type: Literal["start"] = "start"


class Ping(ClientMessage):
    """Answered with a ``pong``."""

    type: Literal["ping"] = "ping"
    spectator: ClassVar[bool] = True


class Chat(ClientMessage):
    """A chat line (a seat, or a spectator while the table's ``spectator_chat`` is on, else
    refused with rule "spectator chat"; at most ``chat_max_chars`` characters, at most
    ``chat_rate`` lines per second per seat, and per spectator link and per address of a
    spectator; stored with the table)."""

    type: Literal["chat"] = "chat"
    text: str = Field(description="the line")
    name: str | None = Field(default=None, description="a spectator's name for the line (cleaned "
                             "as a seat's name; none: shown as a spectator); a seat's is ignored")
    spectator: ClassVar[bool] = True


class SpectatorChat(ClientMessage):
    """Let the spectators chat (``on``: true) or not (a seated player or the table's admin;
    a spectator's is refused with rule "spectator chat switch"). Kept with the table; every
    client sees it as the table's ``spectator_chat``."""

    type: Literal["spectator chat"] = "spectator chat"
    on: bool = Field(description="true: spectators may chat; false: they may not")
    spectator: ClassVar[bool] = True  # the admin's link; a spectator's is refused by the table


class Back(ClientMessage):
    """The player of a seat a stand-in bot plays for is back."""

    type: Literal["back"] = "back"


class Rematch(ClientMessage):
    """Ask for (or agree to) a new table with the same seats, rule set and options (a seat,
    when no deal is being played), or decline it (``agree``: false). It is made, and this
    table closed, once every seated player (a human seat whose player is connected) has
    agreed; the table's ``rematch_votes`` lists the seats that have, ``rematch_waiting`` the
    seated players not yet answered. Unanswered until ``rematch_deadline`` (``rematch_seconds``
    after it was asked), the question ends as declined; a player who leaves no longer holds it
    up. The rematch's ``evening`` shows the tables before it and the evening's total."""

    type: Literal["rematch"] = "rematch"
    agree: bool = Field(default=True, description="true: ask or agree; false: decline")


class Hint(ClientMessage):
    """At a practice table (``hints`` in the table's info), the seat on turn asks what the
    Master level would do (at most ``hint_rate`` per second per table for the address that asks)."""

    type: Literal["hint"] = "hint"


class ActionIn:
    """An ``Action`` as the parser gives it: the same fields, checked against the same
    bounds, without the model's validation. The usual action message is the server's hottest
    input: read so it takes ~3.0 µs, validated by ``Action.model_validate`` ~3.6 µs, read by
    hand without a type ~2.5 µs (bench/ws_parse.py). tests/test_server_wire.py keeps the
    fields equal to ``Action``'s."""

    __slots__ = ("action", "event", "seq")
    type = "action"

    def __init__(self, action: str, event: int, seq: Seq) -> None:
        self.action = action
        self.event = event
        self.seq = seq


CLIENT_MESSAGES: tuple[type[ClientMessage], ...] = (Action, Next, Start, Ping, Chat, SpectatorChat,
                                                    Back, Rematch, Hint)
_BY_TYPE: dict[str, type[ClientMessage]] = {
    m.model_fields["type"].default: m for m in CLIENT_MESSAGES}


def _text(message: dict[str, Any]) -> str:
    """A server message as compact JSON text (orjson: the server sends many)."""
    return orjson.dumps(message).decode()


class ServerMessage(BaseModel):
    """A message of the server's (JSON text frame). Each type is the one producer of its
    message: its ``encode`` makes the text (or, for ``State``, the UTF-8 bytes) that is sent;
    the fields document the shape (docs/protocol.md), and tests/test_protocol_hash.py checks
    every message of the transcript scenarios against them."""

    model_config = ConfigDict(extra="forbid")
    type: str


class Hello(ServerMessage):
    """The first message of a connection: who this client is (the admin watches as a spectator
    does, and may close the table)."""

    type: Literal["hello"] = "hello"
    role: Literal["seat", "spectator", "admin"]
    seat: int | None
    table: str = Field(description="the table's id")

    @staticmethod
    def encode(role: str, seat: int | None, table: str) -> str:
        return _text({"type": "hello", "role": role, "seat": seat, "table": table})


class State(ServerMessage):
    """After every event. ``table`` only when the table's info changed since this client last
    got it, but for its ``events``, which is ``event``: keep the last one and set its
    ``events`` (the first state message of a connection always has it). Its ``explanation``
    (the last finished deal's, else null) is a list of lines, each a catalogue message
    ``{"key", "params"}`` whose parameters are values or messages themselves: the page renders
    them in its reader's language from /api/texts/{lang} (stammtisch.i18n.render does the
    same)."""

    type: Literal["state"] = "state"
    event: int = Field(description="the number of this state; an action answers it")
    view: dict[str, Any] | None = Field(description="the view of this client's seat (null: none)")
    table: dict[str, Any] | None = Field(default=None, description="the table's info, when it changed")
    choices: list[dict[str, Any] | None] | None = Field(
        default=None, description="for the seat on turn when a legal action is a word, a bid or "
        "a contract: per legal action (in the view's order) its menu entry as a catalogue "
        "message, or null for a card or a set of cards")

    @staticmethod
    def encode(event: int, view: bytes, table: bytes | None = None, choices: bytes = b"") -> bytes:
        """The message as UTF-8 from its parts already serialised (the fan-out's: a seat's
        view, the table's info, ``,"choices":[…]`` or nothing): it goes to the socket as it
        is, never decoded and encoded again."""
        if table is not None:
            return b'{"type":"state","event":%d,"view":%b,"table":%b%b}' % (event, view, table,
                                                                            choices)
        return b'{"type":"state","event":%d,"view":%b%b}' % (event, view, choices)


class Presence(ServerMessage):
    """When seats come or go (changes within ``presence_delay`` are sent once)."""

    type: Literal["presence"] = "presence"
    seats: list[dict[str, Any]] = Field(description='each seat\'s "name", "bot", "connected"')

    @staticmethod
    def encode(seats: list[dict[str, Any]]) -> str:
        return _text({"type": "presence", "seats": seats})


class Error(ServerMessage):
    """A refusal: the state is unchanged. ``seq`` is the refused message's, when it had one
    (absent when the message was not a JSON object with a type)."""

    type: Literal["error"] = "error"
    rule: str = Field(description="the rule the message met: a stable code")
    message: str = Field(description="why, in English")
    seq: Seq = None

    @staticmethod
    def encode(rule: str, message: str) -> str:
        """A refusal of no message in particular (a connection's, or of what was no message)."""
        return _text({"type": "error", "rule": rule, "message": message})

    @staticmethod
    def answer(rule: str, message: str, seq: Seq) -> str:
        """The refusal of a message, with its ``seq`` (null when it had none)."""
        return _text({"type": "error", "rule": rule, "message": message, "seq": seq})


class Pong(ServerMessage):
    """The answer to a ``ping``; ``seq`` only when the ping had one."""

    type: Literal["pong"] = "pong"
    seq: Seq = None

    @staticmethod
    def encode(seq: Seq) -> str:
        return '{"type":"pong"}' if seq is None else _text({"type": "pong", "seq": seq})


class ChatLines(ServerMessage):
    """The latest lines on connecting (with ``history``), then each new line."""

    type: Literal["chat"] = "chat"
    messages: list[dict[str, Any]] = Field(
        description='each line\'s "seat", "name", "text", "at"; a spectator\'s line has "seat" '
        'null, "spectator" true and "name" the one he chose, or null')
    history: bool | None = Field(default=None, description="true on connecting")

    @staticmethod
    def encode(lines: list[dict[str, Any]], history: bool = False) -> str:
        if history:
            return _text({"type": "chat", "messages": lines, "history": True})
        return _text({"type": "chat", "messages": lines})


class RematchSeat(ServerMessage):
    """This client's seat at the rematch."""

    type: Literal["rematch"] = "rematch"
    table: str = Field(description="the new table's id")
    link: str = Field(description='"/t/…#token"')

    @staticmethod
    def encode(table: str, link: str) -> str:
        return _text({"type": "rematch", "table": table, "link": link})


class HintAsked(ServerMessage):
    """To every client: a seat asked for a hint."""

    type: Literal["hint asked"] = "hint asked"
    seat: int
    name: str

    @staticmethod
    def encode(seat: int, name: str) -> str:
        return _text({"type": "hint asked", "seat": seat, "name": name})


class HintGiven(ServerMessage):
    """To the asker alone: the bot's action and one line of why, for state ``event``."""

    type: Literal["hint"] = "hint"
    event: int
    action: str
    why: dict[str, Any] = Field(description='a catalogue message {"key", "params"}')
    seq: Seq = None

    @staticmethod
    def encode(event: int, action: str, why: dict[str, Any], seq: Seq) -> str:
        """``seq`` only when the asking message had one."""
        hint = {"type": "hint", "event": event, "action": action, "why": why}
        return _text(hint if seq is None else {**hint, "seq": seq})


SERVER_MESSAGES: tuple[type[ServerMessage], ...] = (
    Hello, State, Presence, Error, Pong, ChatLines, RematchSeat, HintAsked, HintGiven)

class CloseCode(IntEnum):
    """The codes the server closes a WebSocket with. A final one means this link will not work
    here again, however often it tries (the page stops and says why); any other means "come
    again", with a growing pause between tries (the page: exponential back-off with jitter,
    capped). Before closing with a refusal the server sends an ``error`` saying why."""

    NORMAL = 1000
    POLICY = 1008
    TOO_BIG = 1009
    RESTARTING = 1012
    BAD_REQUEST = 4400
    BAD_TOKEN = 4401
    REVOKED = 4403
    UNKNOWN_TABLE = 4404
    HELLO_LATE = 4408
    GONE = 4410
    TOO_MANY = 4429


#: What each close code means (docs/protocol.md lists them).
CLOSE_MEANINGS: dict[CloseCode, str] = {
    CloseCode.NORMAL: "the connection ends normally (also after a `rematch` message: follow its link)",
    CloseCode.POLICY: "too many messages in a row beyond `seat_rate` (rule \"rate\")",
    CloseCode.TOO_BIG: "a message larger than `max_message` (rule \"size\")",
    CloseCode.RESTARTING: "the server process is restarting, or the table moved to another "
                          "process (rule \"restarting\", or none): connect again",
    CloseCode.BAD_REQUEST: "the token came in the URL, or the first message was not a `hello` "
                           "(rule \"token in url\", \"hello\")",
    CloseCode.BAD_TOKEN: "the token is not one of this table's (rule \"token\")",
    CloseCode.REVOKED: "the link was replaced by the table's admin (rule \"revoked\")",
    CloseCode.UNKNOWN_TABLE: "no such table (rule \"unknown table\")",
    CloseCode.HELLO_LATE: "no `hello` within `header_timeout` seconds (rule \"hello late\")",
    CloseCode.GONE: "the table is archived: its link was sent the table as it ended (`hello`, "
                    "`state` with `archived`, `chat`), read-only; or the table was archived "
                    "while connected (rule \"archived\")",
    CloseCode.TOO_MANY: "too many connections to the table or from the address (rule "
                        "\"full\", \"address\")",
}

#: The close codes after which a client must not connect again with the same link.
FINAL_CLOSE_CODES = frozenset({CloseCode.BAD_REQUEST, CloseCode.BAD_TOKEN, CloseCode.REVOKED,
                               CloseCode.UNKNOWN_TABLE, CloseCode.GONE})


PROTOCOL_HEAD = """# The web table's WebSocket protocol

`WS /ws/{table}`, then the client's `hello` with the table's token (a seat's, the spectator's
or the admin's) as its first message, within `ServerLimits.header_timeout` seconds; never the
token in the URL (`?token=…` is refused: URLs end up in proxies' logs). JSON text frames,
each at most `ServerLimits.max_message` bytes and `max_json_depth` levels deep; at most
`seat_rate` messages per second per seat, all its sockets together. A table with a turn timer
(`turn_seconds` > 0): when the seat on turn has not acted in time, a bot plays for it (its seat
shows `"away": true`) until its player connects again, acts or sends `back`.

This page is made from `stammtisch/server/protocol.py` by `scripts/protocol_doc.py`.
"""


def _doc_of(model: type) -> str:
    return " ".join((model.__doc__ or "").split())


def _type_name(annotation: Any) -> str:
    text = repr(annotation) if not isinstance(annotation, type) else annotation.__name__
    return text.replace("typing.", "")


def _close_code_lines() -> list[str]:
    """The close codes as a table: code, final or not, what it means."""
    out = ["\n## Close codes\n", _doc_of(CloseCode), "",
           "| code | final | meaning |", "|---|---|---|"]
    for code in CloseCode:
        final = "yes" if code in FINAL_CLOSE_CODES else "no: connect again"
        out.append(f"| {int(code)} | {final} | {CLOSE_MEANINGS[code]} |")
    return out


def render_protocol() -> str:
    """docs/protocol.md: every message with its fields, from the models' docstrings and
    field descriptions, and the close codes."""
    out = [PROTOCOL_HEAD]
    sections: tuple[tuple[str, tuple[type[BaseModel], ...]], ...] = (
        ("Client → server", (ClientHello, *CLIENT_MESSAGES)), ("Server → client", SERVER_MESSAGES))
    for title, models in sections:
        out.append(f"\n## {title}")
        for model in models:
            out.append(f'\n### `{model.model_fields["type"].default}`\n\n{_doc_of(model)}')
            fields = [(name, f) for name, f in model.model_fields.items() if name != "type"]
            if fields:
                out.append("")
                for name, f in fields:
                    need = "" if f.is_required() else " (optional)"
                    what = f" – {f.description}" if f.description else ""
                    out.append(f"- `{name}`: {_type_name(f.annotation)}{need}{what}")
    out.extend(_close_code_lines())
    return "\n".join(out).rstrip() + "\n"


class BadMessage(Refusal):
    """A client's message refused before anything is done. ``message_type``: the type it
    claims (None: not even a JSON object with a type; then the error carries no ``seq``)."""

    def __init__(self, rule: str, message: str, message_type: str | None = None,
                 seq: Seq = None) -> None:
        super().__init__(rule, message, RefusalKind.INVALID)
        self.message_type = message_type
        self.seq = seq


def parse_client(text: str, max_depth: int, spectator: bool = False) -> ClientMessage | ActionIn:
    """A client's message as its type, or ``BadMessage`` with the rule and message of the
    refusal, in this order: not JSON, too deep, not an object with a ``type``; an unknown
    type; a chat without its text; a spectator's message only a seat may send; a malformed
    field. The checks are written out here, in the order above and with the refusals' own
    texts (pydantic's would differ); the model then validates what they passed, but for the
    action (``ActionIn``)."""
    msg, rule, message = parse_message(text, max_depth)
    if msg is None:
        raise BadMessage(rule, message)
    kind: str = msg["type"]
    seq = message_seq(msg)
    if kind == "action":  # the hot one first
        if spectator:
            raise BadMessage("spectator", "a spectator cannot act", kind, seq)
        action = msg.get("action")
        if not isinstance(action, str) or not action or len(action) > 200:
            raise BadMessage("protocol", "an action message needs an \"action\" string", kind, seq)
        event = msg.get("event")
        if not isinstance(event, int) or isinstance(event, bool):
            raise BadMessage("event", MESSAGES["event"], kind, seq)
        return ActionIn(action, event, seq)
    model = _BY_TYPE.get(kind)
    if model is None:
        if kind == "hello":
            raise BadMessage("protocol", MESSAGES["hello again"], kind, seq)
        raise BadMessage("protocol", f"unknown message type {kind[:40]!r}", kind, seq)
    if model is Chat:
        line = msg.get("text")
        if not isinstance(line, str):
            raise BadMessage("protocol", "a chat message needs a \"text\" string", kind, seq)
        name = msg.get("name")
        if name is not None and not isinstance(name, str):
            raise BadMessage("protocol", "a chat message's \"name\" is a string", kind, seq)
        return Chat(text=line, name=name, seq=seq)
    if spectator and not model.spectator:
        raise BadMessage("spectator", "a spectator cannot act", kind, seq)
    if model is Rematch:
        agree = msg.get("agree", True)
        if not isinstance(agree, bool):
            raise BadMessage("protocol", "a rematch message's \"agree\" is true or false", kind, seq)
        return Rematch(agree=agree, seq=seq)
    if model is SpectatorChat:
        on = msg.get("on")
        if not isinstance(on, bool):
            raise BadMessage("protocol", "a spectator chat message's \"on\" is true or false",
                             kind, seq)
        return SpectatorChat(on=on, seq=seq)
    return model(seq=seq)  # type: ignore[call-arg]  # each message type has its "type" as default


def parse_hello(text: str, max_depth: int) -> str:
    """The token of a connection's first message (``ClientHello``), or ``BadMessage`` (rule
    "hello") when it is anything else."""
    msg, _, _ = parse_message(text, max_depth)
    if msg is None or msg["type"] != "hello":
        raise BadMessage("hello", MESSAGES["hello"])
    token = msg.get("token")
    if not isinstance(token, str) or len(token) > 200:
        raise BadMessage("hello", MESSAGES["hello"], "hello", message_seq(msg))
    return token


#: ``parse_message``: the fast reader did not read the message
_UNREAD = object()
#: ``parse_message``: a number the fast reader may read otherwise than json
_LONG_NUMBER = re.compile(r"[0-9]{19}")


def parse_message(text: str, max_depth: int) -> tuple[dict[str, Any] | None, str, str]:
    """A client's WebSocket message, or None with the refusal's rule and message."""
    # orjson reads the usual message in a fraction of the time. What it refuses (NaN, a lone
    # surrogate) json reads as before, and so a message with a number of 19 digits or more:
    # orjson reads an integer beyond 64 bits as a float, json as an int. Every message is
    # read, or refused, as json alone would.
    msg: Any = _UNREAD
    if not _LONG_NUMBER.search(text):
        try:
            msg = orjson.loads(text)
        except (ValueError, RecursionError):
            pass
    if msg is _UNREAD:
        try:
            msg = json.loads(text)
        except RecursionError:
            return None, "depth", MESSAGES["depth"].format(n=max_depth)
        except ValueError:
            return None, "protocol", MESSAGES["protocol"]
    # counting brackets first keeps the depth walk off the hot path of small messages
    if (text.count("[") + text.count("{") > max_depth
            and json_depth_exceeds(msg, max_depth)):
        return None, "depth", MESSAGES["depth"].format(n=max_depth)
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        return None, "protocol", MESSAGES["protocol"]
    return msg, "", ""


def message_seq(msg: dict[str, Any]) -> int | str | None:
    """A message's ``seq`` (the client's own number, sent back with the answer), when it is a
    short string or an integer a browser holds exactly; else None."""
    seq = msg.get("seq")
    if not isinstance(seq, (int, str)) or isinstance(seq, bool) or \
            (isinstance(seq, str) and len(seq) > 64) or (isinstance(seq, int) and abs(seq) > 2**53):
        return None
    return seq


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether a parsed JSON value nests deeper than ``limit`` (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            items = list(item.values())
        elif isinstance(item, list):
            items = list(item)
        else:
            continue
        if depth > limit:
            return True
        stack.extend((x, depth + 1) for x in items)
    return False
