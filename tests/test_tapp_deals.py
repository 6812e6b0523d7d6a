"""Full Tapp deals with chosen decks and action lists, and the edge cases of
docs/rules-reference.md §6 (Tapp). Expected money comes from §3 of that page."""

import pytest

from stammtisch.games import POT, IllegalAction, TableState, new_game
from stammtisch.games.tapp import DEAL_PATTERNS
from stammtisch.rules import ruleset

WT = "tapp/wuerttemberg-tarock"
CL = "tapp/classic-1879"
MO = "tapp/modern"


def game_of(rid, **ov):
    return new_game(ruleset(rid, ov))


def make_deck(game, dealer, hands, tapp=None):
    """A deck that deals ``hands`` ({seat: "HA HT ..."}) and ``tapp``; unnamed cards fill
    the unnamed seats (and the tapp) in pack order."""
    n = game.num_players
    fh = (dealer + 1) % n
    named = {s: h.split() for s, h in hands.items()}
    used = {c for h in named.values() for c in h} | set((tapp or "").split())
    rest = [c for c in game.pack.cards if c not in used]
    pools = {}
    for off in range(n):
        seat = (fh + off) % n
        if seat in named:
            pools[off] = named[seat]
        else:
            pools[off] = [rest.pop(0) for _ in range(game.hand_size)]
    pools[n] = tapp.split() if tapp is not None else [rest.pop(0) for _ in range(game.tapp_size)]
    assert all(len(pools[o]) == game.hand_size for o in range(n)), "hand sizes"
    assert len(pools[n]) == game.tapp_size and not rest
    return game.deck_from_strings([pools[t].pop(0) for t in game.deal_plan])


def start(game, deck, dealer=0, pot=0):
    if isinstance(deck, str):
        deck = game.deck_from_strings(deck.split())
    return game.new_deal(TableState(dealer=dealer, pot=pot), deck)


def act(state, *texts):
    for t in texts:
        for one in t.split():
            state.apply(state.string_to_action(one))
    return state


def play_out(state, pick=min):
    """Play to the end, each seat playing ``pick`` of its legal card actions."""
    while not state.is_terminal():
        state.apply(pick(state.legal_actions()))
    return state


def legal_strings(state):
    return [state.action_to_string(a) for a in state.legal_actions()]


def refused(state, text, rule):
    before = (state.view(None), state.legal_actions(), state.current_player())
    with pytest.raises(IllegalAction) as err:
        state.apply(state.string_to_action(text))
    assert err.value.rule == rule, err.value
    assert (state.view(None), state.legal_actions(), state.current_player()) == before


def hand_of(state, seat):
    return state.view(seat)["hand"]


def pot_delta(result):
    return sum(t.amount for t in result.transfers if t.target == POT) - sum(
        t.amount for t in result.transfers if t.source == POT)


