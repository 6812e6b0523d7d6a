"""Dense action ids: every engine action of a rule set mapped to ``range(num_actions)`` and back.

The engines number most actions densely already (a card, a word), but two kinds of action name
a *set* of cards by its bit mask, so their ids are sparse (up to 2^52): the Tippen exchange and
the Tapp discard. The adapters number those sets by **positions in the sorted hand** (cards in
pack order, position 0 the lowest card index), which needs no extra state: one dense id is one
complete engine action, so the engine state never holds a half-chosen action.

Tippen (``S`` = pack size, ``T`` = ``tricks``, the hand size when exchanging):

======================  ===========================  ========================================
dense ids               engine action                meaning
======================  ===========================  ========================================
``0 … S-1``             ``play:XX``                  play card ``XX`` (id = card index)
``S … 2S-1``            ``discard:XX``               a sniffing dealer discards ``XX``
``2S … 2S+11``          the words                    ``tap pass shove deal sniff knock turn
                                                     drop stay rob no-rob look``
``2S+12 … 2S+12+2^T-1`` ``exchange:…``               bit ``i`` of ``id - (2S+12)`` set: the
                                                     card at position ``i`` of the sorted
                                                     hand is exchanged (0 is ``exchange:-``)
======================  ===========================  ========================================

Tapp (``N`` = pack size, ``K`` = tapp size, ``H`` = hand size + ``K`` when discarding):

========================  ===========================  ======================================
dense ids                 engine action                meaning
========================  ===========================  ======================================
``0 … N-1``               ``play:XX``                  play card ``XX``
``N … 2N-1``              ``call:XX``                  Rufer: call card ``XX``
``2N … 3N-1``             ``give:XX``                  Rufer: give card ``XX``
``3N … 3N+27``            the fixed actions            ``pass hold bid:frage bid:solo
                                                       bid:herzsolo trump:H trump:D trump:C
                                                       trump:S tout no-tout play weg`` and the
                                                       15 ``contract:NAME`` in rank order
``3N+28 … 3N+28+C(H,K)-1`` ``discard:…``               the ``K`` positions ``p_0 < … <
                                                       p_{K-1}`` of the sorted hand, numbered
                                                       in colex order: ``Σ C(p_i, i+1)``
========================  ===========================  ======================================

Below the set actions the dense id *is* the engine id, so the hot path (playing cards) maps
nothing. The mapping needs only the legal engine actions: the hand is the union of the legal
exchange (or discard) sets, which every legal list of that phase contains.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from math import comb
from typing import Any

from ..cards import cards_in
from . import _engine

_CACHE_LIMIT = 4096


def _contains(ascending: Sequence[int], x: int) -> bool:
    i = bisect_left(ascending, x)
    return i < len(ascending) and ascending[i] == x


def colex_rank(positions: Sequence[int]) -> int:
    """The colex number of an ascending tuple of distinct positions (combinatorial number system)."""
    return sum(comb(p, i + 1) for i, p in enumerate(positions))


def colex_unrank(rank: int, k: int) -> list[int]:
    """The ascending positions whose colex number is ``rank`` (inverse of ``colex_rank``)."""
    out = []
    for i in range(k, 0, -1):
        p = i - 1
        while comb(p + 1, i) <= rank:
            p += 1
        out.append(p)
        rank -= comb(p, i)
    out.reverse()
    return out


class DenseActions:
    """The dense action ids of one rule set (see the module docstring for the table).

    ``legal`` is always the engine's legal list, ascending.
    ``num_actions`` is the size of the dense range. ``dense_legal(legal)`` maps the engine's
    legal list, ``to_engine(legal, dense)`` maps one dense id back (``ValueError`` when it is
    not legal now) and ``to_dense(legal, action)`` maps one legal engine id.
    """

    def __init__(self, game: Any) -> None:
        self.game = game
        self.family: str = game.rules.family
        if self.family == "tippen":
            size, words, first_set = _engine.tippen_layout(game)
            self.fixed_end = 2 * size + words
            self.set_base = first_set
            self.set_cards = int(game.rules.tricks)
            self.set_count = 1 << self.set_cards
            self.set_kind = "exchange"
            self.discard_size = 0
        else:
            size, fixed, first_set, discard_size = _engine.tapp_layout(game)
            self.fixed_end = 3 * size + fixed
            self.set_base = first_set
            self.set_cards = _engine.tapp_hand_size(game)
            self.discard_size = discard_size
            self.set_count = comb(self.set_cards, discard_size)
            self.set_kind = "discard"
        self.num_actions: int = self.fixed_end + self.set_count
        self._by_hand: dict[int, tuple[dict[int, int], dict[int, int]]] = {}
        self._last: tuple[Sequence[int], int, int, int] | None = None
        from ..games import TableState

        self._namer = game.new_deal(TableState(), list(range(game.pack.size)))

    # ------------------------------------------------------------------ the set actions
    def _set_maps(self, hand: int) -> tuple[dict[int, int], dict[int, int]]:
        """For a hand (bit mask): engine id → dense id and back, of every set action on it."""
        maps = self._by_hand.get(hand)
        if maps is not None:
            return maps
        cards = cards_in(hand)
        if len(cards) > self.set_cards:
            raise ValueError(f"a hand of {len(cards)} cards does not fit the {self.set_kind} positions "
                             f"({self.set_cards})")
        to_dense: dict[int, int] = {}
        if self.family == "tippen":
            for posmask in range(1 << len(cards)):
                sub = sum(1 << cards[i] for i in range(len(cards)) if posmask >> i & 1)
                to_dense[self.set_base + sub] = self.fixed_end + posmask
        else:
            from itertools import combinations

            for positions in combinations(range(len(cards)), self.discard_size):
                sub = sum(1 << cards[i] for i in positions)
                to_dense[self.set_base + sub] = self.fixed_end + colex_rank(positions)
        maps = (to_dense, {d: e for e, d in to_dense.items()})
        if len(self._by_hand) >= _CACHE_LIMIT:
            self._by_hand.clear()
        self._by_hand[hand] = maps
        return maps

    def _hand_of(self, legal: Sequence[int]) -> int:
        """The union of the legal set actions' cards (remembered for the last legal list)."""
        last = self._last
        if last is not None and last[0] is legal and last[1] == len(legal) and last[2] == legal[-1]:
            return last[3]
        hand = 0
        for a in legal:
            if a >= self.set_base:
                hand |= a - self.set_base
        self._last = (legal, len(legal), legal[-1], hand)
        return hand

    # ------------------------------------------------------------------ the mapping
    def dense_legal(self, legal: Sequence[int]) -> list[int]:
        """The dense ids of the legal engine actions, ascending."""
        if not legal or legal[-1] < self.set_base:
            return list(legal)
        to_dense = self._set_maps(self._hand_of(legal))[0]
        return sorted(a if a < self.set_base else to_dense[a] for a in legal)

    def to_dense(self, legal: Sequence[int], action: int) -> int:
        """The dense id of a legal engine action (``ValueError`` if it is not in ``legal``)."""
        if not _contains(legal, action):
            raise ValueError(f"engine action {action} is not legal now")
        if action < self.set_base:
            return action
        return self._set_maps(self._hand_of(legal))[0][action]

    def to_engine(self, legal: Sequence[int], dense: int) -> int:
        """The engine action of a dense id; ``ValueError`` naming it when it is not legal now."""
        if dense < self.fixed_end:
            if dense >= 0 and _contains(legal, dense):
                return dense
        elif dense < self.num_actions and legal and legal[-1] >= self.set_base:
            engine = self._set_maps(self._hand_of(legal))[1].get(dense)
            if engine is not None and _contains(legal, engine):
                return engine
        raise ValueError(self.refusal(legal, dense))

    def refusal(self, legal: Sequence[int], dense: int) -> str:
        if not 0 <= dense < self.num_actions:
            return f"action {dense} is outside the action range 0…{self.num_actions - 1}"
        return (f"action {dense} ({self.describe(dense)}) is not legal now; legal: "
                f"{', '.join(f'{d} ({self.describe(d, legal)})' for d in self.dense_legal(legal))}")

    def describe(self, dense: int, legal: Sequence[int] = ()) -> str:
        """A dense id in words: the engine notation, or the positions of a set action.

        With ``legal`` given and the id legal there, a set action is named by its cards.
        """
        if 0 <= dense < self.fixed_end:
            return _engine.action_string(self._namer, dense)
        if not self.fixed_end <= dense < self.num_actions:
            return f"no action ({dense})"
        if legal and legal[-1] >= self.set_base:
            engine = self._set_maps(self._hand_of(legal))[1].get(dense)
            if engine is not None:
                return _engine.action_string(self._namer, engine)
        offset = dense - self.fixed_end
        if self.family == "tippen":
            positions = cards_in(offset)
        else:
            positions = colex_unrank(offset, self.discard_size)
        return f"{self.set_kind} of hand positions {','.join(map(str, positions)) or '-'}"
