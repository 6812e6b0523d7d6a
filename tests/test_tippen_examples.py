"""Worked examples of docs/rules-reference.md §2.4 (1–6) and §5.1–§5.4, with concrete decks."""

from __future__ import annotations

import pytest
from test_tippen_support import balances, deal, game, make_deck, run, transfers

from stammtisch.games.base import POT, RESERVE, TableState


def first_keys(summary: dict) -> dict:
    """The summary's original keys (the explanation keys are tested in test_explain.py)."""
    return {k: summary[k] for k in ("tricks", "active", "outcome")}

A, B, C, D, E = range(5)


# -- rules reference §2.4 ---------------------------------------------------------------------------------

def example1():
    """1859, A deals, pot 3 (compulsory). B 2 tricks, D 1; A and C pay 3 each."""
    g = game("tippen/dreiblatt-1859")
    s = deal(g, dealer=A, hands={B: "HA DA S8", C: "D7 C7 C8", D: "H9 C9 SA", A: "S7 D8 DT"},
             upcard="H8")
    v = s.view(B)
    assert v["compulsory"] is True and v["phase"] == "play" and v["active"] == [A, B, C, D]
    assert v["pot_in_play"] == 3 and v["trick_value"] == 1 and v["bete"] == 3
    # forced trump lead (≥3 active, B holds a trump): only HA
    assert v["legal_actions"] == ["play:HA"]
    run(s, "play:HA play:C7 play:H9 play:S7")        # B wins (D must follow hearts)
    run(s, "play:DA play:D7 play:C9 play:D8")        # B wins
    run(s, "play:S8 play:C8 play:SA play:DT")        # D wins
    return g, s


def test_rules_example_1_compulsory_hand_1859():
    g, s = example1()
    assert s.is_terminal()
    assert s.tricks_won == [0, 2, 0, 1]
    assert transfers(s) == [(A, POT, 3), (POT, B, 1), (POT, B, 1), (POT, D, 1), (A, POT, 3), (C, POT, 3)]
    players, pot, reserve = balances(s)
    assert players == [-6, 2, -3, 1] and pot == 6 and reserve == 0
    res = s.result()
    assert res.next_dealer == B and res.dealer == A
    assert first_keys(res.summary) == {"tricks": {0: 0, 1: 2, 2: 0, 3: 1}, "active": [0, 1, 2, 3],
                           "outcome": "played"}
    # Next deal: B antes, pot in play 9, passing allowed.
    s2 = g.new_deal(TableState(dealer=B, pot=6), make_deck(g, B, {}))
    v = s2.view(C)
    assert v["pot"] == 9 and v["pot_in_play"] == 9 and v["compulsory"] is False
    assert v["phase"] == "declare" and v["current_player"] == C
    assert v["legal_actions"] == ["tap", "pass"]


def test_rules_example_2_two_active_no_forced_lead():
    g = game("tippen/dreiblatt-1859")
    s = deal(g, dealer=B, pot=6, hands={C: "HA HK S7", D: "H9 ST C7"}, upcard="S8")
    run(s, "tap tap pass pass")                      # C, D tap; A, B pass
    v = s.view(C)
    assert v["active"] == [C, D] and v["declared"] == ["pass", "pass", "tap", "tap"]
    # only 2 active: no forced trump lead although C holds the trump S7
    assert v["legal_actions"] == ["play:HK", "play:HA", "play:S7"]
    run(s, "play:HA play:H9")                        # C
    run(s, "play:HK play:ST")                        # D must trump (void, untrumped)
    run(s, "play:C7 play:S7")                        # C trumps
    assert s.tricks_won == [0, 0, 2, 1]
    assert transfers(s) == [(B, POT, 3), (POT, C, 3), (POT, D, 3), (POT, C, 3)]
    players, pot, _ = balances(s)
    assert players == [0, -3, 6, 3] and pot == 0
    # pot 0: the next deal is compulsory again
    s3 = g.new_deal(TableState(dealer=C, pot=0), make_deck(g, C, {}))
    assert s3.view(None)["compulsory"] is True and s3.view(None)["phase"] == "play"


