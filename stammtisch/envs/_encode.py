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


def _cards(out: Any, one: object, base: int, mask: int) -> None:
    while mask:
        low = mask & -mask
        out[base + low.bit_length() - 1] = one
        mask ^= low


def _common(obs: TippenObservation | TappObservation, lay: Layout, rel: list[int], legal: Sequence[int],
            out: Any, one: object) -> None:
    """The blocks every family has, written into ``out`` (the blocks never overlap, so each
    position is written by one block only, whatever the order)."""
    n, S, W = lay.n, lay.S, lay.W
    _cards(out, one, lay.hand, obs.hand)
    _cards(out, one, lay.played, obs.played)
    for seat, card in obs.trick:
        out[lay.trick + rel[seat] * S + card] = one
    if obs.trump >= 0:
        out[lay.trump + obs.trump] = one
    out[lay.phase + obs.phase] = one
    out[lay.dealer + rel[obs.dealer]] = one
    if obs.turn >= 0:
        out[lay.to_act + rel[obs.turn]] = one
    for seat in range(n):
        word = obs.words[seat]
        if word >= 0:
            out[lay.last_word + rel[seat] * W + word] = one
        size = obs.hand_sizes[seat]
        if size:
            out[lay.hand_sizes + rel[seat]] = size / lay.max_hand
        won = obs.tricks_won[seat]
        if won:
            out[lay.tricks_won + rel[seat]] = won / lay.tricks
    for d in legal:
        out[lay.legal + d] = one


def tippen_vector(obs: TippenObservation, lay: Layout, legal: Sequence[int]) -> array[float]:
    """The observation vector of a Tippen seat (its legal dense actions given)."""
    n = lay.n
    me = obs.seat
    rel = [(s - me) % n for s in range(n)]
    vector = lay.zeros[:]
    out: Any = vector  # written item by item; the 1 is boxed once
    one: object = 1.0
    _common(obs, lay, rel, legal, out, one)
    unit = lay.unit
    if obs.pot:
        out[lay.money] = obs.pot / unit
    if obs.reserve:
        out[lay.money + 1] = obs.reserve / unit
    up = obs.upcard if obs.upcard >= 0 else obs.trump_card
    if up >= 0:
        out[lay.upcard + up] = one
    for seat in obs.active:
        out[lay.active + rel[seat]] = one
    for seat in range(n):
        k = obs.exchanged[seat]
        if k > 0:
            out[lay.exchanged + rel[seat]] = k / lay.tricks
    _cards(out, one, lay.folded, obs.folded)
    for i, stake in enumerate((obs.pot_in_play, obs.bete, obs.trick_value)):
        if stake:
            out[lay.stakes + i] = stake / unit
    if obs.compulsory:
        out[lay.flags] = one
    if obs.robbed:
        out[lay.flags + 1] = one
    if obs.taken == "sniff":
        out[lay.flags + 2] = one
    elif obs.taken == "knock":
        out[lay.flags + 3] = one
    return vector


def tapp_vector(obs: TappObservation, lay: Layout, legal: Sequence[int]) -> array[float]:
    """The observation vector of a Tapp seat (its legal dense actions given)."""
    n = lay.n
    me = obs.seat
    rel = [(s - me) % n for s in range(n)]
    vector = lay.zeros[:]
    out: Any = vector  # written item by item; the 1 is boxed once
    one: object = 1.0
    _common(obs, lay, rel, legal, out, one)
    if obs.pot:
        out[lay.money] = obs.pot / lay.unit
    if obs.declarer >= 0:
        out[lay.declarer + rel[obs.declarer]] = one
    if obs.contract:
        out[lay.contract + lay.contract_slot(obs.contract)] = one
    if obs.tout:
        out[lay.contract + len(lay.contracts)] = one
    if obs.called >= 0:
        out[lay.called + obs.called] = one
    if obs.given >= 0:
        out[lay.given + obs.given] = one
    _cards(out, one, lay.open_hand, obs.open_hand)
    _cards(out, one, lay.tapp, obs.tapp)
    _cards(out, one, lay.discards, obs.discards)
    holder = obs.rufer_holder
    if holder == RUFER_IN_TAPP:
        out[lay.rufer_holder + n] = one
    elif holder >= 0:
        out[lay.rufer_holder + rel[holder]] = one
    return vector
