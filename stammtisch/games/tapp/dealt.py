"""The deck a Tapp deal was dealt from, rebuilt from where its cards lie now.

A Tapp state keeps no deck (a sampled world has none to keep): the hands with their played
cards, the tapp, the declarer's pick-up and discards and the Rufer card given tell where each
card was dealt, and ``Game.deal_plan`` in what order. Dealing the returned deck and replaying
the state's log gives the state again (the inference replays sampled worlds this way; the
sampler's tests check it).
"""

from __future__ import annotations

from ...cards import cards_in
from ..sampling import plays_by
from .phases import Phase
from .state import TappState


def dealt_deck(state: TappState) -> list[int]:
    """A deck (top first) from which the engine deals ``state``'s deal."""
    g = state.game
    n, d = state.n, state.declarer
    have = [state.hands[x] | plays_by(state.log, g.N, x) for x in range(n)]
    tapp = state.tapp
    if state.picked:
        have[d] = (have[d] | (state.tapp if state.phase != Phase.DISCARD else 0)) & ~state.picked
        tapp = state.picked
    if state.called >= 0 and not (state.called_in_tapp and g.rules.rufer_in_tapp == "none"):
        called = 1 << state.called
        gift = 1 << state.given if state.given >= 0 else 0
        have[d] = (have[d] | gift) & ~called  # the called card may be the one given back
        if state.called_in_tapp:
            tapp = (tapp & ~gift) | called
        else:
            have[state.holder] = (have[state.holder] & ~gift) | called
    parts = [cards_in(have[(state.fh + r) % n]) for r in range(n)] + [cards_in(tapp)]
    return [parts[receiver].pop() for receiver in g.deal_plan]
