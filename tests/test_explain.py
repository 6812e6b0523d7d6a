"""Every deal explained: the summary keys of DealResult on the worked-example records of
docs/rules-reference.md (figures by hand, as in test_worked_examples.py and
test_tippen_examples.py), the renderer stammtisch.explain in English and German, and
``stammtisch replay --tricks`` / ``--json``."""

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stammtisch.cli import app
from stammtisch.explain import explain, explain_messages, explain_tricks
from stammtisch.games import TableState, new_game
from stammtisch.games.base import POT, RESERVE, net_change
from stammtisch.i18n import has, render
from stammtisch.record import replay
from stammtisch.rules import PRESETS, ruleset

RECORDS = Path(__file__).parent / "records"
ALL_RECORDS = sorted(p.stem for p in RECORDS.glob("rules-*.json"))


def deals(name):
    table = replay(json.loads((RECORDS / f"{name}.json").read_text())).table
    return table, [d.result for d in table.deals]


def codes(result):
    return [p["code"] for p in result.summary["payments"]]


# ------------------------------------------------------------------ Tippen (rules reference §2.4)
def test_tippen_example_1_tricks_betes_and_pot():
    """1859, compulsory hand: 3 in the pot, a trick pays 1; B 2 tricks, D 1; A and C pay a
    bête of 3 each: the pot goes 0 -> 6. Example 2: 6 + B's ante = 9, a trick pays 3, pot 0."""
    _, (first, second) = deals("rules-2.4-examples-1-2-dreiblatt-1859")
    s = first.summary
    assert (s["pot_before"], s["pot_in_play"], s["trick_value"], s["bete"], s["pot_after"]) == (0, 3, 1, 3, 6)
    assert [tr["winner"] for tr in s["tricks_log"]] == [1, 1, 3]
    assert [(p["to"], p["amount"], p["trick"]) for p in s["payments"] if p["code"] == "trick"] == \
        [(1, 1, 1), (1, 1, 2), (3, 1, 3)]
    assert [(b["seat"], b["amount"], b["why"]) for b in s["betes"]] == [(0, 3, "no-trick"), (2, 3, "no-trick")]
    assert codes(first) == ["ante", "trick", "trick", "trick", "bete", "bete"]
    s = second.summary
    assert (s["pot_before"], s["pot_in_play"], s["trick_value"], s["bete"], s["pot_after"]) == (6, 9, 3, 9, 0)
    assert s["betes"] == [] and [tr["winner"] for tr in s["tricks_log"]] == [2, 3, 2]


@pytest.mark.parametrize("name,bete,pot_after", [
    ("rules-2.4-example-3-grupp-1975", 3, 3),     # Grupp: the bête is one stake
    ("rules-2.4-example-3-katira-1983", 12, 12),  # Katira: the bête is the pot
])
def test_tippen_example_3_bete_before_and_after(name, bete, pot_after):
    _, results = deals(name)
    s = results[-1].summary
    assert (s["pot_before"], s["pot_in_play"], s["trick_value"]) == (9, 12, 4)
    assert s["bete"] == bete and s["pot_after"] == pot_after
    assert s["betes"] == [{"seat": 0, "amount": bete, "why": "no-trick", "taken": None, "code": "bete"}]
    assert [p["to"] for p in s["payments"] if p["code"] == "trick"] == [1, 1, 2]


def test_tippen_example_4_lone_tapper_and_5_schieben():
    _, results = deals("rules-2.4-example-4-lone-tapper-grupp-1975")
    s = results[-1].summary
    assert [p for p in s["payments"] if p["code"] == "lone-tapper"] == [
        {"from": POT, "to": 1, "amount": 12, "reason": "lone tapper takes the pot", "code": "lone-tapper"}]
    assert (s["pot_before"], s["pot_after"], s["tricks_log"]) == (9, 0, [])
    _, (shoved,) = deals("rules-2.4-example-5-schieben-grupp-1975")
    assert codes(shoved) == ["ante", "ante-schieben", "ante-schieben"]
    assert shoved.summary["pot_after"] == 9


def test_tippen_example_6_max_bete_reserve():
    """max_bete 9: 24 carried into the last deal, 9 + 3 in play (a trick pays 4)."""
    _, results = deals("rules-2.4-example-6-max-bete-dreiblatt-1859")
    s = results[-1].summary
    assert (s["pot_before"], s["pot_in_play"], s["trick_value"]) == (24, 12, 4)
    assert "reserve-in" in codes(results[-1])


