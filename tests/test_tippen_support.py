"""Helpers for the Tippen tests (imported by the other test_tippen_* modules), and their tests.

``make_deck`` builds a concrete deck that deals the given hands under a rule set's deal
pattern, so a worked example can be written as "these hands, these plays".
"""

from __future__ import annotations

from stammtisch.games import POT, RESERVE, TableState, new_game
from stammtisch.ledger import Ledger
from stammtisch.rules import ruleset


def game(rid: str, players: int = 4, **opts):
    return new_game(ruleset(rid, {"players": players, **opts}))


def make_deck(g, dealer: int, hands: dict | None = None, upcard: str | None = None, talon: str = "",
              bottom: str | None = None) -> list[int]:
    """A deck (card indices, top first) that deals ``hands`` ({seat: "HA HK HQ"} in the
    order each seat receives them) with ``dealer`` dealing. Missing cards are filled from the
    pack. ``talon``: the first talon cards (exchange order). ``bottom``: the deck's last card
    (Hupf und Sprung); by default a card that is neither an Ace nor a Seven."""
    pack = g.pack
    n = g.num_players
    t = g.rules.tricks
    mode = g.rules.trump_card
    hands = hands or {}
    spec = {s: (h.split() if isinstance(h, str) else list(h)) for s, h in hands.items()}
    used = [c for h in spec.values() for c in h] + talon.split()
    if upcard:
        used.append(upcard)
    if bottom:
        used.append(bottom)
    assert len(used) == len(set(used)), f"a card is used twice: {used}"
    pool = [c for c in pack.cards if c not in used]
    if bottom is None:
        plain = [c for c in pool if c[1] not in "A7"]
        bottom = plain[-1]
        pool.remove(bottom)
    full = {}
    for s in range(n):
        h = list(spec.get(s, []))
        while len(h) < t:
            h.append(pool.pop(0))
        assert len(h) == t, f"seat {s} gets {len(h)} cards, not {t}"
        full[s] = h
    order = []
    before = t - 1 if mode == "katira" else t
    for k in range(before):
        for j in range(1, n + 1):
            order.append(full[(dealer + j) % n][k])
    if mode != "dealer-last":
        order.append(upcard or pool.pop(0))
    else:
        assert upcard is None
    if mode == "katira":
        for j in range(1, n + 1):
            order.append(full[(dealer + j) % n][t - 1])
    order += talon.split()
    order += pool
    order.append(bottom)
    assert len(order) == pack.size
    return g.deck_from_strings(order)


def deal(g, dealer: int = 0, pot: int = 0, reserve: int = 0, **deck_kw):
    deck = make_deck(g, dealer, **deck_kw)
    return g.new_deal(TableState(dealer=dealer, pot=pot, reserve=reserve), deck)


def run(state, actions):
    """Apply action strings (space separated or a list), asserting each is legal."""
    if isinstance(actions, str):
        actions = actions.split()
    for a in actions:
        legal = [state.action_to_string(x) for x in state.legal_actions()]
        action = state.string_to_action(a)
        assert state.action_to_string(action) in legal, f"{a} not legal at {state.view(None)['phase']}: {legal}"
        state.apply(action)
    return state


def balances(state, players=None, carried_pot=None, carried_reserve=None):
    """Apply the deal's transfers to a fresh ledger holding the carried pot/reserve."""
    n = state.game.num_players
    ledger = Ledger(n)
    pot = state.table.pot if carried_pot is None else carried_pot
    res = state.table.reserve if carried_reserve is None else carried_reserve
    # The carried pot was paid in by players earlier; book it against seat 0 and undo below.
    ledger.balances[0] -= pot + res
    ledger.balances[POT] += pot
    ledger.balances[RESERVE] += res
    ledger.apply_all(state.result().transfers)
    ledger.balances[0] += pot + res
    out = ledger.player_balances()
    return out, ledger.pot, ledger.reserve


def transfers(state):
    return [(t.source, t.target, t.amount) for t in state.result().transfers]


# -- tests of the helpers themselves ------------------------------------------------------------

def test_make_deck_deals_the_hands_given():
    g = game("tippen/meyers-1905")
    s = deal(g, dealer=2, hands={3: "HA HK HQ", 0: "SA SK SQ"}, upcard="D7")
    assert s.view(3)["hand"] == ["HQ", "HK", "HA"]
    assert s.view(0)["hand"] == ["SQ", "SK", "SA"]
    assert s.view(None)["upcard"] == "D7"


def test_make_deck_katira_pattern():
    g = game("tippen/katira-1983")
    deck = make_deck(g, 0, {1: "HA HK HQ"}, upcard="D7")
    names = [g.pack.cards[c] for c in deck]
    # forehand gets cards 1 and 5, the upcard is the 9th card, forehand's third is the 10th.
    assert names[0] == "HA" and names[4] == "HK" and names[8] == "D7" and names[9] == "HQ"
