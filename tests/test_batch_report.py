"""stammtisch report: the same numbers as simulate, consistent tables, a self-contained page with plots."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from stammtisch.cli import app
from stammtisch.sim.report import hand_class

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> tuple[int, str]:
    from stammtisch.cli import CliError

    try:
        result = runner.invoke(app, list(args), catch_exceptions=False)
    except CliError as e:
        return 2, str(e)
    return result.exit_code, result.output


def simulate_json(ruleset: str, deals: int, chunk: int) -> dict:
    code, out = cli("simulate", ruleset, "--deals", str(deals), "--seed", "1", "--chunk-deals", str(chunk),
                    "-w", "1", "--json")
    assert code == 0, out
    return json.loads(out.strip().splitlines()[-1])


def test_hand_class_from_the_players_view():
    assert hand_class({"hand": ["HA", "H7", "C9"], "trump": "H"}) == "2 trumps incl. A/K"
    assert hand_class({"hand": ["HQ", "S7", "C9"], "trump": "H"}) == "1 trump"
    assert hand_class({"hand": ["DQ", "S7", "C9"], "trump": "H"}) == "0 trumps"
    assert hand_class({"hand": ["DQ"], "trump": None}) == "trump unknown"


def test_tippen_comparison_report(tmp_path):
    out = tmp_path / "r"
    code, text = cli("report", "tippen/grupp-1975", "tippen/dreiblatt-1859", "--compare", "--deals", "120",
                     "--chunk-deals", "30", "-w", "1", "--out", str(out))
    assert code == 0, text
    assert {p.name for p in out.iterdir()} == {"report.html", "report.json", "per_player.csv", "hand_classes.csv"}
    data = json.loads((out / "report.json").read_text())
    assert "--deals 120 --seed 1" in data["command"] and "--chunk-deals 30" in data["command"]
    grupp, dreiblatt = data["runs"]
    assert (grupp["ruleset"], dreiblatt["ruleset"]) == ("tippen/grupp-1975", "tippen/dreiblatt-1859")
    # the report's simulation is simulate's: same seed and chunks, same numbers
    alone = simulate_json("tippen/grupp-1975", 120, 30)
    for key in ("balances", "pot", "taps", "betes", "per_player", "rates"):
        assert grupp[key] == alone[key], key
    for run in (grupp, dreiblatt):
        classes = run["hand_classes"]
        assert sum(c["decisions"] for c in classes) == run["rates"]["tap_rate"]["of"]
        assert sum(c["taps"] for c in classes) == run["taps"]
        assert all(c["with_a_trick"] <= c["played"] <= c["taps"] for c in classes)
        assert sum(c["played"] - c["with_a_trick"] for c in classes) <= run["betes"]
        assert len(run["pot_by_deal"]) == 30
        assert run["dealer_net"]["n"] == 120  # one dealer per deal
        assert sum(sum(d.values()) for d in run["net_distribution"].values()) == 120 * len(run["players"])
    csv_lines = (out / "per_player.csv").read_text().splitlines()
    assert csv_lines[0].startswith("ruleset,player,bot,balance") and len(csv_lines) == 1 + 4 + 4
    page = (out / "report.html").read_text()
    assert "seed 1" in page and "tippen/dreiblatt-1859" in page
    images = re.findall(r"src='data:image/png;base64,([^']+)'", page)
    # 7 plots of the simulation, and from the trained equilibrium one "when to tap" plot per
    # rule set and one of the exploitability during training
    assert len(images) == 7 + 2 + 1
    assert "When to tap" in page and data["runs"][0]["equilibrium"]["ruleset"] == "tippen/grupp-1975"
    assert all(base64.b64decode(image).startswith(b"\x89PNG\r\n\x1a\n") for image in images)
    assert "<script" not in page and "http" not in page  # self-contained


def test_tapp_report_contracts_add_up(tmp_path):
    code, text = cli("report", "tapp/modern", "--deals", "60", "--chunk-deals", "30", "-w", "1",
                     "--out", str(tmp_path))
    assert code == 0, text
    [run] = json.loads((tmp_path / "report.json").read_text())["runs"]
    assert run["unit"] == "cents"
    played = sum(row["deals"] for row in run["contract_table"])
    assert played + run["ramsch"]["deals"] == sum(run["contracts"].values())
    assert sum(row["declarer_wins"] for row in run["contract_table"]) == run["declarer_wins"]
    assert sum(run["declarer_points"].values()) == played
    assert (tmp_path / "contracts.csv").exists()


def test_report_is_the_same_for_one_and_two_workers(tmp_path):
    for workers in ("1", "2"):
        code, text = cli("report", "tapp/wuerttemberg-tarock", "--deals", "60", "--chunk-deals", "20",
                         "-w", workers, "--out", str(tmp_path / "same"))
        assert code == 0, text
        (tmp_path / "same" / "report.json").rename(tmp_path / f"w{workers}.json")
    assert (tmp_path / "w1.json").read_text() == (tmp_path / "w2.json").read_text()


def test_report_without_matplotlib_is_one_clear_error(tmp_path):
    # as the user sees it: the installed command's stderr (Rich markup must not eat "[report]")
    script = ("import sys; sys.modules['matplotlib'] = None; from stammtisch.cli import main; "
              f"sys.argv = ['stammtisch', 'report', 'tippen/grupp-1975', '--deals', '5', '-w', '1', "
              f"'--out', {str(tmp_path / 'r')!r}]; main()")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "pip install 'stammtisch[report]'" in proc.stderr
    assert not (tmp_path / "r").exists()
