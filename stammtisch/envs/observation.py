"""The observation: a flat float32 numpy encoding of ``view(seat)`` and the legal dense actions.

Only the view a seat gets from the engine goes in (plus the legal actions, which the view also
lists), so an observation never holds a card the seat may not see. Seats are **relative**: slot
``k`` of a per-seat block is the seat ``k`` places after the observer in seat order (slot 0 is
the observer). ``S`` is the pack size, ``n`` the number of players, ``A`` the number of dense
actions (``stammtisch.envs.actions``), money is divided by the rule set's value unit
(``value_unit``: the Tippen stake, the Modern Tapp Frage value, 60 points in historic Tapp).

Common blocks, in this order:

================  =========  ==========================================================
block             size       content
================  =========  ==========================================================
``hand``          S          1 for each card in the observer's hand
``played``        S          1 for each card seen played this deal (the trick included)
``trick``         n·S        the trick in progress: slot k, card c → 1
``trump``         4          the trump suit (H D C S) when the observer knows it
``phase``         P          one-hot of the family's phases (``PHASES`` in ``_engine``)
``dealer``        n          one-hot, relative
``to_act``        n          who is to act, relative (all 0 when the deal is over)
``hand_sizes``    n          cards in each hand ÷ the largest hand of the deal
``tricks_won``    n          tricks each seat has won ÷ tricks per deal
``last_word``     n·W        each seat's latest word (tap, pass, bid:frage, weg, …) one-hot
                             over the family's W words (dense ids of the words)
``money``         2          pot and reserve ÷ value unit
``legal``         A          1 for each legal dense action (all 0 when not on turn)
================  =========  ==========================================================

Tippen adds ``upcard`` (S: the turned card or the card that fixed trumps, when visible),
``active`` (n), ``exchanged`` (n: cards each seat exchanged ÷ hand size), ``folded`` (S: the
observer's own folded cards), ``stakes`` (3: pot in play, bête, trick value ÷ value unit) and
``flags`` (4: compulsory hand, robbed, dealer sniffed, dealer knocked).

Tapp adds ``declarer`` (n), ``contract`` (C: one-hot of the contract names, ``tout`` last),
``called`` (S), ``open_hand`` (S: Bettel ouvert), ``tapp`` and ``discards`` (S each: the
declarer's own pick-up and discard), ``given`` (S) and ``rufer_holder`` (n+1: relative seat,
last slot the tapp), each only when the view shows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _encode, _engine
from .actions import DenseActions

#: numpy converts a dtype given as a type at every call; an instance is taken as it is
FLOAT32 = np.dtype(np.float32)


def value_unit(rules: Any) -> float:
    """The money unit of a rule set: what rewards and pot figures are divided by when normalised."""
    if rules.family == "tippen":
        return float(rules.stake)
    if _engine.is_modern_tapp(rules):
        return float(rules.frage_value)
    return 60.0


class ObservationEncoder:
    """Builds observations for one rule set; ``blocks`` lists (name, offset, size)."""

    def __init__(self, game: Any, actions: DenseActions) -> None:
        rules = game.rules
        self.family: str = rules.family
        self.n = n = int(game.num_players)
        self.S = S = int(game.pack.size)
        self.card_index: dict[str, int] = dict(game.pack.index)
        self.num_actions = actions.num_actions
        self.unit = value_unit(rules)
        self.phases = {p: i for i, p in enumerate(_engine.PHASES[self.family])}
        # the words: every dense id below the set actions that is not a card action
        first_word = 2 * S if self.family == "tippen" else 3 * S
        self.words = {_engine.action_string(actions._namer, d): i
                      for i, d in enumerate(range(first_word, actions.fixed_end))}
        W = len(self.words)
        if self.family == "tippen":
            self.max_hand = int(rules.tricks) + 1
            self.tricks = int(rules.tricks)
        else:
            self.max_hand = _engine.tapp_hand_size(game)
            self.tricks = int(game.hand_size)
            self.contracts = {c: i for i, c in enumerate(_engine.tapp_contracts(game))}
        sizes: list[tuple[str, int]] = [
            ("hand", S), ("played", S), ("trick", n * S), ("trump", 4), ("phase", len(_engine.PHASES[self.family])),
            ("dealer", n), ("to_act", n), ("hand_sizes", n), ("tricks_won", n), ("last_word", n * W),
            ("money", 2), ("legal", self.num_actions),
        ]
        if self.family == "tippen":
            sizes += [("upcard", S), ("active", n), ("exchanged", n), ("folded", S), ("stakes", 3), ("flags", 4)]
        else:
            sizes += [("declarer", n), ("contract", len(self.contracts) + 1), ("called", S), ("open_hand", S),
                      ("tapp", S), ("discards", S), ("given", S), ("rufer_holder", n + 1)]
        self.blocks: list[tuple[str, int, int]] = []
        offset = 0
        for name, size in sizes:
            self.blocks.append((name, offset, size))
            offset += size
        self.size = offset
        #: upper bounds for an observation space: 1, except money figures (unbounded)
        self.high = np.ones(offset, dtype=np.float32)
        for name, off, size in self.blocks:
            if name in ("money", "stakes"):
                self.high[off:off + size] = np.inf
        self.at = {name: off for name, off, _ in self.blocks}
        self.W = W
        #: per observer, per seat: the relative slot
        self._relative = tuple(tuple((s - me) % n for s in range(n)) for me in range(n))
        #: per observer: the seats in relative order (slot k holds seat _seats_from[me][k])
        self._seats_from = tuple(tuple((me + k) % n for k in range(n)) for me in range(n))
        self._log_kinds: dict[str, tuple[int, int]] = {}
        self._contract_slots: dict[str, int] = {}
        #: the blocks for building an observation from ``state.observation(seat)`` (``_encode``)
        self.layout = _encode.Layout({**self.at, "size": self.size}, n, S, W, self.max_hand, self.tricks, self.unit,
                                     getattr(self, "contracts", {}))
        self._vector: Any = _encode.tippen_vector if self.family == "tippen" else _encode.tapp_vector

    def describe(self) -> list[tuple[str, int, int]]:
        """The table of blocks: (name, offset, size)."""
        return list(self.blocks)

    def _log_entry(self, text: str) -> tuple[int, int]:
        """What a log text means here: (0, card) played, (1, word), (2, cards exchanged), (3, 0) else."""
        entry = self._log_kinds.get(text)
        if entry is None:
            if text.startswith("play:"):
                entry = (0, self.card_index[text[5:]])
            elif text in self.words:
                entry = (1, self.words[text])
            elif text.startswith("exchange:"):
                arg = text[9:]
                entry = (2, 0 if arg == "-" else int(arg) if arg.isdigit() else arg.count(",") + 1)
            else:
                entry = (3, 0)
            if len(self._log_kinds) > 100_000:
                self._log_kinds.clear()
            self._log_kinds[text] = entry
        return entry

    def _common(self, view: dict[str, Any], scalars: list[tuple[int, float]], rel: Sequence[int]) -> list[int]:
        """The blocks every family has, except the log's: returns the positions to set to 1 and
        appends (position, value) of the others to ``scalars``."""
        at = self.at
        ci = self.card_index
        S = self.S
        ones: list[int] = []  # positions set to 1
        base = at["hand"]
        ones.extend([base + ci[c] for c in view["hand"]])
        base = at["trick"]
        ones.extend([base + rel[seat] * S + ci[card] for seat, card in view["trick"]])
        trump = view["trump"]
        if trump:
            ones.append(at["trump"] + "HDCS".index(trump))
        ones.append(at["phase"] + self.phases[view["phase"]])
        ones.append(at["dealer"] + rel[view["dealer"]])
        cur = view["current_player"]
        if cur is not None and cur >= 0:
            ones.append(at["to_act"] + rel[cur])
        base = at["hand_sizes"]
        scalars.extend([(base + rel[seat], size / self.max_hand) for seat, size in enumerate(view["hand_sizes"])])
        base = at["tricks_won"]
        scalars.extend([(base + rel[seat], won / self.tricks) for seat, won in enumerate(view["tricks_won"])])
        scalars.append((at["money"], view["pot"] / self.unit))
        scalars.append((at["money"] + 1, view.get("reserve", 0) / self.unit))
        return ones

    def _array(self, ones: list[int], scalars: list[tuple[int, float]]) -> np.ndarray:
        """The observation vector: 1 at ``ones``, the ``scalars`` set, 0 elsewhere.

        Built through a bytearray: a numpy assignment per position, or one with a list of
        positions, costs several times more.
        """
        buf = bytearray(self.size)
        for i in ones:
            buf[i] = 1
        out = np.frombuffer(buf, dtype=np.uint8).astype(np.float32)
        for i, value in scalars:
            out[i] = value
        return out

    def encode(self, view: dict[str, Any], legal_dense: Sequence[int]) -> np.ndarray:
        """The observation of ``view`` (one seat's view) with the seat's legal dense actions."""
        at = self.at
        me = view["seat"]
        if me is None:
            raise ValueError("an observation is for a seat, not for a spectator")
        rel = self._relative[me]
        scalars: list[tuple[int, float]] = []
        ones = self._common(view, scalars, rel)
        played = at["played"]
        latest: dict[int, int] = {}
        exchanged: dict[int, int] = {}
        entry = self._log_entry
        for seat, text in view["log"]:
            kind, value = entry(text)
            if kind == 0:
                ones.append(played + value)
            elif kind == 1:
                latest[seat] = value
            elif kind == 2:
                exchanged[seat] = value
        return self._fill(view, legal_dense, scalars, ones, rel, latest, exchanged)

    def encode_state(self, state: Any, seat: int, legal_dense: Sequence[int]) -> np.ndarray:
        """``encode(state.view(seat), legal_dense)``, built from the seat's observation
        (``state.observation(seat)``: the same facts as ints and masks) instead of the view;
        the tests compare both encodings on many states."""
        return np.frombuffer(self._vector(state.observation(seat), self.layout, legal_dense), FLOAT32)

    def _contract_slot(self, contract: str) -> int:
        slot = self._contract_slots.get(contract)
        if slot is None:
            slot = self._contract_slots[contract] = self._contract_slot_of(contract)
        return slot

    def _contract_slot_of(self, contract: str) -> int:
        name = contract.split("+", 1)[0]
        if name not in self.contracts:
            name = name.split(":", 1)[0]  # Classic "solo:C": the suit is in the trump block
        return self.contracts[name]

    def _fill(self, view: dict[str, Any], legal_dense: Sequence[int], scalars: list[tuple[int, float]],
              ones: list[int], rel: Sequence[int], latest: dict[int, int], exchanged: dict[int, int]) -> np.ndarray:
        at = self.at
        base = at["last_word"]
        W = self.W
        ones.extend([base + rel[seat] * W + w for seat, w in latest.items()])
        base = at["legal"]
        ones.extend([base + d for d in legal_dense])
        out = self._array(ones, scalars)
        if self.family == "tippen":
            self._tippen(view, out, rel, exchanged)
        else:
            self._tapp(view, out, rel)
        return out

    def _tippen(self, view: dict[str, Any], out: np.ndarray, rel: Sequence[int], exchanged: dict[int, int]) -> None:
        at = self.at
        ci = self.card_index
        up = view.get("upcard") or view.get("trump_card")
        if up:
            out[at["upcard"] + ci[up]] = 1.0
        for seat in view.get("active") or ():
            out[at["active"] + rel[seat]] = 1.0
        for seat, k in exchanged.items():
            out[at["exchanged"] + rel[seat]] = k / self.tricks
        for c in view.get("folded") or ():
            out[at["folded"] + ci[c]] = 1.0
        stakes = at["stakes"]
        out[stakes] = (view.get("pot_in_play") or 0) / self.unit
        out[stakes + 1] = (view.get("bete") or 0) / self.unit
        out[stakes + 2] = (view.get("trick_value") or 0) / self.unit
        flags = at["flags"]
        out[flags] = bool(view.get("compulsory"))
        out[flags + 1] = bool(view.get("robbed"))
        taken = view.get("taken_by_dealer")
        out[flags + 2] = taken == "sniff"
        out[flags + 3] = taken == "knock"

    def _tapp(self, view: dict[str, Any], out: np.ndarray, rel: Sequence[int]) -> None:
        at = self.at
        ci = self.card_index
        declarer = view.get("declarer")
        if declarer is not None:
            out[at["declarer"] + rel[declarer]] = 1.0
        contract = view.get("contract")
        if contract:
            out[at["contract"] + self._contract_slot(contract)] = 1.0
        if view.get("tout"):
            out[at["contract"] + len(self.contracts)] = 1.0
        called = view.get("called")
        if called:
            out[at["called"] + ci[called]] = 1.0
        given = view.get("given")
        if given:
            out[at["given"] + ci[given]] = 1.0
        for block in ("open_hand", "tapp", "discards"):
            for c in view.get(block) or ():
                out[at[block] + ci[c]] = 1.0
        holder = view.get("rufer_holder")
        if holder is not None:
            out[at["rufer_holder"] + (self.n if holder == "tapp" else rel[holder])] = 1.0
