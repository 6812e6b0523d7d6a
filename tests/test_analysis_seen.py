"""What each reader of a deal's analysis reads (stammtisch/analysis/seen.py): while the table
plays, no card he was not shown in the deal, neither in the findings nor in their words;
another seat's decisions and the declarer's par lines by kind, count and money only; the
figures the same for every reader; the whole analysis once the table has ended.

The analysis runs here in this process, as the server's worker runs it (``analyse_deal``);
tests/test_server_secrets.py asks the web server for it, token by token."""

from __future__ import annotations

import random
from typing import Any

import pytest
from conftest import random_rules
from depth import DEEP, cases
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from seen_helpers import cards_in, random_deal, readers, shown_per_deal

from stammtisch.analysis.seen import public_action
from stammtisch.i18n import LANGUAGES, render
from stammtisch.record import table_to_record
from stammtisch.rules import PRESETS, ruleset
from stammtisch.server.analysis import analyse_deal
from stammtisch.table import Table

TIPPEN = [rid for rid in PRESETS if rid.startswith("tippen/")]


def figures(answer: dict[str, Any]) -> dict[str, Any]:
    """What an analysis says in numbers: the same for every reader."""
    par = answer["par"]
    return {
        "head": [answer[k] for k in ("deal", "measure", "start_value", "game", "unit", "declarer", "contract")],
        "plays": [[p[k] for k in ("seat", "action", "before", "after", "loss", "trick", "side", "money_best",
                                  "money_played")] for p in answer["plays"]],
        "mistakes": [[p["seat"], p["trick"], p["loss"]] for p in answer["mistakes"]],
        "decisions": [[d[k] for k in ("seat", "kind", "money", "best_money", "loss")] for d in answer["decisions"]],
        "par": None if par is None else [par["seat"], par["best"] and par["best"]["money"],
                                         [[c["contract"], c["money"], c["value"]] for c in par["contracts"]]],
        "lines": [m["key"] for m in answer["lines"]],
    }


def check_every_reader(record: dict[str, Any], deal: int) -> int:
    """The analysis of ``deal`` read by every reader of the table while it plays, checked;
    how many readers the whole analysis (as read once the table has ended) would have told a
    card they were not shown."""
    findings = analyse_deal(record, deal)
    shown = shown_per_deal(record)[deal - 1]
    whole = findings.read_by(None, whole=True)
    assert findings.read_by(0, whole=True) == whole
    if not whole["played"]:
        return 0
    told_more = 0
    for reader in readers(len(record["players"])):
        told_more += not cards_in(whole) <= shown[reader]
        answer = findings.read_by(reader)
        named = cards_in(answer)
        assert named <= shown[reader], (reader, sorted(named - shown[reader]))
        for d, full in zip(answer["decisions"], whole["decisions"], strict=True):
            if d["seat"] == reader:  # his own decisions with his own cards
                assert (d["action"], d["best"]) == (full["action"], full["best"])
            else:  # another's: kind, count and money, as the table's log tells them
                assert not cards_in(d), d
                assert d["action"] == public_action(full["action"])
        par = answer["par"]
        if par is not None and par["seat"] != reader:
            assert not cards_in(par), par
        assert figures(answer) == figures(whole)
        for lang in LANGUAGES:
            for line in answer["lines"]:
                text = render(line, lang)
                assert text.strip() and "{" not in text and "?" not in text, text
    return told_more


# the suite tries the same examples every day (a fresh clone passes on any day); the deep run
# draws new ones, among them rare deals of 13 cards a hand that take minutes to analyse
@settings(max_examples=cases(40, 400), deadline=None, derandomize=not DEEP,
          suppress_health_check=[HealthCheck.too_slow])
@given(rid=st.sampled_from(TIPPEN), seed=st.integers(0, 2**32 - 1))
def test_a_tippen_analysis_tells_no_reader_a_card_he_was_not_shown(rid: str, seed: int) -> None:
    """Every Tippen preset with random options, three deals at one table (the pot carried on):
    exchanges, folds, sniffs, knocks and robs as random play makes them."""
    rng = random.Random(seed)
    rules = random_rules(rid, rng)
    table = Table(rules, [f"P{i}" for i in range(rules.players)], rng.randrange(rules.players))
    for _ in range(3):
        random_deal(table, rng)
    record = table_to_record(table)
    for deal in range(1, 4):
        check_every_reader(record, deal)


def _actions(table: Table) -> list[str]:
    return [a if isinstance(a, str) else a["action"] for a in table.deals[-1].actions]


