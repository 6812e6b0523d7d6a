"""The Tippen edge cases of docs/rules-reference.md §6, plus refusals naming their rule."""

from __future__ import annotations

import random

import pytest
from test_tippen_support import balances, deal, game, make_deck, run, transfers

from stammtisch.games.base import POT, IllegalAction, TableState
from stammtisch.rules import RuleError, ruleset
from stammtisch.table import first_dealer_by_ace


def first_keys(summary: dict) -> dict:
    """The summary's original keys (the explanation keys are tested in test_explain.py)."""
    return {k: summary[k] for k in ("tricks", "active", "outcome")}

A, B, C, D, E = range(5)


def legal(s):
    return [s.action_to_string(a) for a in s.legal_actions()]


def play_lowest(s):
    while not s.is_terminal():
        s.apply(s.legal_actions()[0])
    return s


# -- 1821 / Loup ----------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_1821_dealers_last_card_fixes_trump_and_stays_in_his_hand(n):
    g = game("tippen/drei-karten-1821", players=n)
    s = deal(g, dealer=1, hands={1: "C7 C8 DK"})
    for seat in [None, *range(n)]:
        v = s.view(seat)
        assert v["trump"] == "D" and v["trump_card"] == "DK" and v["upcard"] is None
    assert s.view(1)["hand"] == ["DK", "C7", "C8"]
    deck = [g.pack.cards[c] for c in s.deck]
    assert deck[3 * n - 1] == "DK"                   # the last card dealt
    assert s.view(None)["talon_size"] == 32 - 3 * n


def test_1821_first_hand_compulsory_carried_bete_allows_passing():
    g = game("tippen/drei-karten-1821")
    s = deal(g, dealer=A)
    assert s.view(B)["phase"] == "play" and s.view(B)["compulsory"] is True
    with pytest.raises(IllegalAction) as e:
        s.apply(s.string_to_action("pass"))
    assert e.value.rule == "compulsory hand: passing not allowed"
    s2 = deal(g, dealer=A, pot=3)
    assert legal(s2) == ["tap", "pass"] and s2.view(None)["trick_value"] == 2


def test_loup_limits_and_stake():
    with pytest.raises(RuleError):
        ruleset("tippen/loup-1821", {"players": 6})
    g = game("tippen/loup-1821", players=5)
    s = deal(g, dealer=A)
    v = s.view(B)
    assert len(v["hand"]) == 6 and v["pot"] == 6 and v["trick_value"] == 1
    assert transfers(play_lowest(s))[0] == (A, POT, 6)
    assert sum(s.tricks_won) == 6


@pytest.mark.parametrize("rid,players,limit", [
    ("tippen/loup-1821", 6, "3–5"), ("tippen/drei-karten-1821", 7, "3–6"),
    ("tippen/vierblatt-1859", 7, "3–6"), ("tippen/grupp-1975", 6, "3–5"),
    ("tippen/katira-1983", 6, "3–5"),
])
def test_player_limit_message_names_the_rule_sets_own_pack(rid, players, limit):
    """rules reference §2.2 players / §4: a rule set with no 52-card extension is refused for too
    many players without pretending the user chose the whist52 pack."""
    with pytest.raises(RuleError) as e:
        ruleset(rid, {"players": players})
    assert str(e.value) == f"{rid} is for {limit} players, not {players}"
    with pytest.raises(RuleError) as e:
        ruleset("tippen/dreiblatt-1859", {"players": 11})
    assert str(e.value) == "tippen/dreiblatt-1859 is for 3–10 players with whist52, not 11"


# -- 1859 ------------------------------------------------------------------------------------------

def test_first_dealer_is_first_player_dealt_an_ace():
    g = game("tippen/dreiblatt-1859")
    deck = g.deck_from_strings(["H7", "S8", "C9", "D7", "HT", "CA"] +
                               [c for c in g.pack.cards if c not in ("H7", "S8", "C9", "D7", "HT", "CA")])
    names = [g.pack.cards[c] for c in deck]
    assert first_dealer_by_ace(names, 4) == 1               # 6th card → seat 5 % 4


