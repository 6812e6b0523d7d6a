"""The coach at the web table, in Chromium against a real server: the creator keeps his
table's admin link ("My tables") and ends the table; then a seat's link downloads the whole
record, which ``stammtisch analyze`` accepts; during play the download is the redacted one and
says so. A practice table's Hint button answers the seat on turn alone, and every page's log
shows that a hint was asked."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from server_helpers import roomy_limits
from test_browser import browser, create_via_lobby  # noqa: F401  (fixture)
from test_web_table_browser import play_until

from stammtisch.i18n import catalogue
from stammtisch.server.app import create_app
from stammtisch.server.threaded import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("coach") / "st.sqlite"
    with serve_in_thread(create_app(f"sqlite:///{db}", bot_delay=0.02, deal_pause=0.2,
                                    limits=roomy_limits())) as base:
        yield base


def download(page) -> dict:
    """The record the page saves when its link is clicked (fetched with the token in a header,
    saved from a Blob under the server's file name: no token in any URL)."""
    urls: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    with page.expect_download() as info:
        page.get_by_test_id("record-link").click()
    got = info.value
    assert got.suggested_filename.startswith("stammtisch-") and got.suggested_filename.endswith(".json")
    assert not [u for u in urls if "token" in u], urls
    return json.loads(Path(got.path()).read_text(encoding="utf-8"))


def test_the_creator_ends_the_table_and_the_record_goes_home(server, browser, tmp_path):  # noqa: F811
    en = catalogue("en")
    ctx = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'en')")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    links, _ = create_via_lobby(page, server, "tippen/grupp-1975", ["Anna", "Robo", "Rita"],
                                [None, "heuristic", "heuristic"])
    rng = random.Random(5)
    # until a deal with cards played is over (a deal may end before the play when all pass)
    play_until(page, rng, ["tap", "exchange:", "play:"],
               lambda p, legal: p.get_by_test_id("deal-result").is_visible()
               and p.locator("[data-testid=last-trick] .card").count() > 0)

    # during play: the finished deals, redacted, and labelled so
    record = page.get_by_test_id("record-link")
    assert record.text_content() == en["web.recordRedacted"]
    assert record.get_attribute("data-full") == "false"
    redacted = download(page)
    assert redacted["format"] == "stammtisch-redacted/1"
    path = tmp_path / "redacted.json"
    path.write_text(json.dumps(redacted))
    out = subprocess.run([sys.executable, "-m", "stammtisch", "analyze", str(path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert len((out.stderr or out.stdout).strip().splitlines()) == 1

    # the creator's browser keeps the admin link; it ends the table
    page.goto(server + "/")
    mine = page.locator("[data-testid^=mine-admin-]").first
    mine.wait_for()
    assert mine.text_content() == en["web.adminLink"]
    admin_link = mine.get_attribute("href")
    assert admin_link.startswith("/t/")
    page.goto(server + admin_link)
    end = page.get_by_test_id("end-table")
    end.wait_for()
    page.once("dialog", lambda d: d.accept())
    end.click()
    page.get_by_test_id("admin-box").wait_for(state="hidden")

    # every seat's link now downloads the whole record, which analyze reads
    page.goto(server + links[0])
    page.wait_for_function("document.querySelector('[data-testid=record-link]').dataset.full === 'true'")
    assert page.get_by_test_id("record-link").text_content() == en["web.recordFull"]
    full = download(page)
    assert full["format"] == "stammtisch-record/1" and len(full["deals"]) >= 1
    path = tmp_path / "full.json"
    path.write_text(json.dumps(full))
    out = subprocess.run([sys.executable, "-m", "stammtisch", "analyze", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "Anna" in out.stdout
    assert errors == []
    ctx.close()


def test_a_practice_table_hints_the_seat_on_turn_and_everybody_sees_it_was_asked(server, browser):  # noqa: F811
    ctx = browser.new_context(bypass_csp=True, viewport={"width": 390, "height": 800})
    ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'de')")
    anna = ctx.new_page()
    other = browser.new_context(bypass_csp=True)
    other.add_init_script("localStorage.setItem('stammtisch.lang', 'en')")
    bernd = other.new_page()
    errors: list[str] = []
    for p in (anna, bernd):
        p.on("pageerror", lambda e: errors.append(str(e)))
    links, _ = create_via_lobby(anna, server, "tapp/modern", ["Anna", "Bernd", "Robo"],
                                [None, None, "heuristic"], hints=True)
    bernd.goto(server + links[1])
    pages = {0: anna, 1: bernd}
    for p in pages.values():
        p.get_by_test_id("hand").locator(".card").first.wait_for()
    # whoever of the two is on turn first asks; the hint box shows only on one's own turn
    for _ in range(400):
        mine = [s for s, p in pages.items() if p.get_by_test_id("turn").get_attribute("data-mine") == "true"]
        if mine:
            break
        anna.wait_for_timeout(50)
    seat = mine[0]
    me, them = pages[seat], pages[1 - seat]
    assert them.get_by_test_id("hint").is_hidden()
    legal = json.loads(me.get_by_test_id("legal-actions").text_content())
    me.get_by_test_id("hint").click()
    text = me.get_by_test_id("hint-text")
    text.filter(has_text=":").wait_for()
    prefix = catalogue("de" if seat == 0 else "en")["web.hintIs"].split("{")[0]
    assert text.text_content().startswith(prefix)
    assert me.get_by_test_id("hint").is_disabled()  # one hint per state
    assert legal  # the hint was asked on a turn with choices
    # both logs of play (not the chats) say who asked, each in its reader's language; the other
    # never sees the hint
    name = ["Anna", "Bernd"][seat]
    for p, lang in ((anna, "de"), (bernd, "en")):
        said = catalogue(lang)["web.hintAsked"].replace("{name}", name)
        p.locator("[data-testid=log] li[data-notice=hintAsked]").filter(has_text=said).wait_for(state="attached")
        assert p.locator("[data-testid=chat-log] li[data-notice=hintAsked]").count() == 0  # play, not talk
    assert them.get_by_test_id("hint-text").text_content() == ""
    assert errors == []
    ctx.close()
    other.close()
