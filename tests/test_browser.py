"""End to end: Playwright for Python driving Debian's Chromium against a real server.

Two browser contexts (two friends) join one table with a bot and play a complete deal to the
settlement by clicking legal cards and buttons, once for Tippen and once for Tapp. These
tests fail (they do not skip) when Playwright or the browser is missing.
"""

from __future__ import annotations

import json
import random
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest
from server_helpers import roomy_limits

from stammtisch.server.app import create_app
from stammtisch.server.threaded import serve_in_thread

if TYPE_CHECKING:
    from playwright.sync_api import Browser

# Debian's Chromium in two builds: the whole browser, as players run it, and its headless shell
# (the same Blink without the browser around it; Playwright's own choice for headless runs),
# with which the browser tests take about 40 % less CPU (docs/performance.md). This module plays
# its deals in the whole browser; the other browser modules use the shell.
CHROMIUM = "/usr/bin/chromium"
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("browser") / "st.sqlite"
    with serve_in_thread(create_app(f"sqlite:///{db}", bot_delay=0.05, deal_pause=600,
                                    limits=roomy_limits())) as base:
        yield base


@contextmanager
def launched(executable: str = HEADLESS_SHELL) -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright  # ImportError fails the test: no skip

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def browser():
    """Chromium's headless shell, one per module."""
    with launched() as b:
        yield b


@pytest.fixture(scope="module")
def chromium():
    """The whole Chromium, as players run it."""
    with launched(CHROMIUM) as b:
        yield b


def create_via_lobby(page, base, ruleset, names, bots, hints=False):
    page.goto(base + "/")
    if hints:
        page.get_by_test_id("hints").check()
    page.get_by_test_id("ruleset-select").select_option(ruleset)
    seats = page.get_by_test_id("seats")
    while seats.locator(".seat-row").count() > len(names):
        page.get_by_test_id("remove-seat").click()
    while seats.locator(".seat-row").count() < len(names):
        page.get_by_test_id("add-seat").click()
    for i, (name, bot) in enumerate(zip(names, bots, strict=True)):
        page.get_by_test_id(f"seat-name-{i}").fill(name)
        page.get_by_test_id(f"seat-bot-{i}").select_option(bot or "")
    page.get_by_test_id("create-table").click()
    page.get_by_test_id("created").wait_for()
    links = {i: page.get_by_test_id(f"link-seat-{i}").get_attribute("href")
             for i, b in enumerate(bots) if not b}
    spectator = page.get_by_test_id("link-spectator").get_attribute("href")
    page.get_by_test_id("start-table").click()
    if links:  # Start takes the creator to his seat, the first human one
        page.wait_for_url(base + links[min(links)])
        page.get_by_test_id("players").locator(".player").first.wait_for()
    return links, spectator


def join_two_friends(p1, p2, base, ruleset, names=("Anna", "Bernd", "Robo")):
    """Create a table in the lobby (two humans, one random bot), open each friend's invite
    link in his own browser context, and wait for both hands. Returns pages and spectator."""
    links, spectator = create_via_lobby(p1, base, ruleset, list(names), [None, None, "random"])
    p2.goto(base + links[1])  # p1, the creator, is at his seat already
    pages = {0: p1, 1: p2}
    for p in pages.values():
        p.get_by_test_id("hand").locator(".card").first.wait_for()
    return pages, spectator


def explanation_is_the_servers(page, base: str, lang: str) -> None:
    """The page renders the finished deal's explanation (catalogue messages) exactly as
    ``stammtisch.i18n.render`` does, line by line, in the page's language."""
    from stammtisch.i18n import render

    table_id = page.url.split("/t/")[1].split("#")[0]
    with urllib.request.urlopen(f"{base}/api/tables/{table_id}") as r:
        messages = json.loads(r.read())["explanation"]
    shown = page.get_by_test_id("explanation").locator("li").all_text_contents()
    assert shown == [render(m, lang) for m in messages]
    assert shown and not any("{" in line for line in shown)


def event_of(page) -> int:
    return int(page.evaluate("document.body.dataset.event || '-1'"))