@pytest.mark.parametrize("name", ALL_RECORDS)
def test_payments_are_the_transfers_and_the_pot_balances(name):
    table, results = deals(name)
    n = table.num_players
    for r in results:
        s = r.summary
        assert [(p["from"], p["to"], p["amount"], p["reason"]) for p in s["payments"]] == \
            [(t.source, t.target, t.amount, t.reason) for t in r.transfers]
        assert all(p["code"] != "other" for p in s["payments"])
        assert net_change(r.transfers, n) == list(r.net(n).values())
        if "pot_before" in s:  # Tippen: pot + reserve moves by the payments in and out
            into = sum(p["amount"] for p in s["payments"] if p["to"] in (POT, RESERVE) and type(p["from"]) is int)
            out = sum(p["amount"] for p in s["payments"] if p["from"] in (POT, RESERVE) and type(p["to"]) is int)
            assert s["pot_after"] == s["pot_before"] + into - out


@pytest.mark.parametrize("name", ALL_RECORDS)
def test_tricks_log_agrees_with_the_tricks(name):
    _, results = deals(name)
    for r in results:
        log = r.summary["tricks_log"]
        for trick, following in zip(log, log[1:], strict=False):
            assert following["cards"][0][0] == trick["winner"]  # the winner leads next
        counted = {}
        for trick in log:
            counted[trick["winner"]] = counted.get(trick["winner"], 0) + 1
        assert {int(k): v for k, v in r.summary["tricks"].items() if v} == counted
        cards = [c for trick in log for _, c in trick["cards"]]
        assert len(cards) == len(set(cards))


# ------------------------------------------------------------------ Tapp (rules reference §3)
@pytest.mark.parametrize("name,declarer_points,won", [
    ("rules-3-wt-frage-52", 52, False),
    ("rules-3-wt-frage-60", 60, None),  # a draw
    ("rules-3-classic-frage-65", 65, True),
    ("rules-3-modern-herzsolo-60", 60, False),
    ("rules-3-modern-skat32-solo", 68, True),
])
def test_tapp_points_and_needed(name, declarer_points, won):
    _, results = deals(name)
    s = results[-1].summary
    assert s["declarer_points"] == declarer_points and s["needed"] == 61
    assert s["declarer_points"] + s["defender_points"] == 120
    assert s["won"] is won


def test_tapp_payments_by_hand():
    _, results = deals("rules-3-wt-solo-80")
    solo = results[-1].summary["payments"]
    assert [(p["from"], p["to"], p["amount"], p["code"]) for p in solo] == [
        (2, POT, 2, "ante"), (0, 1, 40, "contract-won"), (2, 1, 40, "contract-won"), (POT, 1, 6, "pot")]
    _, (lost,) = deals("rules-3-modern-herzsolo-60")
    assert [(p["from"], p["to"], p["amount"], p["code"]) for p in lost.summary["payments"]] == [
        (2, 0, 10, "contract-lost"), (2, 1, 10, "contract-lost")]


def test_tapp_bettel_early_end_and_ramsch():
    _, (bettel,) = deals("rules-3-modern-bettel-lost")
    s = bettel.summary
    assert s["ended_early_reason"] == {"trick": 3, "winner": 1, "rule": "bettel-declarer-trick"}
    assert s["declarer"] == 1 and len(s["tricks_log"]) == 3 and "needed" not in s
    _, (ramsch,) = deals("rules-3-ramsch-3p-jungfer")
    s = ramsch.summary
    assert s["losers"] == [2] and s["jungfer"] == [1]
    assert [(p["from"], p["to"], p["amount"], p["code"]) for p in s["payments"]] == [
        (2, 0, 5, "ramsch"), (2, 1, 10, "ramsch-jungfer")]
    _, (four,) = deals("rules-3-ramsch-4p")
    assert four.summary["losers"] == [2] and four.summary["jungfer"] == []


# ------------------------------------------------------------------ the renderer
NAMES = ["Anna", "Ben", "Cora", "Dirk"]


def test_tippen_lines_in_english_and_german():
    _, (first, _second) = deals("rules-2.4-examples-1-2-dreiblatt-1859")
    en = explain(first.summary, NAMES, "en")
    assert en[0] == "Pot before the deal: 0; in play: 3, each trick pays 1, a bête costs 3."
    assert "Tricks: Anna 0, Ben 2, Cora 0, Dirk 1." in en
    assert "Trick 3: Dirk +1 from the pot." in en
    assert "Cora: no trick, bête of 3 to the pot." in en
    assert en[-1] == "Pot after the deal: 6."
    de = explain(first.summary, NAMES, "de")
    assert "Cora: kein Stich, Bête von 3 an den Pott." in de
    assert de[-1] == "Pott nach dem Spiel: 6."
    assert len(de) == len(en)