def test_research_1859_E2_alternative_one_takes_all():
    g = game("tippen/dreiblatt-1859")
    s = deal(g, dealer=B, pot=6, hands={C: "HA HK SA", D: "H9 H8 C7"}, upcard="S8")
    run(s, "tap tap pass pass play:HA play:H8")
    # C won trick 1 holding the trump Ace (SA): he must lead it (1859)
    assert s.view(C)["legal_actions"] == ["play:SA"]
    run(s, "play:SA play:C7 play:HK play:H9")
    assert s.tricks_won == [0, 0, 3, 0]
    players, pot, _ = balances(s)
    assert players == [0, -3, 9, -9] and pot == 9    # D "doubles the pot": pays 9
    assert g.new_deal(TableState(dealer=C, pot=pot), make_deck(g, C, {})).view(None)["pot"] == 12


def example3(rid):
    g = game(rid)
    s = deal(g, dealer=A, pot=9, upcard="D7",
             hands={B: "HA SA C7", C: "HK SK CA", A: "HQ SQ CK", D: "H7 S7 C8"})
    assert s.view(None)["pot_in_play"] == 12
    run(s, "tap tap pass tap")                       # B, C tap, D passes, A taps
    run(s, "exchange:- exchange:- exchange:-")       # B, C, A from forehand
    run(s, "play:HA play:HK play:HQ")
    run(s, "play:SA play:SK play:SQ")
    v = s.view(C)
    assert v["legal_actions"] == []
    assert s.view(C)["current_player"] == B
    run(s, "play:C7")
    assert s.view(C)["legal_actions"] == ["play:CA"]   # head the trick
    run(s, "play:CA play:CK")
    assert s.tricks_won == [0, 2, 1, 0]
    return s


def test_rules_example_3_grupp_bete_is_one_stake():
    s = example3("tippen/grupp-1975")
    assert transfers(s) == [(A, POT, 3), (POT, B, 4), (POT, B, 4), (POT, C, 4), (A, POT, 3)]
    players, pot, _ = balances(s)
    assert players == [-6, 8, 4, 0] and pot == 3
    assert s.result().summary["active"] == [A, B, C]


def test_rules_example_3_katira_bete_is_the_pot():
    s = example3("tippen/katira-1983")
    assert transfers(s)[-1] == (A, POT, 12)
    players, pot, _ = balances(s)
    assert players == [-15, 8, 4, 0] and pot == 12


@pytest.mark.parametrize("rid", ["tippen/grupp-1975", "tippen/katira-1983"])
def test_rules_example_4_lone_tapper_takes_pot(rid):
    g = game(rid)
    s = deal(g, dealer=A, pot=9)
    run(s, "tap pass pass pass")
    assert s.is_terminal()
    assert transfers(s) == [(A, POT, 3), (POT, B, 12)]
    res = s.result()
    assert first_keys(res.summary) == {"tricks": {1: 0}, "active": [1], "outcome": "lone-tapper"}
    assert res.next_dealer == B
    players, pot, _ = balances(s)
    assert players == [-3, 12, 0, 0] and pot == 0


def test_rules_example_5_schieben_three_antes():
    g = game("tippen/grupp-1975", schieben=True)
    s = g.new_deal(TableState(dealer=A), make_deck(g, C, {D: "HA HK HQ"}))
    assert s.view(A)["legal_actions"] == ["shove", "deal"]
    run(s, "shove shove deal")                       # A shoves, B shoves, C deals
    v = s.view(D)
    assert v["pot"] == 9 and v["dealer"] == C and v["anted"] == [A, B, C]
    assert v["hand"] == ["HQ", "HK", "HA"]           # D is forehand of dealer C
    assert v["current_player"] == D
    run(s, "pass pass pass pass")
    res = s.result()
    assert res.dealer == C and res.next_dealer == D and res.summary["outcome"] == "all-pass"
    assert transfers(s) == [(A, POT, 3), (B, POT, 3), (C, POT, 3)]


