"""``stammtisch analyze`` on the worked examples of docs/rules-reference.md: the open-hand values of a deal
chain from card to card, end at the deal's real result, and name the mistakes."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stammtisch.analysis.deals import analyze_record
from stammtisch.analysis.decisions import book_choice, master_choice
from stammtisch.bots.equilibrium import decision_probability
from stammtisch.cli import app
from stammtisch.record import replay

RECORDS = Path(__file__).parent / "records"
TAPP = sorted(RECORDS.glob("rules-3-*.json"))
TIPPEN = sorted(RECORDS.glob("rules-2.4-*.json"))


@pytest.mark.parametrize("path", TAPP, ids=lambda p: p.stem)
def test_tapp_values_chain_and_end_at_the_result(path):
    analyses = analyze_record(path)
    summaries = replay(path).summary()["deals"]
    for a in analyses:
        plays = a.plays
        assert plays and all(p.loss >= 0 for p in plays)
        if a.measure == "declarer-points":
            assert a.start_value == plays[0].before
            # with all cards open a card leaves exactly the value the next player starts from
            for here, nxt in zip(plays, plays[1:], strict=False):
                assert here.after == nxt.before, (here, nxt)
            final = summaries[a.deal]["card_points"]["declarer"]
            assert plays[-1].after == final
            assert sum(p.loss for p in plays) >= abs(final - a.start_value)
        elif a.measure == "won":
            assert all(p.before in (0, 1) and p.after in (0, 1) for p in plays)


@pytest.mark.parametrize("path", TIPPEN, ids=lambda p: p.stem)
def test_tippen_the_last_card_leaves_the_real_tricks(path):
    data = json.loads(path.read_text())
    summaries = replay(path).summary()["deals"]
    for a in analyze_record(path):
        assert a.measure == "own-tricks"
        last = a.plays[-1]
        name = data["players"][last.seat]
        assert last.after == summaries[a.deal]["tricks"][name]
        assert all(0 <= p.after <= p.before or p.loss == 0 for p in a.plays)


def test_mistakes_are_listed_largest_first_and_the_json_has_every_card_played():
    path = RECORDS / "rules-3-classic-frage-65.json"
    result = CliRunner().invoke(app, ["analyze", str(path), "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    deal = json.loads(result.output)["deals"][0]
    assert isinstance(deal["start_value"], int)
    assert {"seat", "action", "before", "after", "loss"} <= set(deal["plays"][0])
    losses = [m["loss"] for m in deal["mistakes"]]
    assert losses == sorted(losses, reverse=True) and losses and losses[0] > 0
    text = CliRunner().invoke(app, ["analyze", str(path)], catch_exceptions=False).output
    assert "Deal 1, Ben plays Frage: " in text and "card points (" in text


def test_a_missing_record_is_one_line():
    from stammtisch.cli import CliError

    with pytest.raises(CliError, match="no such file"):
        CliRunner().invoke(app, ["analyze", "nope.json"], catch_exceptions=False)


@pytest.mark.parametrize("name", ["rules-2.4-example-6-max-bete-dreiblatt-1859.json", "rules-3-wt-solo-80.json"])
def test_the_batch_analysis_on_worker_processes_equals_the_one_in_this_process(name, monkeypatch):
    from stammtisch.analysis import deals
    from stammtisch.analysis.deals import analyze_record_batch
    from stammtisch.sim.batch import Backend

    monkeypatch.setattr(deals, "INLINE_DEALS", 0)  # a record this short would run in this process
    path = RECORDS / name
    alone = [a.to_json() for a in analyze_record(path)]
    outcome = analyze_record_batch(path, None, Backend("processes", 2))
    assert outcome.complete and not outcome.problems()
    assert [a.to_json() for _, chunk in outcome.results for a in chunk] == alone
    assert len(outcome.results) > 1  # the record really was cut into several chunks
    last = alone[-1]["deal"]  # one deal alone: the replay stops after it, same judgement
    single = analyze_record_batch(path, last, Backend("inline", 1))
    assert [a.to_json() for _, chunk in single.results for a in chunk] == [alone[-1]]


def test_analyze_refuses_a_deal_the_record_does_not_have():
    from stammtisch.cli import CliError

    path = RECORDS / "rules-3-wt-frage-60.json"
    with pytest.raises(CliError, match="the record has 1 deals; there is no deal 5"):
        CliRunner().invoke(app, ["analyze", str(path), "--deal", "5"], catch_exceptions=False)


def test_an_analysis_that_failed_exits_non_zero_without_a_traceback():
    """A deal that could not be analysed (here: the solver's kernel cannot be imported) is named
    in one line, and the command fails: a script calling it must not take a partial answer for
    a whole one."""
    import subprocess
    import sys

    record = RECORDS / "rules-3-wt-frage-52.json"
    script = ("import sys; sys.modules['numba'] = None; from stammtisch.cli import main; "
              f"sys.argv = ['stammtisch', 'analyze', {str(record)!r}, '--workers', '1']; main()")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "ModuleNotFoundError" in proc.stderr


# ---------------------------------------------------------------------------- the coach's figures
def _deal(path, number):
    return next(a for a in analyze_record(path) if a.deal + 1 == number)


def test_a_mistake_names_its_trick_the_better_cards_and_its_cost_from_the_movers_side():
    """Württemberg Tarock, Ben's Solo (deal 3). Every judged card leaves exactly the value the
    next card starts from (open hands), so a mistake's figures are the difference of two
    consecutive values: Cora's ♦7 on trick 2 moved the declarer from 66 to 83 card points —
    17 more for him, said as a defender's loss; ♦10 held him to 66."""
    a = _deal(RECORDS / "rules-3-wt-solo-80.json", 3)
    assert a.unit == "game points" and a.declarer == 1 and a.contract == "solo"
    cora = next(p for p in a.mistakes() if p.seat == 2 and p.trick == 2)
    assert (cora.action, cora.before, cora.after, cora.loss) == ("play:D7", 66, 83, 17)
    assert cora.side == "defender" and cora.better == ["play:DT"]
    assert cora.money_played is not None and cora.money_best is not None
    assert cora.money_played < cora.money_best  # more card points for the declarer cost Cora money
    ben = [p for p in a.mistakes() if p.seat == 1]
    assert ben and all(p.side == "declarer" and p.after < p.before for p in ben)
    for p in a.plays:
        assert p.trick == a.plays.index(p) // 3 + 1


def test_the_par_lists_every_contract_and_its_best_is_what_best_play_pays():
    """The par of Ben's deal: the contract played (Solo) is in it with the open-hand value the
    deal started from (70), and its payment is what the first card of the play could still
    reach for Ben (the best card's play-out, +46); the best contract pays at least as much as
    any other, and passing pays nothing."""
    a = _deal(RECORDS / "rules-3-wt-solo-80.json", 3)
    assert a.par is not None and a.par["seat"] == 1
    contracts = {c["contract"]: c for c in a.par["contracts"]}
    assert {"solo", "frage", "pass"} <= set(contracts)
    assert contracts["solo"]["value"] == a.start_value == 70
    first_ben = next(p for p in a.mistakes() if p.seat == 1 and p.trick == 2)
    assert contracts["solo"]["money"] == first_ben.money_best == 46
    assert contracts["pass"]["money"] == 0
    assert a.par["best"]["money"] == max(c["money"] for c in a.par["contracts"])


def test_a_frage_discard_is_judged_on_a_bounded_set_and_says_so():
    a = _deal(RECORDS / "rules-3-classic-frage-65.json", 1)
    (discard,) = [d for d in a.decisions if d.kind == "discard"]
    assert discard.action == "discard:HQ,DQ,SQ" and discard.seat == 1
    assert discard.total == 364 and 1 < discard.searched < 364
    assert discard.best_money >= discard.money
    assert {o["action"] for o in discard.options} >= {discard.action}


def test_tippen_tap_or_pass_is_judged_for_every_seat_in_counters():
    """Grupp 1975, deal 4: Ben, Cora and Anna tapped, Dirk passed. Each decision is judged
    against the other choice, the payments in counters; a pass pays nothing when nobody can
    take a counter from the passer, and the best choice pays at least the one made."""
    a = _deal(RECORDS / "rules-2.4-example-3-grupp-1975.json", 4)
    assert a.unit == "counters" and a.par is None
    taps = [d for d in a.decisions if d.kind == "declare"]
    assert [(d.seat, d.action) for d in taps] == [(1, "tap"), (2, "tap"), (3, "pass"), (0, "tap")]
    for d in taps:
        assert {o["action"] for o in d.options} == {"tap", "pass"}
        assert d.best_money == max(o["money"] for o in d.options) and d.loss >= 0
    dirk = taps[2]
    assert dirk.money == 0


def _bids(path: Path, deal: int | None) -> list[tuple[Any, str]]:
    """The states of deal ``deal`` (1-based; None: every deal) where a Tippen tap or pass, or a
    Tapp bid, was made, and the action made."""
    found: list[tuple[Any, str]] = []

    def on_action(table: Any, text: str) -> None:
        state = table.current_state()
        if deal in (None, len(table.deals)) and state.view(None)["phase"] in ("declare", "auction"):
            found.append((state.clone(), text))

    replay(path, on_action=on_action)
    return found


def test_a_tap_or_pass_is_also_judged_by_the_book_from_the_seats_view():
    """Beside the open-hand judgement, each tap or pass says what the book (the equilibrium's
    when-to-tap tables) has for what that seat saw: its more likely choice there, the same when
    the cards the seat could not see lie otherwise. The Master, who searches every tap, is not
    asked in Tippen: a record has dozens of taps."""
    path = RECORDS / "rules-2.4-example-3-grupp-1975.json"
    a = _deal(path, 4)
    taps = [d for d in a.decisions if d.kind == "declare"]
    states = _bids(path, 4)
    assert [text for _, text in states] == [d.action for d in taps]
    for d, (state, _) in zip(taps, states, strict=True):
        seat = state.current_player()
        p = decision_probability(state.observation(seat))
        assert p is not None and d.book == ("tap" if p >= 0.5 else "pass")
        for k in range(3):
            assert book_choice(state.resample(seat, random.Random(k))) == d.book
        assert master_choice(state) is None
    assert {d.book for d in taps} == {"tap", "pass"}  # the record's taps and passes both occur
    assert all(d.book is None for d in a.decisions if d.kind != "declare")
    # a variant the equilibrium was not trained for: the book has no opinion there
    variant = RECORDS / "rules-2.4-example-6-max-bete-dreiblatt-1859.json"
    assert {book_choice(state) for state, _ in _bids(variant, None)} == {None}
    judged = [d for a in analyze_record(variant) for d in a.decisions if d.kind == "declare"]
    assert judged and all(d.book is None for d in judged)
    text = " ".join(_run(path).output.split())
    assert "the book (the When to tap tables of the guide and the report), for what Dirk saw:" in text
    assert "the Master" not in text
    german = " ".join(_run(path, "--german").output.split())
    assert "das Buch (die Tabellen „Wann tippen“ in Anleitung und Bericht), für das, was Dirk sah:" in german


def test_the_tapp_declarers_first_bid_is_judged_as_the_master_would_have_made_it():
    path = RECORDS / "rules-3-wt-solo-80.json"
    a = _deal(path, 3)
    assert a.par is not None
    state, bid = next((s, text) for s, text in _bids(path, 3) if s.current_player() == a.par["seat"])
    assert a.par["bid"] == bid
    assert a.par["master"] == master_choice(state) in state.view(a.par["seat"])["legal_actions"]
    text = " ".join(_run(path, "--deal", "3").output.split())
    assert "Ben's first bid:" in text and "the Master, seeing only what Ben saw, would have chosen" in text


def _run(*args):
    return CliRunner().invoke(app, ["analyze", *map(str, args), "--workers", "1"], catch_exceptions=False)


def test_the_terminal_output_names_seats_and_reads_right_for_a_defender():
    result = _run(RECORDS / "rules-3-wt-solo-80.json", "--deal", "3")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert ("Trick 2, Cora (defender): ♦7 let the declarer take 17 more card points (66 → 83); "
            "♦10 holds the declarer to 66") in text
    assert "Par for Ben, the best contract to name with all cards open: Solo, +46 game points" in text
    assert " him" not in text and " he " not in text
    assert "{'" not in text and "seat" not in text
    tippen = " ".join(_run(RECORDS / "rules-2.4-example-3-grupp-1975.json").output.split())
    assert "Dirk, tap or pass: pass pays 0 counters" in tippen and "{'0'" not in tippen


def test_the_analysis_in_german():
    result = _run(RECORDS / "rules-3-wt-solo-80.json", "--deal", "3", "--german")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Stich 2, Cora (Gegenspieler): ♦10 ließ" not in text  # the card played, not the better one
    assert "Stich 2, Cora (Gegenspieler): ♦7 ließ den Spieler 17 Augen mehr machen" in text
    assert "Par für Ben, das beste Spiel, das mit offenen Karten anzusagen war: Solo, +46 Spielpunkte" in text
    assert " ihn " not in text and " er " not in text


def test_the_json_keeps_its_keys_and_adds_the_coachs():
    result = _run(RECORDS / "rules-3-wt-solo-80.json", "--deal", "3", "--json")
    deal = json.loads(result.output)["deals"][0]
    assert {"deal", "measure", "start_value", "plays", "mistakes"} <= set(deal)
    assert {"unit", "declarer", "contract", "decisions", "par"} <= set(deal)
    play = deal["mistakes"][0]
    assert {"seat", "action", "before", "after", "loss"} <= set(play)
    assert {"trick", "better", "side", "money_best", "money_played"} <= set(play)


def test_a_redacted_record_is_refused_in_one_line(tmp_path):
    path = tmp_path / "during-play.json"
    path.write_text(json.dumps({"format": "stammtisch-redacted/1", "ruleset": "tippen/grupp-1975",
                                "options": {}, "players": ["Anna", "Ben", "Cora"], "seat": 0, "deals": []}))
    from stammtisch.cli import CliError

    with pytest.raises(CliError) as raised:
        _run(path)
    line = str(raised.value)
    assert "\n" not in line and "cannot be analysed" in line and "full record" in line
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "stammtisch", "analyze", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "full record" in proc.stderr


def test_the_web_analysis_has_its_lines_as_catalogue_messages():
    from stammtisch.i18n import render
    from stammtisch.server.analysis import analyse_deal

    data = json.loads((RECORDS / "rules-3-wt-solo-80.json").read_text())
    found = analyse_deal(data, 3).read_by(None, whole=True)
    assert found["played"] and {"plays", "mistakes", "start_value"} <= set(found)
    lines = found["lines"]
    assert all(isinstance(m, dict) and m["key"].startswith("analyze.") for m in lines)
    json.dumps(lines)  # plain JSON for the page
    assert any("Cora (Gegenspieler)" in render(m, "de") for m in lines)


def test_the_analysis_starts_with_a_verdict_and_lists_the_costly_cards_in_trick_order():
    """Deal 1 of the classic Frage: the first line says in one sentence how the deal was played
    (the choices that cost something, the costliest card), the second the open-hand value
    beside what was played; the costly cards follow in the order they were played."""
    a = _deal(RECORDS / "rules-3-classic-frage-65.json", 1)
    from stammtisch.analysis.lines import analysis_lines
    from stammtisch.i18n import render

    lines = [render(m) for m in analysis_lines(a, ["Anna", "Ben", "Cora"])]
    dearest = max(a.mistakes(), key=lambda p: p.loss)
    assert lines[0].startswith("Deal 1, Ben plays Frage: with all cards open ")
    assert lines[0].endswith(f"by {['Anna', 'Ben', 'Cora'][dearest.seat]} in trick {dearest.trick}")
    assert lines[1] == ("  With all cards open from the first card Frage makes "
                        f"{a.start_value} card points; as played 65")
    tricks = [int(line.split(",")[0].split()[-1]) for line in lines if line.startswith("  Trick ")]
    assert tricks == sorted(tricks) and len(tricks) == len(a.mistakes())


def test_the_par_lists_only_the_contracts_that_matter_and_counts_the_others():
    a = _deal(RECORDS / "rules-3-classic-frage-65.json", 1)
    from stammtisch.analysis.lines import analysis_lines
    from stammtisch.i18n import render

    text = "\n".join(render(m) for m in analysis_lines(a, ["Anna", "Ben", "Cora"]))
    paying = [c for c in a.par["contracts"] if c["money"] > 0]
    shown = {id(a.par["best"])} | {id(c) for c in a.par["contracts"] if c["contract"] == a.contract}
    shown |= {id(c) for c in paying}
    left_out = len(a.par["contracts"]) - len(shown)
    assert left_out > 0 and f"({left_out} other contracts would not have paid)" in text
    assert "Heart Solo with Tout" not in text  # lost, not the best, not played
    assert "every contract" not in text and " he " not in text


def test_a_count_of_one_is_singular_in_both_languages():
    from stammtisch.analysis.lines import amount
    from stammtisch.i18n import render

    assert render(amount(1, "counters")) == "+1 counter" and render(amount(1, "counters"), "de") == "+1 Marke"
    assert render(amount(-2, "counters")) == "−2 counters" and render(amount(-2, "counters"), "de") == "−2 Marken"
    assert render(amount(1, "card points", signed=False), "de") == "1 Auge"
    result = _run(RECORDS / "rules-3-classic-frage-65.json")
    text = " ".join(result.output.split())
    assert "♠10 cost 1 card point (22 → 21)" in text and "(1 game point lost)" in text
    import re

    assert not re.search(r"(?<![\d.])[+−]?1 (card|game) points", text)
    german = " ".join(_run(RECORDS / "rules-3-classic-frage-65.json", "--german").output.split())
    assert "♠10 kostete 1 Auge (22 → 21)" in german and "(1 Spielpunkt verloren)" in german


# the records whose deals come to their cards (a lone tapper's or a pushed deal is not played)
PLAYED = [p for p in TIPPEN if "lone-tapper" not in p.stem and "schieben" not in p.stem]


@pytest.mark.parametrize("path", [*PLAYED, RECORDS / "rules-3-ramsch-4p.json"], ids=lambda p: p.stem)
def test_where_everyone_plays_for_himself_each_card_leaves_every_seat_a_value(path):
    """Tippen and Ramsch: ``before``/``after`` are the mover's figures, another seat's from card
    to card, so a line through them mixes the sides; each card also carries every active seat's
    value, which chains from the start value to the seat's real result."""
    data = json.loads(path.read_text())
    summaries = replay(path).summary()["deals"]
    analyses = analyze_record(path)
    assert analyses
    for a in analyses:
        assert isinstance(a.start_value, dict)
        seats = set(a.start_value)
        for p in a.plays:
            assert p.values is not None and set(p.values) == seats
            assert p.values[str(p.seat)] == p.after  # the mover's own value is the one judged
        if a.measure == "own-tricks":
            for seat in seats:
                name = data["players"][int(seat)]
                assert a.plays[-1].values[seat] == summaries[a.deal]["tricks"].get(name, 0)
                # paranoid values: another seat's card never lowers what a seat is sure of
                line = [a.start_value[seat], *(p.values[seat] for p in a.plays)]
                for p, (x, y) in zip(a.plays, zip(line, line[1:], strict=False), strict=True):
                    assert y >= x or str(p.seat) == seat, (seat, line)


def test_where_one_side_is_judged_the_plays_carry_no_values_per_seat():
    a = analyze_record(RECORDS / "rules-3-classic-frage-65.json")[0]
    assert a.plays and all(p.values is None for p in a.plays)
    assert a.plays[0].to_json()["values"] is None


def _exchange_record(talon: str, exchange: str) -> dict:
    """Grupp 1975, one deal: Anna deals, Ben (♥7 ♠A ♣Q) and Cora (♣9 ♠K ♦Q) tap, Dirk and
    Anna pass, ♦ is trump; Ben makes ``exchange`` and draws from ``talon``, Cora keeps her
    cards; the play is each seat's first legal card."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_tippen_support import make_deck

    from stammtisch.record import table_to_record
    from stammtisch.rules import ruleset
    from stammtisch.table import Table

    table = Table(ruleset("tippen/grupp-1975", {"players": 4}), ["Anna", "Ben", "Cora", "Dirk"])
    table.start_deal(make_deck(table.game, 0, hands={1: "H7 SA CQ", 2: "C9 SK DQ"}, upcard="D7",
                               talon=talon))
    for text in ("tap", "tap", "pass", "pass", exchange, "exchange:-"):
        table.apply(text)
    while table.in_deal:
        state = table.current_state()
        table.apply(state.action_to_string(state.legal_actions()[0]))
    return table_to_record(table)


def _bens_exchange(talon: str, exchange: str):
    (a,) = analyze_record(_exchange_record(talon, exchange))
    (ben,) = [d for d in a.decisions if d.kind == "exchange" and d.seat == 1]
    return a, ben


def test_a_lucky_exchange_is_judged_over_the_talons_the_player_could_not_see():
    """Ben throws his ♠A and all away and draws ♣K ♥K ♦K: with the talon that came nothing
    would have paid more, but over the talons Ben could have drawn (the other hands as dealt)
    exchanging the ♥7 alone pays more on average, and the analysis says so, in tenths."""
    a, ben = _bens_exchange("CK HK DK", "exchange:H7,CQ,SA")
    assert ben.best == "exchange:H7" and ben.loss >= 1
    assert ben.draws >= 32 and sorted(ben.hand) == ["CQ", "H7", "SA"]
    money = {o["action"]: o["money"] for o in ben.options}
    assert money[ben.action] == ben.money < money["exchange:H7"] == ben.best_money
    assert ben.money != int(ben.money)  # an average, not what the talon that came paid
    from stammtisch.analysis.lines import analysis_lines
    from stammtisch.i18n import render

    names = ["Anna", "Ben", "Cora", "Dirk"]
    text = " ".join(" ".join(render(m) for m in analysis_lines(a, names)).split())
    assert ("Ben, exchange: exchanging all 3 pays " in text
            and " on average over the cards Ben could not see; keeping ♣Q ♠A and exchanging 1 would "
                "have paid " in text)
    assert f"(the average of {ben.draws} talons drawn from the cards Ben could not see" in text
    german = " ".join(" ".join(render(m, "de") for m in analysis_lines(a, names)).split())
    assert "Ben, tauschen: alle 3 tauschen bringt im Mittel über die Karten, die Ben nicht sehen konnte, " in german
    assert "; ♣D ♠A behalten und 1 tauschen hätte " in german
    assert "," in german.split("die Ben nicht sehen konnte, ")[1].split(" Marken")[0]  # the German decimal mark


def test_a_sound_exchange_with_an_unlucky_talon_is_the_best_choice():
    """Ben exchanges only the ♥7 and draws the ♥9, where exchanging all three would have drawn
    the ♦K: with the talon that came that pays less, but it was the best choice over the
    talons Ben could have drawn. The same draws every time: the analysis is reproducible."""
    _, ben = _bens_exchange("H9 HT DK", "exchange:H7")
    assert ben.best == ben.action == "exchange:H7" and ben.loss == 0
    assert _bens_exchange("H9 HT DK", "exchange:H7")[1].options == ben.options


def test_an_average_reads_with_the_decimal_mark_and_one_is_singular():
    from stammtisch.analysis.lines import amount
    from stammtisch.i18n import render

    assert render(amount(0.4, "counters")) == "+0.4 counters" and render(amount(0.4, "counters"), "de") == "+0,4 Marken"
    assert render(amount(-1.5, "counters"), "de") == "−1,5 Marken"
    assert render(amount(1.0, "counters")) == "+1 counter"
    assert render(amount(1.0, "card points", signed=False)) == "1 card point"


def test_the_talons_an_exchange_is_averaged_over_keep_every_hand_and_hold_only_unseen_cards():
    """``TippenState.redraw_unseen``: every hand stays, the talon still to come is drawn from
    the cards the exchanging seat has not seen and no hand holds, and it differs from draw to draw."""
    import random

    from stammtisch.record import replay

    states = []

    def on_action(table, text):
        state = table.current_state()
        if text.startswith("exchange:") and not states:
            states.append(state.clone())

    replay(_exchange_record("CK HK DK", "exchange:H7,CQ,SA"), on_action=on_action)
    (state,) = states
    seat = state.current_player()
    held = 0
    for hand in state.hands:
        held |= hand
    draws = set()
    for i in range(8):
        world = state.redraw_unseen(seat, random.Random(i))
        assert world.hands == state.hands and world.talon_pos == state.talon_pos
        rest = world.talon[world.talon_pos:]
        assert not any((held | state.known_mask(seat)) >> c & 1 for c in rest)
        draws.add(rest[:3])
    assert len(draws) > 1
