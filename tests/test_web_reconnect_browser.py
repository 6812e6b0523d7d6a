"""How often a page connects again, in Chromium against a real server: a link the server
refused for good (a wrong token) connects once and stops, saying why, and so does the link of
an archived table (here: a seat's whose link to the rematch was given out already), which shows
the table read-only as it ended; a refusal that may pass (too many connections
from the address) is tried again after a pause that grows. A few forgotten tabs of a dead link
that came back twice a second made thousands of connections."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from contextlib import ExitStack

import pytest
from test_browser import browser  # noqa: F401  (fixture)
from websockets.sync.client import connect

from stammtisch.i18n import catalogue
from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits
from stammtisch.server.threaded import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

#: How long the pages are watched for connections (seconds).
WATCH = 6.0
HANG = 120.0


def post(base: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def status_of(base: str, path: str) -> int:
    try:
        with urllib.request.urlopen(base + path, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def rematch_taken_link(base: str) -> str:
    """A seat's link of an archived table whose rematch seat was given out already."""
    t = post(base, "/api/tables", {"ruleset": "tippen/grupp-1975", "seats": [
        {"name": "Anna"}, {"name": "Bernd"}, {"name": "Robo", "bot": "random"}]})
    post(base, f"/api/tables/{t['id']}/start", {"token": t["admin_token"]})
    ws_base = base.replace("http://", "ws://")
    with ExitStack() as stack:
        socks = [stack.enter_context(connect(f"{ws_base}/ws/{t['id']}", open_timeout=10))
                 for _ in range(2)]
        for seat, sock in enumerate(socks):
            sock.send(json.dumps({"type": "hello", "token": t["seats"][seat]["token"]}))
            while json.loads(sock.recv(timeout=HANG))["type"] != "state":
                pass
        # closed with its players connected: the sweeper archives a closed table only once
        # nobody is at it, so not before the rematch is made
        post(base, f"/api/tables/{t['id']}/close", {"token": t["admin_token"]})
        for sock in socks:
            sock.send(json.dumps({"type": "rematch"}))
        for sock in socks:  # both seats were given their links to the rematch
            while json.loads(sock.recv(timeout=HANG))["type"] != "rematch":
                pass
    deadline = time.monotonic() + HANG
    while status_of(base, f"/api/tables/{t['id']}") != 410:  # the sweeper archives it
        assert time.monotonic() < deadline, "the old table was never archived"
        time.sleep(0.1)
    return f"/t/{t['id']}#{t['seats'][0]['token']}"


def sockets_made(browser, base: str, link: str, until: str | None = None):  # noqa: F811
    """Open ``link`` and count the WebSocket connections the page makes in ``WATCH`` seconds
    (after ``until``, a condition on the page, holds); the page too."""
    ctx = browser.new_context(bypass_csp=True)
    ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'en')")
    page = ctx.new_page()
    made: list[str] = []
    page.on("websocket", lambda ws: made.append(ws.url))
    page.goto(base + link)
    if until is not None:
        page.wait_for_function(until, timeout=HANG * 1000)
    page.wait_for_timeout(WATCH * 1000)
    return ctx, page, made


def test_a_link_refused_for_good_connects_once_and_says_why(browser, tmp_path):  # noqa: F811
    en = catalogue("en")
    with serve_in_thread(create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0.02,
                                    limits=ServerLimits(sweep_interval=0.1))) as base:
        link = rematch_taken_link(base)
        ctx, page, made = sockets_made(
            browser, base, link, "document.getElementById('conn-status').dataset.state === 'closed'")
        try:
            assert len(made) == 1, made
            assert all("token" not in url for url in made), made
            # the old table, read-only: it has ended, nothing is wrong with the link
            assert page.get_by_test_id("turn").text_content() == en["web.tableEnded"]
            assert page.get_by_test_id("error").text_content() == ""
        finally:
            ctx.close()
        ctx, page, made = sockets_made(
            browser, base, link.split("#")[0] + "#not-a-token",
            "document.getElementById('conn-status').dataset.state === 'closed'")
        try:
            assert len(made) == 1, made
            assert page.get_by_test_id("conn-status").text_content() == en["web.connectionEnded"]
        finally:
            ctx.close()


def test_a_refusal_that_may_pass_is_tried_again_after_growing_pauses(browser, tmp_path):  # noqa: F811
    en = catalogue("en")
    # every WebSocket from this address is one too many: refused with 4429 at each try
    with serve_in_thread(create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0.02,
                                    limits=ServerLimits(ws_per_address=0))) as base:
        t = post(base, "/api/tables", {"ruleset": "tippen/grupp-1975", "seats": [
            {"name": "Anna"}, {"name": "Robo", "bot": "random"}, {"name": "Rita", "bot": "random"}]})
        ctx, page, made = sockets_made(browser, base, t["seats"][0]["link"])
        try:
            # pauses of 0.25–0.5 s, 0.5–1 s, 1–2 s, 2–4 s: at most 5 tries in 6 s, however fast
            # the machine (a timer comes late, never early); twice a second would be 12
            assert 2 <= len(made) <= 5, made
            assert page.get_by_test_id("conn-status").text_content() == en["web.reconnecting"]
        finally:
            ctx.close()