def test_rules_example_6_max_bete():
    g = game("tippen/dreiblatt-1859", players=3, max_bete=9)
    s = deal(g, dealer=A, pot=24, upcard="H7",
             hands={B: "HA SK DA", C: "HK SA D7", A: "HQ S7 D8"})
    v = s.view(None)
    assert v["pot"] == 12 and v["reserve"] == 15 and v["trick_value"] == 4
    run(s, "tap tap tap")
    run(s, "play:HA play:HK play:HQ")                # B
    run(s, "play:SK play:SA play:S7")                # C
    run(s, "play:D7 play:D8 play:DA")                # B
    assert s.tricks_won == [0, 2, 1]
    # rules reference §2.3 / §5.2 E3: the bête is added to the reserve, "which becomes 27"
    assert transfers(s) == [(A, POT, 3), (POT, RESERVE, 15), (POT, B, 4), (POT, C, 4),
                            (POT, B, 4), (A, RESERVE, 12)]
    players, pot, reserve = balances(s)
    assert reserve == 27 and pot == 0
    assert players == [-15, 8, 4]
    # the next deal again plays 9 + 3, with 18 waiting
    s2 = g.new_deal(TableState(dealer=B, pot=pot, reserve=reserve), make_deck(g, B, {}))
    v = s2.view(None)
    assert (v["pot"], v["reserve"], v["trick_value"]) == (12, 18, 4)
    assert [(t.source, t.target, t.amount) for t in s2.transfers] == [(B, POT, 3), (RESERVE, POT, 9)]


def test_max_bete_penalties_wait_in_the_reserve():
    """Under max_bete every bête-like payment (drop fee, a sniffer's double bête) is set aside
    in the reserve (rules reference §2.3), not left in the pot of the deal."""
    g = game("tippen/dreiblatt-1859", sniffing="1859", max_bete=9)
    s = deal(g, dealer=A, pot=6, upcard="H7",
             hands={B: "HA SA DA", C: "HQ S7 D7", D: "HJ S8 D8", A: "C7 C8 C9"})
    run(s, "sniff discard:C9 drop")
    last = s.transfers[-1]
    assert (last.source, last.target, last.amount) == (A, RESERVE, 3)
    assert s.view(B)["pot_in_play"] == 9
    s = deal(g, dealer=A, pot=6, upcard="H7",
             hands={B: "HA SA DA", C: "HQ S7 D7", D: "HJ S8 D8", A: "C7 C8 C9"})
    run(s, "sniff discard:C9 stay tap tap tap")
    run(s, "play:HA play:HQ play:HJ play:H7 play:SA play:S7 play:S8 play:C7")
    run(s, "play:DA play:D7 play:D8 play:C8")
    assert transfers(s)[-3:] == [(A, RESERVE, 18), (C, RESERVE, 9), (D, RESERVE, 9)]
    assert (s.pot, s.reserve) == (0, 36)


def test_max_bete_reserve_flows_back_when_the_pot_runs_low():
    g = game("tippen/dreiblatt-1859", players=3, max_bete=9)
    s = g.new_deal(TableState(dealer=A, pot=3, reserve=18), make_deck(g, A, {}))
    assert [(t.source, t.target, t.amount) for t in s.transfers] == [(A, POT, 3), (RESERVE, POT, 6)]
    assert (s.pot, s.reserve) == (12, 12)


# -- rules reference §5.1: Drei Karten 1821 and Loup ---------------------------------------------------

def test_research_1821_three_players_two_deals():
    g = game("tippen/drei-karten-1821", players=3)
    s = deal(g, dealer=A, hands={B: "SA DA C7", C: "S7 D7 C8", A: "S8 D8 H9"})
    v = s.view(C)
    assert v["trump"] == "H" and v["trump_card"] == "H9" and v["upcard"] is None
    assert "H9" in s.view(A)["hand"]                 # the ninth card stays with the dealer
    assert v["compulsory"] is True and v["trick_value"] == 1
    run(s, "play:SA play:S7 play:S8 play:DA play:D7 play:D8 play:C7 play:C8 play:H9")
    assert s.tricks_won == [1, 2, 0]
    players, pot, _ = balances(s)
    assert players == [-2, 2, -3] and pot == 3
    # B deals, pool 6, a bête stands: players may pass; a trick is worth 2.
    s2 = deal(g, dealer=B, pot=3, hands={C: "H7 D7 C7", A: "SA HA DA", B: "H8 C8 S9"})
    v = s2.view(C)
    assert v["trump"] == "S" and v["trick_value"] == 2 and v["legal_actions"] == ["tap", "pass"]
    run(s2, "tap tap pass")                          # C, A tap; B passes
    run(s2, "play:H7 play:HA play:DA play:D7 play:SA play:C7")
    assert s2.tricks_won == [3, 0, 0]
    assert transfers(s2) == [(B, POT, 3), (POT, A, 2), (POT, A, 2), (POT, A, 2), (C, POT, 6)]
    players, pot, _ = balances(s2)
    assert players == [6, -3, -6] and pot == 6
    assert g.new_deal(TableState(dealer=C, pot=6), make_deck(g, C, {})).view(None)["pot"] == 9