# Decks and actions found once by a seeded search (random play after the named auction);
# every expected amount below comes from the rules reference, not from the engine.
FIXTURES = {
    "wt_frage_52": dict(rid="tapp/wuerttemberg-tarock", ov={'pot': True}, dealer=2, pot=4,
        deck=("H9 H6 CJ D6 CK C7 D8 HQ CT CQ D9 SK C9 S7 HJ H7 DK HK HA S6 SA H8 HT DJ C8 D7 DA S8 DT S9 SJ DQ SQ "
            "ST C6 CA"),
        actions=("bid:frage pass pass discard:H9,C7,CJ no-tout play:DA play:D9 play:DJ play:H6 play:HA play:HJ play:S6 "
            "play:SK play:S8 play:C6 play:CK play:CQ play:D6 play:DQ play:H8 play:C9 play:C8 play:CT play:DT "
            "play:HT play:DK play:SQ play:H7 play:S9 play:D7 play:HQ play:CA play:SA play:S7 play:HK play:D8 "
            "play:SJ play:ST")),
    "wt_solo_80": dict(rid="tapp/wuerttemberg-tarock", ov={'pot': True}, dealer=2, pot=4,
        deck=("S9 DQ CA C7 S8 SK HA CK HK H9 HQ ST C8 H6 SJ S7 D6 D8 SQ CT DA C6 H7 DT CJ S6 SA H8 D9 DK HT DJ CQ "
            "C9 D7 HJ"),
        actions=("pass bid:solo pass no-tout play:CJ play:CK play:C6 play:DK play:D7 play:D8 play:SQ play:ST play:SK "
            "play:SJ play:S8 play:HQ play:CT play:CQ play:C7 play:HK play:H7 play:H8 play:HT play:HJ play:HA "
            "play:SA play:H9 play:H6 play:DA play:DT play:D6 play:DJ play:C9 play:S7 play:D9 play:C8 play:S6")),
    "wt_frage_60": dict(rid="tapp/wuerttemberg-tarock", ov={}, dealer=0, pot=0,
        deck=("HT D6 CK H8 DJ HQ H9 C7 HJ ST C8 H7 H6 C9 HK S7 S9 D8 C6 SK DT CT CJ CQ SJ S8 D9 S6 HA DA CA DQ SA "
            "D7 SQ DK"),
        actions=("pass pass bid:frage discard:HK,C9,CT no-tout play:SJ play:SK play:SQ play:C8 play:CJ play:H9 play:H8 "
            "play:HJ play:H6 play:DQ play:D6 play:DJ play:C6 play:CQ play:HQ play:S7 play:ST play:SA play:H7 "
            "play:S8 play:HA play:C7 play:CK play:S9 play:HT play:S6 play:DA play:D7 play:D9 play:DT play:CA "
            "play:DK play:D8")),
    "classic_frage_65": dict(rid="tapp/classic-1879", ov={}, dealer=0, pot=0,
        deck=("SA C7 SQ CK D8 HQ DK D7 C8 DJ H8 CJ S6 S7 HA DQ ST H9 D9 SJ CA SK HK HJ C6 H7 C9 S8 DT H6 CQ CT HT "
            "D6 DA S9"),
        actions=("bid:frage pass pass discard:HQ,DQ,SQ no-tout play:H9 play:H6 play:HA play:S9 play:ST play:SJ play:C9 "
            "play:C8 play:CJ play:HT play:H7 play:H8 play:HJ play:C7 play:CQ play:D6 play:DK play:D7 play:D8 "
            "play:DJ play:DA play:HK play:S8 play:CT play:SK play:SA play:CA play:CK play:DT play:S7 play:C6 "
            "play:D9 play:S6")),
    "classic_solo_63": dict(rid="tapp/classic-1879", ov={}, dealer=0, pot=0,
        deck=("DJ CA HT D8 SQ D6 S8 CK D9 H8 CJ SJ H7 H9 SK HQ S9 HA DT HJ ST C6 DQ HK SA C7 CQ S6 S7 CT D7 C9 C8 "
            "DK H6 DA"),
        actions=("pass bid:solo pass trump:C no-tout play:S9 play:S7 play:SK play:DK play:D8 play:DT play:HJ play:H9 "
            "play:HQ play:CQ play:C9 play:C6 play:SA play:ST play:SJ play:C7 play:CT play:C8 play:D9 play:DA "
            "play:D6 play:H7 play:HA play:H8 play:S6 play:CK play:DQ play:CJ play:HK play:SQ play:D7 play:H6 "
            "play:S8")),
    "classic_herzsolo_75": dict(rid="tapp/classic-1879", ov={'pot': True}, dealer=1, pot=0,
        deck=("HJ CQ C9 SQ CJ S7 CK C8 HQ DT D7 CA HT H7 S8 DA HK DK H6 H9 C6 S6 ST C7 S9 HA CT D6 D8 SJ DQ SK H8 "
            "SA DJ D9"),
        actions=("pass pass bid:herzsolo no-tout play:DA play:D8 play:D9 play:HA play:H6 play:H7 play:S9 play:SJ "
            "play:S8 play:D7 play:DJ play:D6 play:C7 play:CK play:C6 play:CT play:C8 play:CA play:SA play:SQ "
            "play:SK play:S6 play:S7 play:H9 play:DQ play:H8 play:DK play:ST play:HK play:HQ play:CJ play:DT "
            "play:HT")),
    "classic_frage_50": dict(rid="tapp/classic-1879", ov={}, dealer=0, pot=0,
        deck=("D9 DT CJ H8 C7 H6 S6 S7 CQ DQ ST CA D7 S9 HT C8 HJ DA SA HK H9 SK DK DJ H7 CK S8 HA C9 HQ CT D8 C6 "
            "SQ SJ D6"),
        actions=("bid:frage pass pass discard:H6,HJ,D9 no-tout play:CK play:CT play:CA play:S9 play:S8 play:ST play:CQ "
            "play:C6 play:C7 play:C9 play:HT play:C8 play:SQ play:S6 play:SA play:H9 play:D7 play:H7 play:D8 "
            "play:D6 play:DT play:DA play:DQ play:DK play:CJ play:HK play:DJ play:S7 play:SK play:H8 play:HA "
            "play:HQ play:SJ")),
    "modern_herzsolo_72": dict(rid="tapp/modern", ov={}, dealer=0, pot=0,
        deck=("SA SJ H6 C8 H9 C9 D6 DA HJ CK S7 SK H7 DJ DT H8 D9 C6 CJ DK ST C7 HK HT HA CA S9 DQ CQ SQ S6 S8 CT "
            "D7 D8 HQ"),
        actions=("play weg weg contract:herzsolo play:HA play:H9 play:HQ play:SJ play:S6 play:SK play:HJ play:H6 "
            "play:H8 play:S7 play:S9 play:S8 play:H7 play:C9 play:CJ play:C8 play:CQ play:CT play:D8 play:DT "
            "play:DA play:SQ play:ST play:SA play:CA play:C6 play:CK play:DQ play:D9 play:D7 play:DJ play:D6 "
            "play:DK")),
    "modern_herzsolo_60": dict(rid="tapp/modern", ov={}, dealer=0, pot=0,
        deck=("DT SK H6 C7 CJ SA D9 HA DQ SQ C6 D6 HQ DJ H7 HK CT CA C8 H9 D8 HJ S7 S6 C9 HT S8 ST H8 D7 CK S9 DK "
            "CQ DA SJ"),
        actions=("weg play weg contract:herzsolo play:DT play:D9 play:DK play:H7 play:H8 play:H9 play:C6 play:C9 "
            "play:CK play:CT play:C8 play:C7 play:CJ play:CQ play:HT play:SK play:SA play:SQ play:S9 play:SJ "
            "play:ST play:DJ play:D7 play:DQ play:DA play:H6 play:HK play:CA play:D6 play:HQ play:S8 play:HA "
            "play:D8")),
    "modern_frage_4p": dict(rid="tapp/modern", ov={'players': 4}, dealer=0, pot=0,
        deck=("H6 C7 DQ C9 CJ DA SK S9 HT HQ D7 DJ SA H7 S7 CQ HA H9 C8 S6 HJ SQ HK C6 D8 DK D6 ST CT S8 D9 SJ DT "
            "H8 CA CK"),
        actions=("weg play weg weg contract:frage discard:H7,DA,C6,ST play:DK play:H9 play:D9 play:D7 play:S8 play:SK "
            "play:SQ play:S7 play:C8 play:CK play:CQ play:CT play:HK play:HT play:HQ play:H6 play:S6 play:H8 "
            "play:C7 play:SA play:HJ play:D8 play:HA play:DT play:CJ play:SJ play:CA play:DQ play:DJ play:D6 "
            "play:C9 play:S9")),
    "modern_bettel_lost": dict(rid="tapp/modern", ov={}, dealer=0, pot=0,
        deck=("H6 C7 DQ C9 CJ DA SK S9 HT HQ D7 DJ SA H7 S7 CQ HA H9 C8 S6 HJ SQ HK C6 D8 DK D6 ST CT S8 D9 SJ DT "
            "H8 CA CK"),
        actions="play weg weg contract:bettel play:C9 play:CT play:CK play:H9 play:H8 play:H6 play:S9 play:S6 play:SA"),
    "ramsch_3p_jungfer": dict(rid="tapp/modern", ov={}, dealer=0, pot=0,
        deck=("DQ CK D8 H8 ST SQ CT HT HQ C6 CA SK CQ HK D6 D7 C8 DA DK S9 SA H9 H6 SJ DJ H7 C7 S7 D9 DT HA C9 S8 "
            "S6 HJ CJ"),
        actions=("weg weg weg play:CK play:C9 play:CA play:SA play:S7 play:SQ play:HJ play:H7 play:HA play:D7 play:DK "
            "play:DQ play:S8 play:DJ play:ST play:HT play:HQ play:HK play:DT play:S9 play:D6 play:CT play:CJ "
            "play:CQ play:D9 play:SK play:D8 play:C8 play:C6 play:C7 play:DA play:S6 play:H8")),
    "ramsch_4p": dict(rid="tapp/modern", ov={'players': 4}, dealer=0, pot=0,
        deck=("ST CJ H8 S9 C7 S6 CQ DA SK D7 D8 C6 HQ H7 D6 SQ SA S8 C9 DJ CA H6 S7 H9 HK CT D9 C8 DK DQ CK SJ HT "
            "DT HJ HA"),
        actions=("weg weg weg weg play:D9 play:DK play:DA play:DT play:DJ play:D8 play:D6 play:DQ play:S8 play:SK "
            "play:H6 play:ST play:SQ play:SA play:SJ play:HA play:S6 play:HT play:C6 play:CT play:S9 play:CK "
            "play:HJ play:HK play:C8 play:CQ play:CA play:CJ play:D7 play:H8 play:C7 play:C9")),
    "modern_skat32_solo": dict(rid="tapp/modern", ov={'pack': 'skat32'}, dealer=0, pot=0,
        deck="C7 S8 C9 SA SK CQ H7 HQ D9 HA DT C8 CT SQ DA DQ DK SJ H8 S7 HT CJ D7 D8 CK CA HK S9 DJ ST H9 HJ",
        actions=("play play weg contract:solo:S contract:pass play:CT play:CQ play:CJ play:C8 play:SJ play:S7 play:DJ "
            "play:D9 play:D8 play:HK play:HT play:SQ play:CA play:SA play:ST play:S9 play:HQ play:S8 play:DK "
            "play:D7 play:DA play:C7 play:SK play:HJ play:DQ play:H7 play:CK play:H8 play:H9 play:C9")),
}


