"""What the clients are shown of a live table at one moment (``TableShown``): made by the table
(``LiveTable.shown``) once per broadcast or state sent, read by the fan-out, which serialises
its parts (fanout.py), and by the routes that show a table's info.

The info comes in parts by how often each changes (``TableFanout.info_bytes`` serialises a
part only when it moved): what stays while the table keeps its engine ``Table`` (``fixed``),
the seats (``seat_infos``), the ledger (``ledger``: a deal starts or ends), the flags
(``flags``) and the score sheet (``deal``: a deal ends). ``key`` and ``deal_key`` say when
they moved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..i18n import Message as CatalogueMessage
    from ..rules import Rules
    from ..table import Table
    from .table_core import Seat


class TableShown:
    """A live table as its clients are shown it now (see the module's docstring). The sets
    and lists it holds are the table's own: it is read at once, while nothing moves."""

    __slots__ = ("away", "bot_trouble", "broken", "closed", "events", "explanation", "hints",
                 "id", "listed", "max_deals", "next_deal_at", "next_ready", "open_seats",
                 "evening", "options", "pace", "pause", "rematch_deadline", "rematch_id", "rematch_votes",
                 "rematch_waiting", "rules",
                 "ruleset_id", "score", "scored", "seats", "spectator_chat", "started", "table",
                 "turn_deadline",
                 "turn_seconds", "waiting")

    def __init__(self, table_id: str, ruleset_id: str, rules: Rules, options: dict[str, Any],
                 table: Table, events: int, seats: list[Seat], away: set[int],
                 open_seats: set[int], started: bool, max_deals: int | None, closed: bool,
                 broken: str | None, turn_seconds: int, listed: bool, rematch_id: str | None,
                 rematch_votes: set[int], pace: str | float | None, pause: float,
                 next_ready: set[int], hints: bool, next_deal_at: float | None, waiting: bool,
                 turn_deadline: float | None, bot_trouble: int | None,
                 score: list[dict[str, Any]], scored: int,
                 explanation: list[CatalogueMessage] | None, rematch_waiting: list[int],
                 rematch_deadline: float | None, evening: list[dict[str, Any]],
                 spectator_chat: bool = True) -> None:
        self.id = table_id
        self.ruleset_id = ruleset_id
        self.rules = rules
        self.options = options
        self.table = table
        self.events = events
        self.seats = seats
        self.away = away
        self.open_seats = open_seats
        self.started = started
        self.max_deals = max_deals
        self.closed = closed
        self.broken = broken
        self.turn_seconds = turn_seconds
        self.listed = listed
        self.rematch_id = rematch_id
        self.rematch_votes = rematch_votes
        self.pace = pace  # the table's setting (None: the server's pause, ``pause``)
        self.pause = pause
        self.next_ready = next_ready
        self.hints = hints
        self.next_deal_at = next_deal_at
        self.waiting = waiting
        self.turn_deadline = turn_deadline
        self.bot_trouble = bot_trouble
        self.score = score
        self.scored = scored
        self.explanation = explanation
        self.rematch_waiting = rematch_waiting
        self.rematch_deadline = rematch_deadline
        self.evening = evening
        self.spectator_chat = spectator_chat

    def info(self, online: set[int]) -> dict[str, Any]:
        """The table's info (``online``: the seats with a client connected)."""
        return {**self.fixed(), "seats": self.seat_infos(online), **self.ledger(),
                **self.deal(), "events": self.events, **self.flags()}

    def key(self) -> tuple[Any, ...]:
        """Everything the info shows but the event number and the seats: the table's JSON
        stays the same, but for that number, while this and the fan-out's presence version
        do. (The ledger, the dealer and the score sheet move only when a deal starts or ends;
        the flags move with the presence version.)"""
        t = self.table
        return (id(t), t.deal_count, t.in_deal, self.started,
                self.next_deal_at, self.waiting, self.closed, self.broken, self.turn_seconds,
                self.turn_deadline, self.listed, self.rematch_id, self.max_deals,
                self.scored, id(self.explanation), tuple(sorted(self.rematch_votes)),
                tuple(self.rematch_waiting), self.rematch_deadline,
                self.bot_trouble, self.pace, tuple(sorted(self.next_ready)),
                self.spectator_chat)

    def deal_key(self) -> tuple[Any, ...]:
        """Moves with ``deal``."""
        return (self.scored, id(self.explanation))

    def fixed(self) -> dict[str, Any]:
        """What stays as long as the table keeps its ``Table`` (the names are the players')."""
        rules = self.rules
        return {
            "id": self.id,
            "ruleset": self.ruleset_id,
            "title": rules.title,
            "family": rules.family,
            # seats are listed in the direction of play; Modern Tapp plays counter-clockwise
            "clockwise": getattr(rules, "clockwise", True),
            "options": self.options,
            "players": list(self.table.players),
        }

    def ledger(self) -> dict[str, Any]:
        """Moves when a deal starts or ends."""
        t = self.table
        state = t.state
        return {
            "started": self.started,
            "in_deal": t.in_deal,
            "deal_number": t.deal_count,
            "max_deals": self.max_deals,
            # the dealer of the deal on the table (as its views say), else the next dealer
            "dealer": t.dealer if state is None else state.dealer,
            "balances": t.ledger.player_balances(),
            "pot": t.ledger.pot,
            "reserve": t.ledger.reserve,
            "evening": self.evening_info(),
        }

    def evening_info(self) -> dict[str, Any] | None:
        """A rematch's evening (None for a table without one before it): per earlier table,
        oldest first, its finished deals and each seat's balance; and the evening's total per
        seat, this table's balances included."""
        if not self.evening:
            return None
        total = list(self.table.ledger.player_balances())
        for earlier in self.evening:
            total = [a + b for a, b in zip(total, earlier["balances"], strict=False)]
        return {"tables": [{"deals": e["deals"], "balances": e["balances"]} for e in self.evening],
                "total": total}

    def deal(self) -> dict[str, Any]:
        """Moves when a deal ends (``deal_key``); last in ``TableFanout.info_bytes``."""
        return {
            # the score sheet's last rows only: every state message carries it, and a table
            # that plays all evening must not make each message longer (the record has all)
            "score": self.score,
            "score_earlier": self.scored - len(self.score),
            "explanation": self.explanation,
        }

    def flags(self) -> dict[str, Any]:
        return {
            "next_deal_at": self.next_deal_at,
            "waiting": self.waiting,
            "closed": self.closed,
            "broken": self.broken,
            "turn_seconds": self.turn_seconds,
            "turn_deadline": self.turn_deadline,
            "listed": self.listed,
            "rematch": self.rematch_id,
            # seats that asked for a rematch: it is made once every seated player agrees
            "rematch_votes": sorted(self.rematch_votes),
            # the seated players it still waits for, and when it ends unanswered (declined)
            "rematch_waiting": self.rematch_waiting,
            "rematch_deadline": self.rematch_deadline,
            # "wait" (the next deal when every seated player pressed Next: ``next_ready``) or
            # seconds between deals (then ``next_deal_at`` says when)
            "pace": self.pause if self.pace is None else self.pace,
            "next_ready": sorted(self.next_ready),
            "hints": self.hints,
            # the seat whose search bot keeps failing (the table tries again, ever less often)
            "bot_trouble": self.bot_trouble,
            # spectators may chat (a seated player or the admin switches it off and on)
            "spectator_chat": self.spectator_chat,
        }

    def seat_infos(self, online: set[int]) -> list[dict[str, Any]]:
        """Per seat: name, bot, connected (``online``; a bot always is), ``away`` (a stand-in
        bot plays for it after its turn timer ran out) and ``open`` (free for a stranger from
        the lobby)."""
        return [{"name": s.name, "bot": s.bot, "connected": bool(s.bot) or i in online,
                 "away": i in self.away, "open": i in self.open_seats}
                for i, s in enumerate(self.seats)]

    def listing(self) -> dict[str, Any] | None:
        """What the lobby shows of this table, or None when it is not open to strangers."""
        if not self.listed or not self.open_seats or self.closed or self.broken:
            return None
        return {"id": self.id, "ruleset": self.ruleset_id, "title": self.rules.title,
                "family": self.rules.family, "started": self.started,
                "deal_number": self.table.deal_count, "turn_seconds": self.turn_seconds,
                "hints": self.hints,
                "seats": [{"seat": i, "name": s.name, "bot": s.bot, "free": i in self.open_seats}
                          for i, s in enumerate(self.seats)],
                "free": len(self.open_seats), "taken": len(self.seats) - len(self.open_seats)}
