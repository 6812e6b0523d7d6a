"""The table feels alive, in Chromium against a real server: cards dealt into the hand, played
onto the felt and swept to the trick's winner move, and nothing moves for a reader who asked
for reduced motion; the page's title says "Your turn" while its tab is in the background, and a
notification says it once the player allowed one; the seat whose turn it is shows the seconds
its turn timer has left. A card, a trick and one's turn sound, unless the remembered switch is
off; the sounds are served under the Content-Security-Policy."""

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


# every sound the page tried to play, by file name (nothing is played aloud)
SOUNDS = """
window.__played = [];
HTMLMediaElement.prototype.play = function () {
  window.__played.push(this.src.split('/').pop());
  return Promise.resolve();
};
"""

# a browser's notifications: each one made is kept in window.__notes; the permission is asked
# for (window.__asked counts it) and granted, and stays granted across reloads
NOTIFICATIONS = """
window.__notes = []; window.__asked = 0;
window.Notification = class {
  constructor(title, options) {
    Object.assign(this, {title, body: (options || {}).body, closed: false});
    window.__notes.push(this);
  }
  close() { this.closed = true; }
  static requestPermission() {
    window.__asked += 1; localStorage.setItem('test.granted', '1'); window.Notification.permission = 'granted';
    return Promise.resolve('granted');
  }
};
window.Notification.permission = localStorage.getItem('test.granted') ? 'granted' : 'default';
"""


def open_table(browser, base, link, motion, scripts=(), csp=False):  # noqa: F811
    ctx = browser.new_context(bypass_csp=not csp, viewport={"width": 1280, "height": 900}, reduced_motion=motion)
    ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'en')")
    for script in (BACKGROUND, *scripts):
        ctx.add_init_script(script)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + link)
    page.get_by_test_id("players").locator(".player").first.wait_for()
    return ctx, page, errors


def watch(page, rng, seconds=40) -> set[str]:
    """Play (seat 0) for a while, through deals; every animation name seen on the way."""
    seen: set[str] = set()

    def all_seen() -> bool:
        seen.update(m.split(" ")[0] for m in page.evaluate(MOVING))
        return {"arrive", "sweep", "dealt"} <= seen
    keep_playing(page, rng, all_seen, seconds)
    return seen