def replay(name):
    f = FIXTURES[name]
    game = game_of(f["rid"], **f["ov"])
    s = start(game, f["deck"], f["dealer"], f["pot"])
    act(s, f["actions"])
    assert s.is_terminal()
    r = s.result()
    assert sum(r.summary["card_points"].values()) == 120
    assert sum(r.summary["tricks"].values()) == game.hand_size
    return s, r


def test_full_deal_wt_frage_52_with_pot():
    s, r = replay("wt_frage_52")
    d = r.summary["declarer"]
    assert (d, r.summary["contract"], r.summary["card_points"]["declarer"]) == (0, "frage", 52)
    # dealer 2 antes 2 (pot 4 -> 6); declarer pays 8 to each defender and 8 into the pot
    assert s.returns() == [-24, 8, 8 - 2]
    assert pot_delta(r) == 2 + 8
    assert r.next_dealer == 0 and r.dealer == 2


def test_full_deal_wt_solo_80_takes_pot():
    s, r = replay("wt_solo_80")
    assert (r.summary["declarer"], r.summary["contract"]) == (1, "solo")
    assert r.summary["card_points"]["declarer"] == 80
    assert s.returns() == [-40, 80 + 6, -40 - 2]
    assert pot_delta(r) == 2 - 6


def test_full_deal_wt_60_is_a_draw():
    s, r = replay("wt_frage_60")
    assert r.summary["card_points"] == {"declarer": 60, "defenders": 60}
    assert s.returns() == [0, 0, 0] and r.summary["won"] is None


def test_full_deal_classic_frage_65_and_50():
    s, r = replay("classic_frage_65")
    d = r.summary["declarer"]
    assert r.summary["card_points"]["declarer"] == 65
    assert s.returns()[d] == 4 and sorted(s.returns()) == [-2, -2, 4]
    s, r = replay("classic_frage_50")
    d = r.summary["declarer"]
    assert r.summary["card_points"]["declarer"] == 50
    assert s.returns()[d] == -6 and sorted(s.returns()) == [-6, 3, 3]


