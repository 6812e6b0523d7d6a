"""Hypothesis properties of the Tapp engine across all three rule sets and their options:
cards conserved, 120 card points with the tapp counted once, transfers balance, every legal
action applies and every other one is refused with the state unchanged, clones are
independent, deals terminate. (Secrets: tests/test_conformance.py, through known_mask.)"""

import copy
import importlib.util
import random
from pathlib import Path

from conftest import random_rules
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stammtisch.games import POT, IllegalAction, TableState, new_game
from stammtisch.games.tapp import TappState
from stammtisch.rules import PRESETS

TAPP_RULESETS = sorted(rid for rid in PRESETS if rid.startswith("tapp/"))
_spec = importlib.util.spec_from_file_location(
    "slot_copies", Path(__file__).resolve().parents[1] / "scripts" / "slot_copies.py")
assert _spec is not None and _spec.loader is not None
slot_copies = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(slot_copies)
#: the slots of a deal as the source declares them: a class compiled by mypyc keeps no
#: ``__slots__``, and a check over ``TappState.__slots__`` would check nothing in that build
SLOTS = slot_copies.declared_slots()


@st.composite
def tapp_games(draw, rulesets=tuple(TAPP_RULESETS)):
    """A Tapp game of any of ``rulesets`` with random valid values for any of its options
    (``random_rules`` in conftest.py: every option, numbers over their whole range)."""
    return new_game(random_rules(draw(st.sampled_from(rulesets)), random.Random(draw(st.integers(0, 2**64)))))


def snapshot(s: TappState):
    return tuple(copy.copy(getattr(s, k)) for k in SLOTS
                 if k not in ("game", "table", "_result"))


def card_mask_played(s):
    m = 0
    for _, a in s.log:
        if a < s.game.N:
            m |= 1 << a
    return m


def check_conservation(s):
    g = s.game
    parts = list(s.hands) + [s.tapp, card_mask_played(s)]
    assert sum(p.bit_count() for p in parts) == g.N
    acc = 0
    for p in parts:
        acc |= p
    assert acc == g.full


@st.composite
def deals(draw):
    g = draw(tapp_games())
    deck = draw(st.permutations(range(g.N)))
    dealer = draw(st.integers(0, g.num_players - 1))
    pot = draw(st.integers(0, 20)) if g.rules.pot else 0
    return g, deck, dealer, pot


def check_ramsch(s):
    """Everybody plays every trick, the last trick takes the tapp, and whoever has the most card
    points pays each other seat 5, or 10 to a seat that took no trick (Jungfer)."""
    g, summ, rets = s.game, s.result().summary, s.returns()
    assert summ["contract"] == "ramsch" and summ["declarer"] is None
    assert sum(summ["tricks"].values()) == g.hand_size
    points = [summ["card_points"][str(seat)] for seat in range(g.num_players)]
    assert sum(points) == 120
    top = max(points)
    expected = [0] * g.num_players
    for payer in (p for p in range(g.num_players) if points[p] == top):
        for payee in (p for p in range(g.num_players) if points[p] != top):
            owed = 10 if summ["tricks"][str(payee)] == 0 else 5
            expected[payer] -= owed
            expected[payee] += owed
    assert rets == expected
    assert all(POT not in (t.source, t.target) for t in s.result().transfers)


SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(deals(), st.data())
def test_random_deals_invariants(deal, data):
    g, deck, dealer, pot = deal
    s = g.new_deal(TableState(dealer=dealer, pot=pot), deck)
    steps = 0
    while not s.is_terminal():
        steps += 1
        assert steps < 200, "a deal must terminate"
        check_conservation(s)
        legal = s.legal_actions()
        assert legal and legal == sorted(set(legal))
        for a in legal:
            assert s.string_to_action(s.action_to_string(a)) == a
        # a sample of illegal ids is refused, state unchanged
        before = snapshot(s)
        legal_set = set(legal)
        sample = data.draw(st.lists(st.integers(0, g.A_DISCARD + g.full), max_size=6))
        for a in sample + list(range(0, g.A_DISCARD, 7)):
            if a not in legal_set:
                try:
                    s.apply(a)
                except IllegalAction:
                    pass
                else:
                    raise AssertionError(f"illegal {a} accepted")
                assert snapshot(s) == before
        # views: own hand exact (what a seat may know at all: tests/test_conformance.py)
        for seat in range(g.num_players):
            v = s.view(seat)
            assert v["hand"] == [g.pack.cards[c] for c in g.mask_list(s.hands[seat])]
            assert v["legal_actions"] == ([s.action_to_string(a) for a in legal]
                                          if seat == s.current_player() else [])
            if v["phase"] == "give" and seat not in (s.declarer, s.holder):
                # hand sizes must not name the Rufer holder before the give
                assert v["hand_sizes"] == [g.hand_size] * g.num_players, v["hand_sizes"]
        # clone independence
        a = data.draw(st.sampled_from(legal))
        c = s.clone()
        c.apply(a)
        assert snapshot(s) == before
        s.apply(a)
        assert snapshot(c) == snapshot(s)
    # terminal
    assert s.current_player() == -1 and s.legal_actions() == []
    check_conservation(s)
    r = s.result()
    rets = s.returns()
    pot_in = sum(t.amount for t in r.transfers if t.target == POT)
    pot_out = sum(t.amount for t in r.transfers if t.source == POT)
    assert sum(rets) + pot_in - pot_out == 0
    assert all(t.amount > 0 for t in r.transfers)
    assert pot_out <= pot + pot_in
    assert r.next_dealer == (dealer + 1) % g.num_players
    summ = r.summary
    if summ["outcome"] == "all-pass":
        assert summ["declarer"] is None and sum(rets) == -pot_in
        return
    tricks = sum(summ["tricks"].values())
    cp = summ["card_points"]
    played_pts = sum(g.points[c] for c in g.mask_list(card_mask_played(s)))
    tapp_pts = sum(g.points[c] for c in g.mask_list(s.tapp))
    if tricks == g.hand_size:
        assert sum(cp.values()) == 120 == played_pts + tapp_pts
    if summ["contract"] == "ramsch":
        check_ramsch(s)
    else:
        d = summ["declarer"]
        assert cp["declarer"] == s.points[d] + tapp_pts  # the tapp exactly once, for him
        assert cp["declarer"] + cp["defenders"] == played_pts + tapp_pts
        won = summ["won"]
        if won is None:
            assert rets[d] == 0 or g.rules.pot
        elif won:
            assert rets[d] > 0 or (g.rules.pot and d == dealer)
        else:
            assert rets[d] < 0
        if g.rules.settlement == "modern":
            assert rets[d] * (1 if won else -1) == (g.num_players - 1) * abs(rets[(d + 1) % g.num_players])
    # terminal refuses everything
    try:
        s.apply(0)
    except IllegalAction as e:
        assert e.rule == "deal is over"
    else:
        raise AssertionError("terminal state accepted an action")