def test_1859_three_players_one_trick_each_leaves_no_bete():
    g = game("tippen/dreiblatt-1859", players=3)
    s = deal(g, dealer=A, upcard="D7", hands={B: "SA HK C7", C: "S8 HA C8", A: "S9 H7 CA"})
    run(s, "play:SA play:S8 play:S9 play:HK play:HA play:H7 play:C8 play:CA play:C7")
    assert s.tricks_won == [1, 1, 1]
    players, pot, _ = balances(s)
    assert players == [-2, 1, 1] and pot == 0
    assert g.new_deal(TableState(dealer=B, pot=0), make_deck(g, B)).view(None)["compulsory"]


def test_1859_four_players_compulsory_always_makes_a_bete():
    g = game("tippen/dreiblatt-1859")
    rng = random.Random(3)
    for i in range(100):
        deck = list(range(32))
        rng.shuffle(deck)
        s = g.new_deal(TableState(dealer=i % 4), deck)
        while not s.is_terminal():
            s.apply(rng.choice(s.legal_actions()))
        assert any(t.reason == "bête" for t in s.transfers)
        assert s.pot >= 3


def test_1859_all_pass_carries_the_pot():
    g = game("tippen/dreiblatt-1859")
    s = deal(g, dealer=A, pot=6)
    run(s, "pass pass pass pass")
    res = s.result()
    assert first_keys(res.summary) == {"tricks": {}, "active": [], "outcome": "all-pass"}
    assert transfers(s) == [(A, POT, 3)] and res.next_dealer == B and s.pot == 9


@pytest.mark.parametrize("rid", ["tippen/dreiblatt-1859", "tippen/grupp-1975"])
def test_lone_tapper_is_the_dealer(rid):
    g = game(rid)
    s = deal(g, dealer=A, pot=6)
    run(s, "pass pass pass tap")
    assert transfers(s) == [(A, POT, 3), (POT, A, 9)]
    assert s.result().summary["outcome"] == "lone-tapper" and s.returns() == [6, 0, 0, 0]


def test_lone_tapper_dealer_defends():
    g = game("tippen/meyers-1905", lone_tapper="dealer-defends")
    s = deal(g, dealer=A, pot=6, upcard="D7", hands={B: "HA HK SA", A: "H7 S7 C7"})
    run(s, "tap pass pass pass")
    v = s.view(A)
    assert v["active"] == [A, B] and v["phase"] == "play" and v["hand"] == ["H7", "C7", "S7"]
    run(s, "play:HA play:H7 play:HK play:C7 play:SA play:S7")
    assert transfers(s) == [(A, POT, 3), (POT, B, 3), (POT, B, 3), (POT, B, 3), (A, POT, 9)]
    # the dealer as lone tapper still takes the pot
    s2 = deal(g, dealer=A, pot=6)
    run(s2, "pass pass pass tap")
    assert s2.result().summary["outcome"] == "lone-tapper" and s2.returns()[A] == 6


def test_1859_forced_trump_lead_only_with_three_active_and_a_trump_in_hand():
    g = game("tippen/dreiblatt-1859")
    s = deal(g, dealer=A, pot=6, upcard="D7", hands={B: "HA D8 SA", C: "HK SK CK"})
    s3 = run(s.clone(), "tap tap tap pass")
    assert legal(s3) == ["play:D8"]
    with pytest.raises(IllegalAction) as e:
        s3.apply(s3.string_to_action("play:HA"))
    assert e.value.rule == "forced trump lead (1859)"
    s2 = run(s.clone(), "tap tap pass pass")
    assert legal(s2) == ["play:HA", "play:D8", "play:SA"]
    # 3 active, leader without a trump: any card
    t = deal(g, dealer=A, pot=6, upcard="D7", hands={B: "HA C8 SA"})
    run(t, "tap tap tap pass")
    assert legal(t) == ["play:HA", "play:C8", "play:SA"]


def test_1859_upcard_trump_ace_binds_nobody():
    g = game("tippen/dreiblatt-1859")
    s = deal(g, dealer=A, pot=6, upcard="DA", hands={B: "DK HA C8", C: "D8 H7 C9", D: "D9 H8 CT"})
    run(s, "tap tap tap pass play:DK play:D8 play:D9")
    assert legal(s) == ["play:HA", "play:C8"]