def test_full_deal_classic_suit_solo_63():
    s, r = replay("classic_solo_63")
    assert r.summary["contract"] == "solo:C" and r.summary["card_points"]["declarer"] == 63
    assert s.returns()[2] == 4


def test_full_deal_classic_herzsolo_75_takes_pot():
    s, r = replay("classic_herzsolo_75")
    assert r.summary["contract"] == "herzsolo" and r.summary["card_points"]["declarer"] == 75
    # dealer 1 is the declarer: antes 2 into an empty pot, wins 15 each and takes the pot
    assert s.returns() == [-15, -2 + 30 + 2, -15]
    assert pot_delta(r) == 0


def test_full_deal_modern_herzsolo_72_and_60():
    s, r = replay("modern_herzsolo_72")
    assert r.summary["card_points"]["declarer"] == 72 and s.returns() == [-10, 20, -10]
    s, r = replay("modern_herzsolo_60")
    assert r.summary["card_points"]["declarer"] == 60 and s.returns() == [10, 10, -20]
    assert r.summary["won"] is False


def test_full_deal_modern_4p_frage_exchanges_four():
    f = FIXTURES["modern_frage_4p"]
    discard = [a for a in f["actions"].split() if a.startswith("discard:")]
    assert len(discard) == 1 and len(discard[0].split(":")[1].split(",")) == 4
    s, r = replay("modern_frage_4p")
    d = r.summary["declarer"]
    assert r.summary["card_points"]["declarer"] >= 61
    assert s.returns()[d] == 15 and sorted(s.returns()) == [-5, -5, -5, 15]


def test_full_deal_modern_bettel_lost_ends_at_once():
    f = FIXTURES["modern_bettel_lost"]
    game = game_of(f["rid"], **f["ov"])
    s = start(game, f["deck"], f["dealer"])
    act(s, f["actions"])
    r = s.result()
    assert r.summary["ended_early"] and r.summary["tricks"]["1"] == 1
    assert s.returns() == [15, -30, 15]
    assert len(f["actions"].split()) == 4 + 3 * 3  # three tricks, then over


def test_full_deal_ramsch_3p_jungfer():
    s, r = replay("ramsch_3p_jungfer")
    pts = r.summary["card_points"]
    assert r.summary["contract"] == "ramsch" and r.summary["declarer"] is None
    assert pts == {"0": 36, "1": 0, "2": 84}
    assert r.summary["tricks"]["1"] == 0
    assert s.returns() == [5, 10, -15]


def test_full_deal_ramsch_4p():
    s, r = replay("ramsch_4p")
    pts = r.summary["card_points"]
    loser = max(pts, key=pts.get)
    assert s.returns()[int(loser)] == -15
    assert sorted(s.returns()) == [-15, 5, 5, 5]


def test_full_deal_modern_skat32():
    s, r = replay("modern_skat32_solo")
    assert r.summary["contract"] == "solo:S"
    assert s.returns() == [-5, 10, -5]


# ---------------------------------------------------------------------------------- deals
@pytest.mark.parametrize("rid, ov, pattern", [
    (WT, {}, "T3 4 3 4"),
    (CL, {}, "T3 4 3 4"),
    (MO, {}, "4 3 T3 4"),
    (MO, {"players": 4}, "3 T2 2 T2 3"),
    (MO, {"pack": "skat32"}, "3 T2 4 3"),
    (MO, {"pack": "skat32", "players": 4}, "3 T2 2 T2 2"),
])
@pytest.mark.parametrize("dealer", [0, 1, 2])
def test_deal_patterns(rid, ov, pattern, dealer):
    game = game_of(rid, **ov)
    n = game.num_players
    deck = list(range(game.pack.size))
    s = start(game, deck, dealer)
    pos = 0
    expect_hands = {seat: [] for seat in range(n)}
    tapp = []
    for packet in pattern.split():
        if packet.startswith("T"):
            k = int(packet[1:])
            tapp += deck[pos:pos + k]
            pos += k
        else:
            for off in range(n):
                seat = (dealer + 1 + off) % n
                expect_hands[seat] += deck[pos:pos + int(packet)]
                pos += int(packet)
    assert pos == game.pack.size
    for seat in range(n):
        assert s.hands[seat] == sum(1 << c for c in expect_hands[seat])
    assert s.tapp == sum(1 << c for c in tapp)
    assert s.current_player() == (dealer + 1) % n  # forehand speaks first
    assert len(DEAL_PATTERNS) == 5


def test_bad_decks_rejected():
    game = game_of(MO)
    for deck in ([0] * 36, list(range(35)), list(range(1, 37)), list(range(36)) + [0],
                 [str(i) for i in range(36)], [-1] + list(range(1, 36))):
        with pytest.raises(ValueError, match="exactly once|not a card|a list of"):
            game.new_deal(TableState(), deck)


# ---------------------------------------------------------------------------- auctions
def test_wt_all_pass_thrown_in_pot_persists():
    game = game_of(WT, pot=True)
    s = start(game, list(range(36)), dealer=1, pot=6)
    act(s, "pass pass pass")
    r = s.result()
    assert r.summary["outcome"] == "all-pass" and r.summary["declarer"] is None
    assert [(t.source, t.target, t.amount) for t in r.transfers] == [(1, POT, 2)]
    assert r.next_dealer == 2
    assert s.view(0)["pot"] == 8


