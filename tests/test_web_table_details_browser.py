"""Details of the web table a new player trips over, in Chromium against a real server (phone
size, 390×844): the contract buttons (name and value, the goal on one line below) fit the screen; the last
trick's row keeps its room so the hand does not move down mid-deal; a long name stays inside
its seat's tile; "Deal over" is said once; before the start no "Deal 0" and no trump; only the
host sees *Start the game*, a guest is told the host starts it; the hint button is not called
"Tipp" in a game whose players tap (tappen)."""

from __future__ import annotations

import json
import random
import time

import pytest
from server_helpers import roomy_limits
from test_browser import browser  # noqa: F401  (fixture)
from test_web_table_browser import my_legal, new_table, open_page, play_until, post

from stammtisch.i18n import catalogue, render
from stammtisch.server.app import create_app
from stammtisch.server.threaded import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

PHONE = 390


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("details") / "st.sqlite"
    with serve_in_thread(create_app(f"sqlite:///{db}", bot_delay=0.02, deal_pause=0.2,
                                    limits=roomy_limits())) as base:
        yield base


def phone(browser, base, link, lang="en", made_here=None):  # noqa: F811
    ctx = browser.new_context(bypass_csp=True, viewport={"width": PHONE, "height": 844})
    ctx.add_init_script(f"localStorage.setItem('stammtisch.lang', {lang!r})")
    if made_here is not None:  # the host's browser keeps the table under "My tables"
        entry = {"id": made_here["id"], "ruleset": "x", "links": [],
                 "admin": f"/t/{made_here['id']}#{made_here['admin_token']}"}
        ctx.add_init_script(f"localStorage.setItem('stammtisch.tables', {json.dumps(json.dumps([entry]))})")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + link)
    page.get_by_test_id("players").locator(".player").first.wait_for()
    return ctx, page, errors


@pytest.mark.parametrize("lang", ["en", "de"])
def test_contract_buttons_are_short_and_fit_a_phone(server, browser, lang):  # noqa: F811
    t = new_table(server, "tapp/modern", [("Anna", None), ("Bernd", "heuristic"), ("Carla", "heuristic")])
    ctx, page, errors = open_page(browser, server, t["seats"][0]["link"], PHONE, lang)
    try:
        page.set_viewport_size({"width": PHONE, "height": 844})
        play_until(page, random.Random(4), ["play", "weg", "pass", "play:"],
                   lambda p, legal: any(a.startswith("contract:") for a in legal), deals=30)
        legal = my_legal(page)
        choices = page.evaluate("game.msg.choices")
        contracts = [(a, m) for a, m in zip(legal, choices, strict=True)
                     if a.startswith("contract:") and a != "contract:pass"]
        assert len(contracts) >= 10
        for a, m in contracts:
            button = page.get_by_test_id(f"action-{a}")
            assert button.get_attribute("aria-label") == render(m, lang)  # the whole sentence, for a screen reader
            name = button.locator(".name").text_content()  # "Frage · 5 ¢"
            short = catalogue(lang)["web.valueShort"].format(**m["params"]["value"]["params"])
            assert name == render(m["params"]["contract"], lang) + " · " + short
            goal = button.locator(".goal")
            assert goal.text_content() == render(m["params"]["goal"], lang)
            # the goal on one line below (in full in the button's name, its title and the Rules panel)
            line = goal.evaluate("(e) => parseFloat(getComputedStyle(e).lineHeight)")
            assert goal.bounding_box()["height"] <= 1.5 * line, a
            assert button.get_attribute("title") == render(m, lang)
        box = page.get_by_test_id("actions").bounding_box()
        assert box["height"] <= 600, box
        # a message that changes nothing here (a chat line, a seat's presence) re-renders the
        # table: the buttons and cards under the pointer stay the same elements
        kept = page.evaluate("""() => {
          const nodes = () => [...document.querySelectorAll('[data-testid=actions] button, [data-testid=hand] .card')];
          const before = nodes(); render(); const after = nodes();
          return before.length > 0 && before.every((n, i) => n === after[i]);
        }""")
        assert kept
    finally:
        ctx.close()
    assert errors == []


HAND_BELOW_FELT = """() => document.querySelector('[data-testid=hand]').getBoundingClientRect().top
  - document.querySelector('[data-testid=felt]').getBoundingClientRect().bottom"""