#: What the Tapp deals must show between them: a discard after the tapp was picked up, a Rufer's
#: call and give, a Solo (the tapp nobody sees, the par's Frage lines through it), a deal that
#: ended before its last trick (cards nobody played).
TAPP_DEALS = {
    ("tapp/modern", 3): ("call", "discard", "early"),
    ("tapp/modern", 4): ("call", "solo"),
    ("tapp/classic-1879", 3): ("discard",),
    ("tapp/wuerttemberg-tarock", 3): ("solo", "discard"),
}


def _features(table: Table) -> set[str]:
    actions = _actions(table)
    summary = table.deals[-1].result.summary
    found = {head for head in ("call", "give", "discard") if any(a.startswith(head + ":") for a in actions)}
    if summary.get("ended_early_reason"):
        found.add("early")
    if (table.state.contract_string() or "").startswith("solo"):
        found.add("solo")
    if not any(a.startswith("play:") for a in actions):
        found.clear()
    return found


@pytest.mark.parametrize("rid,players", list(TAPP_DEALS), ids=lambda x: str(x))
def test_a_tapp_analysis_tells_no_reader_a_card_he_was_not_shown(rid: str, players: int) -> None:
    """A deal of each kind the preset plays (random play, the first deal of each kind), its
    analysis and par read by every seat and the spectator."""
    rules = ruleset(rid, {"players": players})
    wanted = set(TAPP_DEALS[(rid, players)])
    told_more = 0
    for seed in range(2000):
        if not wanted:
            break
        rng = random.Random(seed)
        table = Table(rules, [f"P{i}" for i in range(players)], 0)
        random_deal(table, rng)
        found = _features(table) & wanted
        if not found:
            continue
        wanted -= found
        told_more += check_every_reader(table_to_record(table), 1)
    assert not wanted, f"no deal with {wanted} in 2000"
    assert told_more  # the whole analysis names cards some reader was not shown


def _handmade() -> Any:
    """A Tippen deal's findings in miniature (Anna, Bernd, Cora): Bernd exchanged two cards,
    Anna one; Bernd's ♥K lost a trick that ♥A or ♠A kept, and he played ♥A later, ♠A never."""
    from stammtisch.analysis.findings import DealAnalysis, DecisionJudgement, PlayJudgement
    from stammtisch.analysis.seen import DealFindings

    plays = [PlayJudgement(1, "play:HK", 2, 1, 1, trick=1, better=["play:HA", "play:SA"],
                           money_best=3, money_played=-1),
             PlayJudgement(0, "play:C9", 1, 1, 0, trick=1)]
    decisions = [
        DecisionJudgement(1, "exchange", "exchange:DQ,DJ", -1, "exchange:D7", 2, options=[
            {"action": "exchange:DQ,DJ", "money": -1}, {"action": "exchange:DQ,D7", "money": 0},
            {"action": "exchange:D7", "money": 2}, {"action": "exchange:-", "money": 1}]),
        DecisionJudgement(0, "exchange", "exchange:S7", 1, "exchange:S7", 1, options=[
            {"action": "exchange:S7", "money": 1}, {"action": "exchange:-", "money": 0}]),
    ]
    analysis = DealAnalysis(0, "own-tricks", {"0": 1, "1": 2, "2": 0}, plays, game="tippen",
                            unit="counters", decisions=decisions)
    known = {None: frozenset({"HK", "C9", "HA"}), 0: frozenset({"HK", "C9", "HA", "S7", "CT"}),
             1: frozenset({"HK", "C9", "HA", "SA", "DQ", "DJ", "D7"}), 2: frozenset({"HK", "C9", "HA"})}
    return DealFindings(1, analysis, known, ["Anna", "Bernd", "Cora"])


