"""Duplicate tournaments: arrangements, determinism over workers, statistics that hold up, the CLI."""

from __future__ import annotations

import json
import math
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


# --- saying when an interval settles nothing ------------------------------------------------


def test_a_wide_interval_says_how_many_deals_would_settle_it():
    from stammtisch.sim.stats import Interval
    from stammtisch.sim.tournament import verdict

    wide = Interval(0.5, -1.0, 2.0, 20, "t")  # half-width 1.5 = 3 × the estimate
    v = verdict(wide, session_deals=5)
    assert not v.settled and v.reason == "wide"
    assert v.sessions_needed == 180 and v.deals_needed == 900  # 20 × 3² sessions of 5 deals
    negative = verdict(Interval(-0.4, -1.0, 0.2, 7, "t"), session_deals=1)
    assert negative.sessions_needed == 16  # ⌈7 × (0.6 / 0.4)²⌉ = ⌈15.75⌉
    assert verdict(Interval(0.5, 0.1, 0.9, 20, "t"), 5).settled  # excludes zero
    assert verdict(Interval(0.0, 0.0, 0.0, 4, "t"), 5).settled  # no spread: nothing to settle
    zero = verdict(Interval(0.0, -1.0, 1.0, 9, "t"), 5)
    assert (zero.settled, zero.reason, zero.deals_needed) == (False, "zero", None)
    one = verdict(Interval(0.3, -math.inf, math.inf, 1, "t"), 5)
    assert (one.settled, one.reason, one.deals_needed) == (False, "one_session", None)


def test_the_deals_needed_do_settle_at_the_same_spread():
    from stammtisch.sim.stats import paired_difference_interval
    from stammtisch.sim.tournament import verdict

    rng = random.Random(4)
    first = [rng.gauss(0.3, 2.0) for _ in range(12)]
    second = [0.0] * 12
    v = verdict(paired_difference_interval(first, second), 1)
    assert not v.settled and v.sessions_needed is not None
    # the same values repeated to the sessions asked for: same spread, narrower interval
    more = (first * (v.sessions_needed // 12 + 1))[: v.sessions_needed]
    assert verdict(paired_difference_interval(more, [0.0] * len(more)), 1).settled


def test_cli_says_in_one_line_that_a_short_tournament_settles_nothing_in_both_languages():
    args = ("tournament", "tippen/grupp-1975", "--bots", "club,beginner", "--deals", "20", "--seed", "3",
            "-w", "1", "--session-deals", "5")
    code, out = run_cli(*args, "--json")
    assert code == 0, out
    pair = json.loads(out)["pairs"][0]
    assert pair["settled"] is False and pair["unsettled_reason"] == "wide"
    assert pair["deals_to_settle"] == pair["sessions_to_settle"] * 5 > 20
    code, out = run_cli(*args)
    assert code == 0, out
    text = " ".join(out.split())
    assert "This settles nothing" in text and f"about {pair['deals_to_settle']} deals per arrangement" in text
    code, out = run_cli(*args, "--german")
    text = " ".join(out.split())
    assert "Das entscheidet nichts" in text and f"etwa {pair['deals_to_settle']} Spiele je Sitzordnung" in text


def test_cli_stays_quiet_when_the_interval_settles_and_names_a_zero_difference():
    code, out = run_cli("tournament", "tapp/modern", "--bots", "heuristic,random", "--deals", "40", "--seed", "1",
                        "-w", "1", "--session-deals", "5")
    assert code == 0, out
    assert "heuristic is better" in " ".join(out.split()) and "settles nothing" not in out
    from stammtisch.cli.tournament_cmd import unsettled_line
    from stammtisch.sim.tournament import Verdict

    assert "no number of deals" in unsettled_line(Verdict(False, "zero"))
    assert "keine Zahl von Spielen" in unsettled_line(Verdict(False, "zero"), "de")
    assert "at least two sessions" in unsettled_line(Verdict(False, "one_session"))
    assert unsettled_line(Verdict(True)) == ""


def test_levels_play_in_tournaments_under_their_names():
    code, out = run_cli("tournament", "tapp/modern", "--bots", "club,beginner", "--deals", "2", "--seed", "2",
                        "-w", "1", "--json", "--session-deals", "2")
    assert code == 0, out
    assert set(json.loads(out)["per_bot"]) == {"club", "beginner"}