# What the page and the server say when an action did not move the table on: the refusal
# shown, the page's event, the server's event (a lost broadcast, or a lost action?)
WHY_STUCK = """async () => {
  const id = location.pathname.split('/t/')[1];
  let server = null;
  try { server = (await (await fetch('/api/tables/' + id)).json()).events; } catch (e) { server = String(e); }
  return {page_event: document.body.dataset.event, server_event: server,
    error: (document.querySelector('[data-testid=error]') || {}).textContent || '',
    legal: (document.querySelector('[data-testid=legal-actions]') || {}).textContent || ''};
}"""


def wait_moved_on(page, before: int, action: str = "", timeout: float = 10000) -> None:
    """Wait until the page shows an event after ``before`` (the action went through and came
    back); if it never does, say what the page and the server showed."""
    try:
        page.wait_for_function(f"Number(document.body.dataset.event) > {before}", timeout=timeout)
    except Exception as e:
        raise AssertionError(f"{action or 'the action'} at event {before} never moved the table "
                             f"on: {page.evaluate(WHY_STUCK)}") from e


def choose(legal: list[str], rng: random.Random, prefer: list[str]) -> str:
    for p in prefer:
        hits = [a for a in legal if a == p or a.startswith(p)]
        if hits:
            return rng.choice(hits)
    return rng.choice(legal)


def perform(page, action: str, timeout: float | None = None) -> None:
    """Carry out an action the way a person does: click the card, select cards, or a button
    (``timeout``: how long each click waits for its target, in ms; Playwright's default else)."""
    head, _, arg = action.partition(":")
    confirm = page.get_by_test_id(f"confirm-{head}")
    if confirm.count():
        cards = [] if arg in ("", "-") else arg.split(",")
        for c in cards:
            page.get_by_test_id(f"card-{c}").click(timeout=timeout)
        assert confirm.get_attribute("data-action") == action
        confirm.click(timeout=timeout)
    elif head == "play" and page.get_by_test_id(f"card-{arg}").count():
        card = page.get_by_test_id(f"card-{arg}")
        assert card.get_attribute("data-legal") == "true"
        card.click(timeout=timeout)
    else:
        page.get_by_test_id(f"action-{action}").click(timeout=timeout)


def play_deal(pages: dict[int, object], rng: random.Random, prefer: list[str], limit=400):
    """Click through one deal; returns when both pages show the settlement."""
    for _ in range(limit):
        if all(p.get_by_test_id("deal-result").is_visible() for p in pages.values()):
            return
        acted = False
        for page in pages.values():
            if page.get_by_test_id("turn").get_attribute("data-mine") != "true":
                continue
            legal = json.loads(page.get_by_test_id("legal-actions").text_content())
            if not legal:
                continue
            # the hand shows exactly the legal cards as clickable
            marked = {c.get_attribute("data-card") for c in
                      page.locator("[data-testid=hand] .card[data-legal=true]").all()}
            if any(a.startswith("play:") for a in legal) and not page.get_by_test_id(
                    "confirm-play").count():
                assert marked == {a[5:] for a in legal if a.startswith("play:")}
            before = event_of(page)
            perform(page, choose(legal, rng, prefer))
            wait_moved_on(page, before)
            acted = True
        if not acted:
            time.sleep(0.05)
    raise AssertionError("the deal did not end")


def check_settlement(pages, names):
    for page in pages.values():
        result = page.get_by_test_id("deal-result")
        result.wait_for()
        nets = [int(result.get_by_test_id(f"net-{i}").text_content()) for i in range(len(names))]
        row = page.get_by_test_id("score-sheet").get_by_test_id("score-row-1")
        row.wait_for()
        assert [int(x) for x in row.locator("td.num").all_text_contents()[:len(names)]] == nets
    return nets


def hands_are_private(pages):
    hands = {s: set(p.locator("[data-testid=hand] .card").evaluate_all(
        "els => els.map(e => e.dataset.card)")) for s, p in pages.items()}
    a, b = hands.values()
    assert a.isdisjoint(b)


