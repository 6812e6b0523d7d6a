"""``stammtisch analyze`` on the worked examples of docs/rules-reference.md: the open-hand values of a deal
chain from card to card, end at the deal's real result, and name the mistakes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stammtisch.cli import app
from stammtisch.record import replay
from stammtisch.solve.analysis import analyze_record

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
    assert set(deal["plays"][0]) == {"seat", "action", "before", "after", "loss"}
    losses = [m["loss"] for m in deal["mistakes"]]
    assert losses == sorted(losses, reverse=True) and losses and losses[0] > 0
    text = CliRunner().invoke(app, ["analyze", str(path)], catch_exceptions=False).output
    assert "Deal 1: the declarer's card points" in text and "(−" in text


def test_a_missing_record_is_one_line():
    from stammtisch.cli import CliError

    with pytest.raises(CliError, match="no such file"):
        CliRunner().invoke(app, ["analyze", "nope.json"], catch_exceptions=False)


@pytest.mark.parametrize("name", ["rules-2.4-example-6-max-bete-dreiblatt-1859.json", "rules-3-wt-solo-80.json"])
def test_the_batch_analysis_on_worker_processes_equals_the_one_in_this_process(name):
    from stammtisch.sim.batch import Backend
    from stammtisch.solve.analysis import analyze_record_batch

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
