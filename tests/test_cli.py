"""The command line: exit codes, JSON outputs, one-line errors."""

import json

from typer.testing import CliRunner

from stammtisch.cli import app
from stammtisch.record import save

runner = CliRunner()


def run(*args):
    from stammtisch import cli

    try:
        result = runner.invoke(app, list(args), catch_exceptions=False)
        return result.exit_code, result.output
    except cli.CliError as e:  # main() turns this into exit 2 with one line
        return 2, str(e)


def test_rules_json_lists_every_rule_set_with_defaults():
    code, out = run("rules", "--json")
    assert code == 0
    data = json.loads(out)
    ids = {d["id"] for d in data}
    assert "tippen/katira-1983" in ids and "tapp/modern" in ids
    katira = next(d for d in data if d["id"] == "tippen/katira-1983")
    assert katira["options"]["trump_card"]["default"] == "katira"


def test_simulate_refuses_a_file_as_records_folder_before_any_deal(tmp_path):
    a_file = tmp_path / "taken"
    a_file.write_text("not a folder")
    code, out = run("simulate", "tippen/grupp-1975", "--deals", "2", "--records", str(a_file))
    assert code == 2
    assert "--records" in out and "is a file; give a folder" in out
    assert a_file.read_text() == "not a folder"


def test_simulate_json_and_records_replay(tmp_path):
    code, out = run("simulate", "tippen/dreiblatt-1859", "--players", "4", "--deals", "30",
                    "--seed", "3", "--bots", "random", "--records", str(tmp_path), "--json")
    assert code == 0, out
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["deals"] == 30
    assert sum(summary["balances"].values()) + summary["pot"] == 0
    [path] = list(tmp_path.glob("*.json"))
    code, out = run("replay", str(path), "--json")
    assert code == 0, out
    replayed = json.loads(out)
    assert replayed["balances"] == summary["balances"]
    assert replayed["pot"] == summary["pot"]
    assert len(replayed["deals"]) == 30
    assert {"dealer", "tricks", "net"} <= set(replayed["deals"][0])


def test_replay_bad_record_exits_2_with_one_line(tmp_path):
    code, out = run("simulate", "tippen/grupp-1975", "--players", "3", "--deals", "2",
                    "--seed", "1", "--records", str(tmp_path), "--json")
    [path] = list(tmp_path.glob("*.json"))
    rec = json.loads(path.read_text())
    rec["deals"][0]["actions"].insert(0, "play:ZZ")
    save(rec, path)
    code, out = run("replay", str(path))
    assert code == 2
    assert "deal 1, action 1" in out and "\n" not in out.strip()
    path.write_text("not json")
    code, out = run("replay", str(path))
    assert code == 2 and "not JSON" in out


def test_bad_option_is_one_clear_line():
    code, out = run("simulate", "tippen/grupp-1975", "-o", "stake=4")
    assert code == 2 and "not divisible by the 3 tricks" in out
    code, out = run("simulate", "tippen/unknown")
    assert code == 2 and "unknown rule set" in out


def test_installed_command_exits_2_without_traceback(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "stammtisch-record/1", "ruleset": "tippen/x", "players": [], "deals": []}')
    proc = subprocess.run([sys.executable, "-m", "stammtisch.cli", "replay", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "unknown rule set" in proc.stderr


def test_first_dealer_given_or_drawn(tmp_path):
    code, out = run("simulate", "tippen/grupp-1975", "--deals", "1", "--first-dealer", "2",
                    "--records", str(tmp_path), "--json")
    assert code == 0
    [path] = list(tmp_path.glob("*.json"))
    assert json.loads(path.read_text())["first_dealer"] == "P3"
    code, out = run("simulate", "tippen/grupp-1975", "--first-dealer", "4")
    assert code == 2 and "--first-dealer must be a seat from 0 to 3" in out


def test_first_dealer_is_the_first_ace_dealt():
    from stammtisch.table import first_dealer_by_ace

    # face up round the table from seat 0: seat 2 receives the first Ace (the 7th card)
    assert first_dealer_by_ace(["H7", "S8", "D9", "CT", "HJ", "SQ", "DA", "CA"], 4) == 2


def _play(args, answers, tmp_path):
    import subprocess
    import sys

    record = tmp_path / "game.json"
    proc = subprocess.run([sys.executable, "-m", "stammtisch.cli", "play", *args, "--record", str(record)],
                          input="\n".join(answers) + "\n", capture_output=True, text=True, timeout=60)
    return proc, record


def test_play_in_the_terminal_a_whole_deal_and_its_record(tmp_path):
    # always the first listed action; one deal, then the record replays to the same balances
    proc, record = _play(["tippen/grupp-1975", "--players", "3", "--deals", "1", "--seed", "4"],
                         ["1"] * 40, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "Your hand:" in proc.stdout and "Settlement" in proc.stdout and "Balances:" in proc.stdout
    code, out = run("replay", str(record), "--json")
    summary = json.loads(out)
    assert len(summary["deals"]) == 1
    shown = proc.stdout.split("Balances:")[-1]
    for name, value in summary["balances"].items():
        assert f"{name} {'+' if value > 0 else ''}{value}" in shown


def test_play_refuses_an_illegal_action_with_its_rule_and_asks_again(tmp_path):
    proc, record = _play(["tapp/modern", "--deals", "1", "--seed", "2"],
                         ["play:ZZ", "bid:everything"] + ["1 2 3", "1"] * 150, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Not allowed:" in proc.stdout and "(notation)" in proc.stdout
    assert "Settlement" in proc.stdout
    code, out = run("replay", str(record), "--json")
    assert code == 0


def test_play_quits_cleanly_and_keeps_only_finished_deals(tmp_path):
    proc, record = _play(["tippen/meyers-1905", "--seed", "1"], ["q"], tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    rec = json.loads(record.read_text())
    assert rec["deals"] == [] or all(d["actions"] for d in rec["deals"])
    code, out = run("replay", str(record), "--json")
    assert code == 0


def test_serve_refuses_a_database_url_it_cannot_use():
    code, out = run("serve", "--database-url", "mysql://somewhere/db")
    assert code == 2 and "use sqlite:///path or postgresql://" in out


def test_serve_limits_are_parsed_and_bad_ones_refused_in_one_line():
    from stammtisch.cli.serve_cmd import parse_limits

    limits = parse_limits(["max_live_tables=2000", "seat-rate=5.5"])
    assert limits.max_live_tables == 2000 and limits.seat_rate == 5.5
    assert parse_limits([]).max_live_tables == 500  # the defaults stay
    for bad, words in (("nonsense=1", "not NAME=VALUE"), ("max_body", "not NAME=VALUE"),
                       ("max_body=lots", "must be a number"), ("max_body=0", "above 0"),
                       ("max_live_tables=1.5", "must be a number")):
        code, out = run("serve", "--limit", bad)
        assert code == 2 and words in out, (bad, out)


def test_serve_help_does_not_load_the_web_server():
    import subprocess
    import sys

    probe = ("import sys; from typer.testing import CliRunner; from stammtisch.cli import app; "
             "r = CliRunner().invoke(app, ['serve', '--help']); "
             "print(r.exit_code, 'fastapi' in sys.modules, '--api-docs' in r.output)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60).stdout
    assert out.split() == ["0", "False", "True"]


def test_python_dash_m_stammtisch_is_the_command():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "stammtisch", "rules", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "tippen/dreiblatt-1859" in {d["id"] for d in json.loads(proc.stdout)}
