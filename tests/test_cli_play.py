"""Terminal play for a beginner: the prompt's reading of answers, whole games through stdin,
the former traceback paths (each now one line, exit 2), names printed as text."""

from __future__ import annotations

import json
import os
import random
import re
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from stammtisch.cli.common import CliError, check_output_folder
from stammtisch.cli.prompting import CardSetChoice, read_card_set_answer, read_menu_answer, yes_no
from stammtisch.record import save, table_to_record
from stammtisch.rules import ruleset
from stammtisch.sim import simulate

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}


def cli(*args: str, answers: list[str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stammtisch.cli", *args], env=ENV, cwd=ROOT,
                          input="\n".join(answers or []) + "\n", capture_output=True, text=True, timeout=timeout)


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0]


# ---------------------------------------------------------------- reading one answer
MENU = ["tap", "pass"]


def test_a_number_in_range_chooses_and_one_out_of_range_says_the_range():
    assert read_menu_answer("2", MENU).action == "pass"
    assert read_menu_answer("3", MENU).message == "Choose 1–2."
    assert read_menu_answer("0", MENU).message == "Choose 1–2."
    assert read_menu_answer("3", MENU, "de").message == "Wähle 1–2."


def test_a_typo_gets_did_you_mean():
    assert read_menu_answer("tapp", MENU).message == "'tapp' is not a choice here. Did you mean tap?"
    assert "Did you mean pass" in (read_menu_answer("pas", MENU).message or "")
    assert "Meintest du tap" in (read_menu_answer("tapp", MENU, "de").message or "")
    nothing_close = read_menu_answer("xyzzy", MENU).message or ""
    assert "not a choice" in nothing_close and "Did you mean" not in nothing_close


def test_cards_contracts_and_words_are_understood():
    legal = ["play:HA", "play:C7"]
    assert read_menu_answer("ha", legal).action == "play:HA"
    assert read_menu_answer("♥A", legal).action == "play:HA"
    assert read_menu_answer("♥D", legal).action == "play:HQ"  # German: Dame (not legal now)
    assert read_menu_answer("♥D", legal, "de", suits="german").action == "play:HA"  # Daus
    assert read_menu_answer("♥B", ["play:HJ"], "de").action == "play:HJ"  # Bube
    assert read_menu_answer("play:c7", legal).action == "play:C7"
    # a card not playable now goes to the engine, which names the rule
    assert read_menu_answer("SK", legal).action == "play:SK"
    contracts = ["pass", "contract:solo:C", "contract:herzsolo"]
    assert read_menu_answer("herzsolo", contracts).action == "contract:herzsolo"
    assert read_menu_answer("Kreuz-Solo", contracts).action == "contract:solo:C"
    assert read_menu_answer("solo:c", contracts).action == "contract:solo:C"
    assert read_menu_answer("q", contracts).quit and read_menu_answer("?", contracts).help


DISCARD3 = ["discard:" + ",".join(cards) for cards in (("H7", "H9", "HQ"), ("H7", "H9", "C7"), ("H9", "HQ", "C7"),
                                                       ("H7", "HQ", "C7"))]
HAND = ["H7", "H9", "HQ", "C7"]


def test_several_cards_at_once_by_number_or_by_name():
    choice = CardSetChoice.from_legal(DISCARD3)
    assert choice is not None and choice.sizes == {3}
    assert read_card_set_answer("1 2 4", HAND, choice).action == "discard:H7,H9,C7"
    assert read_card_set_answer("H7, C7 hq", HAND, choice).action == "discard:H7,C7,HQ"
    assert read_card_set_answer("discard:H7,H9,HQ", HAND, choice).action == "discard:H7,H9,HQ"
    assert read_card_set_answer("1 2", HAND, choice).message == "Choose exactly 3 cards, not 2."
    assert read_card_set_answer("1 2 9", HAND, choice).message == "Choose 1–4."
    assert read_card_set_answer("1 1 2", HAND, choice).message == "♥7 is chosen twice."
    assert read_card_set_answer("1 2 SA", HAND, choice).message == "♠A is not in your hand."
    assert read_menu_answer("1 2 3", MENU).message == "Choose 1–2."


def test_an_exchange_may_be_of_no_card():
    legal = ["exchange:-", "exchange:H7", "exchange:H7,H9"]
    choice = CardSetChoice.from_legal(legal)
    assert choice is not None and choice.sizes == {0, 1, 2}
    assert read_card_set_answer("-", HAND, choice).action == "exchange:-"
    assert read_card_set_answer("1 2", HAND, choice).action == "exchange:H7,H9"
    assert read_card_set_answer("1 2 3", HAND, choice).message == "Choose at most 2 cards, not 3."
    assert CardSetChoice.from_legal(["tap", "pass"]) is None


