"""The Tapp engine (RULES.md section 3): Württemberg Tarock, Classic Tapp (1879), Modern Tapp.

Seats are numbered in the direction of play (RULES.md section 0), so Modern Tapp's
counter-clockwise play needs no special arithmetic: forehand is ``dealer + 1``.

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

The hot path (``legal_actions``, ``apply`` and ``clone`` in the play phase) works on int
masks and per-game tables only; see ``bench/engine_tapp.py`` for the speed figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations, repeat
from operator import itemgetter

from ..cards import SUITS, pack_named
from ..rules.base import format_options
from ..rules.tapp import TappRules
from .base import POT, DealResult, IllegalAction, TableState, Transfer, net_change
from .tricks import beats, legal_follows

# --------------------------------------------------------------------------- deal patterns
#: Dealing patterns as data: ("tapp", k) puts k cards on the tapp; ("each", k) gives a packet
#: of k cards to every player in turn, starting with forehand. Cards come off the top.
DEAL_PATTERNS: dict[tuple[str, int, str], tuple[tuple[str, int], ...]] = {
    # Württemberg Tarock and Classic Tapp: the tapp first, then 4-3-4 (RULES.md 3.2).
    ("historic", 3, "tapp36"): (("tapp", 3), ("each", 4), ("each", 3), ("each", 4)),
    # Modern Tapp (RULES.md 3.4).
    ("modern", 3, "tapp36"): (("each", 4), ("each", 3), ("tapp", 3), ("each", 4)),
    ("modern", 4, "tapp36"): (("each", 3), ("tapp", 2), ("each", 2), ("tapp", 2), ("each", 3)),
    ("modern", 3, "skat32"): (("each", 3), ("tapp", 2), ("each", 4), ("each", 3)),
    ("modern", 4, "skat32"): (("each", 3), ("tapp", 2), ("each", 2), ("tapp", 2), ("each", 2)),
}

# --------------------------------------------------------------------------- phases
AUCTION, TRUMP, DISCARD_PH, TOUT, ROUND1, ROUND2, CALL, GIVE, PLAY, OVER = range(10)
PHASE_NAMES = ("auction", "trump", "discard", "tout", "declare", "contract", "call", "give",
               "play", "over")

# contract kinds
K_POINTS, K_BETTEL, K_ALL, K_RAMSCH = range(4)

# Historic contract levels
FRAGE, SOLO, HERZSOLO = 1, 2, 3
HISTORIC_BIDS = ("frage", "solo", "herzsolo")

#: Modern contracts in rank order: (name, rank, kind, trump suit letter or None, value in
#: cents; the Frage value comes from the rule set's ``frage_value``).
MODERN_CONTRACTS: tuple[tuple[str, int, int, str | None, int], ...] = (
    ("frage", 1, K_POINTS, "H", 5),
    ("solo:C", 2, K_POINTS, "C", 5),
    ("solo:S", 2, K_POINTS, "S", 5),
    ("solo:D", 2, K_POINTS, "D", 5),
    ("herzsolo", 3, K_POINTS, "H", 10),
    ("bettel", 4, K_BETTEL, None, 15),
    ("rufer:C", 5, K_ALL, "C", 15),
    ("rufer:S", 5, K_ALL, "S", 15),
    ("rufer:D", 5, K_ALL, "D", 15),
    ("herzrufer", 6, K_ALL, "H", 30),
    ("bettel-ouvert", 7, K_BETTEL, None, 30),
    ("durch:C", 8, K_ALL, "C", 30),
    ("durch:S", 8, K_ALL, "S", 30),
    ("durch:D", 8, K_ALL, "D", 30),
    ("herzdurch", 9, K_ALL, "H", 60),
)
MODERN_INDEX = {c[0]: i for i, c in enumerate(MODERN_CONTRACTS)}
N_MODERN = len(MODERN_CONTRACTS)
_RUFER = {6, 7, 8, 9}
_OUVERT = 10

#: Offsets of the fixed actions after the three card ranges.
O_PASS, O_HOLD, O_BID, O_TRUMP, O_TOUT, O_NOTOUT, O_PLAY, O_WEG, O_CONTRACT, O_DISCARD = (
    0, 1, 2, 5, 9, 10, 11, 12, 13, 28)


# --------------------------------------------------------------------------- settlement
def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def historic_settlement(
    ruleset_id: str,
    level: int,
    declarer_points: int,
    tout: bool = False,
    took_all: bool = False,
    pot: int = 0,
    pot_enabled: bool = False,
    tout_multiplier: int = 2,
) -> tuple[int, int]:
    """Settlement of a Württemberg Tarock / Classic Tapp deal (RULES.md 3.2, 3.3).

    Returns ``(per_defender, to_pot)``: each defender pays the declarer ``per_defender``
    (negative: the declarer pays each defender that much); the declarer pays ``to_pot`` into
    the pot (negative: he takes that much out of it). ``pot`` is the pot at settlement.
    """
    classic = ruleset_id == "tapp/classic-1879"
    if classic:
        d = {FRAGE: 4, SOLO: 2, HERZSOLO: 1}[level]
        if tout:
            amount = tout_multiplier * _ceil_div(60, d)
            per = amount if took_all else -amount
        else:
            x = declarer_points - 60
            per = _ceil_div(x, d) if x > 0 else -_ceil_div(-x, d)
    else:
        m = {FRAGE: 1, SOLO: 2}[level]
        if tout:
            amount = tout_multiplier * 60 * m
            per = amount if took_all else -amount
        else:
            per = (declarer_points - 60) * m
    to_pot = 0
    if pot_enabled and per:
        if level == FRAGE:
            if per < 0:
                to_pot = -per
        elif per > 0:
            to_pot = -pot
        else:
            to_pot = pot
    return per, to_pot


def modern_value(contract: str, frage_value: int = 5) -> int:
    """Cents per defender of a Modern contract (RULES.md 3.4)."""
    if contract == "frage":
        return frage_value
    return MODERN_CONTRACTS[MODERN_INDEX[contract]][4]


def ramsch_settlement(points: Sequence[int], tricks: Sequence[int]) -> list[tuple[int, int, int]]:
    """Ramsch payments ``(payer, payee, amount)`` (RULES.md 3.4, rules-research P6).

    The player(s) with the most points pay every other player 5, or 10 to a player who took
    no trick (Jungfer); tied losers don't pay each other.
    """
    top = max(points)
    losers = [s for s, p in enumerate(points) if p == top]
    out = []
    for payer in losers:
        for payee in range(len(points)):
            if points[payee] != top:
                out.append((payer, payee, 10 if tricks[payee] == 0 else 5))
    return out


# --------------------------------------------------------------------------- the game
_SUIT_TABLES: dict[tuple, tuple] = {}


def _suit_tables(R: int, points: tuple) -> tuple:
    """Per suit, per in-suit bit pattern: the list of card indices and the card points.

    Built once per pack geometry and shared by every game (never mutated): 4 × 2**R lists
    per game were ~2,000 objects the garbage collector scanned for each live table."""
    key = (R, points)
    tables = _SUIT_TABLES.get(key)
    if tables is None:
        F = (1 << R) - 1
        lists = tuple(
            tuple([s * R + i for i in range(R) if (b >> i) & 1] for b in range(F + 1))
            for s in range(4)
        )
        pts = tuple(
            tuple(sum(points[s * R + i] for i in range(R) if (b >> i) & 1)
                  for b in range(F + 1))
            for s in range(4)
        )
        tables = _SUIT_TABLES[key] = (lists, pts)
    return tables


class TappGame:
    """A Tapp rule set made playable: per-game tables and ``new_deal``."""

    def __init__(self, rules: TappRules):
        self.rules = rules
        self.options = format_options(rules)  # public: every view carries them
        self.num_players = n = rules.players
        self.pack = pack = pack_named(rules.pack)
        self.modern = rules.modern
        self.classic = rules.id == "tapp/classic-1879"
        N = self.N = pack.size
        R = self.rps = pack.ranks_per_suit
        self.suit_masks = pack.suit_masks
        self.full = pack.full_mask
        self.points = pack.points
        #: suit mask of the suit of each card
        self.suitmask_of = tuple(pack.suit_masks[c // R] for c in range(N))
        #: per suit, per in-suit bit pattern: the list of card indices
        F = (1 << R) - 1
        #: per suit, per in-suit bit pattern: the card indices and the card points (shared)
        self.suit_lists, self.suit_points = _suit_tables(R, tuple(pack.points))
        self._F = F
        # deal plan: for each deck position, the receiver (0..n-1 offset from forehand; n tapp)
        key = ("modern" if self.modern else "historic", n, rules.pack)
        pattern = DEAL_PATTERNS[key]
        plan: list[int] = []
        for target, k in pattern:
            if target == "tapp":
                plan.extend([n] * k)
            else:
                for off in range(n):
                    plan.extend([off] * k)
        assert len(plan) == N, (key, len(plan))
        self.deal_plan = tuple(plan)
        self._takers = tuple(itemgetter(*[i for i, t in enumerate(plan) if t == r])
                             for r in range(n + 1))
        self._bit = tuple(1 << c for c in range(N))
        order = [i for r in range(n + 1) for i, t in enumerate(plan) if t == r]
        self._by_receiver = itemgetter(*order)
        bounds = [0]
        for r in range(n + 1):
            bounds.append(bounds[-1] + plan.count(r))
        self._receiver_slices = tuple(slice(bounds[r], bounds[r + 1]) for r in range(n + 1))
        self._cardset = frozenset(range(N))
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
        #: memo of views' log texts: (actor, action id, viewer, viewer holds the called
        #: card) -> text (see TappState.view); discards are not kept
        self.log_texts: dict[tuple, str] = {}
        self.max_level = 3 if self.classic else 2
        # Modern round-2 legal lists per standing rank: (with pass, without pass)
        above = []
        for rank in range(10):
            ids = [self.A_CONTRACT + i for i, c in enumerate(MODERN_CONTRACTS) if c[1] > rank]
            above.append(([self.A_PASS] + ids, ids))
        self.contracts_above = tuple(above)
        self.trump_mask_of_suit = {s: pack.suit_masks[i] for i, s in enumerate(SUITS)}
        self.hearts = pack.suit_masks[0]
        # play-phase tables (hot path): per card, its suit as (suit mask, shift, per in-suit
        # pattern the card list); per trump mask, the same for the trump suit (0: none)
        self.suit_info = tuple((pack.suit_masks[c // R], (c // R) * R, self.suit_lists[c // R])
                               for c in range(N))
        self.trump_info = {pack.suit_masks[i]: (pack.suit_masks[i], i * R, self.suit_lists[i])
                           for i in range(4)}
        #: per trump mask (0 or a suit), per card ``b``: the mask of the cards that beat ``b``
        #: when ``b`` wins the trick so far (``tricks.beats`` as a table)
        self.beaters = {
            tm: tuple(sum(1 << c for c in range(N) if beats(c, b, pack.suit_masks, R, tm))
                      for b in range(N))
            for tm in (0, *pack.suit_masks)
        }
        # a new deal's fixed parts
        self.init_trump = self.hearts if not self.modern else 0
        # hearts are always trumps in Württemberg Tarock; Classic names them with the contract
        self.init_trump_suit = "H" if not self.modern and not self.classic else None
        self.init_phase = ROUND1 if self.modern else AUCTION
        self.ante = not self.modern and rules.pot
        self.r1_actions = (self.A_PLAY, self.A_WEG)
        #: Modern contract values in cents per contract index
        self.contract_values = tuple(modern_value(c[0], rules.frage_value)
                                     for c in MODERN_CONTRACTS)
        #: memo of settlement transfers (immutable; a deal's handful comes from a small set)
        self.transfer_memo: dict[tuple, Transfer] = {}
        #: Modern settlements: (declarer, contract, won) -> (transfers, net per seat)
        self.modern_settlements: dict[tuple, tuple] = {}

    # ------------------------------------------------------------------ helpers
    def mask_list(self, m: int) -> list[int]:
        """The card indices of a mask, ascending (per-suit table lookups)."""
        R, F, L = self.rps, self._F, self.suit_lists
        return L[0][m & F] + L[1][(m >> R) & F] + L[2][(m >> (2 * R)) & F] + L[3][m >> (3 * R)]

    def mask_points(self, m: int) -> int:
        R, F, P = self.rps, self._F, self.suit_points
        return P[0][m & F] + P[1][(m >> R) & F] + P[2][(m >> (2 * R)) & F] + P[3][m >> (3 * R)]

    def deck_from_strings(self, cards: Sequence[str]) -> list[int]:
        deck = [self.pack.card(c) for c in cards]
        self._check_deck(deck)
        return deck

    def _deck_error(self) -> ValueError:
        return ValueError(
            f"the deck must be a permutation of the {self.pack.name} pack's "
            f"{self.N} cards (indices 0..{self.N - 1}), each exactly once")

    def _check_deck(self, deck) -> None:
        try:
            ok = len(deck) == self.N and sorted(deck) == list(range(self.N))
        except TypeError:
            ok = False
        if not ok:
            raise self._deck_error()

    def new_deal(self, table: TableState, deck: Sequence[int]) -> TappState:
        """A new deal from ``deck`` (top card first) at a table in state ``table``."""
        # Fast path: the deck in receiver order (the deal plan as one item getter), its cards'
        # bits in one C-level gather, one sum per receiver. It is a permutation exactly when
        # the N bits of N cards, none negative, add up to the full mask.
        acc = None
        try:
            if len(deck) == self.N:
                b = itemgetter(*self._by_receiver(deck))(self._bit)
                acc = [sum(b[x]) for x in self._receiver_slices]
                if sum(acc) != self.full or min(deck) < 0:
                    acc = None
        except (TypeError, ValueError, IndexError, KeyError):  # the careful path says what
            acc = None
        if acc is not None:
            return TappState(self, table, acc)
        try:
            ok = len(deck) == self.N and set(deck) == self._cardset
        except TypeError:
            ok = False
        if not ok:
            raise self._deck_error()
        get = self._bit.__getitem__
        # one C-level gather per receiver (the deal plan as item getters)
        acc = [sum(map(get, take(deck))) for take in self._takers]
        return TappState(self, table, acc)

    def transfer(self, source, target, amount: int, reason: str) -> Transfer:
        """A settlement ``Transfer`` (frozen: shared between deals from a small memo)."""
        key = (source, target, amount, reason)
        t = self.transfer_memo.get(key)
        if t is None:
            if len(self.transfer_memo) > 4096:
                self.transfer_memo.clear()
            t = self.transfer_memo[key] = Transfer(source, target, amount, reason)
        return t

    @property
    def num_distinct_actions(self) -> int:
        """One past the largest action id (discard ids are sparse: ``DISCARD + mask``)."""
        return self.A_DISCARD + self.full + 1


# --------------------------------------------------------------------------- the state
_new_state = object.__new__


class TappState:
    """One Tapp deal in progress (see the module docstring for the action encoding)."""

    __slots__ = (
        "game", "table", "n", "dealer", "fh", "hands", "tapp", "tapp0", "picked", "phase",
        "cur", "declarer", "level", "contract", "kind", "trump", "trump_suit", "tout",
        "leader", "trick", "points", "ntricks", "played", "last_trick", "log", "transfers",
        "a_level", "a_holder", "a_pos", "a_pending", "r1", "r2_pos", "r2_best", "r2_seat",
        "called", "holder", "given", "_result", "ended_early", "_legal", "_net",
    )

    def __init__(self, game: TappGame, table: TableState, acc: list[int]):
        n = game.num_players
        self.game = game
        self.table = table
        self.n = n
        dealer = self.dealer = table.dealer % n
        fh = dealer + 1
        if fh == n:
            fh = 0
        self.fh = self.leader = self.cur = fh
        # acc is per receiver from forehand, the tapp last: seat s gets acc[(s - fh) % n]
        self.hands = acc[n - fh:n] + acc[:n - fh]
        self.tapp = self.tapp0 = acc[n]
        self.picked = 0
        self.declarer = -1
        self.level = 0
        self.contract = -1
        self.kind = K_POINTS
        self.trump = game.init_trump
        self.trump_suit = game.init_trump_suit
        self.tout = False
        self.trick: list[int] = []
        self.points = [0] * n
        self.ntricks = [0] * n
        self.played = 0
        self.last_trick = None
        self.log: list[tuple[int, int]] = []
        self.transfers: list[Transfer] = (
            [Transfer(dealer, POT, game.rules.pot_ante, "ante")] if game.ante else [])
        self.called = -1
        self.holder = -1
        self.given = -1
        self._result = None
        self.ended_early = False
        self._legal = -1  # play phase: the legal mask of the current player, -1 unknown
        self._net = None  # when over, returns() if known at settlement
        self.a_level = 0
        self.a_holder = -1
        self.a_pos = 0
        self.a_pending = False
        self.r1: list[int] = []
        self.r2_pos = 0
        self.r2_best = -1
        self.r2_seat = -1
        self.phase = game.init_phase

    # ------------------------------------------------------------------ basics
    def current_player(self) -> int:
        return self.cur

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def clone(self) -> TappState:
        c = _new_state(TappState)
        c.game = self.game
        c.table = self.table
        c.n = self.n
        c.dealer = self.dealer
        c.fh = self.fh
        c.hands = self.hands[:]
        c.tapp = self.tapp
        c.tapp0 = self.tapp0
        c.picked = self.picked
        c.phase = self.phase
        c.cur = self.cur
        c.declarer = self.declarer
        c.level = self.level
        c.contract = self.contract
        c.kind = self.kind
        c.trump = self.trump
        c.trump_suit = self.trump_suit
        c.tout = self.tout
        c.leader = self.leader
        c.trick = self.trick[:]
        c.points = self.points[:]
        c.ntricks = self.ntricks[:]
        c.played = self.played
        c.last_trick = self.last_trick
        c.log = self.log[:]
        c.transfers = self.transfers[:]
        c.a_level = self.a_level
        c.a_holder = self.a_holder
        c.a_pos = self.a_pos
        c.a_pending = self.a_pending
        c.r1 = self.r1[:]
        c.r2_pos = self.r2_pos
        c.r2_best = self.r2_best
        c.r2_seat = self.r2_seat
        c.called = self.called
        c.holder = self.holder
        c.given = self.given
        c._result = self._result
        c.ended_early = self.ended_early
        c._legal = self._legal
        c._net = self._net
        return c

    def _pot_now(self) -> int:
        pot = self.table.pot
        for t in self.transfers:
            if t.target == POT:
                pot += t.amount
            if t.source == POT:
                pot -= t.amount
        return pot

    # ------------------------------------------------------------------ legal actions
    def _play_mask(self) -> int:
        hand = self.hands[self.cur]
        trick = self.trick
        if not trick:
            return hand
        lead = trick[0]
        # Farbzwang + Trumpfzwang, no Stichzwang (RULES.md 3.1). With must_trump="always"
        # and head=False the winning card does not matter; the lead is passed in its place.
        return legal_follows(hand, self.game.suitmask_of[lead], self.trump, lead, 0, "always", False)

    def legal_actions(self) -> list[int]:
        ph = self.phase
        g = self.game
        if ph == PLAY:
            hand = self.hands[self.cur]
            trick = self.trick
            if trick:
                # legal_follows(hand, led suit, trump, lead, 0, "always", False) by table:
                # Farbzwang, else Trumpfzwang, else any card; one suit's list by lookup
                sm, sh, T = g.suit_info[trick[0]]
                f = hand & sm
                if f:
                    self._legal = f
                    return T[f >> sh][:]
                trump = self.trump
                f = hand & trump
                if f:
                    self._legal = f
                    sm, sh, T = g.trump_info[trump]
                    return T[f >> sh][:]
            self._legal = hand
            R, F, L = g.rps, g._F, g.suit_lists
            return [*L[0][hand & F], *L[1][(hand >> R) & F], *L[2][(hand >> (2 * R)) & F],
                    *L[3][hand >> (3 * R)]]
        if ph == ROUND1:
            return list(g.r1_actions)
        if ph == ROUND2:
            rank = MODERN_CONTRACTS[self.r2_best][1] if self.r2_best >= 0 else 0
            with_pass, without = g.contracts_above[rank]
            if self.r2_best < 0 and self.r2_pos == len(self.r1) - 1:
                return without[:]
            return with_pass[:]
        if ph == OVER:
            return []
        if ph == AUCTION:
            if self.a_pending:
                return [g.A_PASS, g.A_HOLD]
            return [g.A_PASS] + [g.A_BID + lv - 1 for lv in range(self.a_level + 1, g.max_level + 1)]
        if ph == DISCARD_PH:
            # combinations of the cards from the strongest down come in descending order of
            # their masks (the first differing card is the highest differing bit): reversed,
            # they are ascending without a sort
            bits = [1 << c for c in reversed(g.mask_list(self.hands[self.declarer]))]
            out = list(map(sum, combinations(bits, g.tapp_size), repeat(g.A_DISCARD)))
            out.reverse()
            return out
        if ph == TOUT:
            return [g.A_TOUT, g.A_NOTOUT]
        if ph == TRUMP:
            return [g.A_TRUMP + 1, g.A_TRUMP + 2, g.A_TRUMP + 3]
        if ph == CALL:
            N = g.N
            return [N + c for c in g.mask_list(g.full & ~self.hands[self.declarer])]
        if ph == GIVE:
            N2 = 2 * g.N
            return [N2 + c for c in g.mask_list(self.hands[self.declarer] & ~(1 << self.called))]
        raise AssertionError(ph)

    # ------------------------------------------------------------------ apply
    def apply(self, action: int, seat: int | None = None) -> None:
        """Apply ``action`` for the current player; ``seat`` (optional) is checked against it."""
        if seat is not None and seat != self.cur:
            if self.phase == OVER:
                raise IllegalAction("deal is over", "the deal is over")
            raise IllegalAction("not your turn", f"it is seat {self.cur}'s turn, not seat {seat}'s")
        if self.phase == PLAY and type(action) is int and action >= 0:
            s = self.cur
            hands = self.hands
            legal = self._legal
            if legal < 0:
                legal = self._play_mask()
            if (legal >> action) & 1:
                self._legal = -1
                hands[s] ^= 1 << action
                trick = self.trick
                trick.append(action)
                self.log.append((s, action))
                if len(trick) == self.n:
                    self._finish_trick()
                else:
                    s += 1
                    self.cur = s if s < self.n else 0
                return
            if action < self.game.N:
                self._refuse_play(action, hands[s])
        elif type(action) is int:
            ph = self.phase
            if ph == ROUND1:
                g = self.game
                if action == g.A_PLAY or action == g.A_WEG:
                    s = self.cur
                    if action == g.A_PLAY:
                        self.r1.append(s)
                    self.log.append((s, action))
                    s += 1
                    if s == self.n:
                        s = 0
                    self.cur = s
                    if s == self.fh:
                        if not self.r1:
                            self._start_ramsch()
                        else:
                            self.phase = ROUND2
                            self.r2_pos = 0
                            self.cur = self.r1[0]
                    return
            elif ph == ROUND2:
                g = self.game
                best = self.r2_best
                ci = action - g.A_CONTRACT
                if 0 <= ci < N_MODERN:
                    ok = best < 0 or MODERN_CONTRACTS[ci][1] > MODERN_CONTRACTS[best][1]
                    if ok:
                        self.r2_best = ci
                        self.r2_seat = self.cur
                else:
                    ok = action == g.A_PASS and (best >= 0 or self.r2_pos != len(self.r1) - 1)
                if ok:
                    self.log.append((self.cur, action))
                    pos = self.r2_pos = self.r2_pos + 1
                    if pos == len(self.r1):
                        self._start_modern_contract(self.r2_seat, self.r2_best)
                    else:
                        self.cur = self.r1[pos]
                    return
        self._apply_slow(action)

    def _refuse_play(self, card: int, hand: int) -> None:
        g = self.game
        name = g.pack.cards[card]
        if not (hand >> card) & 1:
            raise IllegalAction("card not in hand", f"{name} is not in seat {self.cur}'s hand")
        lead = self.trick[0]
        if hand & g.suitmask_of[lead]:
            raise IllegalAction("follow suit (Farbzwang)",
                                f"{name} does not follow the led suit "
                                f"({g.pack.suit_letter(lead)}) although seat {self.cur} can")
        raise IllegalAction("must trump (Trumpfzwang)",
                            f"{name} is not a trump; seat {self.cur} is void in the led suit "
                            f"and holds a trump")

    def _finish_trick(self) -> None:
        g = self.game
        trick = self.trick
        n = self.n
        beaters = g.beaters[self.trump]  # tricks.beats as a table
        P = g.points
        best = trick[0]
        c = trick[1]
        pts = P[best] + P[c]
        wi = 0
        if (beaters[best] >> c) & 1:
            best = c
            wi = 1
        c = trick[2]
        pts += P[c]
        if (beaters[best] >> c) & 1:
            best = c
            wi = 2
        if n == 4:
            c = trick[3]
            pts += P[c]
            if (beaters[best] >> c) & 1:
                wi = 3
        w = self.leader + wi
        if w >= n:
            w -= n
        self.points[w] += pts
        self.ntricks[w] += 1
        self.last_trick = (self.leader, tuple(trick), w)
        self.trick = []
        self.played += 1
        self.leader = self.cur = w
        kind = self.kind
        if kind == K_BETTEL:
            if w == self.declarer:
                self.ended_early = self.played < g.hand_size
                self._end()
                return
        elif kind == K_ALL and w != self.declarer and g.modern:
            self.ended_early = self.played < g.hand_size
            self._end()
            return
        if self.played == g.hand_size:
            self._end()

    def _illegal_phase(self, action: int):
        raise IllegalAction("wrong phase",
                            f"{self.action_to_string(action)} is not an action of the "
                            f"{PHASE_NAMES[self.phase]} phase")

    def _apply_slow(self, a: int) -> None:
        g = self.game
        ph = self.phase
        if ph == OVER:
            raise IllegalAction("deal is over", "the deal is over; no more actions")
        if type(a) is not int or a < 0:
            raise IllegalAction("notation", f"{a!r} is not an action id")
        N = g.N
        s = self.cur
        if ph == PLAY:
            self._illegal_phase(a)
        # the legal actions of the Modern rounds are applied in ``apply``: here only refusals
        if ph == ROUND1:
            self._illegal_phase(a)
        if ph == ROUND2:
            if a == g.A_PASS:
                raise IllegalAction("must name a contract",
                                    f"seat {s} said play and nobody has named a contract; "
                                    "he must name one")
            if g.A_CONTRACT <= a < g.A_CONTRACT + N_MODERN:
                ci = a - g.A_CONTRACT
                raise IllegalAction("bid too low",
                                    f"{MODERN_CONTRACTS[ci][0]} does not outrank the standing "
                                    f"{MODERN_CONTRACTS[self.r2_best][0]}")
            self._illegal_phase(a)
        if ph == AUCTION:
            self._apply_auction(a)
            return
        if ph == DISCARD_PH:
            D = g.A_DISCARD
            if a < D:
                self._illegal_phase(a)
            mask = a - D
            if mask > g.full:
                raise IllegalAction("notation", f"{a} is not an action id")
            hand = self.hands[s]
            if mask & ~hand:
                raise IllegalAction("discard only cards you hold",
                                    "a discarded card is not in the declarer's hand")
            if mask.bit_count() != self.picked.bit_count():
                raise IllegalAction("discard as many as picked up",
                                    f"discard exactly {self.picked.bit_count()} cards, "
                                    f"not {mask.bit_count()}")
            self.hands[s] = hand & ~mask
            self.tapp = mask
            self.log.append((s, a))
            if g.modern:
                self._start_play()
            else:
                self.phase = TOUT
            return
        if ph == TOUT:
            if a == g.A_TOUT:
                self.tout = True
            elif a != g.A_NOTOUT:
                self._illegal_phase(a)
            self.log.append((s, a))
            self._start_play()
            return
        if ph == TRUMP:
            if g.A_TRUMP <= a < g.A_TRUMP + 4:
                suit = SUITS[a - g.A_TRUMP]
                if suit == "H":
                    raise IllegalAction("solo trump cannot be hearts",
                                        "a suit Solo names clubs, spades or diamonds; "
                                        "hearts is Herzsolo")
                self.trump_suit = suit
                self.trump = g.trump_mask_of_suit[suit]
                self.log.append((s, a))
                self.phase = TOUT
                return
            self._illegal_phase(a)
        if ph == CALL:
            if not N <= a < 2 * N:
                self._illegal_phase(a)
            card = a - N
            if (self.hands[s] >> card) & 1:
                raise IllegalAction("cannot call a card you hold",
                                    f"the declarer holds {g.pack.cards[card]} himself")
            self.called = card
            self.log.append((s, a))
            bit = 1 << card
            if self.tapp & bit:
                self.holder = -2  # the tapp
                if g.rules.rufer_in_tapp == "swap":
                    self.tapp &= ~bit
                    self.hands[s] |= bit
                    self.phase = GIVE
                else:
                    self._start_play()
                return
            for h in range(self.n):
                if self.hands[h] & bit:
                    self.holder = h
                    self.hands[h] &= ~bit
                    self.hands[s] |= bit
                    break
            self.phase = GIVE
            return
        if ph == GIVE:
            if not 2 * N <= a < 3 * N:
                self._illegal_phase(a)
            card = a - 2 * N
            if not (self.hands[s] >> card) & 1:
                raise IllegalAction("give a card you hold",
                                    f"the declarer does not hold {g.pack.cards[card]}")
            if card == self.called:
                raise IllegalAction("cannot give back the called card",
                                    "the declarer gives back another card than the called one")
            bit = 1 << card
            self.hands[s] &= ~bit
            if self.holder == -2:
                self.tapp |= bit
            else:
                self.hands[self.holder] |= bit
            self.given = card
            self.log.append((s, a))
            self._start_play()
            return
        raise AssertionError(ph)

    def _apply_auction(self, a: int) -> None:
        g = self.game
        s = self.cur
        order = [(self.fh + i) % self.n for i in range(self.n)]
        if self.a_pending:
            # the earlier, overcalled bidder: hold or pass
            if a == g.A_HOLD:
                self.a_pending = False
                self.log.append((s, a))
                self.cur = order[self.a_pos]  # the overcaller must go higher or pass
                return
            if a == g.A_PASS:
                self.a_pending = False
                self.a_holder = order[self.a_pos]
                self.log.append((s, a))
                self._auction_next(order)
                return
            if g.A_BID <= a < g.A_BID + 3:
                raise IllegalAction("hold or pass",
                                    "an overcalled earlier bidder may only hold or pass")
            self._illegal_phase(a)
        if a == g.A_PASS:
            self.log.append((s, a))
            self._auction_next(order)
            return
        if a == g.A_HOLD:
            raise IllegalAction("hold only when overcalled",
                                "only an earlier bidder who has been overcalled may hold")
        if g.A_BID <= a < g.A_BID + 3:
            level = a - g.A_BID + 1
            if level > g.max_level:
                raise IllegalAction("bid not in this rule set",
                                    f"{g.rules.id} has no bid {HISTORIC_BIDS[level - 1]}")
            if level <= self.a_level:
                raise IllegalAction("bid too low",
                                    f"bid:{HISTORIC_BIDS[level - 1]} is not higher than the "
                                    f"standing {HISTORIC_BIDS[self.a_level - 1]}")
            self.a_level = level
            self.log.append((s, a))
            if self.a_holder < 0:
                self.a_holder = s
                self._auction_next(order)
            else:
                self.a_pending = True
                self.cur = self.a_holder
            return
        self._illegal_phase(a)

    def _auction_next(self, order: list[int]) -> None:
        self.a_pos += 1
        if self.a_pos < self.n:
            self.cur = order[self.a_pos]
            return
        if self.a_holder < 0:
            # all pass: thrown in
            self.phase = OVER
            self.cur = -1
            return
        g = self.game
        d = self.declarer = self.a_holder
        self.level = self.a_level
        self.cur = d
        if g.classic and self.level != SOLO:
            self.trump_suit = "H"
        if self.level == FRAGE:
            self.picked = self.tapp
            self.hands[d] |= self.tapp
            self.tapp = 0
            self.phase = DISCARD_PH
        elif self.level == SOLO and g.classic:
            self.trump = 0
            self.trump_suit = None
            self.phase = TRUMP
        else:
            self.phase = TOUT

    def _start_modern_contract(self, seat: int, ci: int) -> None:
        g = self.game
        _name, _rank, kind, suit, _value = MODERN_CONTRACTS[ci]
        self.declarer = seat
        self.contract = ci
        self.kind = kind
        self.trump_suit = suit
        self.trump = g.trump_mask_of_suit[suit] if suit else 0
        self.cur = seat
        if ci == 0:
            self.picked = self.tapp
            self.hands[seat] |= self.tapp
            self.tapp = 0
            self.phase = DISCARD_PH
        elif ci in _RUFER:
            self.phase = CALL
        else:
            self._start_play()

    def _start_ramsch(self) -> None:
        self.kind = K_RAMSCH
        self.trump = 0
        self.trump_suit = None
        self._start_play()

    def _start_play(self) -> None:
        self.phase = PLAY
        self.leader = self.cur = self.fh

    def _end(self) -> None:
        self.phase = OVER
        self.cur = -1
        if self.kind == K_RAMSCH and self.played == self.game.hand_size:
            self.points[self.leader] += self.game.mask_points(self.tapp)
        self._settle()

    # ------------------------------------------------------------------ settlement
    def declarer_points(self) -> int:
        d = self.declarer
        return self.points[d] + self.game.mask_points(self.tapp)

    def _settle(self) -> None:
        g = self.game
        rules = g.rules
        n = self.n
        tr = self.transfers
        d = self.declarer
        transfer = g.transfer
        if self.kind == K_RAMSCH:
            for payer, payee, amt in ramsch_settlement(self.points, self.ntricks):
                tr.append(transfer(payer, payee, amt, "ramsch"))
            return
        if d < 0:
            return
        if g.modern:
            ci = self.contract
            won = self._modern_won()
            key = (d, ci, won)
            done = g.modern_settlements.get(key)
            if done is None:
                name = MODERN_CONTRACTS[ci][0]
                value = g.contract_values[ci]
                out = []
                for s in range(n):
                    if s != d:
                        if won:
                            out.append(transfer(s, d, value, name))
                        else:
                            out.append(transfer(d, s, value, name))
                done = g.modern_settlements[key] = (tuple(out), tuple(net_change(out, n)))
            tr.extend(done[0])
            self._net = done[1]  # no other transfers in Modern Tapp
            return
        took_all = self.ntricks[d] == g.hand_size
        per, to_pot = historic_settlement(
            rules.id, self.level, self.declarer_points(), self.tout, took_all,
            self._pot_now(), rules.pot, rules.tout_multiplier)
        reason = self.contract_string()
        for s in range(n):
            if s != d and per:
                if per > 0:
                    tr.append(Transfer(s, d, per, reason))
                else:
                    tr.append(Transfer(d, s, -per, reason))
        if to_pot > 0:
            tr.append(Transfer(d, POT, to_pot, reason + " (pot)"))
        elif to_pot < 0:
            tr.append(Transfer(POT, d, -to_pot, reason + " (pot)"))

    def _modern_won(self) -> bool:
        kind = self.kind
        d = self.declarer
        if kind == K_POINTS:
            return self.declarer_points() >= 61
        if kind == K_BETTEL:
            return self.ntricks[d] == 0
        return self.ntricks[d] == self.game.hand_size

    def won(self) -> bool | None:
        """Did the declarer win (None: no declarer, a draw, or not over)."""
        if self.phase != OVER or self.declarer < 0:
            return None
        if self.game.modern:
            return self._modern_won()
        per, _ = historic_settlement(self.game.rules.id, self.level, self.declarer_points(),
                                     self.tout, self.ntricks[self.declarer] == self.game.hand_size)
        return None if per == 0 else per > 0

    def contract_string(self) -> str | None:
        g = self.game
        if g.modern:
            if self.kind == K_RAMSCH:
                return "ramsch"
            return MODERN_CONTRACTS[self.contract][0] if self.contract >= 0 else None
        if self.level == 0:
            return None
        name = HISTORIC_BIDS[self.level - 1]
        if self.level == SOLO and g.classic and self.trump_suit:
            name = f"solo:{self.trump_suit}"
        return name + ("+tout" if self.tout else "")

    def result(self) -> DealResult:
        if self.phase != OVER:
            raise ValueError("the deal is not over yet")
        if self._result is None:
            n = self.n
            summary: dict = {
                "declarer": self.declarer if self.declarer >= 0 else None,
                "contract": self.contract_string(),
                "tricks": {str(s): self.ntricks[s] for s in range(n)},
                "outcome": "played" if (self.kind == K_RAMSCH or self.declarer >= 0) else "all-pass",
            }
            if self.kind == K_RAMSCH:
                summary["card_points"] = {str(s): self.points[s] for s in range(n)}
            elif self.declarer >= 0:
                dp = self.declarer_points()
                summary["card_points"] = {
                    "declarer": dp,
                    "defenders": sum(self.points) - self.points[self.declarer],
                }
                summary["won"] = self.won()
                summary["ended_early"] = self.ended_early
            else:
                summary["card_points"] = {}
            self._result = DealResult(list(self.transfers), (self.dealer + 1) % n, self.dealer,
                                      summary)
        return self._result

    def returns(self) -> list[int]:
        if self.phase != OVER:
            raise ValueError("the deal is not over yet")
        if self._net is not None:
            return list(self._net)
        return net_change(self.transfers, self.n)

    # ------------------------------------------------------------------ notation
    def action_to_string(self, a: int) -> str:
        g = self.game
        N = g.N
        cards = g.pack.cards
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
            return "contract:" + MODERN_CONTRACTS[o - O_CONTRACT][0]
        if o >= O_DISCARD and a - g.A_DISCARD <= g.full:
            return "discard:" + g.pack.format_cards(g.mask_list(a - g.A_DISCARD))
        raise IllegalAction("notation", f"{a!r} is not an action id of {g.rules.id}")

    def string_to_action(self, text: str) -> int:
        g = self.game
        N = g.N
        t = text.strip().lower() if isinstance(text, str) else None
        if not t:
            raise IllegalAction("notation", f"{text!r} is not an action")
        simple = {"pass": g.A_PASS, "contract:pass": g.A_PASS, "hold": g.A_HOLD,
                  "tout": g.A_TOUT, "no-tout": g.A_NOTOUT, "play": g.A_PLAY, "weg": g.A_WEG}
        if t in simple:
            return simple[t]
        head, sep, arg = t.partition(":")
        if not sep:
            raise IllegalAction("notation", f"{text!r} is not a Tapp action")
        try:
            if head in ("play", "call", "give"):
                c = g.pack.card(arg)
                return c + {"play": 0, "call": N, "give": 2 * N}[head]
            if head == "bid" and arg in HISTORIC_BIDS:
                return g.A_BID + HISTORIC_BIDS.index(arg)
            if head == "trump" and arg.upper() in SUITS and len(arg) == 1:
                return g.A_TRUMP + SUITS.index(arg.upper())
            if head == "contract":
                name = arg if ":" not in arg else arg[:-1] + arg[-1].upper()
                if name in MODERN_INDEX:
                    return g.A_CONTRACT + MODERN_INDEX[name]
            if head == "discard":
                cards = g.pack.parse_cards(arg)
                mask = g.pack.mask_of(cards)
                if len(cards) != mask.bit_count():
                    raise IllegalAction("notation", f"{text!r} names a card twice")
                return g.A_DISCARD + mask
        except ValueError as e:
            if isinstance(e, IllegalAction):
                raise
            raise IllegalAction("notation", f"{text!r}: {e}") from None
        raise IllegalAction("notation", f"{text!r} is not a Tapp action")

    # ------------------------------------------------------------------ view
    def _log_string(self, viewer: int | None, seat: int, a: int) -> str:
        g = self.game
        text = self.action_to_string(a)
        if a >= g.A_DISCARD and viewer != seat:
            return "discard:?"
        if 2 * g.N <= a < 3 * g.N and viewer != seat and viewer != self.holder:
            return "give:?"
        return text

    def _view_log(self, viewer: int | None) -> list:
        """The log as ``viewer`` may see it. An entry's text depends only on the viewer, the
        actor, the action and whether the viewer holds the called card: the game remembers
        it (the server renders every seat's view after every action)."""
        memo = self.game.log_texts
        holder = self.holder
        out = []
        for s, a in self.log:
            key = (s, a, viewer, viewer == holder)
            text = memo.get(key)
            if text is None:
                text = self._log_string(viewer, s, a)
                if a < self.game.A_DISCARD:  # discards: too many card sets to keep
                    memo[key] = text
            out.append([s, text])
        return out

    def _hand_sizes(self, me: int | None) -> list[int]:
        """Cards per hand as ``me`` may know them. Between a Rufer call and the give the
        declarer holds one card more and the holder one fewer: only they may see that (the
        card goes over face down; the holder is known to the declarer only, rules-research P5),
        so anyone else sees the sizes the exchange will leave."""
        sizes = [h.bit_count() for h in self.hands]
        if self.phase == GIVE and me != self.declarer and me != self.holder:
            sizes[self.declarer] -= 1
            if self.holder >= 0:
                sizes[self.holder] += 1
        return sizes

    def view(self, seat: int | None) -> dict:
        g = self.game
        cards = g.pack.cards
        n = self.n
        me = seat if seat is not None and 0 <= seat < n else None
        names = lambda m: [cards[c] for c in g.mask_list(m)]  # noqa: E731
        over = self.phase == OVER
        v: dict = {
            "game": "tapp",
            "ruleset": g.rules.id,
            "options": dict(g.options),
            "players": n,
            "seat": me,
            "dealer": self.dealer,
            "phase": PHASE_NAMES[self.phase],
            "current_player": self.cur,
            "hand": names(self.hands[me]) if me is not None else [],
            "hand_sizes": self._hand_sizes(me),
            "legal_actions": ([self.action_to_string(a) for a in self.legal_actions()]
                              if me is not None and me == self.cur else []),
            "trump": self.trump_suit,
            "upcard": None,
            "trick": [[(self.leader + i) % n, cards[c]] for i, c in enumerate(self.trick)],
            "last_trick": (None if self.last_trick is None else {
                "cards": [[(self.last_trick[0] + i) % n, cards[c]]
                          for i, c in enumerate(self.last_trick[1])],
                "winner": self.last_trick[2]}),
            "tricks_won": list(self.ntricks),
            "pot": self._pot_now(),
            "reserve": 0,
            "log": self._view_log(me),
            "terminal": over,
            "declarer": self.declarer if self.declarer >= 0 else None,
            "contract": self.contract_string(),
            "tout": self.tout,
            "called": cards[self.called] if self.called >= 0 else None,
            "open_hand": None,
        }
        d = self.declarer
        if (self.contract == _OUVERT and g.modern and self.phase in (PLAY, OVER)):
            v["open_hand"] = names(self.hands[d])
        if me is not None and me == d:
            if self.picked:
                v["tapp"] = names(self.picked)
                if self.phase not in (DISCARD_PH,):
                    v["discards"] = names(self.tapp)
            if self.called >= 0:
                v["rufer_holder"] = "tapp" if self.holder == -2 else self.holder
            if self.given >= 0:
                v["given"] = cards[self.given]
        elif me is not None and self.called >= 0 and me == self.holder:
            v["rufer_holder"] = me
            if self.given >= 0:
                v["given"] = cards[self.given]
        if over:
            v["net"] = self.returns()
        return v

    def __repr__(self) -> str:
        return (f"<TappState {self.game.rules.id} phase={PHASE_NAMES[self.phase]} "
                f"cur={self.cur} log={len(self.log)}>")