def test_tapp_lines_in_english_and_german():
    _, (lost,) = deals("rules-3-modern-herzsolo-60")
    en = explain(lost.summary, NAMES[:3], "en")
    assert en == ["Declarer: Cora, Heart Solo.", "Card points: Cora 60, the defenders 60.",
                  "Tricks: Anna 2, Ben 4, Cora 5.", "60 of 61: lost.",
                  "Cora → Anna: 10 (Heart Solo lost).", "Cora → Ben: 10 (Heart Solo lost)."]
    de = explain(lost.summary, NAMES[:3], "de")
    assert "60 von 61: verloren." in de
    _, (bettel,) = deals("rules-3-modern-bettel-lost")
    assert "Ended early at trick 3 (Ben): the Bettel declarer took a trick." in explain(bettel.summary, NAMES[:3], "en")
    _, (ramsch,) = deals("rules-3-ramsch-3p-jungfer")
    de = explain(ramsch.summary, NAMES[:3], "de")
    assert "Die meisten Augen, zahlt jedem anderen: Cora." in de
    assert "Cora → Ben: 10 (Jungfer: kein Stich, doppelt)." in de


def test_explain_reads_a_summary_that_went_through_json():
    _, (lost,) = deals("rules-3-modern-herzsolo-60")
    again = json.loads(json.dumps(lost.summary))
    assert explain(again, NAMES[:3], "en") == explain(lost.summary, NAMES[:3], "en")
    assert explain_tricks(again, NAMES[:3], "en") == explain_tricks(lost.summary, NAMES[:3], "en")


# ------------------------------------------------------------------ the commands
def test_replay_tricks_shows_every_trick_and_the_reason():
    result = CliRunner().invoke(app, ["replay", str(RECORDS / "rules-3-modern-bettel-lost.json"), "--tricks"],
                                catch_exceptions=False)
    assert result.exit_code == 0
    out = result.output
    assert "Trick 1: Ben ♣9, Cora ♣10, Anna ♣K → Cora." in out
    assert "Trick 3: " in out and "Trick 4: " not in out  # the Bettel ended at trick 3
    assert "Ben → Anna: 15 (Bettel lost)." in out
    plain = CliRunner().invoke(app, ["replay", str(RECORDS / "rules-3-modern-bettel-lost.json")]).output
    assert "Trick 1: Ben" not in plain and "Ben → Anna: 15 (Bettel lost)." in plain


def test_replay_json_adds_the_explanation_in_the_chosen_language():
    path = str(RECORDS / "rules-2.4-examples-1-2-dreiblatt-1859.json")
    en = json.loads(CliRunner().invoke(app, ["replay", path, "--json"]).output)
    de = json.loads(CliRunner().invoke(app, ["replay", path, "--json", "--german"]).output)
    first = en["deals"][0]
    assert {"dealer", "outcome", "tricks", "net"} <= set(first)
    assert first["explanation"][-1] == "Pot after the deal: 6."
    assert de["deals"][0]["explanation"][-1] == "Pott nach dem Spiel: 6."