LOUP_DECK = ("CK DK DT HT DJ DA DQ D8 C8 SA CT HK ST HQ D9 HJ H8 SJ H9 HA CJ CA S9 CQ H7 S8 C9 "
             "SK S7 C7 SQ D7").split()
LOUP_PLAYS = ("play:CJ play:C9 play:SK play:C8 play:C7 play:CK play:CA play:D8 play:CQ play:HA "
              "play:HK play:S9 play:HQ play:H7 play:HJ play:DQ play:DT play:HT play:DJ play:DA "
              "play:CT play:H8 play:ST play:S7 play:SA play:S8 play:DK play:SJ play:H9 play:D9")


def test_research_loup_five_players():
    g = game("tippen/loup-1821", players=5)
    s = g.new_deal(TableState(dealer=E), g.deck_from_strings(LOUP_DECK))
    v = s.view(A)
    assert len(v["hand"]) == 6 and v["pot"] == 6 and v["trick_value"] == 1
    assert v["trump_card"] == "C7" and v["trump"] == "C"   # E's sixth card
    run(s, LOUP_PLAYS)
    assert s.tricks_won == [3, 2, 1, 0, 0]
    players, pot, _ = balances(s)
    assert players == [3, 2, 1, -6, -12] and pot == 12
    s2 = g.new_deal(TableState(dealer=A, pot=12), g.deck_from_strings(LOUP_DECK))
    assert s2.view(None)["pot"] == 18 and s2.view(None)["trick_value"] == 3


# -- rules reference §5.2 E4: sniffing in a compulsory hand ----------------------------------------------

def sniff_deal(**kw):
    g = game("tippen/dreiblatt-1859", sniffing="1859", **kw)
    return g, deal(g, dealer=A, upcard="HA",
                   hands={B: "HK SA DA", C: "HQ S7 D7", D: "HJ S8 D8", A: "H7 C7 C8"})


def test_research_sniff_drop_in_compulsory_hand():
    g, s = sniff_deal()
    v = s.view(B)
    assert v["phase"] == "choice" and v["trump"] is None and v["upcard"] is None
    assert s.view(A)["legal_actions"] == ["sniff", "turn"]
    run(s, "sniff")
    v = s.view(B)
    assert v["trump_card"] == "HA" and v["trump"] == "H"    # 1859: shown to all
    run(s, "discard:C8")
    assert s.view(B)["log"] == [[A, "sniff"], [A, "discard:?"]]
    assert s.view(A)["log"][1] == [A, "discard:C8"]
    assert s.view(A)["legal_actions"] == ["drop", "stay"]
    run(s, "drop")
    v = s.view(B)
    assert v["active"] == [B, C, D] and v["phase"] == "play" and v["compulsory"] is True
    assert [(t.source, t.target, t.amount) for t in s.transfers] == [(A, POT, 3), (A, POT, 3)]
    assert v["pot"] == 6 and v["pot_in_play"] == 3       # the drop fee is a new bête
    run(s, "play:HK play:HQ play:HJ play:SA play:S7 play:S8 play:DA play:D7 play:D8")
    players, pot, _ = balances(s)
    assert players == [-6, 3, -3, -3] and pot == 9