def test_tippen_deal_in_two_browsers_with_a_bot(server, chromium):
    rng = random.Random(11)
    names = ["Anna", "Bernd", "Robo"]
    # bypass_csp: wait_for_function evaluates its predicates as strings, which the page's
    # Content-Security-Policy forbids (test_server_browser_csp.py keeps the policy on)
    c1 = chromium.new_context(bypass_csp=True)
    c2 = chromium.new_context(bypass_csp=True, viewport={"width": 390, "height": 800})
    try:
        p1, p2 = c1.new_page(), c2.new_page()
        pages, _ = join_two_friends(p1, p2, server, "tippen/grupp-1975", names)
        # both friends see each other online
        p1.locator("[data-testid=seat-status-1][data-connected=true]").wait_for()
        p2.locator("[data-testid=seat-status-0][data-connected=true]").wait_for()
        hands_are_private(pages)
        assert p1.get_by_test_id("direction").text_content() == "↻ clockwise"
        play_deal(pages, rng, prefer=["tap", "exchange:", "play:"])
        nets = check_settlement(pages, names)
        assert sum(nets) <= 0  # the dealer's ante goes to the pot
        # the reason for every payment, under the settlement
        why = p1.get_by_test_id("explanation").text_content()
        assert "Pot" in why or "pot" in why
        explanation_is_the_servers(p1, server, "en")
        # "where did I lose points": the open-hand analysis of the finished deal
        p1.get_by_test_id("analysis-btn").click()
        p1.locator("[data-testid=analysis-start], [data-testid=analysis] p").first.wait_for()
        p1.wait_for_function("!document.querySelector('[data-testid=analysis]').textContent.includes('Solving')",
                             timeout=120_000)
        analysis = p1.get_by_test_id("analysis").text_content()
        # the server's lines: the sure tricks of each player named, or that no card was played
        assert ("each is sure of" in analysis and "Anna:" in analysis) \
            or "No card was played" in analysis, analysis
        # the German labels, and the explanation in German
        p2.get_by_test_id("lang-toggle").click()
        assert "Spiel vorbei" in p2.get_by_test_id("deal-result").text_content()
        assert "Pott" in p2.get_by_test_id("explanation").text_content()
        explanation_is_the_servers(p2, server, "de")
        # next deal by click: it comes once both friends pressed Next deal
        p1.get_by_test_id("next-deal").click()
        p2.locator("[data-testid=next-ready] li[data-seat='0'][data-ready=true]").wait_for()
        assert p1.get_by_test_id("deal-number").text_content() == "1"
        p2.get_by_test_id("next-deal").click()
        p1.get_by_test_id("deal-number").filter(has_text="2").wait_for()
    finally:
        c1.close()
        c2.close()


def test_tapp_deal_in_two_browsers_with_a_bot(server, chromium):
    rng = random.Random(5)
    names = ["Anna", "Bernd", "Robo"]
    c1, c2 = chromium.new_context(bypass_csp=True), chromium.new_context(bypass_csp=True)
    try:
        p1, p2 = c1.new_page(), c2.new_page()
        pages, spectator = join_two_friends(p1, p2, server, "tapp/modern", names)
        hands_are_private(pages)
        # seats are listed in the direction of play, which Modern Tapp turns round
        assert "counter-clockwise" in p1.get_by_test_id("direction").text_content()
        # a spectator sees no hand
        c3 = chromium.new_context(bypass_csp=True)
        p3 = c3.new_page()
        p3.goto(server + spectator)
        p3.get_by_test_id("players").locator(".player").first.wait_for()
        assert p3.locator("[data-testid=hand] .card").count() == 0
        c3.close()
        play_deal(pages, rng, prefer=["play", "contract:frage", "discard:", "play:"])
        check_settlement(pages, names)
        explanation_is_the_servers(p1, server, "en")  # a contract's name holds a suit's
        p2.get_by_test_id("lang-toggle").click()
        explanation_is_the_servers(p2, server, "de")
    finally:
        c1.close()
        c2.close()


