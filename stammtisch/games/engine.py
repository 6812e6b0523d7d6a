"""What both engines do the same way, written once: deck validation, notation on the game,
the apply preamble (wrong type, deal over, not your turn), the redaction of the log as data,
the memoised view log, the common view keys, and ``known_mask`` as the one source of what a
seat may know (OpenSpiel hearts' ``KnowsLocation``; boardgame.io's ``playerView``).

An engine subclasses ``EngineGame`` and ``EngineState`` and fills in the hooks; see
``docs/engine-conventions.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

from ..cards import Pack, pack_named
from ..rules.base import OptionValue, format_options
from .base import DealResult, IllegalAction, TableState, Transfer, net_change

if TYPE_CHECKING:
    from ..rules import Rules


@dataclass(frozen=True)
class Secret:
    """An action kind (the ids ``first <= a < last``) whose content only some viewers see.

    ``seen_by``: ``actor`` (the seat that acted), or ``actor-and-partner`` (also the seat the
    engine names as the actor's partner in this deal, e.g. the Rufer holder who receives the
    given card). Everyone else reads ``hidden(action)`` in the log, e.g. ``discard:?``.
    """

    first: int
    last: int
    seen_by: Literal["actor", "actor-and-partner"]
    hidden: Callable[[int], str]


#: ``EngineGame.parsed_actions``: at most this many texts of at most this length (a Tapp
#: discard names up to six cards; spaces and case make more texts of one action)
PARSED_ACTIONS_KEPT = 4096
PARSED_TEXT_LIMIT = 48

#: ``EngineGame.log_entries``: the entries one viewer's memo holds before it starts afresh.
#: The multi-card ids (exchanges, discards) are too many to keep them all, but each one stays
#: in its deal's log and is shown at every later event of the deal, so a memo of the newest
#: saves their texts at every view the web table builds
LOG_ENTRIES_KEPT = 4096


class EngineGame:
    """An engine for one validated rule set: immutable after ``__init__``."""

    #: the game family this engine plays ("tippen" or "tapp")
    family: ClassVar[str]

    def __init__(self, rules: Rules):
        self.rules = rules
        self.options: dict[str, OptionValue] = format_options(rules)  # public: in every view
        self.num_players: int = rules.players
        self.pack: Pack = pack_named(rules.pack)
        self.deck_size: int = self.pack.size
        self.full_mask: int = self.pack.full_mask
        #: memo of views' log entries: (viewer, viewer is the partner) -> (actor, action) ->
        #: the entry ``[actor, text]`` (shared by every view that shows it: read-only)
        self.log_entries: dict[tuple[int | None, bool], dict[tuple[int, int], list[Any]]] = {}
        #: memo of ``string_to_action``: action text as received -> action id (bounded)
        self.parsed_actions: dict[str, int] = {}
        self.secrets: tuple[Secret, ...] = ()

    def view_head(self) -> dict[str, Any]:
        """The keys every view of this game starts with, the same in all of them: ``game``,
        ``ruleset``, ``options``, ``players``. (The web table serialises them once per engine
        and each view without them: ``EngineState.view(head=False)``.)"""
        return {"game": self.family, "ruleset": self.rules.id, "options": dict(self.options),
                "players": self.num_players}

    # -- notation (both engines keep it on the game) ------------------------------------------
    @property
    def num_distinct_actions(self) -> int:
        """One past the largest action id (multi-card ids are sparse bit masks)."""
        raise NotImplementedError

    def action_to_string(self, action: int) -> str:
        raise NotImplementedError

    def string_to_action(self, text: object) -> int:
        raise NotImplementedError

    # -- decks ---------------------------------------------------------------------------------
    def deck_problem(self, deck: Sequence[Any]) -> str | None:
        """Why ``deck`` is not a permutation of the pack (naming the missing or doubled
        cards), or None when it is one."""
        size = self.pack.size
        cards = self.pack.cards
        try:
            items = list(deck)
        except TypeError:
            return f"the deck must be a list of the {size} cards of the {self.pack.name} pack"
        bad = [x for x in items if type(x) is not int or not 0 <= x < size]
        if bad:
            return (f"the deck holds {bad[0]!r}, which is not a card of the {self.pack.name} pack "
                    f"(card indices 0…{size - 1})")
        counts = [0] * size
        for x in items:
            counts[x] = counts[x] + 1
        missing = [cards[c] for c in range(size) if counts[c] == 0]
        doubled = [cards[c] + (f" ×{counts[c]}" if counts[c] > 2 else "")
                   for c in range(size) if counts[c] > 1]
        if not doubled and not missing:
            return None
        parts = []
        if missing:
            parts.append(f"{', '.join(missing[:5])}{' …' if len(missing) > 5 else ''} missing")
        if doubled:
            parts.append(f"{', '.join(doubled[:5])}{' …' if len(doubled) > 5 else ''} more than once")
        return (f"the deck must hold each of the {size} cards of the {self.pack.name} pack "
                f"exactly once ({'; '.join(parts)})")

    def check_deck(self, deck: Sequence[Any]) -> None:
        size = self.deck_size
        # the common case, a list of ints: each card once gives the full mask (and in the
        # compiled engine a list is read without a generic lookup per card); the careful path
        # says what is wrong
        if isinstance(deck, list) and len(deck) == size:
            cards: list[Any] = deck
            seen = 0
            for x in cards:
                if type(x) is not int or not 0 <= x < size:
                    break
                seen |= 1 << x
            if seen == self.full_mask:
                return
        problem = self.deck_problem(deck)
        if problem is not None:
            raise ValueError(problem)

    def deck_from_strings(self, cards: Sequence[str]) -> list[int]:
        """A deck in notation → card indices; ``ValueError`` unless it is the whole pack."""
        deck = [self.pack.card(c) for c in cards]
        self.check_deck(deck)
        return deck

    def new_deal(self, table: TableState, deck: Sequence[int]) -> EngineState[Any]:
        """A new deal from ``deck`` (top card first) at a table in state ``table``."""
        raise NotImplementedError

    def check_table(self, table: TableState) -> None:
        if not 0 <= table.dealer < self.num_players:
            raise ValueError(f"dealer {table.dealer} is not a seat of {self.num_players} players")
        if table.pot < 0 or table.reserve < 0:
            raise ValueError("pot and reserve cannot be negative")

    # -- the log as each viewer may read it ----------------------------------------------------
    def log_text(self, actor: int, action: int, viewer: int | None, partner: bool) -> str:
        """The text of a logged action for ``viewer`` (``partner``: the viewer is the seat the
        engine names as the actor's partner), redacted by the declared ``secrets``."""
        if viewer != actor:
            for secret in self.secrets:
                if secret.first <= action < secret.last:
                    if secret.seen_by == "actor" or not partner:
                        return secret.hidden(action)
                    break
        return self.action_to_string(action)


GameT = TypeVar("GameT", bound=EngineGame)


class EngineState(Generic[GameT]):
    """One deal in progress: the API shared by both engines, of the engine ``GameT``.

    Subclasses keep ``cur`` (the seat to act, -1 when over), ``phase`` (their ``Phase``
    number, whose ``OVER`` ends the deal), ``log`` (``(seat, action)`` pairs) and
    ``dealer``, and implement the hooks below.
    """

    __slots__ = ()

    game: GameT
    table: TableState
    cur: int
    phase: int
    dealer: int
    log: list[tuple[int, int]]

    #: the phase that ends a deal, and every phase's name in views (by phase number)
    OVER: ClassVar[int]
    PHASE_NAMES: ClassVar[tuple[str, ...]]

    # -- the preamble of every action ---------------------------------------------------------
    def current_player(self) -> int:
        return self.cur

    def is_terminal(self) -> bool:
        return self.phase == self.OVER

    def apply(self, action: object, seat: int | None = None) -> None:
        """Apply ``action`` for the player on turn; ``seat`` (optional) must be that player.

        Raises ``IllegalAction`` naming the rule, with the state unchanged."""
        if seat is not None and seat != self.cur:
            if self.phase == self.OVER:
                raise IllegalAction("deal is over", "the deal is over; no more actions")
            raise IllegalAction("not your turn", f"it is seat {self.cur}'s turn, not seat {seat}'s")
        if type(action) is not int or action < 0:
            raise IllegalAction("notation", f"{action!r} is not an action id")
        if self.cur < 0:  # the deal is over (cur is -1 exactly then)
            raise IllegalAction("deal is over", "the deal is over; no more actions")
        self._apply(action)

    def _apply(self, action: int) -> None:
        """Apply an int action id ≥ 0 in a phase that is not over (the engine's dispatch)."""
        raise NotImplementedError

    def legal_actions(self) -> list[int]:
        raise NotImplementedError

    def action_to_string(self, action: int) -> str:
        return self.game.action_to_string(action)

    def string_to_action(self, text: object) -> int:
        """The game's ``string_to_action``, remembered by text: the parse depends on nothing but
        the text, and the web table parses every action it receives: a lookup costs a fraction
        of a parse."""
        g = self.game
        if type(text) is not str:
            return g.string_to_action(text)  # raises: not an action
        parsed = g.parsed_actions
        action = parsed.get(text)
        if action is None:
            action = g.string_to_action(text)  # raises for a text that is not an action
            if len(parsed) < PARSED_ACTIONS_KEPT and len(text) <= PARSED_TEXT_LIMIT:
                parsed[text] = action
        return action

    # -- results -------------------------------------------------------------------------------
    transfers: list[Transfer]

    def result(self) -> DealResult:
        raise NotImplementedError

    def returns(self) -> list[int]:
        """Net change of each seat's balance in this deal (terminal only)."""
        if self.phase != self.OVER:
            raise ValueError("the deal is not over yet")
        return net_change(self.transfers, self.game.num_players)

    # -- secrets -------------------------------------------------------------------------------
    def known_mask(self, seat: int | None) -> int:
        """The cards whose place ``seat`` may know now (``None``: a spectator): the one
        source of secrets, used by ``view``, the leak tests and world sampling."""
        raise NotImplementedError

    def observation(self, seat: int | None) -> Any:
        """What ``seat`` knows now (``None``: a spectator) as ints and card masks: the facts of
        ``view(seat)``, which the bots and the RL observations read (each engine's own type)."""
        raise NotImplementedError

    def fingerprint(self) -> tuple[object, ...]:
        """Every field of the deal that a rule reads or the deal shows: equal fingerprints, the
        same state (``agreement``: two builds checked action for action)."""
        raise NotImplementedError

    def _partner_of_actor(self, viewer: int | None) -> bool:
        """True when ``viewer`` is the seat the engine names as the partner of the actors of
        ``actor-and-partner`` secrets (Tapp: the Rufer holder)."""
        return False

    def _view_log(self, viewer: int | None) -> list[list[Any]]:
        """The log as ``viewer`` may see it. An entry depends only on (actor, action, viewer,
        viewer is the partner): the game remembers it, list and all, and views share it (the
        server renders every seat's view after every action), up to ``LOG_ENTRIES_KEPT``
        entries a viewer."""
        g = self.game
        partner = self._partner_of_actor(viewer)
        memo = g.log_entries.get((viewer, partner))
        if memo is None:
            memo = g.log_entries[(viewer, partner)] = {}
        out = []
        for entry in self.log:
            shown = memo.get(entry)
            if shown is None:
                s, a = entry
                shown = [s, g.log_text(s, a, viewer, partner)]
                if len(memo) >= LOG_ENTRIES_KEPT:
                    memo.clear()  # the entries still in play come back at once
                memo[entry] = shown
            out.append(shown)
        return out

    # -- the view ------------------------------------------------------------------------------
    def _viewer(self, seat: int | None) -> int | None:
        if seat is None:
            return None
        if type(seat) is not int or not 0 <= seat < self.game.num_players:
            raise ValueError(f"seat {seat!r} is not at this table of {self.game.num_players}")
        return seat

    def view(self, seat: int | None = None, head: bool = True) -> dict[str, Any]:
        """What ``seat`` may know, as JSON-able data (``None``: a spectator). ``head=False``:
        without the keys of ``EngineGame.view_head``, which every view of the game starts with."""
        me = self._viewer(seat)
        g = self.game
        over = self.phase == self.OVER
        v: dict[str, Any] = {
            "seat": me,
            "dealer": self.dealer,
            "phase": self.PHASE_NAMES[self.phase],
            "current_player": self.cur,
            "legal_actions": ([g.action_to_string(a) for a in self.legal_actions()]
                              if me is not None and me == self.cur else []),
            "log": self._view_log(me),
            "terminal": over,
        }
        if head:
            v = {**g.view_head(), **v}
        self._add_view(v, me)
        if over:
            v["net"] = self.returns()
        return v

    def views(self, seats: Sequence[int | None], head: bool = True) -> list[dict[str, Any]]:
        """``[self.view(s, head) for s in seats]``, equal key for key and in key order (so their
        JSON is byte for byte the same), with everything no seat changes computed once: the web
        table renders the view of every connected seat after every action. The views share
        those parts, so treat them as read-only."""
        if not seats:
            return []
        first = self.view(seats[0], head)
        out = [first]
        g = self.game
        for seat in seats[1:]:
            me = self._viewer(seat)
            v = first.copy()  # keeps the key order; the seat's own keys are overwritten
            v["seat"] = me
            v["legal_actions"] = ([g.action_to_string(a) for a in self.legal_actions()]
                                  if me is not None and me == self.cur else [])
            v["log"] = self._view_log(me)
            self._redo_seat_view(v, me)
            out.append(v)
        return out

    def _redo_seat_view(self, view: dict[str, Any], seat: int | None) -> None:
        """Make ``view``, a copy of another seat's view of this state, ``seat``'s: redo every
        key of ``_add_view`` whose value depends on the seat (``views``)."""
        raise NotImplementedError

    def _add_view(self, view: dict[str, Any], seat: int | None) -> None:
        """The engine's part of the view: ``hand``, ``hand_sizes``, ``trump``, ``upcard``,
        ``trick``, ``last_trick``, ``tricks_won``, ``pot``, ``reserve`` and its own keys."""
        raise NotImplementedError