def test_wt_frage_solo_hold():
    game = game_of(WT)
    s = start(game, list(range(36)))  # forehand 1, middlehand 2, rearhand 0
    act(s, "bid:frage")
    assert s.current_player() == 2
    act(s, "bid:solo")
    assert s.current_player() == 1 and legal_strings(s) == ["pass", "hold"]
    act(s, "hold")
    # the overcaller cannot go higher than Solo in Württemberg Tarock: only pass
    assert s.current_player() == 2 and legal_strings(s) == ["pass"]
    refused(s, "bid:herzsolo", "bid not in this rule set")
    act(s, "pass")
    assert s.current_player() == 0 and legal_strings(s) == ["pass"]
    act(s, "pass")
    assert s.declarer == 1 and s.contract_string() == "solo"
    assert s.view(1)["phase"] == "tout"


def test_wt_both_later_players_pass_and_overcaller_wins_when_holder_passes():
    game = game_of(WT)
    s = act(start(game, list(range(36))), "bid:frage pass pass")
    assert s.declarer == 1 and s.contract_string() == "frage"
    s = act(start(game, list(range(36))), "pass bid:frage bid:solo")
    assert s.current_player() == 2  # middlehand, the earlier bidder, may hold
    act(s, "pass")
    assert s.declarer == 0 and s.contract_string() == "solo"


def test_auction_refusals():
    game = game_of(CL)
    s = start(game, list(range(36)))
    refused(s, "hold", "hold only when overcalled")
    refused(s, "play:HA", "wrong phase")
    act(s, "bid:solo")
    refused(s, "bid:frage", "bid too low")
    refused(s, "bid:solo", "bid too low")
    act(s, "bid:herzsolo")
    refused(s, "bid:herzsolo", "hold or pass")
    with pytest.raises(IllegalAction) as e:
        s.apply(s.string_to_action("hold"), seat=2)
    assert e.value.rule == "not your turn"


def test_classic_three_level_auction_with_holds():
    game = game_of(CL)
    s = start(game, list(range(36)))
    act(s, "bid:frage bid:solo hold bid:herzsolo hold")
    assert legal_strings(s) == ["pass"]  # middlehand cannot go above Herzsolo
    act(s, "pass")
    assert s.current_player() == 0 and legal_strings(s) == ["pass"]
    act(s, "pass")
    assert s.declarer == 1 and s.contract_string() == "herzsolo" and s.trump_suit == "H"


def test_classic_rearhand_overcalls_and_survivor_holds():
    game = game_of(CL)
    s = act(start(game, list(range(36))), "pass bid:frage bid:solo")
    assert s.current_player() == 2
    act(s, "hold")
    assert legal_strings(s) == ["pass", "bid:herzsolo"]
    act(s, "pass")
    assert s.declarer == 2 and s.view(2)["phase"] == "trump"


def test_modern_rounds_and_ties_to_earlier_seat():
    game = game_of(MO)
    s = start(game, list(range(36)), dealer=0)  # forehand 1, then 2, then 0
    act(s, "play weg play")
    assert s.current_player() == 1 and "pass" in legal_strings(s)
    act(s, "contract:solo:C")
    assert s.current_player() == 0
    refused(s, "contract:solo:S", "bid too low")  # same rank: the earlier seat keeps it
    refused(s, "contract:frage", "bid too low")
    refused(s, "weg", "wrong phase")
    act(s, "pass")
    assert s.declarer == 1 and s.contract_string() == "solo:C" and s.trump_suit == "C"


def test_modern_rank_not_value_orders_contracts():
    game = game_of(MO)
    s = act(start(game, list(range(36))), "play play weg", "contract:bettel")
    assert "contract:rufer:C" in legal_strings(s)       # Rufer (15) outranks Bettel (15)
    s = act(start(game, list(range(36))), "play play weg", "contract:rufer:C")
    refused(s, "contract:bettel", "bid too low")
    s = act(start(game, list(range(36))), "play play weg", "contract:durch:D")
    refused(s, "contract:bettel-ouvert", "bid too low")  # Durch (30) outranks ouvert (30)
    refused(s, "contract:herzrufer", "bid too low")
    act(s, "contract:herzdurch")
    assert s.declarer == 2 and s.contract_string() == "herzdurch"


def test_modern_single_player_must_name_a_contract():
    game = game_of(MO)
    s = act(start(game, list(range(36))), "weg weg play")
    assert s.current_player() == 0
    assert "pass" not in legal_strings(s) and len(legal_strings(s)) == 15
    refused(s, "pass", "must name a contract")
    # several said play, all but the last passed: the last must name one
    s = act(start(game, list(range(36))), "play play weg", "pass")
    refused(s, "pass", "must name a contract")


def test_modern_nobody_plays_ramsch_no_trumps():
    game = game_of(MO)
    s = act(start(game, list(range(36))), "weg weg weg")
    v = s.view(1)
    assert v["phase"] == "play" and v["contract"] == "ramsch" and v["trump"] is None
    assert s.trump_mask == 0 and s.current_player() == 1


