"""The heuristic Tippen bot: legal, deterministic, and sensible in clear positions; it reads the
seat's observation (``state.observation(seat)``), not the view."""

from __future__ import annotations

import random

import pytest
from test_tippen_support import deal, game, run

from stammtisch.bots.tippen import TippenHeuristic
from stammtisch.games import TableState, new_game
from stammtisch.rules import ruleset
from stammtisch.rules.tippen import TIPPEN_PRESETS

A, B, C, D = range(4)


def bot_move(s, bot=None):
    bot = bot or TippenHeuristic()
    choice = bot.act(s, s.current_player())
    assert choice in s.legal_actions()
    return s.action_to_string(choice)


@pytest.mark.parametrize("rid", sorted(TIPPEN_PRESETS))
def test_bot_plays_whole_sessions_legally(rid):
    extra = {} if rid.endswith("1821") else {"robbing": True, "sniffing": "1859" if "1859" in rid else "modern",
                                              "schieben": True}
    g = new_game(ruleset(rid, extra))
    rng = random.Random(11)
    dealer, pot, reserve = 0, 0, 0
    for i in range(40):
        deck = list(range(g.size))
        rng.shuffle(deck)
        s = g.new_deal(TableState(dealer=dealer, pot=pot, reserve=reserve), deck)
        while not s.is_terminal():
            s.apply(s.string_to_action(bot_move(s, TippenHeuristic(random.Random(i)))))
        res = s.result()
        dealer, pot, reserve = res.next_dealer, s.pot, s.reserve
        assert pot >= 0


def test_bot_is_deterministic_without_rng():
    g = game("tippen/grupp-1975")
    s = deal(g, dealer=A, pot=9)
    assert len({TippenHeuristic().act(s, s.current_player()) for _ in range(5)}) == 1


def test_bot_taps_strong_and_passes_weak():
    g = game("tippen/meyers-1905")
    s = deal(g, dealer=A, pot=9, upcard="D7", hands={B: "DA DK HA", C: "H7 S8 C9"})
    assert bot_move(s) == "tap"
    run(s, "tap")
    assert bot_move(s) == "pass"


def test_bot_taps_when_everyone_else_passed():
    g = game("tippen/grupp-1975")
    s = deal(g, dealer=A, pot=9, upcard="D7", hands={A: "H9 SK C8"})
    run(s, "pass pass pass")
    assert bot_move(s) == "tap"


def test_bot_wins_cheaply_or_throws_low():
    g = game("tippen/meyers-1905")
    s = deal(g, dealer=A, upcard="D7", hands={B: "HT S8 C8", C: "HA HJ H8", D: "H7 D9 DA", A: "SA S7 C7"})
    run(s, "play:HT")
    assert bot_move(s) == "play:HJ"                  # lowest card that beats the ten
    run(s, "play:HJ play:H7")
    assert bot_move(s) == "play:C7"                  # cannot win: lowest card, no trump wasted


def test_bot_exchanges_weak_plain_cards_and_never_knocks():
    g = game("tippen/grupp-1975", knocking=True)
    s = deal(g, dealer=A, pot=9, upcard="D7", hands={B: "DA HA C8", C: "DK DQ SA", A: "S9 H9 C9"})
    assert bot_move(s) == "turn"
    run(s, "turn tap tap pass pass")
    assert bot_move(s) == "exchange:C8"


@pytest.mark.parametrize("rid", ["tippen/grupp-1975", "tippen/katira-1983"])
def test_three_top_trumps_tap_even_when_the_bete_is_the_pot(rid):
    g = game(rid)
    s = deal(g, dealer=A, pot=30, upcard="D7", hands={B: "DA DK DQ"})
    assert bot_move(s) == "tap"


def test_katira_weak_hand_against_tappers_passes():
    # a lone low trump against two tappers: a bête would cost the whole pot
    g = game("tippen/katira-1983")
    s = deal(g, dealer=A, pot=30, upcard="D7", hands={B: "DA DK DQ", C: "DJ CA HA",
                                                     D: "D8 S9 C7"})
    run(s, "tap tap")
    assert bot_move(s) == "pass"


def test_heuristic_beats_random_seats():
    from stammtisch.sim import simulate
    for rid in ("tippen/grupp-1975", "tippen/meyers-1905"):
        total = 0
        for h in range(4):
            kinds = ["random"] * 4
            kinds[h] = "heuristic"
            summary, _ = simulate(ruleset(rid, {"players": 4}), 100, seed=h, bots=kinds)
            total += summary.balances[f"P{h + 1}"]
        assert total > 100, (rid, total)    # well above 0.25 counters a deal
