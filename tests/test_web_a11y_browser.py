"""Accessibility of the web table, measured with axe-core (the PyPI package
``axe-playwright-python``, which bundles axe-core's script: nothing is downloaded at run time).

Every page and state a player meets is audited in English and German, at 390 px and 1280 px:
the lobby, a table in each phase (Tippen's declarations, Tapp's auction, an exchange of cards,
the play of a card, the settlement), the Deals panel and the Rules dialog. No violation of
impact "serious" or "critical" may remain; the counts by impact are printed (``pytest -s``).
"""

from __future__ import annotations

import collections
import random

import pytest
from axe_playwright_python.sync_playwright import Axe
from server_helpers import roomy_limits
from test_browser import browser  # noqa: F401  (fixture)
from test_web_table_browser import VIEWS, my_legal, new_table, open_page, play_until, set_view

from stammtisch.server.app import create_app
from stammtisch.server.threaded import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

AXE = Axe()
BLOCKING = ("serious", "critical")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("a11y") / "st.sqlite"
    with serve_in_thread(create_app(f"sqlite:///{db}", bot_delay=0.02, deal_pause=0.2,
                                    limits=roomy_limits())) as base:
        yield base


def audit(page, state: str, found: list[tuple[str, int, str, str, str, int, str]], reopen=None) -> None:
    """Run axe-core on the page in each of the four views; every violation is noted. A modal
    dialog is closed for the switch of language (its button is behind it) and opened again by
    ``reopen``."""
    for width, lang in VIEWS:
        if reopen:
            page.keyboard.press("Escape")
            page.locator("dialog[open]").wait_for(state="detached")
        set_view(page, width, lang)
        if reopen:
            reopen()
        # a card in motion (dealt, played, swept) is half transparent for a moment: its
        # contrast is judged where it comes to rest
        page.wait_for_function("document.getAnimations().every((a) => a.playState !== 'running')")
        for v in AXE.run(page).response["violations"]:
            target = ", ".join(str(n["target"]) for n in v["nodes"][:3])
            found.append((state, width, lang, v["id"], v["impact"] or "minor", len(v["nodes"]), target))


def report(found) -> None:
    """Print the counts by impact and fail on a serious or critical violation."""
    counts = collections.Counter(impact for *_, impact, _n, _t in found)
    print("axe-core violations by impact:", {k: counts.get(k, 0) for k in ("critical", "serious", "moderate", "minor")})
    for row in found:
        print("  ", *row)
    assert [row for row in found if row[4] in BLOCKING] == []


def test_the_lobby_and_its_rules_dialog(server, browser):  # noqa: F811
    ctx = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    found: list = []
    try:
        page = ctx.new_page()
        page.goto(server + "/")
        page.get_by_test_id("ruleset-select").locator("option").first.wait_for(state="attached")
        page.locator("#options-box > summary").click()
        audit(page, "lobby", found)
        def rules():
            page.get_by_test_id("intro-rules-tippen").click()
            page.get_by_test_id("rules-options").wait_for()

        rules()
        audit(page, "rules dialog (lobby)", found, rules)
    finally:
        ctx.close()
    report(found)


def test_a_table_in_every_phase_the_deals_panel_and_the_rules(server, browser):  # noqa: F811
    found: list = []
    # Tippen: declarations, an exchange, the play of a card, the settlement, Deals, Rules
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "heuristic"), ("Carla", "heuristic"),
                                                ("Dieter", "heuristic")])
    ctx, page, errors = open_page(browser, server, t["seats"][0]["link"])
    rng = random.Random(21)
    prefer = ["tap", "exchange:", "play:"]
    try:
        play_until(page, rng, prefer, lambda p, legal: "tap" in legal or "pass" in legal)
        audit(page, "declarations", found)
        play_until(page, rng, prefer, lambda p, legal: any(a.startswith("exchange:") for a in legal))
        first = next(a for a in my_legal(page) if a.count(",") == 0 and a != "exchange:-")
        card = page.get_by_test_id(f"card-{first.partition(':')[2]}")
        card.click()  # one card chosen
        audit(page, "exchange", found)
        card.click()
        play_until(page, rng, prefer, lambda p, legal: any(a.startswith("play:") for a in legal))
        audit(page, "play", found)
        play_until(page, rng, prefer, lambda p, legal: p.get_by_test_id("deal-result").is_visible())
        page.get_by_test_id("analysis-btn").click()
        page.locator("[data-testid=analysis]:not([data-state=loading]):not([data-state=partial])").wait_for(timeout=120_000)
        audit(page, "settlement", found)

        def deals():
            page.get_by_test_id("deals-button").click()
            page.get_by_test_id("deal-explanation").wait_for()

        deals()
        page.get_by_test_id("deal-analysis-btn").click()
        page.locator("[data-testid=deal-analysis]:not([data-state=loading])").wait_for(timeout=120_000)
        audit(page, "deals panel", found, deals)
        page.keyboard.press("Escape")

        def rules():
            page.get_by_test_id("rules-button").click()
            page.get_by_test_id("rules-options").wait_for()

        rules()
        audit(page, "rules dialog (table)", found, rules)
    finally:
        ctx.close()
    # Tapp, German-suited: the auction with a bid to beat (random bots bid often), laying away
    # cards (heuristic bots bid only on strong hands: Anna's Frage wins in most deals)
    more: list[str] = []
    tapp = ["bid:frage", "hold", "play:", "no-tout"]
    for bots, state, wanted in (
            ("random", "auction", lambda p, legal: any(a.startswith("bid:") for a in legal)
             and p.evaluate("!!game.msg.view.standing")),
            ("heuristic", "laying away", lambda p, legal: any(a.startswith("discard:") for a in legal))):
        t = new_table(server, "tapp/classic-1879", [("Anna", None), ("Bernd", bots), ("Carla", bots)],
                      options={"suits": "german"})
        ctx, page, errs = open_page(browser, server, t["seats"][0]["link"])
        try:
            play_until(page, random.Random(13), tapp, wanted, deals=30)
            audit(page, state, found)
        finally:
            ctx.close()
        more += errs
    report(found)
    assert errors == [] and more == []