# ------------------------------------------------------------------------- play rules
def test_trumpfzwang_without_stichzwang_and_farbzwang():
    game = game_of(WT)
    deck = make_deck(game, 0, {1: "CA CT CK CQ CJ C9 C8 C7 C6 SA ST",
                               2: "HA H6 SK SQ SJ S9 S8 S7 S6 DA DT"}, tapp="D6 D7 D8")
    s = act(start(game, deck), "bid:solo pass pass no-tout play:CA")
    # seat 2 is void in clubs, holds trumps: must trump, may play the low H6 (no Stichzwang)
    assert legal_strings(s) == ["play:H6", "play:HA"]
    refused(s, "play:SK", "must trump (Trumpfzwang)")
    refused(s, "play:C6", "card not in hand")
    act(s, "play:H6")
    # seat 0 holds clubs? no: everything else; it has hearts and diamonds but no clubs
    assert all(a.startswith("play:H") for a in legal_strings(s))
    act(s, "play:H7")
    assert s.last_trick[2] == 0  # H7 beats H6
    act(s, "play:D9")
    assert len(legal_strings(s)) == 10  # the declarer: no diamonds, no trumps: any card
    act(s, "play:SA")
    assert legal_strings(s) == ["play:DT", "play:DA"]
    refused(s, "play:SK", "follow suit (Farbzwang)")
    refused(s, "play:HA", "follow suit (Farbzwang)")


def test_classic_suit_solo_hearts_plain_and_trump_h_refused():
    game = game_of(CL)
    deck = make_deck(game, 0, {1: "CA CT CK CQ CJ C9 C8 C7 SA ST SK",
                               2: "HA HT HK DA DT DK DQ DJ D9 D8 D7"}, tapp="C6 S6 D6")
    s = act(start(game, deck), "bid:solo pass pass")
    assert legal_strings(s) == ["trump:D", "trump:C", "trump:S"]
    refused(s, "trump:H", "solo trump cannot be hearts")
    act(s, "trump:C no-tout")
    assert s.contract_string() == "solo:C" and s.view(0)["trump"] == "C"
    act(s, "play:SA")
    # seat 2 is void in spades and holds hearts, which are no trumps now: any card
    assert len(legal_strings(s)) == 11
    act(s, "play:HA play:S7")
    assert s.last_trick[2] == 1  # the heart Ace does not win a spade trick


# ------------------------------------------------------------------ Frage and the tapp
def test_frage_exchange_counts_tapp_and_discards_for_declarer():
    game = game_of(WT)
    deck = make_deck(game, 0, {1: "H6 H7 H8 H9 HJ C6 C7 C8 S6 S7 S8"}, tapp="DA DT HA")
    s = act(start(game, deck), "bid:frage pass pass")
    v1 = s.view(1)
    assert v1["phase"] == "discard" and v1["tapp"] == ["HA", "DT", "DA"]
    assert len(v1["hand"]) == 14 and "tapp" not in s.view(0) and "tapp" not in s.view(2)
    assert len(s.legal_actions()) == 364  # C(14, 3)
    refused(s, "discard:C6,C7", "discard as many as picked up")
    refused(s, "discard:C6,C7,D6", "discard only cards you hold")
    refused(s, "play:C6", "wrong phase")
    act(s, "discard:DA,DT,C6")  # Aces and Tens may be discarded; they count for him
    assert s.view(1)["discards"] == ["DT", "DA", "C6"]
    assert s.view(0)["log"][-1] == [1, "discard:?"]
    assert s.view(1)["log"][-1] == [1, "discard:DT,DA,C6"]
    act(s, "no-tout")
    refused(s, "tout", "wrong phase")  # Tout only before trick 1
    play_out(s)
    r = s.result()
    assert r.summary["card_points"]["declarer"] >= 21
    assert sum(r.summary["card_points"].values()) == 120


def test_solo_tapp_hidden_but_counted():
    game = game_of(WT)
    deck = make_deck(game, 0, {}, tapp="HA HT DA")
    s = act(start(game, deck), "bid:solo pass pass no-tout")
    for seat in (0, 1, 2, None):
        v = s.view(seat)
        assert "tapp" not in v and not {"HA", "HT", "DA"} & set(map(str, v.values()))
    play_out(s)
    r = s.result()
    assert r.summary["card_points"]["declarer"] == s.points[1] + 32


def test_string_parsing():
    game = game_of(MO)
    s = start(game, list(range(36)))
    for text in ("play:HA", "call:SA", "give:D7", "pass", "hold", "bid:frage", "trump:C",
                 "tout", "no-tout", "play", "weg", "contract:solo:C", "contract:herzdurch",
                 "discard:C7,D8,HA"):
        assert s.action_to_string(s.string_to_action(text)) in (text, "discard:HA,D8,C7")
    assert s.string_to_action("discard:D8,HA,C7") == s.string_to_action("discard:C7,D8,HA")
    assert s.action_to_string(s.string_to_action("discard:C7,D8,HA")) == "discard:HA,D8,C7"
    assert s.string_to_action("contract:pass") == s.string_to_action("pass")
    for bad in ("", "play:H5", "play:", "foo", "bid:grand", "contract:ramsch", "discard:C7,C7",
                "trump:X", "play:HAX"):
        with pytest.raises(IllegalAction) as e:
            s.string_to_action(bad)
        assert e.value.rule == "notation"


# --------------------------------------------------------------------------------- Tout
WT_TOUT_HANDS = {1: "HA HT HK HQ HJ H9 H8 H7 H6 SA CA",
                 2: "S6 S7 S8 S9 SJ SQ SK ST CK CT C6",
                 0: "C7 C8 C9 CJ CQ D9 DJ DQ DK DT DA"}


