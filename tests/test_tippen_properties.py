"""Hypothesis properties of the Tippen engine over all 7 rule sets with random valid options."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stammtisch.games import tippen as T
from stammtisch.games import IllegalAction, TableState, new_game
from stammtisch.ledger import Ledger
from stammtisch.rules import RuleError, ruleset
from stammtisch.rules.tippen import TIPPEN_PRESETS

RULESETS = sorted(TIPPEN_PRESETS)

BOOL_OPTS = ["schieben", "robbing", "knocking", "head_trick", "forced_leads", "tipp_zwang", "exchange"]


@st.composite
def tippen_rules(draw):
    rid = draw(st.sampled_from(RULESETS))
    record = TIPPEN_PRESETS[rid]
    lo, hi32 = record.min_players, record.max_players
    preset = record.defaults
    opts = {"players": draw(st.integers(lo, hi32))}
    for key in BOOL_OPTS:
        if draw(st.integers(0, 3)) == 0:
            opts[key] = not preset[key]
    for key, choices in [("sniffing", ["none", "1859", "modern"]),
                         ("hupf_und_sprung", ["none", "single", "double"]),
                         ("lone_tapper", ["takes-pot", "dealer-defends"]),
                         ("void_must_trump", ["always", "untrumped", "never"]),
                         ("bete", ["pot", "stake-or-pot", "stake"]),
                         ("trump_card", ["dealer-last", "turn", "katira"])]:
        if draw(st.integers(0, 3)) == 0:
            opts[key] = draw(st.sampled_from(choices))
    if draw(st.booleans()):
        opts["max_bete"] = preset["tricks"] * draw(st.integers(1, 4))
    # Drop options until the combination is playable (e.g. robbing needs an upcard).
    for key in ["robbing", "knocking", "sniffing", "exchange", "players"]:
        try:
            return ruleset(rid, opts)
        except RuleError:
            opts.pop(key, None)
    return ruleset(rid, opts)


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


def card_tokens(obj, out):
    if isinstance(obj, str):
        body = obj.split(":", 1)[-1]
        for part in body.split(","):
            if len(part) == 2:
                out.add(part)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if k != "ruleset":
                card_tokens(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            card_tokens(v, out)


def exposed_cards(s):
    """Cards that were shown face up at some time (the test's own account of the rules)."""
    g = s.game
    names = g.pack.cards
    out = {names[c] for c in range(g.size) if s.played >> c & 1}
    if s.trump_card >= 0:
        shown = (g.rules.trump_card == "dealer-last" or s.taken == T.TAKE_SNIFF1859
                 or (s.taken == T.TAKE_NONE and s.up_state != T.UP_HIDDEN))
        if shown:
            out.add(names[s.trump_card])
    if s.up_state == T.UP_FACE:
        out.add(names[s.upcard])
    if s.jump_cards:
        out.update(names[c] for c in s.jump_cards)
    return out


def check_no_leak(s):
    g = s.game
    names = g.pack.cards
    exposed = exposed_cards(s)
    for seat in [None, *range(g.num_players)]:
        v = s.view(seat)
        json.dumps(v)
        seen = set()
        card_tokens(v, seen)
        seen &= set(names)
        mine = set(v["hand"])
        if seat is not None:  # what he folded on passing he knows; it was his hand
            assert set(v["folded"]) == {names[c] for c in range(g.size) if s.folded[seat] >> c & 1}
            mine |= set(v["folded"])
        else:
            assert v["folded"] == []
        for actor, a in s.log:
            if actor == seat:
                card_tokens(g.action_to_string(a), mine)
        if seat is not None and seat == s.dealer and s.taken != T.TAKE_NONE:
            mine.add(names[s.trump_card])             # the card he took himself
        leaked = seen - mine - exposed
        assert not leaked, (seat, leaked, v)
        if seat is not None and s.cur != seat:
            assert v["legal_actions"] == []


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
        check_no_leak(s)
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
    check_no_leak(s)
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