def test_a_reader_reads_his_own_cards_and_of_anothers_decisions_kind_count_and_money():
    findings = _handmade()
    anna = findings.read_by(0)
    bernd_play = anna["plays"][0]
    assert bernd_play["better"] == ["play:HA", "play:?"]  # ♥A he saw played, ♠A never
    bernd, own = anna["decisions"]
    assert (bernd["action"], bernd["best"], bernd["money"], bernd["best_money"]) == ("exchange:2", "exchange:1", -1, 2)
    # per kind and count, the best it paid
    assert bernd["options"] == [{"action": "exchange:2", "money": 0}, {"action": "exchange:1", "money": 2},
                                {"action": "exchange:-", "money": 1}]
    assert own["action"] == "exchange:S7" and own["options"][0]["action"] == "exchange:S7"
    text = {lang: "\n".join(render(m, lang) for m in anna["lines"]) for lang in LANGUAGES}
    assert ("Bernd, exchange: exchange 2 cards pays −1 counter with all cards open; exchange one card "
            "would have paid +2 counters") in text["en"]
    assert "♥A or another card keeps 2" in text["en"] and "♠A" not in text["en"]
    assert "2 Karten tauschen" in text["de"] and "eine andere Karte" in text["de"]
    assert "Anna, exchange: exchange ♣7" not in text["en"] and "exchange ♠7 was the best" in text["en"]
    # Bernd reads his own: every card
    mine = findings.read_by(1)
    assert mine["plays"][0]["better"] == ["play:HA", "play:SA"]
    assert mine["decisions"][0]["action"] == "exchange:DQ,DJ" and mine["decisions"][1]["action"] == "exchange:1"
    # the spectator: like any other reader; the whole analysis once the table has ended
    assert cards_in(findings.read_by(None)) == {"HK", "C9", "HA"}
    assert cards_in(findings.read_by(None, whole=True)) >= {"SA", "DQ", "DJ", "D7", "S7"}


def test_the_par_of_another_seat_names_contracts_and_money_not_the_cards_on_the_way():
    from dataclasses import replace

    from stammtisch.analysis.seen import DealFindings

    base = _handmade()
    frage = {"contract": "frage", "money": 12, "value": 70, "measure": "declarer-points",
             "choices": ["bid:frage", "discard:DQ,SA"]}
    rufer = {"contract": "rufer:C", "money": 5, "value": 1, "measure": "won",
             "choices": ["contract:rufer:C", "call:CA", "give:D7"]}
    passed = {"contract": "pass", "money": 0, "value": None, "measure": "none", "choices": ["pass"]}
    par = {"seat": 1, "contracts": [frage, rufer, passed], "best": frage, "searched": 0, "total": 0}
    assert base.analysis is not None
    findings = DealFindings(1, replace(base.analysis, game="tapp", par=par), base.known, base.names)
    for reader in (None, 0, 2):
        told = findings.read_by(reader)["par"]
        assert [c["choices"] for c in told["contracts"]] == [
            ["bid:frage", "discard:2"], ["contract:rufer:C", "call:?", "give:?"], ["pass"]]
        assert told["best"] == told["contracts"][0] and [c["money"] for c in told["contracts"]] == [12, 5, 0]
    # the declarer's own: his cards, not a card whose place he never knew (♣A: he did not see it)
    own = findings.read_by(1)["par"]
    assert [c["choices"] for c in own["contracts"]] == [
        ["bid:frage", "discard:DQ,SA"], ["contract:rufer:C", "call:?", "give:D7"], ["pass"]]


def test_an_exchange_judged_over_the_unseen_talons_names_its_hand_to_its_player_only():
    """An exchange averaged over the talons its player could have drawn carries the hand it
    was made from (what each option keeps): Bernd reads it, another reader reads kind, count
    and the averages only."""
    from dataclasses import replace

    base = _handmade()
    assert base.analysis is not None
    bernd = replace(base.analysis.decisions[0], draws=32, hand=["DQ", "DJ", "SA"], money=-0.6, best_money=1.4,
                    options=[{"action": "exchange:DQ,DJ", "money": -0.6}, {"action": "exchange:DQ", "money": 1.4}],
                    best="exchange:DQ")
    findings = replace(base, analysis=replace(base.analysis, decisions=[bernd]))
    anna = findings.read_by(0)
    (told,) = anna["decisions"]
    assert told["hand"] == [] and told["draws"] == 32 and not cards_in(told)
    assert (told["money"], told["best_money"]) == (-0.6, 1.4)
    assert cards_in(anna) <= findings.known[0]
    text = "\n".join(render(m) for m in anna["lines"])
    assert ("Bernd, exchange: exchange 2 cards pays −0.6 counters on average over the cards Bernd could not see; "
            "exchange one card would have paid +1.4 counters") in text
    assert "keeping" not in text
    mine = findings.read_by(1)
    assert mine["decisions"][0]["hand"] == ["DQ", "DJ", "SA"]
    own = "\n".join(render(m, "de") for m in mine["lines"])
    assert ("Bernd, tauschen: ♠A behalten und 2 tauschen bringt im Mittel über die Karten, die Bernd nicht "
            "sehen konnte, −0,6 Marken; ♦B ♠A behalten und 1 tauschen hätte +1,4 Marken gebracht") in own
    assert findings.read_by(None)["decisions"][0]["hand"] == []