@pytest.mark.parametrize("mult", [2, 3])
def test_wt_solo_tout_made(mult):
    game = game_of(WT, tout_multiplier=mult)
    s = act(start(game, make_deck(game, 0, WT_TOUT_HANDS, tapp="D6 D7 D8")),
            "pass bid:solo pass")
    assert s.declarer == 2
    s = act(start(game, make_deck(game, 0, WT_TOUT_HANDS, tapp="D6 D7 D8")),
            "bid:solo pass pass tout")
    refused(s, "no-tout", "wrong phase")
    play_out(s, pick=max)
    r = s.result()
    assert r.summary["contract"] == "solo+tout" and r.summary["tricks"]["1"] == 11
    assert s.returns() == [-60 * 2 * mult, 2 * 60 * 2 * mult, -60 * 2 * mult]


def test_wt_frage_tout_failed_pays_the_same():
    game = game_of(WT)
    hands = dict(WT_TOUT_HANDS)
    hands[1] = "HA HT HK HQ HJ H9 H8 H7 H6 SA C6"
    hands[2] = "S6 S7 S8 S9 SJ SQ SK ST CK CT CA"
    s = act(start(game, make_deck(game, 0, hands, tapp="D6 D7 D8")),
            "bid:frage pass pass discard:D6,D7,D8 tout")
    play_out(s, pick=min)
    r = s.result()
    assert r.summary["tricks"]["1"] < 11 and r.summary["card_points"]["declarer"] > 60
    assert r.summary["won"] is False and not r.summary["ended_early"]  # historic: plays on
    assert s.returns() == [120, -240, 120]


def test_classic_herzsolo_tout_with_pot():
    game = game_of(CL, pot=True)
    s = act(start(game, make_deck(game, 0, WT_TOUT_HANDS, tapp="D6 D7 D8"), pot=10),
            "bid:herzsolo pass pass tout")
    play_out(s, pick=max)
    # 2 x ceil(60/1) = 120 from each defender, and the Solo-like pot (10 + ante 2)
    assert s.returns() == [-120 - 2, 240 + 12, -120]


# --------------------------------------------------------------------------------- Modern
MODERN_DURCH = {1: "HA HT HK HQ HJ H9 H8 H7"}


def test_modern_4p_herzdurch_made_and_failed():
    game = game_of(MO, players=4)
    s = act(start(game, make_deck(game, 0, MODERN_DURCH)), "play weg weg weg contract:herzdurch")
    play_out(s)
    assert s.returns() == [-60, 180, -60, -60]
    hands = {1: "HA HT HK HQ HJ H9 H8 C6", 2: "CA C7 C8 C9 CJ CQ CK CT"}
    s = act(start(game, make_deck(game, 0, hands)), "play weg weg weg contract:herzdurch")
    act(s, "play:C6")
    play_out(s)
    r = s.result()
    assert r.summary["ended_early"] and s.played == 1  # a defender trick ends it at once
    assert s.returns() == [60, -180, 60, 60]
    assert r.summary["tricks"]["1"] == 0 and sum(r.summary["tricks"].values()) == 1


def test_modern_bettel_ouvert_hand_exposed_from_first_lead():
    game = game_of(MO)
    s = act(start(game, make_deck(game, 0, {2: "H6 H7 D6 D7 C6 C7 S6 S7 H8 D8 C8"})),
            "weg play weg")
    assert s.view(0)["open_hand"] is None
    act(s, "contract:bettel-ouvert")
    v = s.view(0)
    assert v["phase"] == "play" and v["trump"] is None
    assert sorted(v["open_hand"]) == sorted("H6 H7 D6 D7 C6 C7 S6 S7 H8 D8 C8".split())
    assert s.view(None)["open_hand"] == v["open_hand"]
    play_out(s, pick=max)
    assert s.returns() == [-30, -30, 60]  # sevens and sixes under everything: won


def test_modern_bettel_is_not_ouvert():
    game = game_of(MO)
    s = act(start(game, list(range(36))), "weg play weg contract:bettel")
    assert s.view(0)["open_hand"] is None


def rufer_deal(rufer_in_tapp="none", tapp="DA DT D9"):
    game = game_of(MO, rufer_in_tapp=rufer_in_tapp)
    hands = {1: "CA CT CK CQ CJ C9 C8 C7 SA ST HA", 2: "SK SQ SJ S9 S8 S7 S6 HT HK HQ HJ"}
    s = act(start(game, make_deck(game, 0, hands, tapp=tapp)), "play weg weg contract:rufer:C")
    return game, s


def test_rufer_called_card_held_by_defender():
    game, s = rufer_deal()
    assert s.view(1)["phase"] == "call" and len(s.legal_actions()) == 25
    refused(s, "call:CA", "cannot call a card you hold")
    refused(s, "give:C7", "wrong phase")
    act(s, "call:C6")  # C6 is with seat 0 (the rest of the pack)
    assert "C6" in hand_of(s, 1) and "C6" not in hand_of(s, 0)
    assert "give:C6" in legal_strings(s)  # rules reference §3.4: any card, the called one included
    refused(s, "give:D6", "give a card you hold")
    act(s, "give:HA")
    assert "HA" in hand_of(s, 0) and "HA" not in hand_of(s, 1)
    v0, v1, v2 = s.view(0), s.view(1), s.view(2)
    assert v1["rufer_holder"] == 0 and v0["rufer_holder"] == 0 and "rufer_holder" not in v2
    assert v2["called"] == "C6" and v2["log"][-1] == [1, "give:?"]
    assert v0["log"][-1] == [1, "give:HA"] and v1["given"] == "HA"
    assert all(len(h) == 11 for h in (v0["hand"], v1["hand"], v2["hand"]))
    assert v0["trump"] == "C"
    play_out(s, pick=max)
    r = s.result()
    assert r.summary["contract"] == "rufer:C"
    assert s.returns() == ([-15, 30, -15] if r.summary["won"] else [15, -30, 15])


