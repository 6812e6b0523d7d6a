"""Hypothesis properties of the Tippen engine over all 7 rule sets with random valid options."""

from __future__ import annotations

import random

from conftest import random_rules
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stammtisch.games import IllegalAction, TableState, new_game
from stammtisch.games import tippen as T
from stammtisch.ledger import Ledger
from stammtisch.rules.tippen import TIPPEN_PRESETS

RULESETS = sorted(TIPPEN_PRESETS)


@st.composite
def tippen_rules(draw):
    """A Tippen rule set of any preset with random valid values for any of its options
    (``random_rules`` in conftest.py: every option, numbers over their whole range; from a
    seed, since its draws that the preset refuses make a poor input for shrinking)."""
    return random_rules(draw(st.sampled_from(RULESETS)), random.Random(draw(st.integers(0, 2**64))))


def snapshot(s):
    return tuple(tuple(v) if isinstance(v, list) else v
                 for v in (getattr(s, name) for name in T.TippenState.__slots__))


def views(s):
    return [s.view(None)] + [s.view(p) for p in range(s.game.num_players)]


def check_cards(s):
    sets = s.card_sets()
    total = 0
    union = 0
    for m in sets.values():
        total += m.bit_count()
        union |= m
    assert union == s.game.pack.full_mask and total == s.game.pack.size, sets


def random_deal(rules, seed):
    rng = random.Random(seed)
    g = new_game(rules)
    deck = list(range(g.size))
    rng.shuffle(deck)
    stake = rules.stake
    pot = rng.choice([0, 0, stake, 2 * stake, 3 * stake, rng.randrange(0, 40)])
    reserve = rng.choice([0, 0, stake * rng.randrange(0, 5)])
    table = TableState(dealer=rng.randrange(rules.players), pot=pot, reserve=reserve)
    return g, g.new_deal(table, deck), rng


def settle_check(s):
    n = s.game.num_players
    ledger = Ledger(n)
    carried = s.table.pot + s.table.reserve
    ledger.balances[0] -= carried
    ledger.balances["pot"] += s.table.pot
    ledger.balances["reserve"] += s.table.reserve
    ledger.apply_all(s.result().transfers)
    assert ledger.is_balanced()
    assert ledger.pot == s.pot >= 0 and ledger.reserve == s.reserve >= 0
    assert s.returns() == [b + (carried if p == 0 else 0) for p, b in enumerate(ledger.player_balances())]
    res = s.result()
    assert 0 <= res.next_dealer < n
    if res.summary["outcome"] == "played":
        assert sum(res.summary["tricks"].values()) == s.game.rules.tricks
        assert res.next_dealer == (res.dealer + 1) % n
    if s.game.rules.max_bete is not None and res.summary["outcome"] != "jump":
        assert s.pot_in_play <= s.game.rules.max_bete + s.game.rules.stake * (s.anted.count(True))


MALFORMED = ["", "play", "play:", "play:XX", "tap tap", "exchange:HA,HA", "discard:", "bid:frage",
             "play:H1", "exchange:HA;HK", "PLAY:ZZ"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tippen_rules(), st.integers(0, 2**32))
def test_random_deal_invariants(rules, seed):
    g, s, rng = random_deal(rules, seed)
    steps = 0
    while not s.is_terminal():
        steps += 1
        assert steps < 300, "deal does not terminate"
        check_cards(s)
        assert s.pot >= 0 and s.reserve >= 0
        legal = s.legal_actions()
        assert legal == sorted(legal) and legal and len(set(legal)) == len(legal)
        assert s.current_player() >= 0
        # every legal action applies (on a clone), and round-trips through its string
        for a in legal:
            text = s.action_to_string(a)
            assert s.string_to_action(text) == a
            c = s.clone()
            c.apply(a)
        # non-legal ids and malformed strings are refused with the state unchanged
        before_snap = snapshot(s)
        before_views = views(s) if steps % 3 == 1 else None
        ids = set(range(-2, g.EXCHANGE_BASE + 2))
        ids.update(g.EXCHANGE_BASE + rng.getrandbits(g.size) for _ in range(8))
        ids.update(g.EXCHANGE_BASE + (1 << rng.randrange(g.size)) for _ in range(4))
        ids.add(g.EXCHANGE_BASE + (1 << g.size))
        for a in ids - set(legal):
            try:
                s.apply(a)
            except IllegalAction as e:
                assert e.rule and e.message
            else:
                raise AssertionError(f"illegal action {a} was applied")
            assert snapshot(s) == before_snap
        for text in MALFORMED:
            try:
                a = s.string_to_action(text)
            except IllegalAction as e:
                assert e.rule == "notation"
            else:
                raise AssertionError(f"{text!r} parsed as {a}")
        if before_views is not None:
            assert views(s) == before_views
        # clone independence
        if rng.random() < 0.3:
            c = s.clone()
            snap = snapshot(s)
            while not c.is_terminal():
                c.apply(rng.choice(c.legal_actions()))
            assert snapshot(s) == snap
        s.apply(rng.choice(legal))
    check_cards(s)
    assert s.legal_actions() == [] and s.current_player() == -1
    settle_check(s)


@settings(max_examples=300, deadline=None)
@given(tippen_rules(), st.integers(0, 2**32))
def test_random_deals_terminate_and_balance(rules, seed):
    g, s, rng = random_deal(rules, seed)
    for _ in range(300):
        if s.is_terminal():
            break
        s.apply(rng.choice(s.legal_actions()))
    assert s.is_terminal()
    settle_check(s)
    check_cards(s)
    v = s.view(None)
    assert v["terminal"] and v["net"] == s.returns()


@settings(max_examples=60, deadline=None)
@given(tippen_rules(), st.integers(0, 2**32))
def test_replay_from_log_reproduces_the_deal(rules, seed):
    g, s, rng = random_deal(rules, seed)
    while not s.is_terminal():
        s.apply(rng.choice(s.legal_actions()))
    r = g.new_deal(s.table, list(s.deck))
    for _, a in s.log:
        r.apply(r.string_to_action(s.action_to_string(a)))
    assert r.result() == s.result() and r.view(None) == s.view(None)
