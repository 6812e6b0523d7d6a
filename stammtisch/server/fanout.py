"""The fan-out of a live table: its connections, their outgoing queues, and the JSON of what
they are sent.

Each connection has its own bounded outgoing queue and sender task, so a slow client never
holds up a table; a client whose queue overflows is disconnected (it reconnects and gets the
full view again). The table says what happened (``TableFanout.broadcast_state``,
``send_all``); this module decides how it becomes bytes: each seat's view and the table's info
are serialised once per event and kept as text until the next one, the info in parts by how
often each changes, and presence changes are batched (``ServerLimits.presence_delay``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import orjson

from ..engine_facts import choice_message_for
from .buckets import Bucket
from .protocol import CloseCode, Error, Presence, State
from .scheduler import Scheduler

if TYPE_CHECKING:
    from ..table import Table
    from .table_info import TableShown

def dumpb(obj: Any) -> bytes:
    """``obj`` as compact JSON, UTF-8 (orjson: the server serialises a view per seat and event)."""
    return orjson.dumps(obj)


#: ``view_head_json`` of the engines in use, by engine (a strong key: no reused ids); cleared
#: whole when full, as tables with ever new options could otherwise fill it without bound
_VIEW_HEADS: dict[Any, bytes] = {}
VIEW_HEADS_KEPT = 256


def view_head_json(game: Any) -> bytes:
    """The opening of every view's JSON for ``game``'s tables: ``{`` and the keys of its
    ``view_head``, each with its comma. Serialised once per engine, not in every view: the
    options are about a third of a view's bytes, and would be copied and serialised anew for
    every seat at every event."""
    head = _VIEW_HEADS.get(game)
    if head is None:
        if len(_VIEW_HEADS) >= VIEW_HEADS_KEPT:
            _VIEW_HEADS.clear()
        head = _VIEW_HEADS[game] = dumpb(game.view_head())[:-1] + b","
    return head


def view_bytes(game: Any, body: dict[str, Any]) -> bytes:
    """``dumpb`` of a whole view, from the view without its head (``view(head=False)``)."""
    return view_head_json(game) + dumpb(body)[1:]


def dumps(obj: Any) -> str:
    return dumpb(obj).decode()


#: A message to a client: JSON text, or the same text already encoded as UTF-8 (the state
#: messages: they are built from encoded parts and go to the socket as they are).
Message = str | bytes

log = logging.getLogger("stammtisch.server")

QUEUE_LIMIT = 512  # outgoing messages waiting for one slow client before it is dropped

#: Actions that name a card or a set of cards: no menu entry of their own (``_choices_json``).
CARD_ACTIONS = ("play:", "exchange:", "discard:")


class Conn:
    """One WebSocket client: its seat (None: spectator), outgoing queue and rate bucket (shared
    by every socket of the same seat).

    The outgoing queue is a plain deque with one wake-up future for the sender task: a
    broadcast puts one message on every connection's queue, and ``asyncio.Queue``'s
    bookkeeping per message (getter and putter futures, task counting) cost more than the
    rest of queueing it. With ``write_now`` (the ASGI server's socket, transport.py), a
    message that nothing waits before goes out at once, without waking the sender task: that
    is nearly every message, and the wake-up, the task step and the ASGI send coroutine cost
    more than writing the frame. With an ``Outbox`` such a message waits for the end of the
    event loop's turn and is written then. The queue is left for a socket that cannot take
    more (its transport paused writing: a client that does not read) and for what comes after
    it."""

    def __init__(self, seat: int | None, send_text: Callable[[str], Awaitable[None]],
                 close: Callable[[], Awaitable[None]], bucket: Bucket | None = None,
                 address: str = "", write_now: Callable[[Message], bool] | None = None,
                 outbox: Outbox | None = None):
        self.seat = seat
        self.address = address
        self._send_text = send_text
        self._close = close
        # the fast path (transport.py): a message written to the socket at once when
        # nothing waits before it; False (or an error) when the socket cannot take it now
        self._write_now = write_now
        # with an outbox, fast-path messages wait for the end of the event loop's turn
        self._outbox = outbox
        self._held: list[Message] = []
        self._busy = False  # the sender task is sending a message
        self._queue: deque[Message | None] = deque()  # None: the close marker
        self._wake: asyncio.Future[None] | None = None  # the sender waits on it when idle
        self.bucket = bucket or Bucket(20.0, 20.0)
        self.closed = False
        self.close_code: int = CloseCode.NORMAL  # what the socket is closed with when it stops
        # the table's info last sent to this client, by its key (TableFanout._send_states)
        self.table_sent: tuple[Any, ...] | None = None
        self.told_rematch = False  # this client was given its seat's link of the rematch

    def allow(self) -> bool:
        return self.bucket.allow()

    @property
    def strikes(self) -> int:
        return self.bucket.strikes

    def _put(self, item: Message | None) -> None:
        self._queue.append(item)
        wake, self._wake = self._wake, None
        if wake is not None and not wake.done():
            wake.set_result(None)

    def send(self, text: Message) -> None:
        if self.closed:
            return
        if len(self._queue) >= QUEUE_LIMIT:
            log.warning("dropping a client that does not read its messages")
            self.closed = True
            self._queue.clear()  # its messages are moot: it reconnects and gets the full view
            self._held.clear()
            self._put(None)
            return
        if self._write_now is not None and not self._queue and not self._busy:
            if self._outbox is not None:
                self._held.append(text)
                if len(self._held) == 1:
                    self._outbox.add(self)
                return
            if self._written_now(text):
                return
        self._put(text)

    def _written_now(self, text: Message) -> bool:
        """Whether the fast path took the message; if not, the caller queues it."""
        try:
            return self._write_now is not None and self._write_now(text)
        except Exception:  # the socket is going away: the sender's own send finds out
            return False

    def write_held(self) -> None:
        """Write the messages held for the outbox, in order; what the socket does not take
        now goes to the queue (the sender task's path)."""
        held, self._held = self._held, []
        if self.closed:
            return
        for i, text in enumerate(held):
            if not self._written_now(text):
                for rest in held[i:]:
                    self._put(rest)
                return

    async def sender(self) -> None:
        """Send queued messages in order until the close marker (None)."""
        queue = self._queue
        closing = False
        try:
            while True:
                if not queue:
                    self._wake = asyncio.get_running_loop().create_future()
                    await self._wake
                    continue
                text = queue.popleft()
                if text is None:
                    break
                self._busy = True
                await self._send_text(text if isinstance(text, str) else text.decode())
                self._busy = False
            self.closed = closing = True
            await self._close()
        except Exception:  # the socket went away, whatever the server says; the receive loop notices
            if not closing:  # a send failed: the socket is closed still, if it can be
                self.closed = closing = True
                await asyncio.gather(self._close(), return_exceptions=True)
        finally:
            self.closed = True

    def stop(self, code: int | None = None) -> None:
        """Close the connection once its queued messages are out (``code``: the close code,
        protocol.CloseCode; default ``close_code``)."""
        if code is not None:
            self.close_code = code
        if not self.closed:
            self.closed = True
            self._queue.extend(self._held)  # the last words (an error, say) still go out
            self._held.clear()
            self._put(None)


class Outbox:
    """The fast-path messages of one event-loop turn, written together at its end.

    Why: writing each event's messages as the broadcast goes would put the next seat's view
    between two writes, and on a loaded server the turn's many events would alternate Python
    work and system calls. Held until the turn ends (``call_soon``: before
    the loop next waits for I/O, so no message waits on the network), the writes follow one
    another, and several messages for one socket in one turn still go in order."""

    def __init__(self) -> None:
        self._conns: list[Conn] = []

    def add(self, conn: Conn) -> None:
        if not self._conns:
            asyncio.get_running_loop().call_soon(self.flush)
        self._conns.append(conn)

    def flush(self) -> None:
        conns, self._conns = self._conns, []
        for conn in conns:
            conn.write_held()




class TableFanout:
    """The connections of one table and the JSON they are sent (see the module's docstring)."""

    # attributes in slots, not a dict per table: one lookup less at each of the many reads
    # an event makes (bench/server_side_by_side.py weighs such small savings)
    __slots__ = ("_choices_cache", "_deal_parts", "_fixed_part", "_info_cache", "_info_parts",
                 "_presence_delay", "_presence_handle", "_presence_sent", "_scheduler",
                 "_seats_cache", "_seats_part", "_shown", "_view_cache", "conns", "presence_version")

    def __init__(self, shown: Callable[[], TableShown], bot_seats: list[bool],
                 presence_delay: float, scheduler: Scheduler):
        # the table as its clients are shown it now (``LiveTable.shown``): one snapshot per
        # broadcast or state sent, never a read of the table's parts one by one
        self._shown = shown
        self._scheduler = scheduler
        self.conns: list[Conn] = []
        self._presence_delay = presence_delay
        # what the clients were last told of the seats' presence (a bot is always there)
        self._presence_sent: list[bool] = list(bot_seats)
        self._presence_handle: asyncio.TimerHandle | None = None
        self.presence_version = 0  # moves whenever something shown about the seats changes
        self._seats_cache: list[int | None] | None = None  # see _conn_seats
        self._info_cache: tuple[int, int, bytes] | None = None
        self._deal_parts: tuple[tuple[Any, ...], bytes] | None = None  # see info_bytes
        self._info_parts: tuple[tuple[Any, ...], bytes, bytes] | None = None  # see info_bytes
        self._fixed_part: tuple[Table, bytes] | None = None  # see info_bytes
        self._seats_part: tuple[int, bytes] | None = None  # see info_bytes
        self._view_cache: tuple[int, dict[int | None, bytes]] | None = None  # (event, seat → view JSON)
        self._choices_cache: tuple[int, bytes] | None = None  # (event, the seat on turn's choices)

    # --- what the table tells it -----------------------------------------------------

    def reset(self) -> None:
        """The table was rebuilt: nothing serialised before holds."""
        self._info_cache = self._view_cache = self._choices_cache = None
        self._deal_parts = self._info_parts = self._fixed_part = self._seats_part = None

    def info_changed(self) -> None:
        """Something of the table's info changed without a new event."""
        self._info_cache = None

    def seats_changed(self) -> None:
        """Something every client shows about the seats changed (away, open, the flags)."""
        self.presence_version += 1
        self._info_cache = None

    # --- connections -----------------------------------------------------------------

    def add(self, conn: Conn) -> None:
        self.conns.append(conn)
        self._seats_cache = None

    def remove(self, conn: Conn) -> bool:
        """Forget ``conn`` and stop it; False when it was not here."""
        if conn not in self.conns:
            return False
        self.conns.remove(conn)
        self._seats_cache = None
        conn.stop()
        return True

    def open_count(self) -> int:
        """The connections not closed."""
        return sum(not c.closed for c in self.conns)

    def watched(self) -> bool:
        for c in self.conns:  # a loop, not any() over a generator: this runs every event
            if not c.closed:
                return True
        return False

    def seats_online(self) -> set[int]:
        """The seats with a connection not closed."""
        return {c.seat for c in self.conns if c.seat is not None and not c.closed}

    def of_seat(self, seat: int | None) -> list[Conn]:
        """The connections of a seat (None: the spectators)."""
        return [c for c in self.conns if c.seat == seat]

    def send_all(self, message: Message) -> None:
        for c in self.conns:
            c.send(message)

    def drop_seat(self, seat: int | None, message: str) -> None:
        """Close the sockets of a seat (None: spectators) whose link was revoked."""
        for c in self.of_seat(seat):
            c.send(Error.encode("revoked", message))
            c.stop(CloseCode.REVOKED)

    def close(self, code: int = CloseCode.RESTARTING) -> None:
        """The table goes from this process (it shuts down, or another process runs the table
        now): no more presence, every connection stopped with ``code`` (by default "come
        again": the client reconnects, and is served where the table is then)."""
        if self._presence_handle is not None:
            self._presence_handle.cancel()
        for c in list(self.conns):
            c.stop(code)

    # --- presence --------------------------------------------------------------------

    def presence_changed(self) -> None:
        """Coalesce presence: one message per ``presence_delay`` window, and only when a seat's
        connected flag really changed (spectators coming and going change nothing)."""
        self.presence_version += 1
        self._info_cache = None
        if self._presence_handle is None:
            self._presence_handle = self._scheduler.later(self._presence_delay,
                                                          self._flush_presence)

    def _flush_presence(self) -> None:
        self._presence_handle = None
        seats = self._shown().seat_infos(self.seats_online())
        now = [s["connected"] for s in seats]
        if now == self._presence_sent:
            return
        self._presence_sent = now
        self.send_all(Presence.encode(seats))

    # --- the table's info ------------------------------------------------------------

    def info_bytes(self, shown: TableShown | None = None) -> bytes:
        """The table's info as JSON (UTF-8), the keys of ``TableShown.deal`` last. Built from
        its parts: most events change nothing in it but the event number, so the rest is
        serialised only when the table's ``TableShown.key`` changes, and of that only the
        parts that moved (rebuilding the whole info at a deal's start and end would be the
        largest cost of a deal's boundary under load). ``shown``: the snapshot at hand."""
        src = self._shown() if shown is None else shown
        events = src.events
        cached = self._info_cache
        if cached is not None and cached[0] == events and cached[1] == self.presence_version:
            return cached[2]
        info_key = (self.presence_version, src.key())
        if self._info_parts is None or self._info_parts[0] != info_key:
            t = src.table
            if self._fixed_part is None or self._fixed_part[0] is not t:  # held: no id reuse
                self._fixed_part = (t, dumpb(src.fixed())[:-1])
            if self._seats_part is None or self._seats_part[0] != self.presence_version:
                self._seats_part = (self.presence_version,
                                    dumpb({"seats": src.seat_infos(self.seats_online())})[1:-1])
            deal_key = src.deal_key()
            if self._deal_parts is None or self._deal_parts[0] != deal_key:
                self._deal_parts = (deal_key, dumpb(src.deal())[1:-1])
            head = b"%b,%b,%b,\"events\":" % (self._fixed_part[1], self._seats_part[1],
                                              dumpb(src.ledger())[1:-1])
            tail = b",%b,%b}" % (dumpb(src.flags())[1:-1], self._deal_parts[1])
            self._info_parts = (info_key, head, tail)
        data = b"%b%d%b" % (self._info_parts[1], events, self._info_parts[2])
        self._info_cache = (events, self.presence_version, data)
        return data

    # --- views and state messages ------------------------------------------------------

    def _view_texts(self, events: int) -> dict[int | None, bytes]:
        """The view JSON of event ``events`` by seat (a new event starts with none)."""
        if self._view_cache is None or self._view_cache[0] != events:
            self._view_cache = (events, {})
        return self._view_cache[1]

    def view_json(self, seat: int | None, shown: TableShown) -> bytes:
        """A seat's view as JSON (UTF-8), computed once per event. Only the text is kept: the
        view's many small dicts and lists would otherwise live until the next event, and the
        garbage collector's passes over them would be the server's longest stalls."""
        texts = self._view_texts(shown.events)
        text = texts.get(seat)
        if text is None:
            table = shown.table
            state = table.state
            text = texts[seat] = dumpb(None) if state is None else view_bytes(
                table.game, state.view(seat, head=False))
        return text

    def state_message(self, seat: int | None, with_table: bool, shown: TableShown) -> bytes:
        """The state message for a seat (None: spectators), as UTF-8 (``protocol.State``).
        ``with_table``: with the table's info (``info_bytes``), else without it."""
        return State.encode(shown.events, self.view_json(seat, shown),
                            self.info_bytes(shown) if with_table else None,
                            self._choices_json(seat, shown))

    def _choices_json(self, seat: int | None, shown: TableShown) -> bytes:
        """``,"choices":[…]`` for the seat on turn when a legal action is a word, a bid or a
        contract, else nothing: per legal action (in the view's order) its menu entry as a
        catalogue message, with a contract's goal and value in the table's unit
        (``engine_facts.choice_message_for``, as the terminal shows them), or null for a card
        played or a set of cards (the page names cards itself). Nothing in the play phase: the
        messages of most events stay as they are."""
        state = shown.table.state
        if seat is None or state is None or state.is_terminal() or state.current_player() != seat:
            return b""
        cached = self._choices_cache
        if cached is not None and cached[0] == shown.events:
            return cached[1]
        texts = [state.action_to_string(a) for a in state.legal_actions()]
        worded = [not (text.startswith(CARD_ACTIONS)) for text in texts]
        data = b""
        if any(worded):
            data = b',"choices":' + dumpb([choice_message_for(shown.rules, text) if w else None
                                          for text, w in zip(texts, worded, strict=True)])
        self._choices_cache = (shown.events, data)
        return data

    def send_state(self, conn: Conn) -> None:
        self._send_states([conn], self._shown())

    def _send_states(self, conns: list[Conn], shown: TableShown) -> None:
        """The current state to each of ``conns``, with the table's info only when it changed
        since the connection last got it, but for the event number that every state message
        carries (the client keeps the last info it got). Within a deal nothing else changes,
        so most messages are without it: the info is about half of a message's bytes, and
        serialising and sending it with every action would cost server CPU
        (bench/server_side_by_side.py). Each message is made once per call (connections of one
        seat, or spectators, share it), not kept across calls: a cache of messages per event
        would cost more than it saves."""
        key = (self.presence_version, shown.key())
        made: dict[tuple[int | None, bool], bytes] = {}
        for c in conns:
            with_table = c.table_sent != key
            c.table_sent = key
            message = made.get((c.seat, with_table))
            if message is None:
                message = made[c.seat, with_table] = self.state_message(c.seat, with_table, shown)
            c.send(message)

    def _render_views(self, seats: list[int | None], shown: TableShown) -> None:
        """The views of several seats for the current event, rendered together: the engine
        computes their public part once (``views``), the JSON is the same as ``view_json``'s."""
        table = shown.table
        state = table.state
        if state is None:
            return
        texts = self._view_texts(shown.events)
        missing = [s for s in seats if s not in texts]
        if len(missing) < 2:
            return  # one view alone: view_json renders it
        game = table.game
        for seat, view in zip(missing, state.views(missing, head=False), strict=True):
            texts[seat] = view_bytes(game, view)

    def _conn_seats(self) -> list[int | None]:
        """The seats that clients watch from (None: spectators), each once; kept until a
        connection comes or goes."""
        if self._seats_cache is None:
            self._seats_cache = list(dict.fromkeys(c.seat for c in self.conns))
        return self._seats_cache

    def broadcast_state(self) -> None:
        shown = self._shown()
        self._render_views(self._conn_seats(), shown)
        self._send_states(self.conns, shown)