def test_rufer_declarer_may_give_back_the_called_card():
    # rules reference §3.4 (the Norwegian Tapp rules text: "et kort etter eget valg"): the
    # declarer gives back any card of his own choice, the called card included; then nobody
    # but the two knows it went back.
    game, s = rufer_deal()
    act(s, "call:C6 give:C6")
    assert "C6" in hand_of(s, 0) and "C6" not in hand_of(s, 1)
    assert s.view(2)["log"][-1] == [1, "give:?"] and s.view(0)["given"] == "C6"
    assert s.view(2)["phase"] == "play"


def test_rufer_any_defender_trick_loses_at_once():
    game = game_of(MO)
    hands = {1: "CA CT CK CQ CJ C9 C8 C7 SA ST HA", 2: "SK SQ SJ S9 S8 S7 S6 HT HK HQ HJ"}
    s = act(start(game, make_deck(game, 0, hands, tapp="D6 D7 D8")),
            "play weg weg contract:rufer:D call:DA give:HA")
    assert "DA" in hand_of(s, 1) and "HA" in hand_of(s, 0)
    act(s, "play:ST play:S6")
    assert legal_strings(s) == ["play:D9", "play:DJ", "play:DQ", "play:DK", "play:DT"]
    act(s, "play:D9")  # seat 0 must trump (diamonds) and takes the trick
    assert s.is_terminal() and s.played == 1
    assert s.returns() == [15, -30, 15] and s.result().summary["ended_early"]


def test_rufer_hand_sizes_do_not_reveal_the_holder_before_the_give():
    # rules reference §3.4 / §6 P5: the holder hands the card over face down; his identity is
    # known to the declarer only. Between call and give the others must not see 10 vs 11 cards.
    game, s = rufer_deal()
    act(s, "call:C6")  # held by seat 0
    assert s.view(1)["hand_sizes"] == [10, 12, 11]  # the declarer knows
    assert s.view(0)["hand_sizes"] == [10, 12, 11]  # the holder knows
    for seat in (2, None):
        assert s.view(seat)["hand_sizes"] == [11, 11, 11]
    act(s, "give:HA")
    assert all(s.view(seat)["hand_sizes"] == [11, 11, 11] for seat in (0, 1, 2, None))
    game, s = rufer_deal("swap", tapp="C6 DT D9")
    act(s, "call:C6")  # lies in the tapp: swapped
    assert s.view(1)["hand_sizes"] == [11, 12, 11]
    for seat in (0, 2, None):
        assert s.view(seat)["hand_sizes"] == [11, 11, 11]
    game4 = game_of(MO, players=4)
    s = act(start(game4, list(range(36))), "play weg weg weg contract:rufer:C")
    d = s.declarer
    call = next(a for a in legal_strings(s) if not any(s.view(o)["hand"].count(a[5:])
                                                       for o in range(4) if o == d)
                and any(a[5:] in s.view(o)["hand"] for o in range(4) if o != d))
    act(s, call)
    holder = s.holder
    for seat in [o for o in range(4) if o not in (d, holder)] + [None]:
        assert s.view(seat)["hand_sizes"] == [8, 8, 8, 8]


def test_rufer_called_card_in_tapp_none_and_swap():
    game, s = rufer_deal("none", tapp="C6 DT D9")
    hands_before = [s.hands[i] for i in range(3)]
    act(s, "call:C6")
    assert s.view(1)["phase"] == "play" and s.hands == hands_before
    assert s.view(1)["rufer_holder"] == "tapp"
    game, s = rufer_deal("swap", tapp="C6 DT D9")
    act(s, "call:C6")
    assert s.view(1)["phase"] == "give" and "C6" in hand_of(s, 1)
    act(s, "give:HA")
    assert "HA" not in hand_of(s, 1) and all("HA" not in hand_of(s, i) for i in (0, 2))
    assert s.view(0)["log"][-1] == [1, "give:?"]
    play_out(s, pick=max)
    r = s.result()
    if not r.summary["ended_early"]:
        assert sum(r.summary["card_points"].values()) == 120
    assert r.summary["card_points"]["declarer"] >= 11 + 10  # HA and DT lie in the tapp


def test_herzrufer_trump_is_hearts():
    game = game_of(MO)
    s = act(start(game, list(range(36))), "play weg weg contract:herzrufer")
    assert s.view(0)["trump"] == "H" and s.view(1)["phase"] == "call"


def test_modern_durch_suit_trump():
    game = game_of(MO)
    s = act(start(game, list(range(36))), "weg weg play contract:durch:S")
    assert s.view(1)["trump"] == "S" and s.current_player() == 1


def test_modern_frage_value_option():
    f = FIXTURES["modern_frage_4p"]
    game = game_of(f["rid"], players=4, frage_value=7)
    s = act(start(game, f["deck"], f["dealer"]), f["actions"])
    assert sorted(s.returns()) == [-7, -7, -7, 21]


def test_modern_next_dealer_in_direction_of_play():
    game = game_of(MO, players=4)
    s = act(start(game, list(range(36)), dealer=3), "weg weg weg weg")
    assert s.current_player() == 0  # forehand = dealer + 1 in seat numbers
    play_out(s)
    assert s.result().next_dealer == 0 and s.result().dealer == 3


def test_terminal_refuses_everything():
    game = game_of(WT)
    s = act(start(game, list(range(36))), "pass pass pass")
    assert s.legal_actions() == [] and s.current_player() == -1
    refused(s, "pass", "deal is over")
