"""A table's stored record as its readers get it: replayed, redacted for a seat, one past
deal as a seat saw it, and the built answers kept (``BytesCache``). Replaying runs off the
event loop (the routes call these on the reader thread)."""

from __future__ import annotations

import hmac
import itertools
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from ..explain import explain_messages
from ..record import load, replay, table_to_record
from ..rules import ruleset as build_ruleset
from ..table import Table
from .replay import replay_deal
from .storage import StoredTable, StoredTokens, token_digest


def stored_table(st: StoredTable) -> Table:
    """A stored table's players and rules, before its first deal."""
    return Table(build_ruleset(st.ruleset, st.options), [s.name for s in st.seats],
                 st.first_dealer or 0)


def replay_deals(table: Table, st: StoredTable) -> Iterator[None]:
    """Replay the stored deals on ``table``, one step per deal (the table then holds that
    deal's last stored event)."""
    for deck, actions in st.deals:
        replay_deal(table, deck, actions)
        yield


def replayed(st: StoredTable, deals: int | None = None) -> Table:
    """The table of a stored record with every stored event replayed (``deals``: those of
    its first deals only)."""
    table = stored_table(st)
    for _ in itertools.islice(replay_deals(table, st), deals):
        pass
    return table


def finished_deals(table: Table) -> int:
    return table.deal_count - (1 if table.in_deal else 0)


def public_record(table: Table) -> dict[str, Any]:
    """The full record of the finished deals: an unfinished last deal (its deck!) is dropped."""
    rec = table_to_record(table)
    if table.in_deal:
        rec["deals"] = rec["deals"][:-1]
    return rec


REDACTED_NOTE = ("Each deal as this token saw it when the deal ended (its terminal view): cards "
                 "the rules never show (a passer's folded cards, the talon, the tapp, other hands) "
                 "are hidden. The full, replayable record needs the admin token, or any seat's "
                 "token once the table is closed.")


def redacted_record(st: StoredTable, seat: int | None) -> dict[str, Any]:
    """The finished deals as ``seat`` (None: a spectator) saw them: terminal views only."""
    table = stored_table(st)
    deals = []
    for k, _ in enumerate(replay_deals(table, st)):
        state = table.state
        if state is None or not state.is_terminal():
            break
        deals.append({"deal": k + 1, "view": state.view(seat)})
    return {"format": "stammtisch-redacted/1", "note": REDACTED_NOTE, "ruleset": st.ruleset,
            "options": st.options, "players": [s.name for s in st.seats], "seat": seat,
            "deals": deals}


def deal_as_seen(st: StoredTable, deal: int, seat: int | None) -> dict[str, Any] | None:
    """Finished deal ``deal`` (1-based) of a stored table as ``seat`` (None: a spectator) saw
    it at its end, with the explanation of its result and its tricks card by card (every card
    played was shown to all); None when the database does not hold it finished."""
    table = stored_table(st)
    for k, _ in enumerate(itertools.islice(replay_deals(table, st), deal)):
        if k + 1 < deal:
            continue
        state = table.state
        result = table.deals[-1].result
        if state is None or result is None or not state.is_terminal():
            return None
        suits = str(getattr(table.rules, "suits", "french"))
        tricks = [{"leader": trick["cards"][0][0], "cards": trick["cards"], "winner": trick["winner"]}
                  for trick in result.summary.get("tricks_log") or [] if trick["cards"]]
        return {"deal": deal, "players": list(table.players), "view": state.view(seat),
                "explanation": explain_messages(result.summary, table.players, suits),
                "tricks": tricks}
    return None


def reads_whole(who: tuple[str, int | None], ended: bool) -> bool:
    """Whether ``who`` reads the whole record and the whole analysis of every deal: a seat
    or the admin once the table has ended (closed, or archived). Before that everyone reads
    the deals as the table showed them to him, the admin as a spectator."""
    return ended and who[0] in ("seat", "admin")


def reader_seat(who: tuple[str, int | None]) -> int | None:
    """The seat whose view ``who`` reads (None: a spectator's, also the admin's)."""
    return who[1] if who[0] == "seat" else None


