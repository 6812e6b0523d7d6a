"""The table feels alive, in Chromium against a real server: cards dealt into the hand, played
onto the felt and swept to the trick's winner move, and nothing moves for a reader who asked
for reduced motion; the page's title says "Your turn" while its tab is in the background; the
seat whose turn it is shows the seconds its turn timer has left."""

from __future__ import annotations

import random
import time

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from server_helpers import roomy_limits
from test_browser import browser, choose, event_of, perform, wait_moved_on  # noqa: F401  (fixture)
from test_web_table_browser import my_legal, new_table

from stammtisch.i18n import catalogue
from stammtisch.server.app import create_app
from stammtisch.server.threaded import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

# the animations running now, by the class of the element they move
MOVING = """() => document.getAnimations().map((a) => a.animationName + ' ' + (a.effect.target.className || ''))"""

# a page whose tab can be sent to the background: document.hidden follows window.__hidden
BACKGROUND = """
Object.defineProperty(document, 'hidden', {get: () => !!window.__hidden});
Object.defineProperty(document, 'visibilityState', {get: () => (window.__hidden ? 'hidden' : 'visible')});
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("alive") / "st.sqlite"
    with serve_in_thread(create_app(f"sqlite:///{db}", bot_delay=0.3, deal_pause=0.2,
                                    limits=roomy_limits())) as base:
        yield base


def open_table(browser, base, link, motion):  # noqa: F811
    ctx = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900}, reduced_motion=motion)
    ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'en')")
    ctx.add_init_script(BACKGROUND)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + link)
    page.get_by_test_id("players").locator(".player").first.wait_for()
    return ctx, page, errors


def watch(page, rng, seconds=40) -> set[str]:
    """Play (seat 0) for a while, through deals; every animation name seen on the way."""
    seen: set[str] = set()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not {"arrive", "sweep", "dealt"} <= seen:
        seen |= {m.split(" ")[0] for m in page.evaluate(MOVING)}
        if page.locator("[data-testid=next-deal]:visible:not([disabled])").count():
            try:  # (the next deal may have come meanwhile: the button is gone)
                page.get_by_test_id("next-deal").click(timeout=2000)
            except PlaywrightTimeout:
                pass
            continue
        legal = my_legal(page)
        if legal:
            before = event_of(page)
            action = choose(legal, rng, ["tap", "exchange:-", "play:"])
            perform(page, action)
            wait_moved_on(page, before, action)
        time.sleep(0.02)
    return seen


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_cards_move_unless_the_reader_asked_for_reduced_motion(server, browser, motion):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
    ctx, page, errors = open_table(browser, server, t["seats"][0]["link"], motion)
    try:
        seen = watch(page, random.Random(1), seconds=40 if motion == "no-preference" else 15)
        if motion == "reduce":
            assert seen == set(), seen
        else:
            assert {"arrive", "sweep", "dealt"} <= seen, seen
    finally:
        ctx.close()
    assert errors == []


def test_the_title_calls_a_player_in_another_tab_and_the_seat_on_turn_counts_down(server, browser):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "random"), ("Carla", "random")],
                  turn_seconds=60)
    ctx, page, errors = open_table(browser, server, t["seats"][0]["link"], "reduce")
    try:
        base = page.title()
        # in the background: once it is Anna's turn the title says so
        page.evaluate("() => { window.__hidden = true; document.dispatchEvent(new Event('visibilitychange')); }")
        called = catalogue("en")["web.yourTurnTitle"].format(title=base)
        page.wait_for_function(f"document.title === {called!r}")
        assert my_legal(page)
        # the seat on turn shows its seconds left
        badge = page.get_by_test_id("countdown-0")
        badge.wait_for()
        left = int(badge.text_content())
        assert 0 < left <= 60
        page.wait_for_function(f"Number(document.querySelector('[data-testid=countdown-0]').textContent) < {left}")
        # back in the foreground: the plain title
        page.evaluate("() => { window.__hidden = false; document.dispatchEvent(new Event('visibilitychange')); }")
        page.wait_for_function(f"document.title === {base!r}")
        assert page.get_by_test_id("countdown-1").count() == 0
    finally:
        ctx.close()
    assert errors == []
