"""Random deals checked action for action, for comparing two ways to the same rules.

The engines run compiled by mypyc or as these Python sources (``stammtisch/_native.py``), and
the play's hot path reads tables (per-suit card lists, ``beaters`` from ``tricks.beats``)
instead of calling ``tricks.legal_follows``: second ways to the same rules. ``play_checked``
plays random deals and returns a digest of every legal-action list and of the state after
every action (``fingerprint()``: ints, hashed as they come; Python's hash of a tuple of ints is
the same in every process) and result: two builds that give equal digests for the same seed
agreed at every step. With ``reference`` it also checks every follower's legal cards
against ``tricks.legal_follows`` and every trick's winner against ``tricks.trick_winner_index``.
Here, in the engines' package, so that it runs at the build's own speed
(``bench/engine_agreement.py``, ``tests/test_builds.py``).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from .base import TableState
from .engine import EngineGame
from .tapp.phases import PLAY as TAPP_PLAY
from .tippen.phases import PLAY as TIPPEN_PLAY
from .tricks import legal_follows, trick_winner_index


class Checked:
    """What ``play_checked`` found: the digest, and the reference checks made and failed."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.follows = 0
        self.tricks = 0
        self.mismatches = 0


def _reference(game: EngineGame, obs: Any, tippen: bool, found: Checked, legal: list[int]) -> None:
    """A follower's legal cards by ``tricks.legal_follows`` (the trick's winner so far by
    ``trick_winner_index``), against the engine's."""
    pack = game.pack
    rps = pack.ranks_per_suit
    cards = [c for _, c in obs.trick]
    trump = pack.suit_masks[obs.trump] if obs.trump >= 0 else 0
    win = cards[trick_winner_index(cards, rps, trump)]
    led = pack.suit_masks[cards[0] // rps]
    rules: Any = game.rules
    must, head = (rules.void_must_trump, rules.head_trick) if tippen else ("always", False)
    expected = legal_follows(obs.hand, led, trump, win, pack.suit_masks[win // rps], must, head)
    got = 0
    for c in legal:
        got |= 1 << c
    found.follows += 1
    found.mismatches += expected != got


def play_checked(game: EngineGame, table: TableState, deals: int, rng: random.Random, found: Checked,
                 reference: bool = True) -> TableState:
    """Play ``deals`` random deals at one table from ``table`` (the pot carried), feeding
    ``found``; returns the table state after them."""
    tippen = game.family == "tippen"
    play = TIPPEN_PLAY if tippen else TAPP_PLAY
    pack = game.pack
    rps = pack.ranks_per_suit
    for _ in range(deals):
        deck = list(range(pack.size))
        rng.shuffle(deck)
        state = game.new_deal(table, deck)
        running = 0
        fingerprint = state.fingerprint()
        while not state.is_terminal():
            legal: list[int] = state.legal_actions()
            action = legal[rng.randrange(len(legal))]
            checking = reference and fingerprint[0] == play
            obs = state.observation(state.current_player()) if checking else None
            if obs is not None and obs.trick:
                _reference(game, obs, tippen, found, legal)
            state.apply(action)
            fingerprint = state.fingerprint()
            running = hash((running, tuple(legal), fingerprint))
            if obs is not None:
                after = state.observation(None)
                if not after.trick:  # the card ended a trick
                    cards = [c for _, c in after.last_trick]
                    trump = pack.suit_masks[obs.trump] if obs.trump >= 0 else 0
                    found.tricks += 1
                    winner = after.last_trick[trick_winner_index(cards, rps, trump)][0]
                    found.mismatches += winner != after.last_winner
        result = state.result()
        found.digest.update(repr((running, [t.to_json() for t in result.transfers], result.next_dealer,
                                  result.dealer, sorted(result.summary.items(), key=str),
                                  state.returns())).encode())
        pot, reserve = table.pot, table.reserve
        for t in result.transfers:
            pot += (t.target == "pot") * t.amount - (t.source == "pot") * t.amount
            reserve += (t.target == "reserve") * t.amount - (t.source == "reserve") * t.amount
        table = TableState(result.next_dealer, pot, reserve)
    return table