@SETTINGS
@given(tapp_games(rulesets=("tapp/modern",)), st.randoms(use_true_random=False))
def test_a_ramsch_is_settled_by_card_points(g, rnd):
    """Nobody plays (everybody says weg): a Ramsch, played out at random, then settled."""
    deck = list(range(g.N))
    rnd.shuffle(deck)
    s = g.new_deal(TableState(dealer=rnd.randrange(g.num_players)), deck)
    for _ in range(g.num_players):
        s.apply(s.string_to_action("weg"))
    while not s.is_terminal():
        s.apply(rnd.choice(s.legal_actions()))
    check_ramsch(s)


@settings(max_examples=40, deadline=None)
@given(tapp_games(), st.randoms(use_true_random=False))
def test_deterministic_replay(g, rnd):
    """A deal is a pure function of (rules, table, deck, actions)."""
    deck = list(range(g.N))
    rnd.shuffle(deck)
    s = g.new_deal(TableState(dealer=1), deck)
    actions = []
    while not s.is_terminal():
        a = rnd.choice(s.legal_actions())
        actions.append(s.action_to_string(a))
        s.apply(a)
    t = g.new_deal(TableState(dealer=1), deck)
    for text in actions:
        t.apply(t.string_to_action(text))
    assert t.returns() == s.returns()
    assert t.result().summary == s.result().summary
    assert [x.to_json() for x in t.result().transfers] == [x.to_json() for x in s.result().transfers]


#: what a clone shares with its original on purpose: the game's fixed tables and options, the
#: table state the deal began from (frozen), and the result once the deal is over (read only)
SHARED = ("game", "table", "_result")


def mutable_parts(value, found=None):
    """The ids of every list, dict and set in ``value`` and the tuples, lists and dicts in it."""
    found = [] if found is None else found
    if isinstance(value, (list, dict, set)):
        found.append(id(value))
    if isinstance(value, (list, tuple, set)):
        for item in value:
            mutable_parts(item, found)
    elif isinstance(value, dict):
        for item in value.items():
            mutable_parts(item, found)
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deals(), st.randoms(use_true_random=False))
def test_a_clone_equals_its_original_in_every_slot_and_shares_no_mutable_field(deal, rnd):
    """Every slot of ``__slots__`` comes out equal in a clone of the same class, and
    no list the engine changes is shared, at every step of random deals."""
    g, deck, dealer, pot = deal
    s = g.new_deal(TableState(dealer=dealer, pot=pot), deck)
    while True:
        c = s.clone()
        assert type(c) is type(s)
        for name in SLOTS:
            assert getattr(c, name) == getattr(s, name), name
            if name not in SHARED:
                assert not set(mutable_parts(getattr(c, name))) & set(mutable_parts(getattr(s, name))), name
        assert not {id(getattr(c, name)) for name in SHARED} - {id(getattr(s, name)) for name in SHARED}
        if s.is_terminal():
            break
        s.apply(rnd.choice(s.legal_actions()))
    s.result()  # made once the deal is over: a clone then carries the same
    assert s.clone()._result is s._result


def test_the_clone_copies_every_slot_as_scripts_slot_copies_writes_it():
    """``clone``'s copies are the lines scripts/slot_copies.py makes from ``__slots__``: a copy
    left out (a slot added without running the script) fails here."""
    source = slot_copies.SOURCE.read_text(encoding="utf-8")
    assert slot_copies.written(source) == source, \
        "TappState.clone is out of date with __slots__: run python scripts/slot_copies.py"
    assert "        c.hands = self.hands[:]\n" in source and "        c.tout = self.tout\n" in source
    assert slot_copies.written(source.replace("        c.tout = self.tout\n", "", 1)) == source
