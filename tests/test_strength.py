"""Tournament records on request (what bench/strength.py and tournaments can keep of every deal), and
the ladder of levels bench/strength.py plays."""

from __future__ import annotations

import json
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


def load_bench():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "strength.py"
    spec = importlib.util.spec_from_file_location("bench_strength", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_climbs_the_ladder_one_rung_at_a_time_in_both_games():
    from stammtisch.bots import LEVEL_NAMES

    bench = load_bench()
    assert bench.RUNGS == [("club", "beginner"), ("expert", "club"), ("master", "expert")]
    assert {rung for rung in bench.DECKS} == set(bench.RUNGS)  # every rung has its decks per game
    assert all(set(decks) == {g for g, _ in bench.GAMES} for decks in bench.DECKS.values())
    assert [b for rung in bench.RUNGS for b in rung] == [LEVEL_NAMES[1], LEVEL_NAMES[0], LEVEL_NAMES[2], LEVEL_NAMES[1],
                                                        LEVEL_NAMES[3], LEVEL_NAMES[2]]
    assert bench.budget("expert", "tippen")["bot"] == "pimc" and bench.budget("beginner", "tapp")["blunders"] == 0.3


def test_the_bench_prints_one_json_line_per_rung(capsys):
    bench = load_bench()
    bench.main(["--decks", "2", "--timing-deals", "1", "--workers", "1", "--game", "tapp/modern",
                "--players", "3", "--pair", "club:beginner"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 1  # tapp/modern also has a 4-player line, left out by --players
    line = lines[0]
    assert (line["bot"], line["peer"], line["decks"], line["arrangements"], line["players"]) == (
        "club", "beginner", 2, 6, 3)
    assert set(line["decision_seconds"]) == {"club", "beginner"}
    for side in line["decision_seconds"].values():
        assert side["decisions"] > 0 and 0 <= side["median"] <= side["p95"] <= side["max"]
        assert 0 <= side["cpu"]["median"] <= side["cpu"]["p95"] <= side["cpu"]["max"]
    assert isinstance(line["bar_met"], bool) and len(line["difference"]["ci"]) == 2
