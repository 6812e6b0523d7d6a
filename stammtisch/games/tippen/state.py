"""``TippenState``: one Tippen deal in progress (the phases: ``stammtisch.games.tippen``).

The word phases before the play are in ``words``, the settlement in ``scoring``, the fields
and shared helpers in ``core``; here are the play (the hot path), the dispatch, refusals,
the view and what a seat may know.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Final

from ...cards import SUITS, cards_in
from ..base import POT, RESERVE, IllegalAction, Payment, TableState
from ..tricks import legal_follows, mask_cards, popcount
from .observation import TippenObservation
from .phases import (
    ACTIVE,
    CHOICE,
    DECLARE,
    DISCARD,
    DROP,
    EXCHANGE,
    OVER,
    PHASE_HINT,
    PHASE_NAMES,
    PLAY,
    ROB,
    SHOVE,
    TAKE_NONE,
    TAKE_SNIFF1859,
    UNDECIDED,
    UP_FACE,
    UP_HIDDEN,
    UP_NONE,
    W_ROB,
    WORDS,
)
from .sampling import resample_tippen
from .scoring import Settlement

if TYPE_CHECKING:
    from .game import TippenGame

#: the words of ``declared`` and the deal's outcomes, by number (``fingerprint``)
DECLARED: Final = ("tap", "pass", "drop", "stay")
OUTCOMES: Final = ("played", "all-pass", "lone-tapper", "jump")


def _code(word: str | None, words: tuple[str, ...]) -> int:
    return -1 if word is None else words.index(word)


def _number(value: int | None) -> int:
    return -1 if value is None else int(value)


#: ``Payment.TRICK`` where the compiled engine reads it without a lookup by name
PAY_TRICK: Final = Payment.TRICK
#: what the dealer took the trump card for (``taken``: TAKE_NONE, TAKE_SNIFF1859, …), as views say it
TAKEN_WORDS: tuple[str | None, ...] = (None, "sniff", "sniff", "knock")


class TippenState(Settlement):
    """One Tippen deal in progress (see the package docstring)."""

    OVER = OVER
    PHASE_NAMES = PHASE_NAMES

    __slots__ = ()

    def __init__(self, game: TippenGame, table: TableState, deck: list[int] | None = None):
        """A new deal from ``deck`` (``TippenGame.new_deal``); without one, an empty shell for
        ``clone`` to fill."""
        self.game = game
        self.table = table
        if deck is None:
            return
        r = game
        n = game.num_players
        self.deck = tuple(deck)
        self.dealer = table.dealer
        self.phase = SHOVE
        self.cur = table.dealer
        self.hands = [0] * n
        self.status = [UNDECIDED] * n
        self.declared = [None] * n
        self.talon = ()
        self.talon_pos = 0
        self.upcard = -1
        self.up_state = UP_NONE
        self.trump_index = -1
        self.trump_mask = 0
        self.trump_card = -1
        self.taken = TAKE_NONE
        self.discards = 0
        self.dead = 0
        self.played = 0
        self.trick = []
        self.led_suit = -1
        self.win_card = -1
        self.win_seat = -1
        self.last_trick = None
        self.tricks_won = [0] * n
        self.tricks_done = 0
        self.transfers = []
        self.pot = table.pot
        self.reserve = table.reserve
        self.pot_in_play = None
        self.trick_value = None
        self.bete = None
        self.compulsory = None
        self.declaring = False
        self.anted = [False] * n
        self.log = []
        self.outcome = None
        self.next_dealer = -1
        self.jump_cards = None
        self.order_pos = 0
        self.n_active = 0
        self.robbed = False
        self.looked = False  # the dealer has looked at his hand in the choice phase
        self.folded = [0] * n  # the cards each passer laid face down
        self._legal = -1
        # Ante, then the maximum-bête rebalancing (rules reference §2.3): pot in play =
        # min(carried, max_bete) + this deal's stakes; the rest waits in the reserve.
        self._ante(self.dealer, "ante", Payment.ANTE)
        carried = table.pot + table.reserve
        in_play = carried if r.max_bete is None else min(carried, r.max_bete)
        want_reserve = carried - in_play
        if want_reserve > self.reserve:
            self._move(POT, RESERVE, want_reserve - self.reserve, "max bête: rest to the reserve",
                       Payment.RESERVE_OUT)
        elif want_reserve < self.reserve:
            self._move(RESERVE, POT, self.reserve - want_reserve, "bête from the reserve into play",
                       Payment.RESERVE_IN)
        if not r.schieben:
            self._after_shoving()

    # -- legal actions and apply (PLAY first: the hot path) --------------------------------
    def is_terminal(self) -> bool:
        return self.phase == OVER

    def _play_mask(self) -> int:
        """The cards the current player may play (phase PLAY), remembered until the next card."""
        legal = self._legal
        if legal >= 0:
            return legal
        g = self.game
        hand = self.hands[self.cur]
        if not self.trick:
            legal = hand
            if g.forced_leads:
                if self.tricks_done == 0 and self.n_active >= 3 and hand & self.trump_mask:
                    legal = hand & self.trump_mask
                elif self.tricks_done == 1:
                    ace = g.ace_of[self.trump_index]
                    if hand >> ace & 1:
                        legal = 1 << ace
        else:
            legal = legal_follows(hand, g.suit_masks[self.led_suit], self.trump_mask, self.win_card,
                                  g.suit_masks[g.suit_of[self.win_card]], g.void_must_trump,
                                  g.head_trick)
        self._legal = legal
        return legal

    def legal_actions(self) -> list[int]:
        ph = self.phase
        if ph == PLAY:
            return mask_cards(self._play_mask())
        if ph == OVER:
            return []
        return self._legal_phase()

    def _is_legal(self, action: int) -> bool:
        g = self.game
        ph = self.phase
        if ph == PLAY:
            return 0 <= action < g.size and bool(self._play_mask() >> action & 1)
        if ph == EXCHANGE:
            mask = action - g.EXCHANGE_BASE
            return mask >= 0 and mask & ~self.hands[self.cur] == 0 \
                and popcount(mask) <= g.tricks
        if ph == DISCARD:
            c = action - g.DISCARD_BASE
            return 0 <= c < g.size and bool(self.hands[self.cur] >> c & 1)
        return action in self.legal_actions()

    # -- apply, one method per phase ----------------------------------------------------------
    def _apply(self, action: int) -> None:
        if self.phase == PLAY:  # the hot path: no dispatch
            if action < self.game.size and self._play_mask() >> action & 1:
                self.log.append((self.cur, action))
                self._play(action)
                return
        elif self._is_legal(action):
            self.log.append((self.cur, action))
            self._apply_phase(action)
            return
        rule, message = self._refusal(action)
        raise IllegalAction(rule, message)

    def _play(self, card: int) -> None:
        g = self.game
        seat = self.cur
        self._legal = -1
        bit = 1 << card
        self.hands[seat] = self.hands[seat] ^ bit
        self.played |= bit
        trick = self.trick
        trick.append((seat, card))
        if len(trick) == 1:
            self.led_suit = g.suit_of[card]
            self.win_card = card
            self.win_seat = seat
        elif g.beaters[self.trump_mask][self.win_card] >> card & 1:  # tricks.beats, as a table
            self.win_card = card
            self.win_seat = seat
        if len(trick) < self.n_active:
            self.cur = self._next_active(seat)
            return
        winner = self.win_seat
        self.tricks_won[winner] = self.tricks_won[winner] + 1
        self.tricks_done += 1
        self.last_trick = (tuple(trick), winner)
        self.trick = []
        self.led_suit = -1
        self.win_card = -1
        self.win_seat = -1
        self._move(POT, winner, self.trick_value or 0, g.trick_reasons[self.tricks_done], PAY_TRICK,
                   self.tricks_done)
        if self.tricks_done == g.tricks:
            self._settle()
        else:
            self.cur = winner

    def _legal_phase(self) -> list[int]:
        """The legal actions in a phase before the play."""
        ph = self.phase
        if ph == SHOVE:
            return self._legal_shove()
        if ph == CHOICE:
            return self._legal_choice()
        if ph == DISCARD:
            return self._legal_discard()
        if ph == DROP:
            return self._legal_drop()
        if ph == DECLARE:
            return self._legal_declare()
        if ph == EXCHANGE:
            return self._legal_exchange()
        return self._legal_rob()

    def _apply_phase(self, action: int) -> None:
        """Apply a legal ``action`` in a phase before the play."""
        ph = self.phase
        if ph == SHOVE:
            self._shove_or_deal(action)
        elif ph == CHOICE:
            self._choose(action)
        elif ph == DISCARD:
            self._discard(action)
        elif ph == DROP:
            self._drop_or_stay(action)
        elif ph == DECLARE:
            self._declare(action)
        elif ph == EXCHANGE:
            self._exchange(action)
        else:
            self._rob(action)

    # -- refusals -----------------------------------------------------------------------------
    def _refusal(self, action: int) -> tuple[str, str]:
        g = self.game
        r = g
        S = g.size
        ph = self.phase
        who = f"seat {self.cur}"
        try:
            text = g.action_to_string(action)
        except IllegalAction:
            return "notation", f"{action} is not a Tippen action id"
        is_word = g.WORD_BASE <= action < g.WORD_BASE + len(WORDS)
        word = WORDS[action - g.WORD_BASE] if is_word else None
        if word in ("tap", "pass") and self.compulsory and ph != DECLARE:
            return ("compulsory hand: passing not allowed",
                    "no bête stands: everyone must play this hand (Tipp-Zwang); there is no "
                    "tap or pass")
        if ph == PLAY and 0 <= action < S:
            return self._play_refusal(action)
        if ph == EXCHANGE and action >= g.EXCHANGE_BASE:
            mask = action - g.EXCHANGE_BASE
            if mask & ~self.hands[self.cur]:
                return "card not in hand", f"{who} does not hold every card of {text}"
            return "exchange", f"at most {r.tricks} cards may be exchanged"
        if ph == DISCARD and S <= action < 2 * S:
            return "card not in hand", f"the dealer does not hold {text[8:]}"
        if ph == SHOVE and word == "shove":
            return ("Schieben: at most one circuit",
                    f"seat {(self.cur + 1) % g.num_players} has already anted this deal; "
                    f"{who} must deal")
        if ph == ROB and word == "rob":
            return ("robbing: only the holder of the trump 7",
                    f"{who} does not hold the trump 7 and cannot rob the upcard")
        if ph == CHOICE and word == "sniff" and g.sniffing != "none":
            return ("sniffing: look at your hand first",
                    "with knocking agreed the dealer first knocks (blind) or looks at his "
                    "hand; only then may he sniff")
        if ph == CHOICE and word == "knock" and g.knocking:
            return ("knocking: only before looking at the hand",
                    "the dealer has looked at his hand and can no longer knock")
        if ph == CHOICE and word in ("sniff", "knock"):
            return (f"{'sniffing' if word == 'sniff' else 'knocking'} not agreed",
                    f"this rule set does not allow the dealer to {word}")
        return ("order of the deal",
                f"{text!r} is not possible now: {PHASE_HINT[ph]}"
                + (f" (seat {self.cur} to act)" if ph != OVER else ""))

    def _play_refusal(self, card: int) -> tuple[str, str]:
        g = self.game
        hand = self.hands[self.cur]
        name = g.card_names[card]
        if not hand >> card & 1:
            return "card not in hand", f"seat {self.cur} does not hold {name}"
        if not self.trick:
            if self.tricks_done == 0:
                return ("forced trump lead (1859)",
                        f"with {self.n_active} active players the first lead must be a trump")
            return ("forced trump lead (1859)",
                    "the winner of trick 1 holding the trump Ace (Daus) must lead it")
        led = g.suit_masks[self.led_suit]
        tm = self.trump_mask
        if hand & led:
            if not (1 << card) & led:
                return "follow suit (Farbzwang)", f"{name} does not follow the led suit"
            return "head the trick", f"{name} does not beat the winning card; a higher card must be played"
        if hand & tm and not (1 << card) & tm:
            return "must trump", f"void in the led suit: a trump must be played, not {name}"
        return "head the trick", f"{name} does not overtrump; a higher trump must be played"

    def fingerprint(self) -> tuple[object, ...]:
        """Every field of the deal that a rule reads or the deal shows (not the log's texts nor
        the transfers, only how many), as ints: equal fingerprints, the same state (and the same
        ``hash`` in every process). For checking two builds of the engine action for action."""
        return (self.phase, self.cur, self.dealer, tuple(self.hands), tuple(self.status),
                tuple([_code(word, DECLARED) for word in self.declared]), self.talon_pos, self.upcard,
                self.up_state, self.trump_index, self.trump_card, self.taken, self.discards, self.dead,
                self.played, tuple(self.trick), self.win_card, self.win_seat, tuple(self.tricks_won),
                self.tricks_done, self.pot, self.reserve, _number(self.pot_in_play),
                _number(self.trick_value), _number(self.bete), _number(self.compulsory),
                tuple(self.anted), _code(self.outcome, OUTCOMES), self.next_dealer, self.order_pos,
                self.n_active, self.robbed, self.looked, tuple(self.folded), len(self.log),
                len(self.transfers))

    def clone(self) -> TippenState:
        c = TippenState(self.game, self.table)
        c.deck = self.deck
        c.dealer = self.dealer
        c.phase = self.phase
        c.cur = self.cur
        c.hands = self.hands[:]
        c.status = self.status[:]
        c.declared = self.declared[:]
        c.talon = self.talon
        c.talon_pos = self.talon_pos
        c.upcard = self.upcard
        c.up_state = self.up_state
        c.trump_index = self.trump_index
        c.trump_mask = self.trump_mask
        c.trump_card = self.trump_card
        c.taken = self.taken
        c.discards = self.discards
        c.dead = self.dead
        c.played = self.played
        c.trick = self.trick[:]
        c.led_suit = self.led_suit
        c.win_card = self.win_card
        c.win_seat = self.win_seat
        c.last_trick = self.last_trick
        c.tricks_won = self.tricks_won[:]
        c.tricks_done = self.tricks_done
        c.transfers = self.transfers[:]
        c.pot = self.pot
        c.reserve = self.reserve
        c.pot_in_play = self.pot_in_play
        c.trick_value = self.trick_value
        c.bete = self.bete
        c.compulsory = self.compulsory
        c.declaring = self.declaring
        c.anted = self.anted[:]
        c.log = self.log[:]
        c.outcome = self.outcome
        c.next_dealer = self.next_dealer
        c.jump_cards = self.jump_cards
        c.order_pos = self.order_pos
        c.n_active = self.n_active
        c.robbed = self.robbed
        c.looked = self.looked
        c.folded = self.folded[:]
        c._legal = -1
        return c

    def resample(self, seat: int | None, rng: random.Random) -> TippenState:
        """A full state consistent with what ``seat`` knows, random in the rest (``sampling``)."""
        return resample_tippen(self, self._viewer(seat), rng)

    def redraw_unseen(self, seat: int, rng: random.Random) -> TippenState:
        """A copy in which every hand stays as it is and the cards ``seat`` has seen nowhere
        else (the talon still to come, passers' folded cards, cards laid away, an unturned
        upcard) lie at random among their places: the talons ``seat`` could have drawn, the
        other seats' hands held as dealt (the analysis of an exchange, ``analysis.decisions``)."""
        others = 0
        for s, hand in enumerate(self.hands):
            if s != seat:
                others |= hand
        return resample_tippen(self, seat, rng, keep=others)

    # -- what a seat may know -----------------------------------------------------------------
    def card_sets(self) -> dict[str, int]:
        """Where every card is (masks; for tests and tools, not for bots)."""
        up = 1 << self.upcard if self.up_state in (UP_HIDDEN, UP_FACE) else 0
        talon = 0
        for c in self.talon[self.talon_pos:]:
            talon |= 1 << c
        undealt = 0
        if self.phase == SHOVE or (self.outcome == "jump"):
            for c in self.deck:
                undealt |= 1 << c
        hands = 0
        for h in self.hands:
            hands |= h
        return {"hands": hands, "talon": talon, "upcard": up, "played": self.played,
                "discards": self.discards, "dead": self.dead, "undealt": undealt}

    def _blind(self, seat: int | None) -> bool:
        """A dealer who may knock decides before looking at his hand (rules reference §6 T7)."""
        return (seat == self.dealer and self.phase == CHOICE and self.game.knocking
                and not self.looked)

    def _trump_card_public(self) -> bool:
        """The card that fixed trumps lies face up (turned, 1821's dealer's last card, or
        sniffed in 1859); a modern sniffer or a knocker takes it unseen."""
        return self.taken in (TAKE_NONE, TAKE_SNIFF1859) and self.up_state != UP_HIDDEN

    def known_mask(self, seat: int | None) -> int:
        """The cards whose place ``seat`` may know (rules reference §2): everyone the cards played,
        the face-up upcard, a public trump card until the dealer who holds it may have laid
        it away face down (a 1859 sniffer's discard, a ``dealer-last`` dealer's exchange: its
        identity stays public, its place does not), the Hupf und Sprung cards; a seat also its
        own hand (not while deciding blind whether to knock), the cards it folded, discarded
        or exchanged away; the dealer the trump card he took. Passers' cards, the talon and
        others' discards stay hidden, even after the deal."""
        g = self.game
        known = self.played
        if self.up_state == UP_FACE:
            known |= 1 << self.upcard
        d = self.dealer
        # the trump card went into the dealer's hand (sniffed in 1859, or his own last card);
        # an exchange of no card lays nothing away
        in_dealers_hand = self.taken == TAKE_SNIFF1859 or g.trump_card == "dealer-last"
        laid_away = in_dealers_hand and any(
            s == d and (g.DISCARD_BASE <= a < g.WORD_BASE or a > g.EXCHANGE_BASE) for s, a in self.log)
        if self.trump_card >= 0 and ((self._trump_card_public() and not laid_away)
                                     or (seat is not None and seat == d)):
            known |= 1 << self.trump_card
        for c in self.jump_cards or ():
            known |= 1 << c
        if seat is None:
            return known
        if not self._blind(seat):
            known |= self.hands[seat]
        known |= self.folded[seat]
        for s, a in self.log:
            if s == seat:
                if g.DISCARD_BASE <= a < g.WORD_BASE:
                    known |= 1 << (a - g.DISCARD_BASE)
                elif a >= g.EXCHANGE_BASE:
                    known |= a - g.EXCHANGE_BASE
        return known

    def observation(self, seat: int | None) -> TippenObservation:
        """What ``seat`` knows now (``None``: a spectator) as ints and card masks: the facts
        of ``view(seat)``, which the bots and the RL observations read (``TippenObservation``)."""
        me = self._viewer(seat)
        g = self.game
        n = g.num_players
        dealer = self.dealer
        hand = folded = 0
        if me is not None:
            folded = self.folded[me]
            if not self._blind(me):
                hand = self.hands[me]
        trump_card = self.trump_card
        if trump_card >= 0 and not (self._trump_card_public() or me == dealer):
            trump_card = -1
        trump_known = self.trump_index >= 0 and (self.taken != TAKE_NONE or self.up_state != UP_HIDDEN)
        last = self.last_trick
        status = self.status
        anted = self.anted
        words = [-1] * n
        exchanged = [-1] * n
        first_word = g.WORD_BASE
        last_word = first_word + len(WORDS)
        first_exchange = g.EXCHANGE_BASE
        robbed = False
        for s, a in self.log:
            if first_word <= a < last_word:
                words[s] = a - first_word
                if a - first_word == W_ROB:
                    robbed = True
            elif a >= first_exchange:
                exchanged[s] = (a - first_exchange).bit_count()
        over = self.phase == OVER
        return TippenObservation(
            g, -1 if me is None else me, self.phase, dealer, self.cur, hand, folded,
            tuple([h.bit_count() for h in self.hands]), self.trump_index if trump_known else -1,
            self.upcard if self.up_state == UP_FACE else -1, trump_card, tuple(self.trick),
            () if last is None else last[0], -1 if last is None else last[1], self.played,
            tuple(self.tricks_won), self.pot, self.reserve, self.pot_in_play, self.trick_value,
            self.bete, self.compulsory, tuple([s for s in range(n) if status[s] == ACTIVE]),
            tuple(self.declared), len(self.talon) - self.talon_pos,
            tuple([s for s in range(n) if anted[s]]), TAKEN_WORDS[self.taken],
            g.robbing and robbed, self.outcome, tuple(self.jump_cards or ()),
            self.next_dealer if over else -1, tuple(words), tuple(exchanged))

    def _own_view(self, seat: int | None) -> tuple[list[str], list[str], str | None]:
        """The view's keys that depend on the seat: its hand (none while it decides blind),
        the cards it folded when it passed (he knows them, nobody else does), and the trump
        card when it is public or the seat is the dealer. ``_add_view`` and
        ``_redo_seat_view`` both take them from here."""
        names = self.game.card_names
        hand = ([] if seat is None or self._blind(seat)
                else [names[c] for c in cards_in(self.hands[seat])])
        folded = ([names[c] for c in cards_in(self.folded[seat])]
                  if seat is not None and self.folded[seat] else [])
        trump_card = None
        if self.trump_card >= 0 and (self._trump_card_public() or seat == self.dealer):
            trump_card = names[self.trump_card]
        return hand, folded, trump_card

    def _redo_seat_view(self, view: dict[str, Any], seat: int | None) -> None:
        view["hand"], view["folded"], view["trump_card"] = self._own_view(seat)

    def _add_view(self, view: dict[str, Any], seat: int | None) -> None:
        g = self.game
        names = g.card_names
        n = g.num_players
        trump_known = self.trump_index >= 0 and (self.taken != TAKE_NONE or self.up_state != UP_HIDDEN)
        # key by key, not view.update({...}): no second dict of 25 keys made and merged at
        # every view (the web table builds every seat's view at every event)
        view["hand"], view["folded"], trump_card = self._own_view(seat)
        view["hand_sizes"] = [h.bit_count() for h in self.hands]
        view["trump"] = SUITS[self.trump_index] if trump_known else None
        view["upcard"] = names[self.upcard] if self.up_state == UP_FACE else None
        view["trump_card"] = trump_card
        view["trick"] = [[s, names[c]] for s, c in self.trick]
        view["last_trick"] = ({"cards": [[s, names[c]] for s, c in self.last_trick[0]],
                               "winner": self.last_trick[1]} if self.last_trick else None)
        view["tricks_won"] = list(self.tricks_won)
        view["pot"] = self.pot
        view["reserve"] = self.reserve
        view["active"] = [s for s in range(n) if self.status[s] == ACTIVE]
        view["declared"] = list(self.declared)
        view["compulsory"] = self.compulsory
        view["pot_in_play"] = self.pot_in_play
        view["trick_value"] = self.trick_value
        view["bete"] = self.bete
        view["talon_size"] = len(self.talon) - self.talon_pos
        view["anted"] = [s for s in range(n) if self.anted[s]]
        view["taken_by_dealer"] = TAKEN_WORDS[self.taken]
        # only a table that plays with robbing can have a rob in its log
        view["robbed"] = g.robbing and any(a == g.WORD_BASE + W_ROB for _, a in self.log)
        view["outcome"] = self.outcome
        view["jump_cards"] = [names[c] for c in self.jump_cards] if self.jump_cards else None
        if self.phase == OVER:
            view["next_dealer"] = self.next_dealer