def test_server_killed_mid_deal_the_browsers_carry_on(chromium, tmp_path):
    """Kill the server in the middle of a deal, start it again, and the
    players' pages reconnect by themselves to the same hands and log, and the deal goes on."""
    import signal

    from server_helpers import free_port, serve

    db = f"sqlite:///{tmp_path / 'restart.sqlite'}"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    rng = random.Random(3)
    proc = serve(db, port)
    c1, c2 = chromium.new_context(bypass_csp=True), chromium.new_context(bypass_csp=True)
    try:
        p1, p2 = c1.new_page(), c2.new_page()
        pages, _ = join_two_friends(p1, p2, base, "tippen/grupp-1975")
        # a few actions by clicking, then the server dies mid-deal
        acted = 0
        while acted < 3:
            for page in pages.values():
                legal = json.loads(page.get_by_test_id("legal-actions").text_content())
                if legal and page.get_by_test_id("turn").get_attribute("data-mine") == "true":
                    before = event_of(page)
                    perform(page, choose(legal, rng, ["tap", "exchange:-", "play:"]))
                    wait_moved_on(page, before)
                    acted += 1
            time.sleep(0.05)

        def seen(page):
            return (event_of(page),
                    page.locator("[data-testid=hand] .card").evaluate_all(
                        "els => els.map(e => e.dataset.card)"),
                    page.get_by_test_id("log").locator("li").all_text_contents())

        time.sleep(0.5)  # let the bot's turn, if any, settle
        before = {s: seen(p) for s, p in pages.items()}
        assert not p1.get_by_test_id("deal-result").is_visible(), "still mid-deal"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # the pages notice and say so
        p1.wait_for_function("document.getElementById('conn-status').textContent"
                             ".includes('reconnecting')")
        # an action clicked while the server is down is not lost silently
        page = next(p for p in pages.values()
                    if p.get_by_test_id("turn").get_attribute("data-mine") == "true")
        perform(page, choose(json.loads(page.get_by_test_id("legal-actions").text_content()),
                             rng, ["tap", "exchange:-", "play:"]))
        assert "not connected" in page.get_by_test_id("error").text_content()
        proc = serve(db, port)
        for s, page in pages.items():
            page.wait_for_function("document.getElementById('conn-status').dataset.state"
                                   " === 'open'", timeout=20000)
            page.wait_for_function(f"Number(document.body.dataset.event) >= {before[s][0]}")
        time.sleep(0.5)
        assert {s: seen(p) for s, p in pages.items()} == before
        play_deal(pages, rng, prefer=["tap", "exchange:", "play:"])
        check_settlement(pages, ["Anna", "Bernd", "Robo"])
    finally:
        c1.close()
        c2.close()
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def test_the_creator_copies_an_invite_link_and_start_takes_him_to_his_seat(server, chromium):
    context = chromium.new_context(bypass_csp=True, permissions=["clipboard-read", "clipboard-write"])
    try:
        page = context.new_page()
        page.goto(server + "/")
        page.get_by_test_id("ruleset-select").select_option("tippen/grupp-1975")
        for i, (name, bot) in enumerate([("Anna", ""), ("Bernd", ""), ("Robo", "random")]):
            page.get_by_test_id(f"seat-name-{i}").fill(name)
            page.get_by_test_id(f"seat-bot-{i}").select_option(bot)
        seats = page.get_by_test_id("seats").locator(".seat-row")
        while seats.count() > 3:
            page.get_by_test_id("remove-seat").click()
        page.get_by_test_id("create-table").click()
        page.get_by_test_id("created").wait_for()
        bernd = page.get_by_test_id("link-seat-1").get_attribute("href")
        page.get_by_test_id("copy-link-seat-1").click()
        page.get_by_test_id("copy-link-seat-1").filter(has_text="copied").wait_for()
        assert page.evaluate("navigator.clipboard.readText()") == server + bernd
        assert "Anna" in page.get_by_test_id("start-hint").text_content()
        anna = page.get_by_test_id("link-seat-0").get_attribute("href")
        page.get_by_test_id("start-table").click()
        page.wait_for_url(server + anna)
        page.get_by_test_id("hand").locator(".card").first.wait_for()
        assert "Anna (you)" in page.get_by_test_id("players").text_content()  # he sits as Anna
    finally:
        context.close()
