"""``TippenGame``: the engine for one rule set: per-game tables, the deal, the notation."""

from __future__ import annotations

from collections.abc import Sequence

from ...cards import SUITS, CardError
from ...rules.tippen import TippenRules
from ..base import Account, IllegalAction, Payment, TableState, Transfer
from ..engine import EngineGame, Secret
from ..tricks import beaters_table
from .phases import EXCHANGE_OFFSET, WORDS
from .state import TippenState

#: exchange texts a game keeps (``TippenGame.exchange_texts``): every exchange of up to three
#: cards of a 32-card pack is 5,488 of them; bounded for larger hands and packs
EXCHANGE_TEXTS_KEPT = 1 << 14


class TippenGame(EngineGame):
    """A Tippen engine for one validated ``TippenRules``. Immutable."""

    family = "tippen"
    rules: TippenRules

    def __init__(self, rules: TippenRules):
        super().__init__(rules)
        p = self.pack
        S = p.size
        R = p.ranks_per_suit
        self.size = S
        self.ranks = R
        self.card_names = p.cards
        self.suit_masks = p.suit_masks
        self.suit_of = tuple(c // R for c in range(S))
        self.DISCARD_BASE = S
        self.WORD_BASE = 2 * S
        self.EXCHANGE_BASE = 2 * S + EXCHANGE_OFFSET
        self.word_ids = {w: 2 * S + i for i, w in enumerate(WORDS)}
        #: the text of every action id below the exchanges: the server writes the legal
        #: actions of the seat on turn into its view after every action
        self.simple_texts = (tuple("play:" + c for c in p.cards)
                             + tuple("discard:" + c for c in p.cards) + tuple(WORDS))
        #: the texts of exchange ids made so far (up to ``EXCHANGE_TEXTS_KEPT``): in the
        #: exchange the seat on turn has a legal action per subset of its hand, written into
        #: its view at every event, so the texts are made once, not at every view (the web
        #: table builds every seat's view at every event)
        self.exchange_texts: dict[int, str] = {}
        # Secrets of the log: the card a sniffer or knocker discards is seen by him alone;
        # of an exchange the others learn only how many cards were changed.
        self.secrets = (
            Secret(S, 2 * S, "actor", lambda a: "discard:?"),
            Secret(self.EXCHANGE_BASE, self.EXCHANGE_BASE + (1 << S), "actor",
                   lambda a: f"exchange:{(a - self.EXCHANGE_BASE).bit_count()}"),
        )
        self.ace_of = tuple(k * R + R - 1 for k in range(len(SUITS)))
        self.seven_of = tuple(k * R + R - 1 - p.ranks.index("7") for k in range(len(SUITS)))
        self.ace_or_seven = p.mask_of(c for c in range(S) if p.cards[c][1] in "A7")
        #: per trump mask, per card ``b`` winning the trick so far: the mask of the cards
        #: that beat it (``tricks.beats`` as a table)
        self.beaters = beaters_table(p.suit_masks, R, p.suit_masks)
        self.has_choice = rules.trump_card != "dealer-last" and (
            rules.sniffing != "none" or rules.knocking)
        # The options the deal reads, as plain fields of the engine: the rules are a Python
        # dataclass, whose fields the compiled engine would read by name at every use.
        self.stake: int = rules.stake
        self.tricks: int = rules.tricks
        self.trump_card: str = rules.trump_card
        self.bete: str = rules.bete
        self.tipp_zwang: bool = rules.tipp_zwang
        self.exchange: bool = rules.exchange
        self.void_must_trump: str = rules.void_must_trump
        self.head_trick: bool = rules.head_trick
        self.forced_leads: bool = rules.forced_leads
        self.max_bete: int | None = rules.max_bete
        self.robbing: bool = rules.robbing
        self.sniffing: str = rules.sniffing
        self.knocking: bool = rules.knocking
        self.schieben: bool = rules.schieben
        self.hupf_und_sprung: str = rules.hupf_und_sprung
        self.lone_tapper: str = rules.lone_tapper
        #: per dealer: the seat receiving each deck position of the hands (-1: the trump card),
        #: the position of the trump card and where the talon starts (``deal_hands``)
        self.deal_plans = tuple(self._deal_plan(d) for d in range(self.num_players))
        #: memo of transfers (immutable; a deal's handful comes from a small set)
        self.transfer_memo: dict[tuple[Account, Account, int, str, Payment, int], Transfer] = {}
        #: the reason of each trick's share of the pot, by trick number
        self.trick_reasons = tuple(f"trick {k}" for k in range(rules.tricks + 1))

    def _deal_plan(self, dealer: int) -> tuple[tuple[int, ...], int, int]:
        """Deal one card at a time from forehand, clockwise (rules reference §2.2 trump card):
        the seat of each deck position up to the talon (-1 for the trump card), the trump
        card's position (the turned upcard, or under ``dealer-last`` the dealer's own last
        card) and where the talon starts."""
        r = self.rules
        n = self.num_players
        seats: list[int] = []
        for _ in range(r.tricks - 1 if r.trump_card == "katira" else r.tricks):
            seats.extend((dealer + k) % n for k in range(1, n + 1))
        if r.trump_card == "dealer-last":
            return tuple(seats), len(seats) - 1, len(seats)
        up = len(seats)
        seats.append(-1)
        if r.trump_card == "katira":
            seats.extend((dealer + k) % n for k in range(1, n + 1))
        return tuple(seats), up, len(seats)

    def transfer(self, source: Account, target: Account, amount: int, reason: str, code: Payment,
                 trick: int = 0) -> Transfer:
        """A ``Transfer`` (frozen: shared between deals from a small memo)."""
        key = (source, target, amount, reason, code, trick)
        t = self.transfer_memo.get(key)
        if t is None:
            if len(self.transfer_memo) > 4096:
                self.transfer_memo.clear()
            t = self.transfer_memo[key] = Transfer(source, target, amount, reason, code, trick)
        return t

    @property
    def num_distinct_actions(self) -> int:
        """One past the largest action id (exchange ids are sparse: ``EXCHANGE_BASE + mask``)."""
        return self.EXCHANGE_BASE + self.pack.full_mask + 1

    # -- construction -------------------------------------------------------------------------
    def new_deal(self, table: TableState, deck: Sequence[int]) -> TippenState:
        self.check_deck(deck)
        self.check_table(table)
        return TippenState(self, table, list(deck))

    def deal_hands(self, deck: tuple[int, ...], dealer: int) -> tuple[list[int], int, int]:
        """Deal one card at a time from forehand, clockwise (rules reference §2.2 trump card).

        Returns the hands as masks, the deck position of the trump card (the turned upcard,
        or under ``dealer-last`` the dealer's own last card) and where the talon starts."""
        seats, up, talon_start = self.deal_plans[dealer]
        hands = [0] * self.num_players
        for i in range(talon_start):
            seat = seats[i]
            if seat >= 0:
                hands[seat] = hands[seat] | (1 << deck[i])
        return hands, up, talon_start

    def action_to_string(self, action: int) -> str:
        if 0 <= action < len(self.simple_texts):
            return self.simple_texts[action]
        text = self.exchange_texts.get(action)
        if text is not None:
            return text
        if action >= self.EXCHANGE_BASE:
            mask = action - self.EXCHANGE_BASE
            if mask >> self.size == 0:
                if not mask:
                    return "exchange:-"
                names = []
                while mask:  # the cards in pack order, lowest bit first
                    low = mask & -mask
                    names.append(self.card_names[low.bit_length() - 1])
                    mask ^= low
                text = "exchange:" + ",".join(names)
                if len(self.exchange_texts) < EXCHANGE_TEXTS_KEPT:
                    self.exchange_texts[action] = text
                return text
        raise IllegalAction("notation", f"{action!r} is not a Tippen action id")

    def string_to_action(self, text: object) -> int:
        if not isinstance(text, str):
            raise IllegalAction("notation", f"{text!r} is not an action string")
        t = text.strip()
        low = t.lower()
        if low in self.word_ids:
            return self.word_ids[low]
        kind, sep, arg = t.partition(":")
        kind = kind.strip().lower()
        arg = arg.strip()
        try:
            if sep and kind == "play":
                return self.pack.card(arg) if arg and "," not in arg else self._bad(text)
            if sep and kind == "discard":
                return self.size + self.pack.card(arg) if arg and "," not in arg else self._bad(text)
            if sep and kind == "exchange":
                if not arg:
                    self._bad(text)
                cards = self.pack.parse_cards(arg)
                mask = 0
                for c in cards:
                    if mask >> c & 1:
                        raise IllegalAction("notation", f"{text!r} names {self.card_names[c]} twice")
                    mask |= 1 << c
                return self.EXCHANGE_BASE + mask
        except CardError as e:
            raise IllegalAction("notation", f"{text!r}: {e}") from None
        return self._bad(text)

    @staticmethod
    def _bad(text: str) -> int:
        raise IllegalAction(
            "notation",
            f"{text!r} is not a Tippen action (play:HA, tap, pass, exchange:C7,D8, exchange:-, "
            f"shove, deal, sniff, knock, look, turn, discard:C7, drop, stay, rob, no-rob)")
