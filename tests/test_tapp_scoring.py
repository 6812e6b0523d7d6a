"""Tapp settlement as pure functions: every worked example of docs/rules-reference.md §3 and
§5.5–§5.7 (the full-deal versions are in test_tapp_deals.py)."""

import pytest

from stammtisch.games.tapp import (
    FRAGE,
    HERZSOLO,
    SOLO,
    historic_settlement,
    modern_value,
    ramsch_settlement,
)

WT = "beck"  # Württemberg Tarock's settlement
CL = "anton"  # Classic Tapp's


def declarer_net(per, to_pot, defenders=2):
    return per * defenders - to_pot


# --- Württemberg Tarock (rules reference §3.2, §5.5 table with pot = 6) -----------------
@pytest.mark.parametrize(
    "level, points, tout, took_all, per, to_pot, net",
    [
        (FRAGE, 75, False, False, 15, 0, 30),       # Frage 75: +15 each, pot untouched
        (FRAGE, 52, False, False, -8, 8, -24),      # Frage 52: -8 each, 8 into the pot
        (SOLO, 80, False, False, 40, -6, 86),       # Solo 80: +40 each, takes the pot of 6
        (SOLO, 55, False, False, -10, 6, -26),      # Solo 55: -10 each, pays in 6 (pot 12)
        (FRAGE, 120, True, True, 120, 0, 240),      # Frage Tout made: 60 x 2 each
        (FRAGE, 60, False, False, 0, 0, 0),         # 60-60: a draw, pot unchanged
        (SOLO, 60, False, False, 0, 0, 0),
    ],
)
def test_wt_pot_table(level, points, tout, took_all, per, to_pot, net):
    got = historic_settlement(WT, level, points, tout, took_all, pot=6, pot_enabled=True)
    assert got == (per, to_pot)
    assert declarer_net(*got) == net


def test_wt_rules_example_frage_52_without_and_with_pot():
    assert historic_settlement(WT, FRAGE, 52) == (-8, 0)
    assert historic_settlement(WT, FRAGE, 52, pot=6, pot_enabled=True) == (-8, 8)


def test_wt_tout_beck_triple_and_failed_tout():
    assert historic_settlement(WT, FRAGE, 120, True, True, tout_multiplier=3) == (180, 0)
    assert historic_settlement(WT, SOLO, 120, True, True) == (240, 0)
    # a failed Tout pays the same to each defender, whatever the card points
    assert historic_settlement(WT, SOLO, 100, True, False) == (-240, 0)
    assert historic_settlement(WT, FRAGE, 70, True, False, tout_multiplier=3) == (-180, 0)


def test_wt_scores_around_60():
    assert historic_settlement(WT, FRAGE, 61) == (1, 0)
    assert historic_settlement(WT, FRAGE, 59) == (-1, 0)
    assert historic_settlement(WT, FRAGE, 0) == (-60, 0)
    assert historic_settlement(WT, SOLO, 120) == (120, 0)
    assert historic_settlement(WT, SOLO, 0) == (-120, 0)


def test_wt_pot_frage_won_untouched_solo_lost_doubles():
    assert historic_settlement(WT, FRAGE, 90, pot=10, pot_enabled=True) == (30, 0)
    assert historic_settlement(WT, SOLO, 40, pot=10, pot_enabled=True) == (-40, 10)
    # tout follows its base contract for the pot
    assert historic_settlement(WT, SOLO, 120, True, True, pot=10, pot_enabled=True) == (240, -10)
    assert historic_settlement(WT, FRAGE, 119, True, False, pot=10, pot_enabled=True) == (-120, 120)


# --- Classic Tapp (rules reference §3.3, §5.6) ----------------------------------------
@pytest.mark.parametrize("points, per", [(61, 1), (64, 1), (65, 2), (75, 4), (50, -3), (60, 0)])
def test_classic_frage(points, per):
    assert historic_settlement(CL, FRAGE, points) == (per, 0)


@pytest.mark.parametrize("points, per", [(61, 1), (62, 1), (63, 2), (75, 8), (59, -1), (60, 0)])
def test_classic_solo(points, per):
    assert historic_settlement(CL, SOLO, points) == (per, 0)


def test_classic_herzsolo_exact():
    assert historic_settlement(CL, HERZSOLO, 75) == (15, 0)
    assert historic_settlement(CL, HERZSOLO, 43) == (-17, 0)


@pytest.mark.parametrize("level, value", [(FRAGE, 30), (SOLO, 60), (HERZSOLO, 120)])
def test_classic_touts(level, value):
    assert historic_settlement(CL, level, 120, True, True) == (value, 0)
    assert historic_settlement(CL, level, 90, True, False) == (-value, 0)
    assert historic_settlement(CL, level, 120, True, True, tout_multiplier=3)[0] == value * 3 // 2


def test_classic_herzsolo_counts_as_solo_for_the_pot():
    assert historic_settlement(CL, HERZSOLO, 75, pot=8, pot_enabled=True) == (15, -8)
    assert historic_settlement(CL, HERZSOLO, 55, pot=8, pot_enabled=True) == (-5, 8)
    assert historic_settlement(CL, FRAGE, 50, pot=8, pot_enabled=True) == (-3, 3)


# --- Modern Tapp (rules reference §3.4, §5.7) -----------------------------------------
def test_modern_value_table_and_frage_option():
    assert [modern_value(c) for c in ("frage", "solo:C", "solo:S", "solo:D", "herzsolo",
                                      "bettel", "rufer:C", "herzrufer", "bettel-ouvert",
                                      "durch:D", "herzdurch")] == [5, 5, 5, 5, 10, 15, 15, 30,
                                                                   30, 30, 60]
    assert modern_value("frage", frage_value=3) == 3


def test_modern_worked_examples():
    assert modern_value("herzsolo") * 2 == 20       # 3 players, Heart Solo 72: +20
    assert modern_value("herzdurch") * 3 == 180     # 4 players, Heart Solo Tout: +-180
    assert modern_value("bettel") * 2 == 30         # 3 players, Bettel lost: -30


def nets(payments, n):
    out = [0] * n
    for payer, payee, amt in payments:
        out[payer] -= amt
        out[payee] += amt
    return out


def test_ramsch_3p_example():
    # A 70, B 50, C 0 (no tricks): A -15, B +5, C +10
    assert nets(ramsch_settlement([70, 50, 0], [7, 4, 0]), 3) == [-15, 5, 10]


def test_ramsch_4p_example():
    assert nets(ramsch_settlement([50, 30, 20, 20], [3, 2, 2, 1]), 4) == [-15, 5, 5, 5]


def test_ramsch_tied_losers_each_pay_every_non_tied_player():
    assert nets(ramsch_settlement([50, 50, 20], [4, 5, 2]), 3) == [-5, -5, 10]
    assert nets(ramsch_settlement([50, 50, 20], [4, 5, 0]), 3) == [-10, -10, 20]
    assert nets(ramsch_settlement([40, 40, 40], [4, 4, 3]), 3) == [0, 0, 0]


def test_ramsch_one_player_takes_every_trick_pays_jungfer():
    assert nets(ramsch_settlement([120, 0, 0], [11, 0, 0]), 3) == [-20, 10, 10]
    assert nets(ramsch_settlement([120, 0, 0, 0], [8, 0, 0, 0]), 4) == [-30, 10, 10, 10]