def keep_playing(page, rng, done, seconds=40) -> bool:
    """Play (seat 0) through deals until ``done()`` holds or the time is up; whether it held.
    ``done`` is asked again between seeing this player's turn and acting on it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not done():
        if page.locator("[data-testid=next-deal]:visible:not([disabled])").count():
            try:  # (the next deal may have come meanwhile: the button is gone)
                page.get_by_test_id("next-deal").click(timeout=2000)
            except PlaywrightTimeout:
                pass
            continue
        legal = my_legal(page)
        if legal and not done():
            before = event_of(page)
            action = choose(legal, rng, ["tap", "exchange:-", "play:"])
            perform(page, action)
            wait_moved_on(page, before, action)
        time.sleep(0.02)
    return done()


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


def played(page) -> list[str]:
    return page.evaluate("window.__played")


def switch(page, name: str) -> bool:
    return page.get_by_test_id(f"{name}-switch").get_attribute("aria-pressed") == "true"


def test_a_card_a_trick_and_ones_turn_sound_unless_the_remembered_switch_is_off(server, browser):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
    ctx, page, errors = open_table(browser, server, t["seats"][0]["link"], "reduce", [SOUNDS])
    wanted = {"card.wav", "trick.wav", "turn.wav"}
    try:
        assert switch(page, "sound")  # on until switched off
        assert keep_playing(page, random.Random(2), lambda: wanted <= set(played(page))), played(page)
        assert set(played(page)) == wanted
        page.get_by_test_id("sound-switch").click()
        assert not switch(page, "sound")
        page.reload()
        page.get_by_test_id("players").locator(".player").first.wait_for()
        assert not switch(page, "sound")  # remembered
        # a trick taken and this player's turn come by, and cards with them: not a sound
        texts = catalogue("en")
        live = page.get_by_test_id("live")
        trick_taken = texts["web.trickWinner"].split("{name}")[-1].strip()

        def both_announced() -> bool:
            said = live.text_content() or ""
            return trick_taken in said and texts["web.yourTurn"] in said
        assert keep_playing(page, random.Random(3), both_announced)
        assert played(page) == []
        page.get_by_test_id("sound-switch").click()
        page.reload()
        page.get_by_test_id("players").locator(".player").first.wait_for()
        assert switch(page, "sound")
    finally:
        ctx.close()
    assert errors == []


def test_a_notification_calls_a_player_in_another_tab_once_per_turn_before_the_stand_in(server, browser):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "random"), ("Carla", "random")],
                  turn_seconds=60)
    ctx, page, errors = open_table(browser, server, t["seats"][0]["link"], "reduce", [NOTIFICATIONS])
    notes = "window.__notes.map((n) => ({title: n.title, body: n.body, closed: n.closed}))"
    try:
        base = page.title()
        # the permission is asked for only when the player switches notifications on
        assert not switch(page, "notify") and page.evaluate("window.__asked") == 0
        page.get_by_test_id("notify-switch").click()
        page.wait_for_function("document.querySelector('[data-testid=notify-switch]')"
                               ".getAttribute('aria-pressed') === 'true'")
        assert page.evaluate("window.__asked") == 1
        page.reload()
        page.get_by_test_id("players").locator(".player").first.wait_for()
        assert switch(page, "notify") and page.evaluate("window.__asked") == 0  # remembered, not asked again
        # in the background: a turn that comes is called, at once (the turn is still the player's)
        page.evaluate("() => { window.__hidden = true; document.dispatchEvent(new Event('visibilitychange')); }")
        assert keep_playing(page, random.Random(4), lambda: page.evaluate("window.__notes.length") > 0)
        assert my_legal(page)
        page.get_by_test_id("countdown-0").wait_for()
        assert page.title() == catalogue("en")["web.yourTurnTitle"].format(title=base)
        title = page.get_by_test_id("table-title").text_content()
        texts = catalogue("en")
        assert page.evaluate(notes) == [{"title": texts["web.yourTurn"],
                                         "body": texts["web.notifyBody"].format(table=title), "closed": False}]
        # once per turn: the page drawn again (here by a look at the tab) calls no second time
        page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")
        assert page.evaluate("window.__notes.length") == 1
        # the next turn is called again; the last call went when its turn passed
        assert keep_playing(page, random.Random(5), lambda: page.evaluate("window.__notes.length") > 1)
        first, second = page.evaluate(notes)[:2]
        assert first["closed"] and not second["closed"]
        # the tab seen again: the call goes, the plain title comes back
        page.evaluate("() => { window.__hidden = false; document.dispatchEvent(new Event('visibilitychange')); }")
        assert page.evaluate(notes)[1]["closed"]
        page.wait_for_function(f"document.title === {base!r}")
    finally:
        ctx.close()
    assert errors == []


def test_the_sounds_are_served_and_play_under_the_content_security_policy(server, browser):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
    violations: list[str] = []
    ctx, page, errors = open_table(browser, server, t["seats"][0]["link"], "reduce", [
        "document.addEventListener('securitypolicyviolation', (e) => "
        "console.log('Content Security Policy: ' + e.violatedDirective + ' ' + e.blockedURI))"], csp=True)
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    try:
        for name in ("card", "trick", "turn"):
            answer = page.request.get(f"{server}/static/sounds/{name}.wav")
            assert answer.ok and answer.headers["content-type"] == "audio/wav"
            assert len(answer.body()) < 16_000
        # each one loads and decodes in the page (a blocked or broken file fires "error")
        durations = page.evaluate("""async () => Promise.all(['card', 'trick', 'turn'].map((n) =>
        new Promise((ok, fail) => {
          const a = new Audio('/static/sounds/' + n + '.wav');
          a.addEventListener('canplaythrough', () => ok(a.duration));
          a.addEventListener('error', () => fail(new Error(n + ': ' + (a.error && a.error.code))));
        })))""")
        assert all(0.05 < d < 1 for d in durations), durations
    finally:
        ctx.close()
    assert violations == []
    assert errors == []


def test_a_browser_that_refuses_notifications_leaves_the_switch_off_and_says_why(server, browser):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
    refusing = NOTIFICATIONS.replace("Promise.resolve('granted')", "Promise.resolve('denied')").replace(
        "localStorage.setItem('test.granted', '1'); window.Notification.permission = 'granted';",
        "window.Notification.permission = 'denied';")
    ctx, page, errors = open_table(browser, server, t["seats"][0]["link"], "reduce", [refusing])
    try:
        page.get_by_test_id("notify-switch").click()
        note = page.get_by_test_id("notify-note")
        note.filter(has_text=catalogue("en")["web.notifyDenied"]).wait_for()
        assert not switch(page, "notify") and page.evaluate("window.__asked") == 1
    finally:
        ctx.close()
    assert errors == []


def test_a_spectator_is_offered_sounds_but_no_call_to_a_turn_he_never_has(server, browser):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
    ctx, page, errors = open_table(browser, server, t["spectator"]["link"], "reduce", [NOTIFICATIONS])
    try:
        page.get_by_test_id("sound-switch").wait_for()
        page.wait_for_function("document.body.dataset.event !== undefined")
        assert page.get_by_test_id("notify-switch").is_hidden()
    finally:
        ctx.close()
    ctx, page, errors2 = open_table(browser, server, t["seats"][0]["link"], "reduce", [NOTIFICATIONS])
    try:
        page.get_by_test_id("notify-switch").wait_for()
    finally:
        ctx.close()
    assert errors == errors2 == []