def test_mid_deal_the_hand_stays_put_and_deal_over_is_said_once(server, browser):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
    ctx, page, errors = open_page(browser, server, t["seats"][0]["link"], PHONE, "en")
    try:
        gaps: dict[tuple[int, int], float] = {}  # per (deal, tricks taken) when a card is to play

        def played_tricks(p, legal):
            deal = p.evaluate("game.info.deal_number")
            if any(a.startswith("play:") for a in legal):
                tricks = p.evaluate("game.msg.view.tricks_won.reduce((a, b) => a + b, 0)")
                gaps.setdefault((deal, tricks), p.evaluate(HAND_BELOW_FELT))
            # a deal in which this seat played before the first trick and after it
            return p.get_by_test_id("deal-result").is_visible() and len([k for k in gaps if k[0] == deal]) >= 2

        play_until(page, random.Random(7), ["tap", "exchange:-", "play:"], played_tricks)
        assert max(gaps.values()) - min(gaps.values()) <= 1, gaps
        said = catalogue("en")["web.dealOver"]
        shown = page.evaluate("document.body.innerText.replace(document.getElementById('live').innerText, '')")
        assert shown.count(said) == 1  # the result's heading (the screen reader's live region says it too)
    finally:
        ctx.close()
    assert errors == []


def test_a_long_name_stays_inside_its_tile(server, browser):  # noqa: F811
    long = "Maximiliane Friederike X"  # the 24 characters a name may have
    t = new_table(server, "tippen/grupp-1975",
                  [("Anna", None), (long, "random"), ("Wolfgang-Amadeus Mozart", "random")])
    ctx, page, errors = phone(browser, server, t["seats"][0]["link"])
    try:
        page.get_by_test_id("hand").locator(".card").first.wait_for()
        for i in range(3):
            tile = page.get_by_test_id(f"player-{i}")
            inside = tile.evaluate("""(e) => [...e.querySelectorAll('*')].every((k) => {
                const r = k.getBoundingClientRect(), o = e.getBoundingClientRect();
                return r.width === 0 || (r.left >= o.left - 1 && r.right <= o.right + 1); })""")
            assert inside, i
            assert tile.evaluate("(e) => e.scrollWidth <= e.clientWidth + 1"), i
        assert page.get_by_test_id("player-1").get_attribute("aria-label").startswith(long)
    finally:
        ctx.close()
    assert errors == []


@pytest.mark.parametrize("lang", ["en", "de"])
def test_before_the_start_the_host_starts_and_the_guest_waits(server, browser, lang):  # noqa: F811
    texts = catalogue(lang)
    t = post(server, "/api/tables", {"ruleset": "tippen/grupp-1975", "hints": True, "seats": [
        {"name": "Anna"}, {"name": "Bernd"}, {"name": "Carla", "bot": "random"}]})
    host, hpage, herrors = phone(browser, server, t["seats"][0]["link"], lang, made_here=t)
    guest, gpage, gerrors = phone(browser, server, t["seats"][1]["link"], lang)
    try:
        for page in (hpage, gpage):
            page.get_by_test_id("waiting").wait_for()
            # no "Deal 0", no "Trump –" before the first deal
            assert page.get_by_test_id("deal-number").is_hidden()
            assert page.get_by_test_id("trump").is_hidden()
        assert gpage.get_by_test_id("start-from-table").is_hidden()
        assert gpage.get_by_test_id("not-started").text_content() == texts["web.waitForHost"]
        assert hpage.get_by_test_id("start-from-table").is_visible()
        hpage.get_by_test_id("start-from-table").click()
        for page in (hpage, gpage):
            page.get_by_test_id("waiting").wait_for(state="hidden")
            page.get_by_test_id("deal-number").wait_for()
        # the hint button at a practice table: not "Tipp" beside "Tappen"
        deadline = time.monotonic() + 30
        while not (my_legal(hpage) or my_legal(gpage)):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        page = hpage if my_legal(hpage) else gpage
        hint = page.get_by_test_id("hint")
        hint.wait_for()
        assert hint.text_content() == {"en": "Hint", "de": "Hinweis"}[lang]
        assert "Tipp" not in texts["web.hintIs"] and "Tipp" not in texts["web.practice"]
    finally:
        host.close()
        guest.close()
    assert herrors == [] and gerrors == []