def test_sniffed_trump_ace_must_be_led_by_the_winner_of_trick_1():
    g = game("tippen/dreiblatt-1859", sniffing="1859")
    s = deal(g, dealer=A, upcard="HA",
             hands={B: "S9 DA CA", C: "S7 D7 C9", D: "S8 D8 CT", A: "H7 C7 C8"})
    run(s, "sniff discard:C8 stay")
    assert s.view(B)["active"] == [A, B, C, D]
    assert s.view(B)["legal_actions"] == ["play:DA", "play:CA", "play:S9"]  # B has no trump
    run(s, "play:S9 play:S7 play:S8")
    assert s.view(A)["legal_actions"] == ["play:H7", "play:HA"]   # void: must trump
    run(s, "play:H7")
    assert s.view(A)["legal_actions"] == ["play:HA"]              # the sniffed Ace must lead
    run(s, "play:HA play:DA play:D7 play:D8 play:C7 play:CA play:C9 play:CT")
    assert s.tricks_won == [2, 1, 0, 0]
    assert transfers(s)[-2:] == [(C, POT, 3), (D, POT, 3)]      # the sniffer took 2: no penalty


def test_sniffer_with_no_trick_pays_two_bets():
    g = game("tippen/dreiblatt-1859", sniffing="1859")
    s = deal(g, dealer=A, upcard="H7",
             hands={B: "HA SA DA", C: "HQ S7 D7", D: "HJ S8 D8", A: "C7 C8 C9"})
    run(s, "sniff discard:C9 stay")
    run(s, "play:HA play:HQ play:HJ play:H7")          # A's only trump falls under the Ace
    run(s, "play:SA play:S7 play:S8 play:C7 play:DA play:D7 play:D8 play:C8")
    assert s.tricks_won == [0, 3, 0, 0]
    assert transfers(s)[-3:] == [(A, POT, 6), (C, POT, 3), (D, POT, 3)]


# -- rules reference §5.3: Meyers 1905 ------------------------------------------------------------------

def test_research_1905_bete_is_the_pot_in_both_kinds_of_hand():
    g = game("tippen/meyers-1905")
    s = deal(g, dealer=A, upcard="H7",
             hands={B: "SA DA C7", C: "S7 D7 CA", D: "S8 D8 C8", A: "S9 D9 C9"})
    run(s, "play:SA play:S7 play:S8 play:S9 play:DA play:D7 play:D8 play:D9")
    run(s, "play:C7 play:CA play:C8 play:C9")
    players, pot, _ = balances(s)
    assert players == [-6, 2, 1, -3] and pot == 6
    s2 = deal(g, dealer=B, pot=6, upcard="H7", hands={C: "SA DA CA", D: "S7 D7 C7"})
    assert s2.view(None)["bete"] == 9
    run(s2, "tap tap pass pass play:SA play:S7 play:DA play:D7 play:CA play:C7")
    assert transfers(s2)[-1] == (D, POT, 9)


# -- rules reference §5.4: knocking under Katira and Grupp units -----------------------------------------

@pytest.mark.parametrize("rid,discard,tricks,net", [
    ("tippen/katira-1983", "H7", 1, -8), ("tippen/katira-1983", "D7", 0, -24),
    ("tippen/grupp-1975", "H7", 1, 1), ("tippen/grupp-1975", "D7", 0, -6),
])
def test_research_knocking_penalties(rid, discard, tricks, net):
    g = game(rid, knocking=True)
    s = deal(g, dealer=A, pot=9, upcard="D7",
             hands={B: "HA SA CA", C: "HK SK CK", A: "H7 S7 C7"})
    assert s.view(A)["hand"] == []                    # a knocker decides before looking
    assert s.view(A)["legal_actions"] == ["knock", "turn"]
    run(s, "knock")
    v = s.view(B)
    assert v["trump"] == "D" and v["trump_card"] is None and v["upcard"] is None
    assert s.view(A)["trump_card"] == "D7" and "D7" in s.view(A)["hand"]
    run(s, f"discard:{discard}")
    run(s, "tap tap pass")                            # B, C tap, D passes; A is bound to play
    assert s.view(B)["active"] == [A, B, C]
    run(s, "exchange:- exchange:- exchange:-")
    while not s.is_terminal():                        # each plays his lowest legal card
        s.apply(s.legal_actions()[0])
    assert s.tricks_won[A] == tricks
    assert s.returns()[A] + 3 == net                  # his net apart from the ante
    assert s.result().summary["tricks"][C] == 0