def test_1859_void_player_trumps_only_an_untrumped_trick():
    g = game("tippen/dreiblatt-1859")
    s = deal(g, dealer=A, pot=6, upcard="D7",
             hands={B: "HT S8 C8", C: "D8 S9 C9", D: "D9 S7 CT", A: "HA HK HQ"})
    run(s, "tap tap tap tap play:HT")
    assert legal(s) == ["play:D8"]                    # untrumped: must trump
    with pytest.raises(IllegalAction) as e:
        s.apply(s.string_to_action("play:S9"))
    assert e.value.rule == "must trump"
    run(s, "play:D8")
    assert legal(s) == ["play:D9", "play:CT", "play:S7"]   # trumped: free
    run(s, "play:S7")
    assert legal(s) == ["play:HQ", "play:HK", "play:HA"]   # follow suit, no heading (1859)


def test_void_must_trump_never():
    g = game("tippen/dreiblatt-1859", void_must_trump="never")
    s = deal(g, dealer=A, pot=6, upcard="D7", hands={B: "HT S8 C8", C: "D8 S9 C9"})
    run(s, "tap tap tap tap play:HT")
    assert legal(s) == ["play:D8", "play:C9", "play:S9"]


def test_max_bete_must_divide_by_tricks():
    with pytest.raises(RuleError):
        ruleset("tippen/dreiblatt-1859", {"max_bete": 10})
    with pytest.raises(RuleError):
        ruleset("tippen/vierblatt-1859", {"stake": 6})


def test_max_bete_reserve_carries_over_several_deals():
    g = game("tippen/dreiblatt-1859", max_bete=9)
    pot, reserve = 30, 0
    seen = []
    for i in range(4):
        deck = make_deck(g, i % 4)
        s = g.new_deal(TableState(dealer=i % 4, pot=pot, reserve=reserve), deck)
        assert s.view(None)["pot_in_play"] == min(pot + reserve, 9) + 3
        run(s, "pass pass pass pass")                # all pass: everything carries
        pot, reserve = s.pot, s.reserve
        seen.append((pot, reserve))
    assert seen == [(12, 21), (12, 24), (12, 27), (12, 30)]


def robbing_deal(upcard="HA", **kw):
    g = game("tippen/dreiblatt-1859", robbing=True, **kw)
    return deal(g, dealer=A, pot=6, upcard=upcard, hands={B: "H7 SA C8", C: "H8 S9 C9"})


def test_robbing_swaps_the_seven_and_binds_the_ace_lead():
    s = robbing_deal()
    run(s, "tap tap pass pass")
    assert s.view(C)["phase"] == "rob" and s.view(C)["current_player"] == B
    assert legal(s) == ["rob", "no-rob"]
    run(s, "rob")
    v = s.view(C)
    assert v["upcard"] == "H7" and v["trump_card"] == "HA" and v["robbed"] is True
    assert s.view(B)["hand"] == ["HA", "C8", "SA"]
    run(s, "play:SA play:S9")
    assert legal(s) == ["play:HA"]                    # the robbed Ace must be led to trick 2


def test_robbing_asks_every_active_player_so_the_seven_stays_hidden():
    """view(seat) must not reveal who holds the trump 7: the rob phase asks every active
    player from forehand, whoever holds it (rules reference §2.1 hidden cards; §2.3 robbing)."""
    g = game("tippen/dreiblatt-1859", robbing=True)
    flows = []
    for hands in ({B: "H7 SA C8", C: "H8 S9 C9"}, {B: "H8 SA C8", C: "H7 S9 C9"},
                  {B: "H8 SA C8", C: "H9 S9 C9", A: "H7 SK CK"}):
        s = deal(g, dealer=A, pot=6, upcard="HA", hands=hands)
        run(s, "tap tap tap pass")                    # B, C, D active; A passed
        seen = []
        while s.view(None)["phase"] == "rob":
            v = s.view(A)
            seen.append((v["phase"], v["current_player"]))
            run(s, "no-rob")
        flows.append(seen)
        assert s.view(None)["phase"] == "play" and s.view(None)["current_player"] == B
        assert [e for e in s.view(A)["log"][4:]] == [[B, "no-rob"], [C, "no-rob"], [D, "no-rob"]]
    assert flows[0] == flows[1] == flows[2] == [("rob", B), ("rob", C), ("rob", D)]
    s = deal(g, dealer=A, pot=6, upcard="HA", hands={B: "H8 SA C8", C: "H7 S9 C9"})
    run(s, "tap tap tap pass")
    assert legal(s) == ["no-rob"]                     # B cannot rob
    run(s, "no-rob")
    assert legal(s) == ["rob", "no-rob"]              # C holds the 7
    run(s, "rob")
    assert s.view(None)["phase"] == "play" and s.view(C)["hand"] == ["HA", "C9", "S9"]
    assert s.view(B)["upcard"] == "H7"