def summary(table_id: str, ruleset: str, created: float, table: Table,
            who: tuple[str, int | None], ended: bool, finished: int) -> dict[str, Any]:
    """What "My tables" shows of a table for ``who``: when it was made, its finished deals,
    this reader's seat and balance (none for a spectator or the admin), and whether it plays
    on or has ended. No card: the balance is the one the table's public info shows."""
    seat = reader_seat(who)
    balances = table.ledger.player_balances()
    return {"id": table_id, "ruleset": ruleset, "created": created, "deals": finished,
            "role": who[0], "seat": seat,
            "name": table.players[seat] if seat is not None else None,
            "balance": balances[seat] if seat is not None else None,
            "status": "ended" if ended else "playing"}


def record_key(table_id: str, finished: int, who: tuple[str, int | None],
               closed: bool) -> tuple[Any, ...]:
    """What a record download depends on: the table, its finished deals, and whose it is (the
    full record once the table has ended, else the seat's view; the admin's is a
    spectator's)."""
    full = reads_whole(who, closed)
    return (table_id, finished, full, None if full else reader_seat(who))


class BytesCache:
    """Built answers kept by key, the least recently used dropped beyond ``limit`` bytes."""

    def __init__(self, limit: int):
        self.limit = limit
        self.size = 0
        self._kept: OrderedDict[Any, bytes] = OrderedDict()

    def get(self, key: Any) -> bytes | None:
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
        return found

    def put(self, key: Any, body: bytes) -> None:
        if len(body) > self.limit:
            return
        old = self._kept.pop(key, None)
        if old is not None:
            self.size -= len(old)
        self._kept[key] = body
        self.size += len(body)
        while self.size > self.limit:
            _, dropped = self._kept.popitem(last=False)
            self.size -= len(dropped)


def auth_tokens(tokens: StoredTokens, token: str) -> tuple[str, int | None] | None:
    """``LiveTable.auth`` for a table known by its token digests (an archived one): every
    digest is compared (constant time, no early exit)."""
    if not token or len(token) > 200:
        return None
    d = token_digest(token)
    found: tuple[str, int | None] | None = None
    for seat, digest in enumerate(tokens.seat_digests):
        if digest is not None and hmac.compare_digest(d, digest):
            found = ("seat", seat)
    if hmac.compare_digest(d, tokens.spectator_digest):
        found = ("spectator", None)
    if hmac.compare_digest(d, tokens.admin_digest):
        found = ("admin", None)
    return found



def deal_replay(record: dict[str, Any], deal: int, seat: int | None, whole: bool) -> dict[str, Any] | None:
    """Finished deal ``deal`` (1-based) of a full record step by step, as ``seat`` (None: a
    spectator) may see it: ``steps`` holds the view before each action and the deal's last
    view (its first the deal as dealt), ``log`` the deal's actions as the last view tells
    them. ``whole`` (the table has ended, or the reader holds the full record): every hand,
    the tapp, what was laid away and folded, and every action with its cards. Raises
    ``RecordError`` for a record that does not replay; None when it has no such finished deal."""
    deals = load(record)["deals"]
    if not 1 <= deal <= len(deals):
        return None
    steps: list[dict[str, Any]] = []
    actions: list[list[Any]] = []

    def step(table: Table) -> dict[str, Any]:
        state = table.current_state()
        if not whole:
            return {k: x for k, x in state.view(seat, head=False).items() if k not in ("log", "legal_actions")}
        shown = {k: x for k, x in state.view(None, head=False).items() if k not in ("log", "legal_actions")}
        views = [state.view(s, head=False) for s in range(len(table.players))]
        shown["hands"] = [v.get("hand", []) for v in views]
        shown["folded"] = [v.get("folded") or [] for v in views]
        for key in ("tapp", "discards"):  # the declarer's own, shown to all in a whole replay
            shown[key] = next((v[key] for v in views if v.get(key)), None)
        return shown

    def before(table: Table, text: str) -> None:
        if table.deal_count == deal:
            steps.append(step(table))
            actions.append([table.current_state().current_player(), text])

    done = replay({**record, "deals": deals[:deal]}, on_action=before).table
    state = done.state
    if state is None or not state.is_terminal() or done.deal_count != deal:
        return None
    steps.append(step(done))
    log = actions if whole else state.view(seat, head=False)["log"]
    return {"format": "stammtisch-replay/1", "deal": deal, "players": list(done.players),
            "seat": seat, "whole": whole, "suits": str(getattr(done.rules, "suits", "french")),
            "family": str(done.rules.family), "clockwise": bool(getattr(done.rules, "clockwise", True)),
            "log": log, "steps": steps}
