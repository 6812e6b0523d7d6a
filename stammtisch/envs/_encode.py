"""The RL observation's blocks from a seat's ``observation`` (``ObservationEncoder``'s hot path).

Where each block starts and how figures are scaled is ``Layout`` (made by the encoder from its
table of blocks); ``tippen_vector`` and ``tapp_vector`` write the vector as an ``array`` of
float32, which the encoder hands on as a numpy array without a copy. Compiled with the engines
(``stammtisch/_native.py``): it imports no numpy.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

from ..games.tapp.observation import RUFER_IN_TAPP, TappObservation
from ..games.tippen.observation import TippenObservation


class Layout:
    """The blocks of one rule set's observation: their offsets, sizes and scales."""

    def __init__(self, at: dict[str, int], players: int, size: int, words: int, max_hand: int, tricks: int,
                 unit: float, contracts: dict[str, int]) -> None:
        self.size = at["size"]
        #: the vector before anything is written into it
        self.zeros = array("f", bytes(4 * self.size))
        self.n = players
        self.S = size
        self.W = words
        self.max_hand = max_hand
        self.tricks = tricks
        self.unit = unit
        self.contracts = contracts
        self.hand = at["hand"]
        self.played = at["played"]
        self.trick = at["trick"]
        self.trump = at["trump"]
        self.phase = at["phase"]
        self.dealer = at["dealer"]
        self.to_act = at["to_act"]
        self.hand_sizes = at["hand_sizes"]
        self.tricks_won = at["tricks_won"]
        self.last_word = at["last_word"]
        self.money = at["money"]
        self.legal = at["legal"]
        self.upcard = at.get("upcard", -1)
        self.active = at.get("active", -1)
        self.exchanged = at.get("exchanged", -1)
        self.folded = at.get("folded", -1)
        self.stakes = at.get("stakes", -1)
        self.flags = at.get("flags", -1)
        self.declarer = at.get("declarer", -1)
        self.contract = at.get("contract", -1)
        self.called = at.get("called", -1)
        self.open_hand = at.get("open_hand", -1)
        self.tapp = at.get("tapp", -1)
        self.discards = at.get("discards", -1)
        self.given = at.get("given", -1)
        self.rufer_holder = at.get("rufer_holder", -1)

    def contract_slot(self, contract: str) -> int:
        """The slot of a contract's name (``+tout`` and a Classic solo's suit aside)."""
        name = contract.split("+", 1)[0]
        slot = self.contracts.get(name)
        if slot is None:
            slot = self.contracts[name.split(":", 1)[0]]  # Classic "solo:C": the suit is in the trump block
        return slot


def _cards(ones: list[int], base: int, mask: int) -> None:
    while mask:
        low = mask & -mask
        ones.append(base + low.bit_length() - 1)
        mask ^= low


def _vector(lay: Layout, ones: list[int], at: list[int], values: list[float]) -> array[float]:
    out = lay.zeros[:]
    written: Any = out
    one: Any = 1.0  # boxed once, not at every card
    for i in ones:
        written[i] = one
    for k in range(len(at)):
        out[at[k]] = values[k]
    return out


def _common(obs: TippenObservation | TappObservation, lay: Layout, rel: list[int], legal: Sequence[int],
            ones: list[int], at: list[int], values: list[float]) -> None:
    n, S, W = lay.n, lay.S, lay.W
    _cards(ones, lay.hand, obs.hand)
    _cards(ones, lay.played, obs.played)
    for seat, card in obs.trick:
        ones.append(lay.trick + rel[seat] * S + card)
    if obs.trump >= 0:
        ones.append(lay.trump + obs.trump)
    ones.append(lay.phase + obs.phase)
    ones.append(lay.dealer + rel[obs.dealer])
    if obs.turn >= 0:
        ones.append(lay.to_act + rel[obs.turn])
    for seat in range(n):
        word = obs.words[seat]
        if word >= 0:
            ones.append(lay.last_word + rel[seat] * W + word)
        size = obs.hand_sizes[seat]
        if size:
            at.append(lay.hand_sizes + rel[seat])
            values.append(size / lay.max_hand)
        won = obs.tricks_won[seat]
        if won:
            at.append(lay.tricks_won + rel[seat])
            values.append(won / lay.tricks)
    for d in legal:
        ones.append(lay.legal + d)


def tippen_vector(obs: TippenObservation, lay: Layout, legal: Sequence[int]) -> array[float]:
    """The observation vector of a Tippen seat (its legal dense actions given)."""
    n = lay.n
    me = obs.seat
    rel = [(s - me) % n for s in range(n)]
    ones: list[int] = []
    at: list[int] = []
    values: list[float] = []
    _common(obs, lay, rel, legal, ones, at, values)
    unit = lay.unit
    if obs.pot:
        at.append(lay.money)
        values.append(obs.pot / unit)
    if obs.reserve:
        at.append(lay.money + 1)
        values.append(obs.reserve / unit)
    up = obs.upcard if obs.upcard >= 0 else obs.trump_card
    if up >= 0:
        ones.append(lay.upcard + up)
    for seat in obs.active:
        ones.append(lay.active + rel[seat])
    for seat in range(n):
        k = obs.exchanged[seat]
        if k > 0:
            at.append(lay.exchanged + rel[seat])
            values.append(k / lay.tricks)
    _cards(ones, lay.folded, obs.folded)
    for i, stake in enumerate((obs.pot_in_play, obs.bete, obs.trick_value)):
        if stake:
            at.append(lay.stakes + i)
            values.append(stake / unit)
    if obs.compulsory:
        ones.append(lay.flags)
    if obs.robbed:
        ones.append(lay.flags + 1)
    if obs.taken == "sniff":
        ones.append(lay.flags + 2)
    elif obs.taken == "knock":
        ones.append(lay.flags + 3)
    return _vector(lay, ones, at, values)


def tapp_vector(obs: TappObservation, lay: Layout, legal: Sequence[int]) -> array[float]:
    """The observation vector of a Tapp seat (its legal dense actions given)."""
    n = lay.n
    me = obs.seat
    rel = [(s - me) % n for s in range(n)]
    ones: list[int] = []
    at: list[int] = []
    values: list[float] = []
    _common(obs, lay, rel, legal, ones, at, values)
    if obs.pot:
        at.append(lay.money)
        values.append(obs.pot / lay.unit)
    if obs.declarer >= 0:
        ones.append(lay.declarer + rel[obs.declarer])
    if obs.contract:
        ones.append(lay.contract + lay.contract_slot(obs.contract))
    if obs.tout:
        ones.append(lay.contract + len(lay.contracts))
    if obs.called >= 0:
        ones.append(lay.called + obs.called)
    if obs.given >= 0:
        ones.append(lay.given + obs.given)
    _cards(ones, lay.open_hand, obs.open_hand)
    _cards(ones, lay.tapp, obs.tapp)
    _cards(ones, lay.discards, obs.discards)
    holder = obs.rufer_holder
    if holder == RUFER_IN_TAPP:
        ones.append(lay.rufer_holder + n)
    elif holder >= 0:
        ones.append(lay.rufer_holder + rel[holder])
    return _vector(lay, ones, at, values)
