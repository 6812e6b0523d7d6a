"""What a new player meets first in the terminal: the help of every command, the title of his
game in his language, the example under a rule set's options, the cards he drew."""

from __future__ import annotations

import inspect
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from stammtisch.cli import app
from stammtisch.i18n import t
from stammtisch.i18n.words import cards_short
from stammtisch.record import load, replay
from stammtisch.rules import PRESETS, option_specs, ruleset

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()
COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]


def cli(*args: str, answers: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "stammtisch.cli", *args], env=env, cwd=ROOT,
                          input="\n".join(answers) + "\n", capture_output=True, text=True, timeout=120)


def help_text(*args: str, columns: int) -> str:
    result = runner.invoke(app, [*args, "--help"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.output


# ---------------------------------------------------------------- --help
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_paragraphs_flow_with_the_terminal_width(command):
    """A paragraph of a command's help is one line where the terminal is wide enough: the line
    breaks of the source do not show."""
    lines = [" ".join(line.split()) for line in help_text(command, columns=1000).splitlines()]
    for paragraph in inspect.cleandoc(COMMANDS[command].help or "").split("\n\n"):
        words = " ".join(re.sub(r"\\(.)", r"\1", paragraph.replace("`", "")).split())
        assert any(words in line for line in lines), (command, words)


@pytest.mark.parametrize("command", ["", *sorted(COMMANDS)])
@pytest.mark.parametrize("columns", [80, 160])
def test_help_fits_the_terminal_and_keeps_every_word(command, columns):
    args = [command] if command else []
    out = help_text(*args, columns=columns)
    assert max(len(line) for line in out.splitlines()) <= columns
    if command:  # nothing of the source text is lost on the way (brackets read as markup, say)
        words = set(re.findall(r"[\w.\[\]=-]+", out))
        for paragraph in (COMMANDS[command].help or "").split("\n\n"):
            missing = set(re.findall(r"[\w.\[\]=-]+", re.sub(r"\\(.)", r"\1", paragraph.replace("`", "")))) - words
            assert not missing, (command, missing)


# ---------------------------------------------------------------- the title of the game
@pytest.mark.parametrize("lang", ["en", "de"])
def test_play_opens_with_the_title_of_the_rule_set_in_the_players_language(lang):
    args = ["play", "tapp/modern", "--seed", "1", *(["--german"] if lang == "de" else [])]
    proc = cli(*args, answers=["q"])
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith(t("ruleset.title.tapp/modern", lang) + ":"), first
    if lang == "de":
        assert ruleset("tapp/modern").title not in proc.stdout


# ---------------------------------------------------------------- rules ID --options
@pytest.mark.parametrize("ruleset_id", list(PRESETS))
@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_options_example_is_of_the_rule_set_asked(ruleset_id, lang):
    args = ["rules", ruleset_id, "--options", *(["--german"] if lang == "de" else [])]
    out = " ".join(runner.invoke(app, args, env={"COLUMNS": "200"}).output.split())
    example = re.search(r"stammtisch play (\S+)((?: -o \S+)+)", out)
    assert example, out[-300:]
    assert example.group(1) == ruleset_id
    overrides = example.group(2).split(" -o ")[1:]
    assert overrides and {o.split("=")[0] for o in overrides} <= set(option_specs(ruleset_id))
    built = ruleset(ruleset_id, overrides)  # a valid rule set ...
    assert built != ruleset(ruleset_id)  # ... that differs from the preset


def test_the_options_table_explains_each_option_in_german():
    out = " ".join(runner.invoke(app, ["rules", "tapp/modern", "--options", "--german"],
                                 env={"COLUMNS": "400"}).output.split())
    assert t("option.help.tapp.frage_value", "de") in out
    assert t("ruleset.title.tapp/modern", "de") in out
    assert "cents per defender" not in out


# ---------------------------------------------------------------- the cards drawn in an exchange
def own_draws(record_path: Path, seat: int) -> list[list[str]]:
    """From the record: the cards ``seat`` drew after each of his exchanges."""
    record = load(record_path)
    draws: list[list[str]] = []
    pending: list[Any] = []  # [hand before his exchange] until the next action shows the hand after

    def hand_now(table: Any) -> list[str]:
        return list(table.current_state().view(seat)["hand"])

    def before(table: Any, text: str) -> None:
        if pending:
            kept = pending.pop()
            draws.append([c for c in hand_now(table) if c not in kept])
        if table.current_state().current_player() == seat and text.startswith("exchange:"):
            pending.append(hand_now(table))

    replay(record, on_action=before)
    return [d for d in draws if d]


@pytest.mark.parametrize("lang", ["en", "de"])
def test_after_an_exchange_the_player_is_told_the_cards_he_drew_and_never_anothers(tmp_path, lang):
    drew = t("play.drew", lang, cards="")
    said_all: list[str] = []
    for seed in range(1, 6):
        record = tmp_path / f"{seed}.json"
        args = ["play", "tippen/grupp-1975", "--seed", str(seed), "--deals", "1", "--record", str(record)]
        proc = cli(*args, *(["--german"] if lang == "de" else []), answers=["1", "1 2"] + ["1"] * 20)
        assert proc.returncode == 0, proc.stderr
        lines = [line.strip() for line in proc.stdout.splitlines()]
        said = [line[len(drew):] for line in lines if line.startswith(drew)]
        # only his own draws, each after his exchange, and exactly the cards he took from the talon
        assert said == [cards_short(cards, lang) for cards in own_draws(record, 0)]
        for i, line in enumerate(lines):
            if line.startswith(drew):
                assert t("act.exchange.you", lang, cards="") in lines[i - 1], lines[i - 1]
        said_all += said
    assert said_all, "no seed led to an exchange of the player's"


# ---------------------------------------------------------------- serve on every address
def test_serve_on_every_address_says_where_to_open_the_page(tmp_path):
    with socket.socket() as probe:
        probe.bind(("0.0.0.0", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "400", "STAMMTISCH_DATA": str(tmp_path)}
    server = subprocess.Popen([sys.executable, "-m", "stammtisch.cli", "serve", "--host", "0.0.0.0",
                               "--port", str(port)], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    out = b""
    try:
        assert server.stdout is not None
        fd = server.stdout.fileno()
        deadline = time.monotonic() + 60
        # both lines are printed before the server starts
        while out.count(b"\n") < 2 and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1)
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                out += chunk
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    said = out.decode().splitlines()
    assert said[:2] == [t("serve.listening", host="0.0.0.0", port=port),
                        t("serve.listening_everywhere", name=socket.gethostname(), port=port)], said


def test_the_terminal_width_is_measured_when_printing_not_at_start(monkeypatch):
    from stammtisch.cli.common import TerminalConsole

    monkeypatch.setenv("COLUMNS", "80")
    made = TerminalConsole()  # as at import, under a runner that sets COLUMNS (pytest-xdist does)
    monkeypatch.setenv("COLUMNS", "200")  # the window grew
    assert made.width == 200