def test_yes_no_accepts_enter_yes_and_no_and_nothing_else():
    assert yes_no("") is True and yes_no("Y") is True and yes_no("ja") is True
    assert yes_no("n") is False and yes_no("nein") is False
    assert yes_no("maybe") is None and yes_no("1") is None


# ---------------------------------------------------------------- games through stdin
def test_a_frage_discard_of_three_cards_by_number(tmp_path):
    record = tmp_path / "g.json"
    proc = cli("play", "tapp/modern", "--deals", "1", "--seed", "1", "--record", str(record),
               answers=["play", "frage", "1 2", "1 2 3"] + ["1"] * 40)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Frage: Hearts are trumps; take the tapp, discard as many; win 61 of the 120 card points" in out
    assert "5 cents from each defender" in out
    assert "You picked up the tapp:" in out
    assert "Choose 3 of your cards to lay away" in out
    assert "Choose exactly 3 cards, not 2." in out
    assert "You discard " in out
    assert " 1:" in out and "364" not in out
    rec = json.loads(record.read_text())
    actions = [a["action"] for a in rec["deals"][0]["actions"] if isinstance(a, dict)]
    discards = [a for a in actions if a.startswith("discard:")]
    assert len(discards) == 1 and len(discards[0].split(",")) == 3
    assert cli("replay", str(record), "--json").returncode == 0


def test_the_rufer_give_is_explained():
    proc = cli("play", "tapp/modern", "--deals", "1", "--seed", "2",
               answers=["play", "herzrufer", "1", "1"] + ["1"] * 40)
    assert proc.returncode == 0, proc.stderr
    assert "Call a card you do not hold: whoever holds it hands it to you" in proc.stdout
    called = re.search(r"You call (\w+) of (\w+)", proc.stdout)
    assert called, proc.stdout
    assert re.search(r"(Anna|Ben) gave you (\S+)\. Give \1 a card back in return for \2\.", proc.stdout) \
        or "lies in the tapp" in proc.stdout
    assert "You give back" in proc.stdout


def test_german_play_names_cards_contracts_and_actions_in_german():
    proc = cli("play", "tapp/classic-1879", "--deals", "1", "--seed", "1", "--german", answers=["1"] * 40)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Deine Karten:" in out and re.search(r"Abrechnung \((Frage|[A-Za-z]+-Solo|Herz-Solo)", out) \
        and "Stand:" in out
    assert re.search(r"(Anna|Ben) reizt (Frage|Solo)", out) and re.search(r"(Anna|Ben|Du) passt", out)
    assert re.search(r"(Anna|Ben) spielt (Herz|Karo|Kreuz|Pik)-", out)
    assert "Herz-Solo: Herz ist Trumpf; ohne Tapp; 61 der 120 Augen holen" in out
    assert "(die einzige erlaubte Wahl)" in out
    for english in ("Your hand", "Settlement", "passes", "plays "):
        assert english not in out


def test_a_single_legal_action_is_played_and_said_without_a_question():
    proc = cli("play", "tapp/classic-1879", "--deals", "1", "--seed", "1", answers=["1"] * 40)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"You play \w+ of \w+ \(the only legal choice\)\.", proc.stdout)
    # the question is asked only when there is a choice: every menu before a prompt has 2+ entries
    before_prompts = proc.stdout.split("Your action:")[:-1]
    assert before_prompts
    for chunk in before_prompts:
        numbers = re.findall(r"^ +(\d+) ", chunk.split("Your hand:")[-1], flags=re.MULTILINE)
        assert len(numbers) >= 2, chunk


def test_refusals_say_you_not_seat_0():
    # a real follow-suit refusal of the engine, shown to the seat that made it
    from stammtisch.cli.play_cmd import readable_refusal
    from stammtisch.games import IllegalAction, TableState, new_game
    from stammtisch.rules import ruleset

    game = new_game(ruleset("tapp/modern"))
    rng = random.Random(3)
    for _ in range(200):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        state = game.new_deal(TableState(dealer=2), deck)
        while not state.is_terminal() and state.view(None)["phase"] != "play":
            state.apply(state.legal_actions()[-1] if state.view(None)["phase"] == "declare" else
                        rng.choice(state.legal_actions()))
        while not state.is_terminal():
            seat = state.current_player()
            view = state.view(seat)
            off_suit = [c for c in view["hand"] if view["trick"] and f"play:{c}" not in view["legal_actions"]
                        and any(a[5] == view["trick"][0][1][0] for a in view["legal_actions"])]
            if off_suit:
                with pytest.raises(IllegalAction) as err:
                    state.apply(state.string_to_action(f"play:{off_suit[0]}"))
                names = ["You", "Anna", "Ben"]
                text = readable_refusal(err.value, names, seat, "en")
                assert "seat" not in text and "although you can" in text, text
                assert "follow suit (Farbzwang)" in text
                return
            state.apply(rng.choice(state.legal_actions()))
    raise AssertionError("no follow-suit refusal found")

