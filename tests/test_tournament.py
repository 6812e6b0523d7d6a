"""Duplicate tournaments: arrangements, determinism over workers, statistics that hold up, the CLI."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from typer.testing import CliRunner

from stammtisch.cli import CliError, app
from stammtisch.rules import ruleset
from stammtisch.sim.batch import choose_backend
from stammtisch.sim.tournament import BotTally, TournamentResult, arrangements, run_tournament


@pytest.mark.parametrize("bots, seats, count", [(("a", "b"), 3, 6), (("a", "b"), 4, 14), (("a", "b", "c"), 4, 36)])
def test_arrangements_seat_every_bot_everywhere_equally(bots, seats, count):
    lineups = arrangements(bots, seats)
    assert len(lineups) == count and len(set(lineups)) == count
    for seat in range(seats):
        per_seat = Counter(lineup[seat] for lineup in lineups)
        assert len(set(per_seat.values())) == 1 and set(per_seat) == set(bots)
    assert all(set(lineup) == set(bots) for lineup in lineups)
    with pytest.raises(ValueError):
        arrangements(("a", "b", "c", "d"), 3)


def test_same_figures_on_one_or_two_workers_and_zero_sum_in_tapp():
    rules = ruleset("tapp/modern")
    one = run_tournament(rules, ["heuristic", "random"], 24, 5, choose_backend(1), session_deals=3)
    two = run_tournament(rules, ["heuristic", "random"], 24, 5, choose_backend(2), session_deals=3)
    assert one.to_json() == two.to_json()
    assert len(one.sessions) == 8 and one.outcome.complete
    for session in one.sessions:  # Modern Tapp has no pot: every session's takings sum to zero
        assert sum(t.net for t in session.values()) == 0
        assert session["heuristic"].deals == session["random"].deals


def test_the_paired_interval_covers_a_known_difference_at_the_stated_rate():
    rng = random.Random(1)
    true_difference = 0.3
    covered = 0
    runs = 600
    for _ in range(runs):
        sessions = []
        for _ in range(40):
            luck = rng.gauss(0, 5)  # the cards: shared by both bots of a duplicate session
            a = BotTally(net=round(100 * (luck + true_difference + rng.gauss(0, 1))), deals=100)
            b = BotTally(net=round(100 * (luck + rng.gauss(0, 1))), deals=100)
            sessions.append({"a": a, "b": b})
        result = TournamentResult(["a", "b"], sessions, 100, 2, 0, None)  # type: ignore[arg-type]
        (_, _, interval), = result.pairs()
        covered += interval.covers(true_difference)
        # pairing removes the shared luck: the interval is far narrower than the luck
        assert interval.half_width < 1.0
    assert 0.92 <= covered / runs <= 0.98


def run_cli(*args):
    try:
        result = CliRunner().invoke(app, list(args), catch_exceptions=False)
        return result.exit_code, result.output
    except CliError as e:
        return 2, str(e)


def test_cli_prints_per_bot_pairs_and_roles_as_json():
    code, out = run_cli("tournament", "tippen/grupp-1975", "--bots", "heuristic,random", "--deals", "20",
                        "--seed", "3", "-w", "1", "--json", "--session-deals", "5")
    assert code == 0, out
    data = json.loads(out)
    assert data["arrangements"] == 14 and data["sessions"] == 4
    assert set(data["per_bot"]) == {"heuristic", "random"}
    assert data["pairs"][0]["first"] == "heuristic" and len(data["pairs"][0]["difference"]["ci"]) == 2
    assert set(data["roles"]["heuristic"]) <= {"tapper", "passer", "compulsory", "sniffer"}



def test_cli_writes_a_replayable_record_per_session_and_arrangement(tmp_path):
    from stammtisch.record import replay

    folder = tmp_path / "made" / "here"
    code, out = run_cli("tournament", "tapp/modern", "--bots", "heuristic,random", "--deals", "4",
                        "--seed", "2", "-w", "1", "--json", "--session-deals", "2", "--records", str(folder))
    assert code == 0, out
    data = json.loads(out)
    files = sorted(folder.glob("*.json"))
    assert len(files) == data["sessions"] * data["arrangements"]
    assert sum(len(replay(f).table.deals) for f in files) == 4 * data["arrangements"]
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    code, out = run_cli("tournament", "tapp/modern", "--bots", "heuristic,random", "--deals", "2",
                        "--records", str(a_file))
    assert code != 0 and "--records" in out and a_file.read_text() == "x"


@pytest.mark.parametrize("args, message", [
    (["--bots", "heuristic,robot"], "unknown bot 'robot'"),
    (["--bots", "heuristic"], "at least two different bots"),
    (["--bots", "heuristic,heuristic"], "at least two different bots"),
])
def test_cli_refuses_bad_bots_in_one_line(args, message):
    code, out = run_cli("tournament", "tapp/modern", *args, "--deals", "5", "-w", "1")
    assert code == 2 and message in out