def test_robbing_not_possible():
    s = robbing_deal(upcard="H9")
    run(s, "tap tap pass pass")
    assert s.view(None)["phase"] == "rob"
    s = robbing_deal()
    run(s, "pass tap tap pass")                       # the holder passed: the active players
    assert s.view(None)["phase"] == "rob"             # are still asked (nobody may learn
    assert legal(s) == ["no-rob"]                     # where the 7 is), but none can rob
    run(s, "no-rob")
    assert legal(s) == ["no-rob"]
    with pytest.raises(IllegalAction) as e:
        s.apply(s.string_to_action("rob"))
    assert e.value.rule == "robbing: only the holder of the trump 7"
    run(s, "no-rob")
    assert s.view(None)["phase"] == "play" and s.view(None)["upcard"] == "HA"
    g = game("tippen/dreiblatt-1859", robbing=True)
    s = deal(g, dealer=A, pot=6, upcard="H7", hands={B: "HA SA C8"})
    run(s, "tap tap pass pass")
    assert s.view(None)["phase"] == "play"            # the upcard is the 7
    g = game("tippen/dreiblatt-1859")
    s = deal(g, dealer=A, pot=6, upcard="HA", hands={B: "H7 SA C8"})
    run(s, "tap tap pass pass")
    assert s.view(None)["phase"] == "play"            # not agreed
    with pytest.raises(IllegalAction):
        s.apply(s.string_to_action("rob"))


def test_sniff_1859_in_a_bete_hand_zero_tricks_pays_double_the_pot():
    g = game("tippen/dreiblatt-1859", sniffing="1859")
    s = deal(g, dealer=A, pot=6, upcard="H7",
             hands={B: "HA SA DA", C: "HQ S7 D7", D: "HJ S8 D8", A: "C7 C8 C9"})
    run(s, "sniff discard:C9 stay tap tap tap")
    assert s.view(B)["declared"] == ["stay", "tap", "tap", "tap"]
    run(s, "play:HA play:HQ play:HJ play:H7 play:SA play:S7 play:S8 play:C7")
    run(s, "play:DA play:D7 play:D8 play:C8")
    assert transfers(s)[-3:] == [(A, POT, 18), (C, POT, 9), (D, POT, 9)]


@pytest.mark.parametrize("discard,tricks,penalty", [("D7", 0, 24), ("H7", 1, 12), ("C7", 3, 0)])
def test_modern_sniff_cannot_drop_and_pays_by_tricks(discard, tricks, penalty):
    g = game("tippen/katira-1983", sniffing="modern")
    hand_a = "DK DA C7" if discard == "C7" else "H7 S7 C7"
    s = deal(g, dealer=A, pot=9, upcard="D7", hands={B: "HA SA CA", C: "HK SK CK", A: hand_a})
    assert s.view(A)["hand"] != [] and legal(s) == ["sniff", "turn"]
    run(s, f"sniff discard:{discard}")
    assert s.view(B)["trump"] == "D" and s.view(B)["trump_card"] is None
    assert s.view(None)["phase"] == "declare"         # no drop/stay for a modern sniffer
    with pytest.raises(IllegalAction):
        s.apply(s.string_to_action("drop"))
    run(s, "tap tap pass exchange:- exchange:- exchange:-")
    play_lowest(s)
    assert s.tricks_won[A] == tricks
    paid = sum(t.amount for t in s.transfers if t.source == A and "bête" in t.reason)
    assert paid == penalty


# -- Hupf und Sprung ---------------------------------------------------------------------------------

def test_hupf_und_sprung_single_and_chained():
    g = game("tippen/dreiblatt-1859", hupf_und_sprung="single")
    s = deal(g, dealer=A, bottom="SA")
    assert s.is_terminal()
    res = s.result()
    assert res.summary["outcome"] == "jump" and res.next_dealer == B and res.dealer == A
    assert transfers(s) == [(A, POT, 3)] and s.view(C)["jump_cards"] == ["SA"]
    s2 = deal(g, dealer=B, pot=3, bottom="C7")
    assert s2.result().next_dealer == C and s2.pot == 6
    s3 = deal(g, dealer=C, pot=6, bottom="C8")
    assert not s3.is_terminal() and s3.view(D)["legal_actions"] == ["tap", "pass"]


