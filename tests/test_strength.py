"""Tournament records on request (what bench/strength.py and tournaments can keep of every deal)."""

from __future__ import annotations

from collections import Counter

from stammtisch.record import replay
from stammtisch.rules import ruleset
from stammtisch.sim.batch import choose_backend
from stammtisch.sim.tournament import arrangements, run_tournament


def test_records_hold_every_deal_of_every_arrangement_and_replay_to_the_tally(tmp_path):
    rules = ruleset("tapp/modern")
    bots = ["heuristic", "random"]
    result = run_tournament(rules, bots, 6, 11, choose_backend(1), session_deals=3, records=tmp_path / "rec")
    files = sorted((tmp_path / "rec").glob("*.json"))
    lineups = arrangements(bots, rules.players)
    assert len(result.sessions) == 2 and len(files) == 2 * len(lineups)
    totals: Counter[str] = Counter()
    deals: Counter[str] = Counter()
    for path in files:
        lineup = path.stem.split("-session")[1].split("-", 1)[1].split("-")
        table = replay(path).table  # every action verified by the engine
        assert len(table.deals) == 3
        balances = table.balances()
        for seat, bot in enumerate(lineup):
            totals[bot] += balances[table.players[seat]]
            deals[bot] += 3
    for bot in bots:  # Modern Tapp has no pot: the balances are the nets the tally added up
        assert totals[bot] == sum(s[bot].net for s in result.sessions)
        assert deals[bot] == sum(s[bot].deals for s in result.sessions)


def test_without_records_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_tournament(ruleset("tapp/modern"), ["heuristic", "random"], 2, 3, choose_backend(1), session_deals=2)
    assert list(tmp_path.iterdir()) == []