def test_next_deal_asks_again_on_an_unknown_answer(tmp_path):
    record = tmp_path / "g.json"
    proc = cli("play", "tippen/grupp-1975", "-n", "3", "--seed", "4", "--record", str(record),
               answers=["1"] * 40 + ["n"])
    assert proc.returncode == 0, proc.stderr
    assert "Next deal? [Y/n]" in proc.stdout
    assert "Please answer y (yes) or n (no)." in proc.stdout
    assert len(json.loads(record.read_text())["deals"]) == 1


def test_quitting_mid_deal_says_the_deal_is_not_in_the_record(tmp_path):
    record = tmp_path / "g.json"
    proc = cli("play", "tapp/modern", "--seed", "1", "--record", str(record), answers=["q"])
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    assert "Stopped." in proc.stdout and "The unfinished deal is not in the record." in proc.stdout
    assert json.loads(record.read_text())["deals"] == []


def test_ctrl_c_says_the_deal_is_not_in_the_record(tmp_path):
    record = tmp_path / "g.json"
    proc = subprocess.Popen([sys.executable, "-m", "stammtisch.cli", "play", "tapp/modern", "--seed", "1",
                             "--record", str(record)], env=ENV, cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = b""
    fd = proc.stdout.fileno()
    while b"Your action:" not in seen:  # woken by each piece of output; a hang fails
        ready, _, _ = select.select([fd], [], [], 300)
        assert ready, f"no prompt after 300 s: {seen!r}"
        piece = os.read(fd, 65536)
        assert piece, f"the game ended before it asked: {seen!r}"
        seen += piece
    proc.send_signal(signal.SIGINT)
    rest, err_bytes = proc.communicate(timeout=30)
    out = (seen + rest).decode()
    err = err_bytes.decode()
    assert proc.returncode == 0, err
    assert "Traceback" not in err + out
    assert "Stopped." in out and "The unfinished deal is not in the record." in out
    assert json.loads(record.read_text())["deals"] == []


# ---------------------------------------------------------------- former tracebacks: one line each
def test_record_into_a_missing_folder_is_refused_before_the_game(tmp_path):
    proc = cli("play", "tippen/grupp-1975", "--record", str(tmp_path / "nope" / "g.json"), answers=["1"] * 5)
    assert_one_line_error(proc, "--record", "does not exist")
    assert "Your hand" not in proc.stdout
    proc = cli("play", "tippen/grupp-1975", "--record", str(tmp_path), answers=["1"] * 5)
    assert_one_line_error(proc, "is a folder")


def test_simulate_records_on_a_file_is_refused_by_the_shared_check(tmp_path):
    a_file = tmp_path / "f.json"
    a_file.write_text("{}")
    with pytest.raises(CliError, match="is a file; give a folder"):
        check_output_folder("--records", a_file)
    with pytest.raises(CliError, match="is a file; give a folder"):
        check_output_folder("--records", a_file / "below")
    check_output_folder("--records", tmp_path / "new" / "folder")  # made by the command: fine
    check_output_folder("--records", tmp_path)


def test_replay_of_a_folder_or_a_binary_file_is_one_line(tmp_path):
    assert_one_line_error(cli("replay", str(tmp_path)), "is a folder")
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\xff\xfe\x00\x81garbage")
    assert_one_line_error(cli("replay", str(binary)), "not JSON")
    assert_one_line_error(cli("replay", str(tmp_path / "missing.json")), "no such file")


def test_serve_with_a_database_in_a_missing_folder_is_one_line(tmp_path):
    proc = cli("serve", "--database-url", f"sqlite:///{tmp_path}/nope/x.sqlite", "--port", "1")
    assert_one_line_error(proc, "does not exist")
    not_a_db = tmp_path / "text.sqlite"
    not_a_db.write_text("this is not a database file, not at all, " * 20)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free_port = s.getsockname()[1]
    proc = cli("serve", "--database-url", f"sqlite:///{not_a_db}", "--port", str(free_port), timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "cannot open the database" in proc.stderr


def test_serve_on_a_busy_port_is_one_line():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = cli("serve", "--port", str(port), "--database-url", "sqlite://")
    assert_one_line_error(proc, f"port {port}", "in use")


# ---------------------------------------------------------------- names and actions as text
def _record_with_player(name: str) -> dict:
    _, table = simulate(ruleset("tapp/modern"), deals=2, seed=3, bots=["random"])
    rec = json.loads(json.dumps(table_to_record(table)))
    old = rec["players"][0]
    rec["players"][0] = name
    if rec["first_dealer"] == old:
        rec["first_dealer"] = name
    return rec


@pytest.mark.parametrize("name", ["[/]", "[bold red]x", ":smile: :sa:"])
def test_replay_prints_odd_player_names_as_written(tmp_path, name):
    path = tmp_path / "r.json"
    save(_record_with_player(name), path)
    proc = cli("replay", str(path))
    assert proc.returncode == 0, proc.stderr
    assert name in proc.stdout and "😄" not in proc.stdout


def test_an_action_with_colons_is_printed_as_written_not_as_an_emoji(tmp_path):
    path = tmp_path / "r.json"
    rec = _record_with_player("Anna")
    rec["deals"][0]["actions"].insert(0, "play:SA:")
    save(rec, path)
    proc = cli("replay", str(path))
    assert_one_line_error(proc, "play:SA:")


def test_play_with_a_markup_name_shows_it_as_text():
    proc = cli("play", "tippen/grupp-1975", "-n", "3", "--deals", "1", "--seed", "4", "--name", "[/]:sa:",
               answers=["1"] * 40)
    assert proc.returncode == 0, proc.stderr
    assert "[/]:sa:" in proc.stdout and "Balances: [/]:sa:" in proc.stdout


def test_replay_in_german(tmp_path):
    path = tmp_path / "r.json"
    save(_record_with_player("Anna"), path)
    proc = cli("replay", str(path), "--german")
    assert proc.returncode == 0, proc.stderr
    assert "2 Spiele, alle Züge geprüft." in proc.stdout and "Stand:" in proc.stdout and "Geber" in proc.stdout
    assert "Balances" not in proc.stdout and "dealer" not in proc.stdout


def test_refusal_names_people_and_says_you_for_the_player():
    from stammtisch.cli.play_cmd import readable_refusal
    from stammtisch.games.base import IllegalAction

    names = ["You", "Anna", "Ben"]
    turn = IllegalAction("not your turn", "it is seat 1's turn, not seat 0's")
    assert readable_refusal(turn, names, 0, "en") == "it is Anna's turn, not yours (not your turn)"
    held = IllegalAction("card not in hand", "SA is not in seat 0's hand")
    assert readable_refusal(held, names, 0, "en") == "SA is not in your hand (card not in hand)"
    others = IllegalAction("card not in hand", "SA is not in seat 2's hand")
    assert readable_refusal(others, names, 0, "en") == "SA is not in Ben's hand (card not in hand)"
    assert readable_refusal(held, names, 0, "de") == "diese Karte ist nicht in deiner Hand"


# ---------------------------------------------------------------- hints (play --hints)
def test_with_hints_a_question_mark_asks_for_a_hint_and_two_for_the_help():
    assert read_menu_answer("?", MENU).help and not read_menu_answer("?", MENU).hint
    assert read_menu_answer("?", MENU, hints=True).hint
    for word in ("??", "help", "hilfe"):
        assert read_menu_answer(word, MENU, hints=True).help
    choice = CardSetChoice.from_legal(["discard:C7,D8", "discard:C7,D9", "discard:D8,D9"])
    assert choice is not None
    assert read_card_set_answer("?", ["C7", "D8", "D9"], choice, hints=True).hint
    assert read_card_set_answer("??", ["C7", "D8", "D9"], choice, hints=True).help


def test_play_with_hints_answers_a_question_mark_with_a_hint_and_asks_again():
    proc = cli("play", "tippen/grupp-1975", "-n", "3", "--seed", "4", "--deals", "1", "--hints",
               answers=["?", "??"] + ["1"] * 40)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())  # the console wraps long lines
    assert "? gives a hint, ?? shows help" in out
    hint = re.search(r"Hint: (.+?) over (\d+) likely deals, given what you have seen and what the others did", out)
    assert hint and int(hint.group(2)) == 128, out  # the Master's worlds
    assert re.search(r"Hint: Best: (tap|pass)\b", out)  # the choice first, in one sentence
    assert "Hints are on: '?' asks the Master" in out  # "??" shows the help
    assert out.count("Your action:") >= 3  # asked again after the hint and after the help


def test_play_with_hints_in_german():
    proc = cli("play", "tippen/grupp-1975", "-n", "3", "--seed", "4", "--deals", "1", "--hints", "--german",
               answers=["?"] + ["1"] * 40)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert re.search(r"Hinweis: Am besten: (tappen|passen)\b"
                     r".*im Schnitt [+-]?\d+,\d Marken.*gerechnet über 128 Verteilungen, die zu dem passen", out)
    assert "Hint:" not in out and "on average" not in out