def test_hupf_und_sprung_passing_always_allowed():
    g = game("tippen/dreiblatt-1859", hupf_und_sprung="single")
    s = deal(g, dealer=A, pot=0)
    assert s.view(None)["compulsory"] is False and legal(s) == ["tap", "pass"]


def test_hupf_und_sprung_double():
    g = game("tippen/dreiblatt-1859", hupf_und_sprung="double")
    s = deal(g, dealer=A, bottom="SA", hands={B: "H7"})   # deck[0] is forehand's first card
    assert transfers(s) == [(A, POT, 3), (B, POT, 3)] and s.result().next_dealer == C
    s = deal(g, dealer=A, bottom="SA", hands={B: "H8"})
    assert transfers(s) == [(A, POT, 3)] and s.result().next_dealer == B


def test_hupf_checked_after_shoving():
    g = game("tippen/dreiblatt-1859", hupf_und_sprung="single", schieben=True)
    s = g.new_deal(TableState(dealer=A), make_deck(g, B, bottom="D7"))
    run(s, "shove deal")
    res = s.result()
    assert res.dealer == B and res.next_dealer == C and s.pot == 6


# -- Vierblatt, 52 cards, 1905 -------------------------------------------------------------------------

def test_vierblatt_four_cards_four_tricks():
    g = game("tippen/vierblatt-1859")
    s = deal(g, dealer=A)
    v = s.view(B)
    assert len(v["hand"]) == 4 and v["pot"] == 4 and v["trick_value"] == 1
    play_lowest(s)
    assert sum(s.tricks_won) == 4


def test_whist_pack_above_six_players():
    g = game("tippen/dreiblatt-1859", players=8)
    assert g.pack.name == "whist52"
    s = g.new_deal(TableState(dealer=0), list(range(52)))
    play_lowest(s)
    assert sum(s.tricks_won) == 3


def test_1905_no_head_the_trick():
    g = game("tippen/meyers-1905")
    s = deal(g, dealer=A, upcard="D7", hands={B: "HT S8 C8", C: "HA H7 DK"})
    run(s, "play:HT")
    assert legal(s) == ["play:H7", "play:HA"]


# -- modern --------------------------------------------------------------------------------------------

def head_deal(c_hand, d_hand):
    g = game("tippen/grupp-1975")
    s = deal(g, dealer=A, upcard="D7", hands={B: "HT S8 C8", C: c_hand, D: d_hand})
    return run(s, "tap tap tap tap exchange:- exchange:- exchange:- exchange:- play:HT")


def test_head_the_trick_cases():
    s = head_deal("HA H7 DK", "H9 HK CT")
    assert legal(s) == ["play:HA"]                    # beat with a higher card of the suit
    with pytest.raises(IllegalAction) as e:
        s.apply(s.string_to_action("play:H7"))
    assert e.value.rule == "head the trick"
    s = head_deal("D8 S9 C9", "H9 HK CT")
    run(s, "play:D8")
    assert legal(s) == ["play:H9", "play:HK"]         # trumped: any card of the suit
    s = head_deal("D8 S9 C9", "DA D9 CT")
    run(s, "play:D8")
    assert legal(s) == ["play:D9", "play:DA"]         # void: must overtrump
    s = head_deal("DQ S9 C9", "D9 S7 CT")
    run(s, "play:DQ")
    assert legal(s) == ["play:D9"]                    # only a lower trump: still a trump
    s = head_deal("DQ S9 C9", "C7 S7 CT")
    run(s, "play:DQ")
    assert legal(s) == ["play:C7", "play:CT", "play:S7"]  # no trump: any card


def test_katira_deal_order():
    g = game("tippen/katira-1983")
    deck = g.deck_from_strings(g.pack.cards)        # H7 H8 H9 HT HJ HQ HK HA D7 D8 …
    s = g.new_deal(TableState(dealer=A, pot=3), deck)
    assert s.view(B)["hand"] == ["H7", "HJ", "D8"]    # cards 1, 5 and 10
    assert s.view(None)["upcard"] == "D7"             # the 9th card
    g = game("tippen/grupp-1975")
    s = g.new_deal(TableState(dealer=A, pot=3), deck)
    assert s.view(B)["hand"] == ["H7", "HJ", "D7"]    # cards 1, 5, 9
    assert s.view(None)["upcard"] == "DJ"             # the 13th card


