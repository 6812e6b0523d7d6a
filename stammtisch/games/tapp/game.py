"""The Tapp game: per-rule-set tables, the deal plan, the notation, ``new_deal``.

Action encoding (ints; ``N`` = pack size, 36 or 32):

====================  =====================================================
``0 … N-1``           ``play:XX`` (the card index)
``N … 2N-1``          ``call:XX`` (Rufer: the called card)
``2N … 3N-1``         ``give:XX`` (Rufer: the card given back / into the tapp)
``3N + 0``            ``pass`` (historic auction; Modern round 2)
``3N + 1``            ``hold``
``3N + 2 … 3N + 4``   ``bid:frage``, ``bid:solo``, ``bid:herzsolo``
``3N + 5 … 3N + 8``   ``trump:H``, ``trump:D``, ``trump:C``, ``trump:S``
``3N + 9, 3N + 10``   ``tout``, ``no-tout``
``3N + 11, 3N + 12``  ``play``, ``weg`` (Modern round 1)
``3N + 13 … 3N + 27`` ``contract:NAME`` in rank order (see ``MODERN_CONTRACTS``)
``DISCARD + mask``    ``discard:C7,D8,…``: one action naming every discarded card;
                      ``DISCARD = 3N + 28`` and ``mask`` is the bit mask of the cards
                      (a sparse range, so a discard of the wrong size is still an
                      action that ``apply`` can refuse by name)
====================  =====================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...cards import SUITS
from ...rules.tapp import TappRules
from ..base import IllegalAction, Payment, TableState, Transfer
from ..engine import EngineGame, Secret
from ..tricks import beaters_table
from .auction import AuctionState
from .contracts import HISTORIC_BIDS, MODERN_CONTRACTS, MODERN_INDEX, modern_value
from .phases import AUCTION, DECLARE
from .rounds import RoundsState
from .state import TappState

#: Dealing patterns as data: ("tapp", k) puts k cards on the tapp; ("each", k) gives a packet
#: of k cards to every player in turn, starting with forehand. Cards come off the top.
DEAL_PATTERNS: dict[tuple[str, int, str], tuple[tuple[str, int], ...]] = {
    # Württemberg Tarock and Classic Tapp: the tapp first, then 4-3-4
    # (docs/rules-reference.md §3.2).
    ("tapp-first", 3, "tapp36"): (("tapp", 3), ("each", 4), ("each", 3), ("each", 4)),
    # Modern Tapp (rules reference §3.4).
    ("modern", 3, "tapp36"): (("each", 4), ("each", 3), ("tapp", 3), ("each", 4)),
    ("modern", 4, "tapp36"): (("each", 3), ("tapp", 2), ("each", 2), ("tapp", 2), ("each", 3)),
    ("modern", 3, "skat32"): (("each", 3), ("tapp", 2), ("each", 4), ("each", 3)),
    ("modern", 4, "skat32"): (("each", 3), ("tapp", 2), ("each", 2), ("tapp", 2), ("each", 2)),
}

#: Offsets of the fixed actions after the three card ranges.
O_PASS, O_HOLD, O_BID, O_TRUMP, O_TOUT, O_NOTOUT, O_PLAY, O_WEG, O_CONTRACT, O_DISCARD = (
    0, 1, 2, 5, 9, 10, 11, 12, 13, 28)

#: per suit, per in-suit bit pattern: the cards (``CardLists``) and their points (``SuitPoints``)
CardLists = tuple[tuple[list[int], ...], ...]
SuitPoints = tuple[tuple[int, ...], ...]
#: of a suit: its mask, the shift of its lowest card, and per in-suit pattern the cards
SuitInfo = tuple[int, int, tuple[list[int], ...]]

_SUIT_TABLES: dict[tuple[int, tuple[int, ...]], tuple[CardLists, SuitPoints]] = {}


def _suit_tables(R: int, points: tuple[int, ...]) -> tuple[CardLists, SuitPoints]:
    """Per suit, per in-suit bit pattern: the list of card indices and the card points.

    Built once per pack geometry and shared by every game (never mutated): 4 × 2**R lists
    per game would be ~2,000 objects the garbage collector scans for each live table."""
    key = (R, points)
    tables = _SUIT_TABLES.get(key)
    if tables is None:
        F = (1 << R) - 1
        lists: CardLists = tuple(
            tuple([[s * R + i for i in range(R) if (b >> i) & 1] for b in range(F + 1)])
            for s in range(4)
        )
        pts: SuitPoints = tuple(
            tuple([sum(points[s * R + i] for i in range(R) if (b >> i) & 1)
                   for b in range(F + 1)])
            for s in range(4)
        )
        tables = _SUIT_TABLES[key] = (lists, pts)
    return tables


class TappGame(EngineGame):
    """A Tapp rule set made playable: per-game tables and ``new_deal``."""

    family = "tapp"
    rules: TappRules

    def __init__(self, rules: TappRules):
        super().__init__(rules)
        n = self.num_players
        pack = self.pack
        N = self.N = pack.size
        R = self.rps = pack.ranks_per_suit
        self.suit_masks = pack.suit_masks
        self.full = pack.full_mask
        self.points: tuple[int, ...] = pack.points
        #: suit mask of the suit of each card
        self.suitmask_of: tuple[int, ...] = tuple([pack.suit_masks[c // R] for c in range(N)])
        self._F = (1 << R) - 1
        #: per suit, per in-suit bit pattern: the card indices and the card points (shared)
        self.suit_lists, self.suit_points = _suit_tables(R, tuple(pack.points))
        # deal plan: for each deck position, the receiver (0..n-1 offset from forehand; n tapp)
        pattern = DEAL_PATTERNS[(rules.deal, n, rules.pack)]
        plan: list[int] = []
        for target, k in pattern:
            if target == "tapp":
                plan.extend([n] * k)
            else:
                for off in range(n):
                    plan.extend([off] * k)
        if len(plan) != N:
            raise AssertionError((rules.deal, n, rules.pack, len(plan)))
        self.deal_plan: tuple[int, ...] = tuple(plan)
        #: per receiver (seat offset from forehand, then the tapp): its deck positions
        self.takers: tuple[tuple[int, ...], ...] = tuple(
            tuple([i for i, t in enumerate(plan) if t == r]) for r in range(n + 1))
        self.tapp_size = plan.count(n)
        self.hand_size = (N - self.tapp_size) // n
        # action ids
        B = 3 * N
        self.A_PASS = B + O_PASS
        self.A_HOLD = B + O_HOLD
        self.A_BID = B + O_BID
        self.A_TRUMP = B + O_TRUMP
        self.A_TOUT = B + O_TOUT
        self.A_NOTOUT = B + O_NOTOUT
        self.A_PLAY = B + O_PLAY
        self.A_WEG = B + O_WEG
        self.A_CONTRACT = B + O_CONTRACT
        self.A_DISCARD = B + O_DISCARD
        # Secrets of the log: a discard is seen by the declarer alone; a Rufer give by the
        # declarer and the holder who receives it.
        self.secrets = (
            Secret(self.A_DISCARD, self.A_DISCARD + self.full + 1, "actor", lambda a: "discard:?"),
            Secret(2 * N, 3 * N, "actor-and-partner", lambda a: "give:?"),
        )
        self.max_level = len(rules.bids)
        # Modern round-2 legal lists per standing rank: (with pass, without pass)
        above = []
        for rank in range(10):
            ids = [self.A_CONTRACT + i for i, c in enumerate(MODERN_CONTRACTS) if c.rank > rank]
            above.append(([self.A_PASS, *ids], ids))
        self.contracts_above = tuple(above)
        self.trump_mask_of_suit = {s: pack.suit_masks[i] for i, s in enumerate(SUITS)}
        self.hearts = pack.suit_masks[0]
        # play-phase tables (hot path): per card, its suit as (suit mask, shift, per in-suit
        # pattern the card list); per trump mask, the same for the trump suit (0: none)
        self.suit_info: tuple[SuitInfo, ...] = tuple((pack.suit_masks[c // R], (c // R) * R, self.suit_lists[c // R])
                               for c in range(N))
        self.trump_info: dict[int, SuitInfo] = {pack.suit_masks[i]: (pack.suit_masks[i], i * R, self.suit_lists[i])
                           for i in range(4)}
        #: per trump mask (0 or a suit), per card ``b``: the mask of the cards that beat ``b``
        #: when ``b`` wins the trick so far (``tricks.beats`` as a table)
        self.beaters: dict[int, tuple[int, ...]] = beaters_table(pack.suit_masks, R, (0, *pack.suit_masks))
        #: the same by the trump suit's index + 1 (0: no trumps), which a trump mask's
        #: ``bit_length() // R`` is
        self.beaters_by_trump: tuple[tuple[int, ...], ...] = tuple(
            self.beaters[m] for m in (0, *pack.suit_masks))
        # a new deal's fixed parts
        self.init_trump = self.hearts if rules.hearts_always_trump else 0
        self.init_trump_suit = "H" if rules.hearts_always_trump else None
        self.ante = rules.pot
        self.r1_actions = (self.A_PLAY, self.A_WEG)
        #: Modern contract values in cents per contract index
        self.contract_values = tuple(modern_value(c.name, rules.frage_value) for c in MODERN_CONTRACTS)
        #: memo of settlement transfers (immutable; a deal's handful comes from a small set)
        self.transfer_memo: dict[tuple[Any, ...], Transfer] = {}
        #: fixed-value settlements: (declarer, contract, won) -> (transfers, net per seat)
        self.fixed_settlements: dict[tuple[int, int, bool], tuple[tuple[Transfer, ...], tuple[int, ...]]] = {}
        #: the historic auction (else the Modern rounds): which flow a deal's state follows
        self.auction: bool = rules.flow == "auction"
        #: the phase a new deal starts in (the flow's first phase)
        self.first_phase: int = AUCTION if self.auction else DECLARE
        #: a fixed value per contract, won or lost (Modern Tapp), not per card point
        self.fixed_values: bool = rules.settlement == "modern"
        # the rules the play reads, as plain fields of the engine
        self.ends_early: bool = rules.ends_early
        self.announce_tout: bool = rules.announce_tout
        self.simple_actions = {"pass": self.A_PASS, "contract:pass": self.A_PASS, "hold": self.A_HOLD,
                               "tout": self.A_TOUT, "no-tout": self.A_NOTOUT, "play": self.A_PLAY,
                               "weg": self.A_WEG}

    # ------------------------------------------------------------------ helpers
    def mask_list(self, m: int) -> list[int]:
        """The card indices of a mask, ascending (per-suit table lookups)."""
        R, F, L = self.rps, self._F, self.suit_lists
        return L[0][m & F] + L[1][(m >> R) & F] + L[2][(m >> (2 * R)) & F] + L[3][m >> (3 * R)]

    def mask_points(self, m: int) -> int:
        R, F, P = self.rps, self._F, self.suit_points
        return P[0][m & F] + P[1][(m >> R) & F] + P[2][(m >> (2 * R)) & F] + P[3][m >> (3 * R)]

    def card_names(self, m: int) -> list[str]:
        cards = self.pack.cards
        return [cards[c] for c in self.mask_list(m)]

    @property
    def num_distinct_actions(self) -> int:
        return self.A_DISCARD + self.full + 1

    def new_deal(self, table: TableState, deck: Sequence[int]) -> TappState:
        """A new deal from ``deck`` (top card first) at a table in state ``table``."""
        # Fast path: a list of ints, each receiver's cards gathered by its deck positions; it
        # is a permutation exactly when N cards in range give the full mask. Anything else
        # takes the careful path, which says what is wrong.
        N = self.N
        acc: list[int] = []
        seen = 0
        if isinstance(deck, list) and len(deck) == N:
            cards: list[Any] = deck
            for positions in self.takers:
                m = 0
                for i in positions:
                    c = cards[i]
                    if type(c) is not int or not 0 <= c < N:
                        break
                    m |= 1 << c
                seen |= m
                acc.append(m)
        if seen != self.full:
            self.check_deck(deck)
            acc = [0] * (self.num_players + 1)
            for i, c in enumerate(deck):
                acc[self.deal_plan[i]] = acc[self.deal_plan[i]] | 1 << c
        if self.auction:
            return AuctionState(self, table, acc)
        return RoundsState(self, table, acc)

    def transfer(self, source: int | str, target: int | str, amount: int, reason: str,
                 code: Payment) -> Transfer:
        """A settlement ``Transfer`` (frozen: shared between deals from a small memo)."""
        key = (source, target, amount, reason, code)
        t = self.transfer_memo.get(key)
        if t is None:
            if len(self.transfer_memo) > 4096:
                self.transfer_memo.clear()
            t = self.transfer_memo[key] = Transfer(source, target, amount, reason, code)
        return t

    # ------------------------------------------------------------------ notation
    def action_to_string(self, a: int) -> str:
        N = self.N
        cards = self.pack.cards
        if 0 <= a < N:
            return "play:" + cards[a]
        if N <= a < 2 * N:
            return "call:" + cards[a - N]
        if 2 * N <= a < 3 * N:
            return "give:" + cards[a - 2 * N]
        o = a - 3 * N
        if o == O_PASS:
            return "pass"
        if o == O_HOLD:
            return "hold"
        if O_BID <= o < O_BID + 3:
            return "bid:" + HISTORIC_BIDS[o - O_BID]
        if O_TRUMP <= o < O_TRUMP + 4:
            return "trump:" + SUITS[o - O_TRUMP]
        if o == O_TOUT:
            return "tout"
        if o == O_NOTOUT:
            return "no-tout"
        if o == O_PLAY:
            return "play"
        if o == O_WEG:
            return "weg"
        if O_CONTRACT <= o < O_CONTRACT + len(MODERN_CONTRACTS):
            return "contract:" + MODERN_CONTRACTS[o - O_CONTRACT].name
        if o >= O_DISCARD and a - self.A_DISCARD <= self.full:
            return "discard:" + self.pack.format_cards(self.mask_list(a - self.A_DISCARD))
        raise IllegalAction("notation", f"{a!r} is not an action id of {self.rules.id}")

    def string_to_action(self, text: object) -> int:
        N = self.N
        t = text.strip().lower() if isinstance(text, str) else None
        if not t:
            raise IllegalAction("notation", f"{text!r} is not an action")
        simple = self.simple_actions.get(t)
        if simple is not None:
            return simple
        head, sep, arg = t.partition(":")
        if not sep:
            raise IllegalAction("notation", f"{text!r} is not a Tapp action")
        try:
            if head in ("play", "call", "give"):
                c = self.pack.card(arg)
                return c + {"play": 0, "call": N, "give": 2 * N}[head]
            if head == "bid" and arg in HISTORIC_BIDS:
                return self.A_BID + HISTORIC_BIDS.index(arg)
            if head == "trump" and arg.upper() in SUITS and len(arg) == 1:
                return self.A_TRUMP + SUITS.index(arg.upper())
            if head == "contract":
                name = arg if ":" not in arg else arg[:-1] + arg[-1].upper()
                if name in MODERN_INDEX:
                    return self.A_CONTRACT + MODERN_INDEX[name]
            if head == "discard":
                cards = self.pack.parse_cards(arg)
                mask = self.pack.mask_of(cards)
                if len(cards) != mask.bit_count():
                    raise IllegalAction("notation", f"{text!r} names a card twice")
                return self.A_DISCARD + mask
        except ValueError as e:
            if isinstance(e, IllegalAction):
                raise
            raise IllegalAction("notation", f"{text!r}: {e}") from None
        raise IllegalAction("notation", f"{text!r} is not a Tapp action")