def test_terminal_play_prints_the_explanation_of_its_settlement(tmp_path):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    record = tmp_path / "g.json"
    proc = subprocess.run(
        [sys.executable, "-m", "stammtisch.cli", "play", "tapp/modern", "--deals", "1", "--seed", "1",
         "--record", str(record)],
        env={**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}, cwd=root,
        input="\n".join(["play", "frage", "1 2", "1 2 3"] + ["1"] * 40) + "\n",
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    table = replay(json.loads(record.read_text())).table
    lines = explain(table.deals[0].result.summary, table.players, "en")
    assert any(" of 61: " in line for line in lines)
    out = [line.strip() for line in proc.stdout.splitlines()]
    for line in lines:
        assert line in out


def _keys(messages):
    for m in messages:
        if isinstance(m, dict):
            yield m["key"]
            yield from _keys(m.get("params", {}).values())


@pytest.mark.parametrize("rid", sorted(PRESETS))
def test_random_deals_of_every_rule_set_are_explained_without_a_gap(rid):
    """Every payment has a known code and every line is filled, in both languages."""
    rules = ruleset(rid, ["players=4"] if rid.startswith("tippen/") else [])
    game = new_game(rules)
    rng = random.Random(7)
    deck = list(range(game.pack.size))
    table = TableState()
    names = ["A", "B", "C", "D"]
    for _ in range(40):
        rng.shuffle(deck)
        state = game.new_deal(table, deck)
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
        result = state.result()
        assert all(p["code"] != "other" for p in result.summary["payments"]), result.summary["payments"]
        for lang in ("en", "de"):
            lines = explain(result.summary, names, lang) + explain_tricks(result.summary, names, lang)
            assert lines and not any("{" in line or "explain." in line for line in lines), lines
        # what the web table sends: after JSON every message renders the same lines, and each
        # key (the page looks them up in the same catalogue) is one the catalogue has
        messages = json.loads(json.dumps(explain_messages(result.summary, names)))
        for lang in ("en", "de"):
            assert [render(m, lang) for m in messages] == explain(result.summary, names, lang)
        assert all(has(key) for key in _keys(messages)), messages
        pot, reserve = table.pot, table.reserve
        for t in result.transfers:
            pot += (t.target == POT) * t.amount - (t.source == POT) * t.amount
            reserve += (t.target == RESERVE) * t.amount - (t.source == RESERVE) * t.amount
        if "pot_after" in result.summary:
            assert result.summary["pot_after"] == pot + reserve
        table = TableState(result.next_dealer % rules.players, pot, reserve)


@pytest.mark.parametrize("overrides,codes_wanted", [
    (["players=4", "sniffing=1859", "schieben=true", "hupf_und_sprung=double", "max_bete=9"],
     {"ante", "ante-schieben", "ante-jump", "reserve-out", "reserve-in", "trick", "bete", "drop",
      "lone-tapper", "double-bete-sniff"}),
    (["players=4", "sniffing=modern", "knocking=true"],
     {"ante", "trick", "bete", "lone-tapper", "bete-one-trick", "double-bete"}),
])
def test_every_tippen_payment_code_is_explained(overrides, codes_wanted):
    rules = ruleset("tippen/grupp-1975", overrides)
    game = new_game(rules)
    rng = random.Random(3)
    deck = list(range(game.pack.size))
    table = TableState()
    seen = set()
    for _ in range(1500):
        rng.shuffle(deck)
        state = game.new_deal(table, deck)
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
        result = state.result()
        s = result.summary
        new = {p["code"] for p in s["payments"]} - seen
        if new:
            seen |= new
            lines = explain(s, ["A", "B", "C", "D"], "de")
            assert not any("{" in line or "explain." in line for line in lines), lines
        for b in s["betes"]:  # the bête's reason agrees with the tricks the payer took
            assert s["tricks"][b["seat"]] == (1 if b["why"] == "one-trick" else 0)
        reserve = s["reserve_after"]
        table = TableState(result.next_dealer % rules.players, s["pot_after"] - reserve, reserve)
    assert seen == codes_wanted


def test_a_tout_is_told_with_its_contract_and_all_tricks():
    rules = ruleset("tapp/classic-1879", [])
    game = new_game(rules)
    rng = random.Random(5)
    deck = list(range(game.pack.size))
    for _ in range(3000):
        rng.shuffle(deck)
        state = game.new_deal(TableState(), deck)
        while not state.is_terminal():
            legal = state.legal_actions()
            tout = [a for a in legal if state.action_to_string(a) == "tout"]
            state.apply(tout[0] if tout else rng.choice(legal))
        s = state.result().summary
        if s.get("tout"):
            break
    assert s["tout"] and s["contract"].endswith("+tout")
    declarer = "ABC"[s["declarer"]]
    took_all = s["tricks"][str(s["declarer"])] == game.hand_size
    lines = explain(s, ["A", "B", "C"], "en")
    assert lines[0].startswith(f"Declarer: {declarer}, ") and lines[0].endswith(" with Tout (all tricks announced).")
    assert "+tout" not in " ".join(lines)
    verdict = "Every trick taken: won." if took_all else "Not every trick taken: lost."
    assert verdict in lines


def test_a_hupf_und_sprung_deal_tells_the_pot_and_the_jump():
    rules = ruleset("tippen/grupp-1975", ["players=4", "hupf_und_sprung=single"])
    game = new_game(rules)
    rng = random.Random(1)
    deck = list(range(game.pack.size))
    for _ in range(200):
        rng.shuffle(deck)
        state = game.new_deal(TableState(pot=6), deck)
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
        s = state.result().summary
        if s["outcome"] == "jump":
            break
    assert s["outcome"] == "jump" and s["pot_in_play"] is None
    dealer = "ABCD"[state.result().dealer]
    assert explain(s, ["A", "B", "C", "D"], "en") == [
        "Pot before the deal: 6.", "Hupf und Sprung: the deal passes on without play.",
        f"{dealer}: ante of 3 into the pot.", "Pot after the deal: 9."]