def test_exchange_order_and_talon_never_reaches_the_upcard():
    g = game("tippen/katira-1983", players=5)
    hearts_diamonds = [c for c in g.pack.cards if c[0] in "HD"]
    hands = {s: hearts_diamonds[3 * s:3 * s + 3] for s in range(5)}
    talon = "S7 S8 S9 ST SJ SQ SK SA C7 C8 C9 CT CJ CQ CK"
    s = deal(g, dealer=A, pot=3, hands=hands, upcard="DA", talon=talon, bottom="CA")
    run(s, "tap tap tap tap tap")
    assert s.view(None)["current_player"] == B
    for seat in (B, C, D, E, A):
        h = s.view(seat)["hand"]
        run(s, "exchange:" + ",".join(reversed(h)))   # any order is accepted
    assert s.view(B)["hand"] == ["S7", "S8", "S9"]
    assert s.view(A)["hand"] == ["CJ", "CQ", "CK"]
    assert s.view(None)["talon_size"] == 1 and s.view(None)["upcard"] == "DA"
    assert s.view(C)["log"][5] == [B, "exchange:3"]
    assert s.view(B)["log"][5] == [B, "exchange:HT,HJ,HQ"]


def test_exchange_more_than_allowed_or_foreign_cards_refused():
    g = game("tippen/grupp-1975")
    s = deal(g, dealer=A, hands={B: "HA HK HQ"})
    run(s, "tap tap tap tap")
    with pytest.raises(IllegalAction) as e:
        s.apply(s.string_to_action("exchange:HA,S7"))
    assert e.value.rule == "card not in hand"


def test_forehand_passed_next_active_leads():
    g = game("tippen/grupp-1975")
    s = deal(g, dealer=A)
    run(s, "pass tap tap pass exchange:- exchange:-")
    assert s.view(None)["current_player"] == C and s.view(None)["active"] == [C, D]


def test_tipp_zwang_on_and_off():
    g = game("tippen/grupp-1975", tipp_zwang=True)
    s = deal(g, dealer=A)
    assert s.view(None)["compulsory"] is True and s.view(None)["phase"] == "exchange"
    assert s.view(None)["bete"] == 3
    s = deal(game("tippen/grupp-1975"), dealer=A)
    assert s.view(None)["phase"] == "declare"


def test_schieben_one_circuit_at_most():
    g = game("tippen/grupp-1975", schieben=True)
    s = g.new_deal(TableState(dealer=A), make_deck(g, D))
    run(s, "shove shove shove")
    assert s.view(D)["legal_actions"] == ["deal"] and s.pot == 12
    with pytest.raises(IllegalAction) as e:
        s.apply(s.string_to_action("shove"))
    assert e.value.rule == "Schieben: at most one circuit"
    run(s, "deal")
    assert s.view(None)["dealer"] == D and s.view(None)["current_player"] == A


# -- refusals --------------------------------------------------------------------------------------------

def test_refusals_name_the_rule_and_leave_the_state_unchanged():
    g = game("tippen/meyers-1905")
    s = deal(g, dealer=A, upcard="D7", hands={B: "SA DA C7", C: "S7 D8 CA", D: "H7 H8 C8"})
    before = [s.view(x) for x in (None, 0, 1, 2, 3)]

    def refused(text, rule, seat=None):
        with pytest.raises(IllegalAction) as e:
            if seat is None:
                s.apply(s.string_to_action(text))
            else:
                s.apply(s.string_to_action(text), seat=seat)
        assert e.value.rule == rule, (text, e.value)
        assert [s.view(x) for x in (None, 0, 1, 2, 3)] == before

    refused("pass", "compulsory hand: passing not allowed")
    refused("play:HA", "card not in hand")
    refused("play:SA", "not your turn", seat=2)
    refused("exchange:-", "order of the deal")
    run(s, "play:SA")
    before = [s.view(x) for x in (None, 0, 1, 2, 3)]
    refused("play:D8", "follow suit (Farbzwang)")
    run(s, "play:S7")
    before = [s.view(x) for x in (None, 0, 1, 2, 3)]
    refused("play:DA", "card not in hand")
    for bad in ["play:ZZ", "hop", "exchange:HA,HA", "play:", "discard:HA,HK", "", "play:HA HK"]:
        with pytest.raises(IllegalAction) as e:
            s.string_to_action(bad)
        assert e.value.rule == "notation"
    with pytest.raises(IllegalAction):
        s.apply(-1)
    with pytest.raises(IllegalAction):
        s.apply("play:SA")  # type: ignore[arg-type]
    play_lowest(s)
    with pytest.raises(IllegalAction) as e:
        s.apply(0)
    assert e.value.rule == "deal is over"


# -- knocking and sniffing both agreed -------------------------------------------------------------

@pytest.mark.parametrize("rid,sniffing", [("tippen/grupp-1975", "modern"),
                                          ("tippen/dreiblatt-1859", "1859")])
def test_knock_is_decided_blind_sniff_only_after_looking(rid, sniffing):
    """rules reference §6 T7/T8: a knocker decides before looking at his hand; a sniffer has seen
    his. With both agreed the dealer first knocks or looks, then may sniff or turn."""
    g = game(rid, knocking=True, sniffing=sniffing)
    s = deal(g, dealer=A, pot=9, upcard="D7", hands={A: "H7 S7 C7"})
    assert s.view(A)["hand"] == []
    assert s.view(A)["legal_actions"] == ["knock", "look"]
    with pytest.raises(IllegalAction) as refused:
        s.apply(s.string_to_action("sniff"))
    assert refused.value.rule == "sniffing: look at your hand first"
    run(s, "look")
    assert sorted(s.view(A)["hand"]) == ["C7", "H7", "S7"]
    assert s.view(A)["legal_actions"] == ["sniff", "turn"]
    with pytest.raises(IllegalAction) as refused:
        s.apply(s.string_to_action("knock"))
    assert refused.value.rule == "knocking: only before looking at the hand"
    assert s.view(B)["log"][-1] == [A, "look"]
    run(s, "sniff")
    assert s.view(A)["phase"] == "discard"


def test_knocking_alone_stays_a_blind_choice_with_turn():
    g = game("tippen/grupp-1975", knocking=True)
    s = deal(g, dealer=A, pot=9, upcard="D7")
    assert s.view(A)["legal_actions"] == ["knock", "turn"]


def test_a_passer_still_sees_the_cards_he_folded_and_nobody_else_does():
    g = game("tippen/grupp-1975")
    s = deal(g, dealer=A, pot=9, hands={B: "HA HK HQ", C: "S7 S8 S9"}, upcard="D7")
    run(s, "tap pass")                                   # B taps, C passes
    assert s.view(C)["hand"] == [] and s.view(C)["folded"] == ["S7", "S8", "S9"]
    for seat in (None, A, B, D):
        view = s.view(seat)
        assert view["folded"] == [] or seat == C
        assert not {"S7", "S8", "S9"} & set(view["hand"] + view["folded"])


# -- notation ---------------------------------------------------------------------------------

def test_exchange_texts_are_the_same_when_remembered_and_stay_bounded(monkeypatch):
    """``action_to_string`` remembers exchange texts (the server writes them into a view at
    every event): a remembered text is the one it makes afresh, and the memory is bounded."""
    import itertools

    import stammtisch.games.tippen.game as tippen

    monkeypatch.setattr(tippen, "EXCHANGE_TEXTS_KEPT", 100)
    g = game("tippen/grupp-1975", players=3)
    names = g.card_names
    subsets = [c for k in (1, 2, 3) for c in itertools.combinations(range(len(names)), k)]
    ids = [g.EXCHANGE_BASE + sum(1 << c for c in cards) for cards in subsets]
    expected = ["exchange:" + ",".join(names[c] for c in cards) for cards in subsets]
    assert [g.action_to_string(a) for a in ids] == expected  # made, the first 100 kept
    assert len(g.exchange_texts) == 100
    assert [g.action_to_string(a) for a in ids] == expected  # remembered or made again
    assert all(g.string_to_action(t) == a for a, t in zip(ids, expected, strict=True))
    assert g.action_to_string(g.EXCHANGE_BASE) == "exchange:-"
    with pytest.raises(IllegalAction):
        g.action_to_string(g.EXCHANGE_BASE + (1 << len(names)))  # no such card
