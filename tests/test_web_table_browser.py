"""The web table a card player expects: Playwright + Debian's Chromium against a real server.

Each point is checked at 390 px (a phone) and 1280 px, in English and German (the checks of a
state loop over the four views on the same page: the viewport is resized and the language
switched with the page's own button):

- the table: seats round the felt with the viewer at the bottom, each card played in front of its
  player, the upcard in the middle, the hand along the bottom (legal cards raised, the others
  dimmed, trumps marked), nothing wider than the screen;
- the settlement stays until every seated person pressed Next deal (the protocol's ``pace`` and
  ``next_ready``: the next deal does not start after one of two presses), and the Deals panel
  reopens deal 1 after deal 3 (explanation, tricks, Analysis);
- a Tapp auction: what each seat said on its tile, the bid to beat, bid and contract buttons
  with the server's words (goal and value);
- a choice of cards says how many and how many are chosen, its button is enabled only for a
  legal set, and a refusal says why in the player's language;
- faces: A K D B on French suits in German, German-suited faces drawn as SVG with the
  catalogue's names;
- the lobby on a phone: open tables first, rule sets by name, the newcomer's introduction and
  its link into the Rules panel (opened on the basics, Close in reach);
- a whole deal of Tippen and one of Tapp with the keyboard alone, the live region's words after
  a card, the focus ring, reduced motion;
- the favicon, German option help with German values, no English before the German texts;
- a new deal and each turn bring the felt and the hand into view on a phone and a desktop,
  however far the player had scrolled away.
"""

from __future__ import annotations

import json
import random
import re
import time
import urllib.request

import pytest
from server_helpers import roomy_limits
from test_browser import browser, choose, event_of, perform, wait_moved_on  # noqa: F401  (fixture)

from stammtisch.i18n import catalogue, render
from stammtisch.i18n.words import action_phrase, card_name, contract_name
from stammtisch.server.app import create_app
from stammtisch.server.threaded import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

VIEWS = [(390, "en"), (390, "de"), (1280, "en"), (1280, "de")]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # a short pause between deals: a table with a person seated must still wait for Next deal
    db = tmp_path_factory.mktemp("table") / "st.sqlite"
    with serve_in_thread(create_app(f"sqlite:///{db}", bot_delay=0.02, deal_pause=0.2,
                                    limits=roomy_limits())) as base:
        yield base


def post(base: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def get(base: str, path: str, token: str | None = None) -> dict:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    with urllib.request.urlopen(urllib.request.Request(base + path, headers=headers), timeout=30) as r:
        return json.loads(r.read())


def new_table(base: str, ruleset: str, seats: list[tuple[str, str | None]], **extra) -> dict:
    """A started table; seats are (name, bot), bot None for a person."""
    t = post(base, "/api/tables", {"ruleset": ruleset, "seats": [
        {"name": n, **({"bot": b} if b else {})} for n, b in seats], **extra})
    post(base, f"/api/tables/{t['id']}/start", {"token": t["admin_token"]})
    return t


def open_page(browser, base, link, width=1280, lang="en"):  # noqa: F811
    ctx = browser.new_context(bypass_csp=True, viewport={"width": width, "height": 900})
    ctx.add_init_script(f"localStorage.setItem('stammtisch.lang', {lang!r})")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(base + link)
    page.get_by_test_id("players").locator(".player").first.wait_for()
    return ctx, page, errors


def set_view(page, width: int, lang: str) -> None:
    """Resize the page and switch its language with its own button."""
    page.set_viewport_size({"width": width, "height": 900})
    if page.evaluate("document.documentElement.lang") != lang:
        page.get_by_test_id("lang-toggle").click()
        page.wait_for_function(f"document.documentElement.lang === {lang!r}")


# Elements wider than the viewport (their right edge beyond it); a .scroll box scrolls on purpose.
OVERFLOW = """() => {
  const w = document.documentElement.clientWidth;
  const out = [];
  for (const e of document.querySelectorAll('body *')) {
    if (!e.checkVisibility() || e.closest('.scroll')) continue;
    const r = e.getBoundingClientRect();
    if (r.width && (r.right > w + 1 || r.left < -1))
      out.push(`${e.tagName} ${e.id || e.className} ${Math.round(r.left)}..${Math.round(r.right)}`);
  }
  return {width: w, scroll: document.documentElement.scrollWidth, out: out.slice(0, 10)};
}"""


def at_rest(page) -> None:
    """Wait until no card moves (a card played, dealt or swept is animated): the layout is
    measured as it stays."""
    page.wait_for_function("document.getAnimations().every((a) => a.playState !== 'running')")


def assert_fits(page) -> None:
    at_rest(page)
    seen = page.evaluate(OVERFLOW)
    assert seen["scroll"] <= seen["width"] and seen["out"] == [], seen


def my_legal(page) -> list[str]:
    if page.get_by_test_id("turn").get_attribute("data-mine") != "true":
        return []
    return json.loads(page.get_by_test_id("legal-actions").text_content() or "[]")


def next_deal(page) -> None:
    page.get_by_test_id("next-deal").click()
    page.get_by_test_id("deal-result").wait_for(state="hidden")


def play_until(page, rng, prefer, until, deals=12, limit=3000):
    """Click this seat's turns (bots at the others) until ``until(page, legal)`` holds; a
    finished deal is followed by the next one (Next deal), at most ``deals`` of them."""
    done = 0
    for _ in range(limit):
        legal = my_legal(page)
        if until(page, legal):
            return
        if page.get_by_test_id("deal-result").is_visible():
            if until(page, my_legal(page)):  # the deal ended between the two looks
                return
            done += 1
            assert done < deals, "the state never came"
            next_deal(page)
            continue
        if not legal:
            time.sleep(0.03)
            continue
        before = event_of(page)
        action = choose(legal, rng, prefer)
        perform(page, action)
        wait_moved_on(page, before, action)
    raise AssertionError("the state never came")


# ----------------------------------------------------------------------------- 1. the table

LAYOUT = """() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return {l: r.left, t: r.top, r: r.right, b: r.bottom,
    x: r.left + r.width / 2, y: r.top + r.height / 2}; };
  const felt = box(document.querySelector('[data-testid=felt]'));
  const tiles = [...document.querySelectorAll('[data-testid=players] .player')].map((e) => ({
    seat: Number(e.dataset.testid.slice(7)), me: e.classList.contains('me'), ...box(e)}));
  const played = [...document.querySelectorAll('[data-testid=trick] .played')].map((e) => ({
    seat: Number(e.dataset.seat), ...box(e.querySelector('.card'))}));
  const up = document.querySelector('[data-testid=upcard] .card');
  const hand = [...document.querySelectorAll('[data-testid=hand] .card')].map((e) => {
    const f = e.querySelector('.face');
    return {card: e.dataset.card, legal: e.dataset.legal === 'true', top: f.getBoundingClientRect().top,
      opacity: Number(getComputedStyle(f).opacity), disabled: e.getAttribute('aria-disabled'),
      label: e.getAttribute('aria-label'), trump: e.classList.contains('trump'),
      star: getComputedStyle(f, '::after').content};
  });
  return {felt, tiles, played, upcard: up ? box(up) : null, hand: hand,
    handBox: box(document.querySelector('[data-testid=hand]'))};
}"""


def overlap(a, b) -> bool:
    return a["l"] < b["r"] - 1 and b["l"] < a["r"] - 1 and a["t"] < b["b"] - 1 and b["t"] < a["b"] - 1


def dist(a, b) -> float:
    return ((a["x"] - b["x"]) ** 2 + (a["y"] - b["y"]) ** 2) ** 0.5


def check_table(page, lang: str, trump: str | None) -> None:
    """The felt as a card player expects it, in the page's current view."""
    assert_fits(page)
    lay = page.evaluate(LAYOUT)
    felt, tiles = lay["felt"], lay["tiles"]
    me = next(t for t in tiles if t["me"])
    # the viewer sits at the bottom, in the middle; every seat inside the felt
    assert me["y"] == max(t["y"] for t in tiles) and abs(me["x"] - felt["x"]) < 2, tiles
    for t in tiles:
        assert felt["l"] - 1 <= t["l"] and t["r"] <= felt["r"] + 1, t
        assert felt["t"] - 1 <= t["t"] and t["b"] <= felt["b"] + 1, t
    # each card played lies in front of its player: nearer to his seat than to any other, between
    # his seat and the middle, on no seat
    by_seat = {t["seat"]: t for t in tiles}
    for c in lay["played"]:
        own = by_seat[c["seat"]]
        assert all(dist(c, own) <= dist(c, t) for t in tiles), (c, tiles)
        assert dist(c, felt) < dist(own, felt), (c, own)
        assert not any(overlap(c, t) for t in tiles), (c, tiles)
    # the upcard in the middle of the felt
    if lay["upcard"]:
        up = lay["upcard"]
        assert abs(up["x"] - felt["x"]) < (felt["r"] - felt["l"]) * 0.2
        assert abs(up["y"] - felt["y"]) < (felt["b"] - felt["t"]) * 0.25
    # the hand along the bottom, under the felt; legal cards raised, the others dimmed and
    # marked as not to be chosen; trumps marked (a star, and the word in the card's name)
    assert lay["handBox"]["t"] >= felt["b"] - 1
    hand = lay["hand"]
    legal = [c for c in hand if c["legal"]]
    other = [c for c in hand if not c["legal"]]
    assert legal
    for c in legal:
        assert c["opacity"] == 1 and c["disabled"] is None, c
    for c in other:
        assert c["opacity"] < 1 and c["disabled"] == "true", c
        assert all(x["top"] < c["top"] - 4 for x in legal), hand
    word = catalogue(lang)["web.trumpMark"]
    for c in hand:
        is_trump = trump is not None and c["card"][0] == trump
        assert c["trump"] == is_trump and (word in c["label"]) == is_trump, c
        assert (c["star"] == '"★"') == is_trump, c


def test_the_table_seats_the_trick_and_the_hand_at_every_width_and_language(server, browser):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "heuristic"), ("Carla", "heuristic"),
                                                ("Dieter", "heuristic")])
    ctx, page, errors = open_page(browser, server, t["seats"][0]["link"])
    try:
        rng = random.Random(5)
        hand = page.get_by_test_id("hand")

        def mid_trick_with_a_choice(page, legal):
            # my turn to follow a card led, with a card I may not play
            return (any(a.startswith("play:") for a in legal)
                    and page.locator("[data-testid=trick] .played").count() > 0
                    and hand.locator(".card[data-legal=false]").count() > 0)

        play_until(page, rng, ["tap", "exchange:-", "play:"], mid_trick_with_a_choice, deals=20)
        trump = page.evaluate("game.msg.view.trump")
        for width, lang in VIEWS:
            set_view(page, width, lang)
            check_table(page, lang, trump)
            # the seats are in the direction of play: the next seat after mine is to my left
            at_rest(page)
            lay = page.evaluate(LAYOUT)
            me = next(x for x in lay["tiles"] if x["me"])
            nxt = next(x for x in lay["tiles"] if x["seat"] == (me["seat"] + 1) % 4)
            assert nxt["x"] < me["x"] - 10
        # a finished trick: its winner's card marked, his name said, the trick kept as the last one
        legal = my_legal(page)
        card = next(a for a in legal if a.startswith("play:"))
        before = event_of(page)
        perform(page, card)
        wait_moved_on(page, before)
        page.locator("[data-testid=last-trick] .played").first.wait_for()
        page.locator("[data-testid=trick][data-finished=false]").wait_for()
        winners = page.locator("[data-testid=last-trick] .played[data-winner=true]")
        assert winners.count() == 1
        who = page.evaluate("game.info.players[Number(document.querySelector("
                            "'[data-testid=last-trick] .played[data-winner=true]').dataset.seat)]")
        assert who in page.get_by_test_id("last-trick-winner").text_content()
    finally:
        ctx.close()
    assert errors == []


# ----------------------------------------------------------------------------- 2. the result stays; Deals

def play_both(pages, rng, prefer) -> None:
    """Two people play their turns until both see the settlement."""
    for _ in range(2000):
        if all(p.get_by_test_id("deal-result").is_visible() for p in pages):
            return
        acted = False
        for p in pages:
            legal = my_legal(p)
            if legal and not p.get_by_test_id("deal-result").is_visible():
                before = event_of(p)
                perform(p, choose(legal, rng, prefer))
                wait_moved_on(p, before)
                acted = True
        if not acted:
            time.sleep(0.03)
    raise AssertionError("the deal did not end")


def both_press_next(anna, bernd, deal: int) -> None:
    """Anna presses Next deal: the server counts her (``next_ready``), both pages say so, and the
    deal does not start; Bernd presses too: the next deal starts on both pages."""
    anna.get_by_test_id("next-deal").click()
    bernd.locator("[data-testid=next-ready] li[data-seat='0'][data-ready=true]").wait_for()
    anna.locator("[data-testid=next-ready] li[data-seat='0'][data-ready=true]").wait_for()
    for p in (anna, bernd):
        info = p.evaluate("({deal: game.info.deal_number, pace: game.info.pace, ready: game.info.next_ready,"
                          " terminal: game.msg.view.terminal})")
        assert info == {"deal": deal, "pace": "wait", "ready": [0], "terminal": True}, info
        assert p.get_by_test_id("deal-result").is_visible()
        assert p.get_by_test_id("explanation").locator("li").count() > 0
    assert anna.get_by_test_id("next-deal").is_disabled()
    assert bernd.locator("[data-testid=next-ready] li[data-seat='1'][data-ready=false]").count() == 1
    bernd.get_by_test_id("next-deal").click()
    for p in (anna, bernd):
        p.get_by_test_id("deal-number").filter(has_text=str(deal + 1)).wait_for()
        p.get_by_test_id("deal-result").wait_for(state="hidden")


def test_the_settlement_waits_for_every_person_and_deals_reopen(server, browser):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", None), ("Robo", "heuristic")])
    c1, anna, e1 = open_page(browser, server, t["seats"][0]["link"], 1280, "en")
    c2, bernd, e2 = open_page(browser, server, t["seats"][1]["link"], 390, "de")
    try:
        rng = random.Random(3)
        for deal in (1, 2, 3):
            play_both([anna, bernd], rng, ["tap", "exchange:", "play:"])
            if deal < 3:
                both_press_next(anna, bernd, deal)
        # the result, its explanation and the Analysis stay until the next deal
        anna.get_by_test_id("analysis-btn").click()
        anna.locator("[data-testid=analysis]:not([data-state=loading]):not([data-state=partial])").wait_for(timeout=120_000)
        assert anna.get_by_test_id("deal-result").is_visible()
        # the Deals panel reopens deal 1: explanation, tricks card by card, Analysis
        table_id = t["id"]
        token = t["seats"][0]["link"].split("#")[1]
        data = get(server, f"/api/tables/{table_id}/deals/1", token)
        for page, lang, width in ((anna, "en", 1280), (bernd, "de", 390)):
            page.get_by_test_id("deals-button").click()
            panel = page.get_by_test_id("deals-panel")
            panel.wait_for()
            assert panel.get_by_test_id("deals-list").locator("button").count() == 3
            panel.get_by_test_id("deal-1").click()
            panel.get_by_test_id("deal-explanation").wait_for()
            shown = panel.get_by_test_id("deal-explanation").locator("li").all_text_contents()
            assert shown == [render(m, lang) for m in data["explanation"]]
            tricks = panel.get_by_test_id("deal-tricks").locator(":scope > li")
            assert tricks.count() == len(data["tricks"]) > 0
            for k, trick in enumerate(data["tricks"]):
                row = tricks.nth(k)
                shown_cards = [c.get_attribute("data-card") for c in row.locator(".card").all()]
                assert shown_cards == [c for _, c in trick["cards"]]
                assert row.locator(".played[data-winner=true]").get_attribute("data-seat") == str(trick["winner"])
            panel.get_by_test_id("deal-analysis-btn").click()
            panel.locator("[data-testid=deal-analysis]:not([data-state=loading]):not([data-state=partial])").wait_for(
                timeout=120_000)
            assert panel.get_by_test_id("deal-analysis").get_attribute("data-state") == "done"
            assert_fits(page)
            if width == 390:  # Close in reach on a phone
                box = panel.get_by_test_id("deals-close").bounding_box()
                assert box is not None and box["x"] + box["width"] <= width
            panel.get_by_test_id("deals-close").click()
            panel.wait_for(state="hidden")
    finally:
        c1.close()
        c2.close()
    assert e1 == [] and e2 == []


# ----------------------------------------------------------------------------- 3. auction and contracts

def said_expected(log: list, n: int, lang: str, suits: str = "french") -> list[list[str]]:
    """What each tile must show for a log of declarations and bids (catalogue words)."""
    texts = catalogue(lang)
    out: list[list[str]] = [[] for _ in range(n)]
    for seat, a in log:
        head, _, rest = a.partition(":")
        if f"web.said.{a}" in texts:
            out[seat].append(texts[f"web.said.{a}"])
        elif head in ("bid", "contract"):
            out[seat].append(texts["web.said.pass"] if rest == "pass" else contract_name(rest, lang, suits))
    return out


def tiles_said(page, n: int) -> list[list[str]]:
    return [page.get_by_test_id(f"said-{i}").locator(".say").all_text_contents() for i in range(n)]


def test_a_tapp_auction_shows_every_bid_on_the_tiles_and_the_bid_to_beat(server, browser):  # noqa: F811
    t = new_table(server, "tapp/classic-1879", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
    ctx, page, errors = open_page(browser, server, t["seats"][0]["link"], 390, "de")
    try:
        rng = random.Random(2)
        seen_standing = False
        checks = 0

        def auction_turn_after_a_bid(page, legal):
            nonlocal seen_standing, checks
            if not any(a.startswith("bid:") or a == "hold" for a in legal):
                return False
            view = page.evaluate("game.msg.view")
            for width, lang in VIEWS:
                set_view(page, width, lang)
                assert tiles_said(page, 3) == said_expected(view["log"], 3, lang)
                # every bid button is named by the server's words for it
                choices = page.evaluate("game.msg.choices")
                for a, m in zip(view["legal_actions"], choices, strict=True):
                    if a.startswith("bid:"):
                        assert page.get_by_test_id(f"action-{a}").get_attribute("aria-label") == render(m, lang)
                standing = view.get("standing")
                if standing and standing["seat"] != 0:
                    text = page.get_by_test_id("standing").text_content()
                    bid = standing["bid"].partition(":")[2] or standing["bid"]
                    assert contract_name(bid, lang) in text and ["Anna", "Bernd", "Carla"][standing["seat"]] in text
                    seen_standing = True
                assert_fits(page)
            checks += 1
            return seen_standing and checks >= 2

        play_until(page, rng, ["pass", "play:", "discard:", "no-tout"], auction_turn_after_a_bid, deals=30)
    finally:
        ctx.close()
    assert errors == []


def test_contract_buttons_say_goal_and_value_in_the_tables_unit(server, browser):  # noqa: F811
    t = new_table(server, "tapp/modern", [("Anna", None), ("Bernd", "heuristic"), ("Carla", "heuristic")])
    ctx, page, errors = open_page(browser, server, t["seats"][0]["link"], 1280, "en")
    try:
        play_until(page, random.Random(4), ["play", "weg", "pass", "play:"],
                   lambda p, legal: any(a.startswith("contract:") for a in legal), deals=30)
        legal = my_legal(page)
        choices = page.evaluate("game.msg.choices")
        for width, lang in VIEWS:
            set_view(page, width, lang)
            unit = {"en": "cent", "de": "Cent"}[lang]
            for a, m in zip(legal, choices, strict=True):
                if not a.startswith("contract:") or a == "contract:pass":
                    continue
                # the whole sentence is the button's name (its face: name and value, the goal below)
                text = page.get_by_test_id(f"action-{a}").get_attribute("aria-label")
                assert text == render(m, lang)
                assert contract_name(a.partition(":")[2], lang) in text and unit in text, text
                assert re.search(r"\d", text)
            assert_fits(page)
    finally:
        ctx.close()
    assert errors == []


# ----------------------------------------------------------------------------- 4. choices of cards

def prompt_of(lang: str, key: str, chosen: int, **counts) -> str:
    texts = catalogue(lang)
    what = texts[f"web.pick_{counts.pop('head')}"]
    body = texts[f"web.{key}"].format(what=what, **counts)
    return body + " — " + texts["web.pickChosen"].format(n=chosen)


def test_a_choice_of_cards_says_how_many_and_accepts_only_a_legal_set(server, browser):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "heuristic"), ("Carla", "heuristic"),
                                                ("Dieter", "heuristic")])
    ctx, page, errors = open_page(browser, server, t["seats"][0]["link"], 390, "de")
    try:
        rng = random.Random(8)
        play_until(page, rng, ["tap", "play:"], lambda p, legal: any(a.startswith("exchange:") for a in legal),
                   deals=20)
        legal = my_legal(page)
        hand = page.locator("[data-testid=hand] .card").evaluate_all("els => els.map(e => e.dataset.card)")
        most = max(len(a.partition(":")[2].split(",")) for a in legal if a not in ("exchange:-",))
        for width, lang in VIEWS:
            set_view(page, width, lang)
            expected = prompt_of(lang, "pickUpTo", 0, head="exchange", max=most)
            assert page.get_by_test_id("prompt").text_content() == expected
        page.get_by_test_id(f"card-{hand[0]}").click()
        assert page.get_by_test_id("prompt").text_content() == prompt_of("de", "pickUpTo", 1, head="exchange", max=most)
        confirm = page.get_by_test_id("confirm-exchange")
        assert confirm.get_attribute("data-action") == f"exchange:{hand[0]}" and confirm.is_enabled()
        # a refused action says why, in German: a card that may not be played now
        before = event_of(page)
        confirm.click()
        wait_moved_on(page, before)

        def follow_with_a_choice(page, legal):
            return any(a.startswith("play:") for a in legal) and page.locator(
                "[data-testid=hand] .card[data-legal=false]").count() > 0

        play_until(page, rng, ["tap", "exchange:-", "play:"], follow_with_a_choice, deals=20)
        wrong = page.locator("[data-testid=hand] .card[data-legal=false]").first.get_attribute("data-card")
        page.evaluate(f"act('play:{wrong}')")
        page.get_by_test_id("error").filter(has_text=catalogue("de")["web.refused"].split("{")[0].strip()).wait_for()
        reason = page.get_by_test_id("error").text_content()
        german_rules = [v for k, v in catalogue("de").items() if k.startswith("rule.")]
        assert any(r in reason for r in german_rules), reason
    finally:
        ctx.close()
    assert errors == []


def test_laying_away_takes_exactly_the_tapps_count(server, browser):  # noqa: F811
    # heuristic bots bid only on strong hands: Anna's Frage wins the auction in most deals
    t = new_table(server, "tapp/classic-1879", [("Anna", None), ("Bernd", "heuristic"), ("Carla", "heuristic")])
    ctx, page, errors = open_page(browser, server, t["seats"][0]["link"], 1280, "en")
    try:
        play_until(page, random.Random(6), ["bid:frage", "hold", "play:", "no-tout"],
                   lambda p, legal: any(a.startswith("discard:") for a in legal), deals=40)
        legal = my_legal(page)
        size = len(legal[0].partition(":")[2].split(","))
        assert all(len(a.partition(":")[2].split(",")) == size for a in legal)
        confirm = page.get_by_test_id("confirm-discard")
        first = legal[0].partition(":")[2].split(",")
        for k, card in enumerate(first, start=1):
            page.get_by_test_id(f"card-{card}").click()
            expected = prompt_of("en", "pickExactly", k, head="discard", max=size)
            assert page.get_by_test_id("prompt").text_content() == expected
            # enabled only when the chosen cards are one of the legal actions
            assert confirm.is_enabled() == (k == size)
        for width, lang in VIEWS:
            set_view(page, width, lang)
            expected = prompt_of(lang, "pickExactly", size, head="discard", max=size)
            assert page.get_by_test_id("prompt").text_content() == expected
            assert_fits(page)
    finally:
        ctx.close()
    assert errors == []


# ----------------------------------------------------------------------------- 5. faces

SPRITE = {"H": "#gs-heart", "D": "#gs-bell", "C": "#gs-acorn", "S": "#gs-leaf"}
FACES = """() => [...document.querySelectorAll('[data-testid=hand] .card, [data-testid=upcard] .card')].map((e) => {
  const f = e.querySelector('.face');
  const svg = f.querySelector('svg.big');
  return {card: e.dataset.card, rank: f.querySelector('.rank').textContent, label: e.getAttribute('aria-label'),
    text: f.textContent, use: svg ? svg.querySelector('use').getAttribute('href') : null,
    size: svg ? svg.getBoundingClientRect().width : 0};
})"""


def test_german_faces_on_french_and_german_suits(server, browser):  # noqa: F811
    de = catalogue("de")
    assert [de[f"rank_short.{r}"] for r in "AKQJ"] == ["A", "K", "D", "B"]
    assert [de[f"rank_short.german.{r}"] for r in "AKQJ"] == ["D", "K", "O", "U"]
    french = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "heuristic"), ("Carla", "heuristic")])
    german = new_table(server, "tapp/classic-1879", [("Anna", None), ("Bernd", "heuristic"), ("Carla", "heuristic")],
                       options={"suits": "german"})
    tippen = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "heuristic"), ("Carla", "heuristic")],
                       options={"suits": "german"})
    for t, suits in ((french, "french"), (german, "german"), (tippen, "german")):
        ctx, page, errors = open_page(browser, server, t["seats"][0]["link"], 390, "de")
        try:
            page.locator("[data-testid=hand] .card").first.wait_for()
            for width, lang in VIEWS:
                set_view(page, width, lang)
                texts = catalogue(lang)
                for face in page.evaluate(FACES):
                    c = face["card"]
                    key = f"rank_short.german.{c[1]}" if suits == "german" and c[1] in "AKQJ" else f"rank_short.{c[1]}"
                    assert face["rank"] == (texts[key] if c[1] in "AKQJT" else c[1]), face
                    assert face["label"].startswith(card_name(c, lang, suits)), face
                    if suits == "german":  # drawn suits, sharp at any size; no French symbol
                        assert face["use"] == SPRITE[c[0]]
                        assert face["size"] > 8 and not re.search("[♥♦♣♠]", face["text"]), face
                    else:
                        assert face["use"] is None and "♥♦♣♠"["HDCS".index(c[0])] in face["text"]
        finally:
            ctx.close()
        assert errors == []


# ----------------------------------------------------------------------------- 6. the lobby

def test_the_lobby_for_a_newcomer_on_a_phone(server, browser):  # noqa: F811
    listed = post(server, "/api/tables", {"ruleset": "tapp/modern", "listed": True, "turn_seconds": 60, "seats": [
        {"name": "Wirt"}, {"name": "Gast", "open": True}, {"name": "Robo", "bot": "heuristic"}]})
    ctx = browser.new_context(bypass_csp=True, viewport={"width": 390, "height": 844})
    try:
        page = ctx.new_page()
        page.goto(server + "/")
        page.get_by_test_id(f"open-table-{listed['id']}").wait_for()
        rulesets = get(server, "/api/rulesets")
        for width, lang in VIEWS:
            set_view(page, width, lang)
            texts = catalogue(lang)
            assert_fits(page)
            # open tables before the form of a new table
            form = page.locator("#create-form").bounding_box()
            assert page.get_by_test_id("open-tables").bounding_box()["y"] < form["y"]
            entry = page.get_by_test_id(f"open-table-{listed['id']}").text_content()
            assert texts["ruleset.title.tapp/modern"] in entry
            # rule sets by name
            shown = page.get_by_test_id("ruleset-select").locator("option").all_text_contents()
            assert sorted(shown) == sorted(texts[f"ruleset.title.{r['id']}"] for r in rulesets)
            assert not set(shown) & {r["id"] for r in rulesets}
            intro = page.get_by_test_id("intro").text_content()
            assert texts["web.introTippen"] in intro and texts["web.introTapp"] in intro
        # the link of the introduction opens the Rules panel on the basics, Close in reach
        for width, lang in ((390, "en"), (390, "de")):
            set_view(page, width, lang)
            page.get_by_test_id("intro-rules-tapp").click()
            panel = page.get_by_test_id("rules-panel")
            page.get_by_test_id("rules-options").wait_for()
            heading = {"en": "Tapp: how to play", "de": "Tapp: so wird gespielt"}[lang]
            assert panel.get_by_test_id("rules-text").locator("h1").first.text_content() == heading
            close = page.get_by_test_id("rules-close")
            box = close.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width and box["y"] >= 0
            assert page.evaluate("(() => { const d = document.getElementById('rules-panel');"
                                 " return d.scrollWidth <= d.clientWidth; })()")
            close.click()
            panel.wait_for(state="hidden")
        # the pace is among the options of a new table
        page.locator("#options-box > summary").click()
        assert page.get_by_test_id("pace").locator("option[value=wait]").count() == 1
    finally:
        ctx.close()


# ----------------------------------------------------------------------------- 7. keyboard, screen reader

FOCUS = """() => { const a = document.activeElement;
  const zone = a && a.closest ? (a.closest('#hand') ? 'hand' : a.closest('#actions') ? 'actions'
    : a.closest('#result') ? 'result' : null) : null;
  const face = a && a.querySelector ? a.querySelector('.face') : null;
  return {zone, card: a.dataset ? a.dataset.card || null : null, action: a.dataset ? a.dataset.action || null : null,
    testid: a.dataset ? a.dataset.testid || null : null,
    ring: getComputedStyle(face || a).outlineStyle}; }"""


def focus(page) -> dict:
    return page.evaluate(FOCUS)


def tab_to(page, wanted, limit=120) -> dict:
    """Press Tab until the focus is where ``wanted(focus)`` says."""
    for _ in range(limit):
        f = focus(page)
        if wanted(f):
            return f
        page.keyboard.press("Tab")
    raise AssertionError(f"the keyboard never got there: {focus(page)}")


def arrow_to(page, card: str) -> None:
    """Into the hand with Tab, then along it with the arrow keys."""
    tab_to(page, lambda f: f["zone"] == "hand")
    order = page.locator("[data-testid=hand] .card").evaluate_all("els => els.map(e => e.dataset.card)")
    for _ in range(len(order) + 1):
        f = focus(page)
        if f["card"] == card:
            assert f["ring"] not in ("none", ""), f  # a visible focus ring
            return
        page.keyboard.press("ArrowRight" if order.index(f["card"]) < order.index(card) else "ArrowLeft")
    raise AssertionError(card)


def keyboard_deal(page, rng, prefer, lang: str, suits: str = "french") -> int:
    """One deal with the keyboard alone, as far as the settlement; returns the cards played. After
    each own card the live region says it in the page's language."""
    played = 0
    for _ in range(3000):
        if page.get_by_test_id("deal-result").is_visible():
            return played
        legal = my_legal(page)
        if not legal:
            time.sleep(0.03)
            continue
        action = choose(legal, rng, prefer)
        head, _, arg = action.partition(":")
        before = event_of(page)
        if page.get_by_test_id(f"confirm-{head}").count():
            for c in [] if arg in ("", "-") else arg.split(","):
                arrow_to(page, c)
                page.keyboard.press("Space")
            tab_to(page, lambda f, confirm=f"confirm-{head}": f["testid"] == confirm)
        elif head == "play" and arg:
            arrow_to(page, arg)
        else:
            tab_to(page, lambda f, wanted=action: f["action"] == wanted)
        page.keyboard.press("Enter")
        wait_moved_on(page, before)
        if head == "play" and arg:
            played += 1
            said = action_phrase(action, lang, None, suits)
            page.get_by_test_id("live").filter(has_text=said).wait_for(state="attached")
    raise AssertionError("the deal did not end")


@pytest.mark.parametrize(("ruleset", "bots", "prefer", "width", "lang"), [
    ("tippen/grupp-1975", 3, ["tap", "exchange:", "play:"], 390, "de"),
    ("tapp/modern", 2, ["play", "contract:frage", "discard:", "play:"], 1280, "en"),
])
def test_a_whole_deal_by_keyboard_alone(server, browser, ruleset, bots, prefer, width, lang):  # noqa: F811
    seats = [("Anna", None)] + [(n, "heuristic") for n in ("Bernd", "Carla", "Dieter")[:bots]]
    t = new_table(server, ruleset, seats)
    ctx, page, errors = open_page(browser, server, t["seats"][0]["link"], width, lang)
    try:
        rng = random.Random(12)
        played = 0
        for _ in range(10):  # a deal can end without a card of mine (all passed): another one
            played += keyboard_deal(page, rng, prefer, lang)
            if played:
                break
            tab_to(page, lambda f: f["testid"] == "next-deal")
            page.keyboard.press("Enter")
            page.get_by_test_id("deal-result").wait_for(state="hidden")
        assert played > 0
        # the result is said, and Next deal is in the keyboard's reach
        page.get_by_test_id("live").filter(has_text=catalogue(lang)["web.dealOver"]).wait_for(state="attached")
        tab_to(page, lambda f: f["testid"] == "next-deal")
    finally:
        ctx.close()
    assert errors == []


def test_motion_respects_reduced_motion_and_colour_is_not_the_only_sign(server, browser):  # noqa: F811
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "heuristic"), ("Carla", "heuristic")])
    ctx, page, errors = open_page(browser, server, t["seats"][0]["link"])
    try:
        page.locator("[data-testid=hand] .card").first.wait_for()
        face = "getComputedStyle(document.querySelector('[data-testid=hand] .card .face')).transitionDuration"
        assert page.evaluate(face) != "0s"
        page.emulate_media(reduced_motion="reduce")
        assert page.evaluate(face) == "0s"
        # offline is a ring, online a full dot; the trump is a star besides its colour
        # one evaluation queries and reads the dots: a locator's evaluate_all queries first and
        # reads in a second round trip, and a bot's move between them redraws the seats, leaving
        # detached dots whose computed style is empty
        dots = page.evaluate(
            "() => [...document.querySelectorAll('.player .dot')].map(e => [e.dataset.connected,"
            " getComputedStyle(e).borderTopStyle, e.getAttribute('aria-label')])")
        assert dots
        for connected, border, label in dots:
            assert label and (border != "none") == (connected == "false")
    finally:
        ctx.close()
    assert errors == []


# ----------------------------------------------------------------------------- 8. small things

def test_favicon_and_no_missing_file(server, browser):  # noqa: F811
    r = urllib.request.urlopen(server + "/favicon.ico")
    assert r.status == 200 and r.headers["content-type"].startswith("image/svg+xml")
    t = new_table(server, "tippen/grupp-1975", [("Anna", None), ("Bernd", "heuristic"), ("Carla", "heuristic")])
    ctx = browser.new_context(bypass_csp=True)
    failed: list[str] = []
    try:
        page = ctx.new_page()
        page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        for link in ("/", t["seats"][0]["link"]):
            page.goto(server + link)
            page.wait_for_load_state("networkidle")
        icon = page.locator("link[rel=icon]").get_attribute("href")
        assert urllib.request.urlopen(server + icon).status == 200
    finally:
        ctx.close()
    assert failed == []


def test_german_option_help_names_german_values(server, browser):  # noqa: F811
    de = catalogue("de")
    ctx = browser.new_context(bypass_csp=True, viewport={"width": 390, "height": 844})
    ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'de')")
    try:
        page = ctx.new_page()
        page.goto(server + "/")
        page.locator("#options-box > summary").click()
        for rs in get(server, "/api/rulesets"):
            page.get_by_test_id("ruleset-select").select_option(rs["id"])
            helps = page.get_by_test_id("options").locator("small").all_text_contents()
            assert helps
            english = {c for o in rs["options"] if o["kind"] == "choice" for c in o["choices"]
                       if de.get(f"option.choice.{c}", c) != c}
            for text in helps:
                assert not [c for c in english if re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", text)], text
            assert_fits(page)
    finally:
        ctx.close()


def test_no_english_before_the_german_texts(server, browser):  # noqa: F811
    """The page stays hidden until the catalogue of its language is in."""
    ctx = browser.new_context(bypass_csp=True)
    ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'de')")
    held = []
    try:
        page = ctx.new_page()
        page.route("**/api/texts/*", lambda route: held.append(route))
        page.goto(server + "/", wait_until="domcontentloaded")
        for _ in range(200):
            if len(held) == 2:
                break
            page.wait_for_timeout(10)
        assert len(held) == 2
        # the English of index.html is there, but nobody sees it
        assert page.evaluate("getComputedStyle(document.body).visibility") == "hidden"
        for route in held:
            route.continue_()
        page.wait_for_function("document.documentElement.lang === 'de'"
                               " && getComputedStyle(document.body).visibility === 'visible'")
        assert page.get_by_test_id("create-table").text_content() == catalogue("de")["web.create"]
    finally:
        ctx.close()


# ----------------------------------------------------------------------------- 9. the felt in view

IN_VIEW = """() => {
  const f = document.querySelector('[data-testid=felt]').getBoundingClientRect();
  const h = document.querySelector('[data-testid=hand]').getBoundingClientRect();
  return {felt_top: Math.round(f.top), hand_bottom: Math.round(h.bottom), height: innerHeight,
    deal: game.info.deal_number, legal: JSON.parse(document.querySelector('[data-testid=legal-actions]').textContent)};
}"""

TO_THE_BOTTOM = "window.scrollTo(0, document.documentElement.scrollHeight)"


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 900)])
def test_a_new_deal_and_each_turn_bring_the_felt_and_the_hand_into_view(server, browser, width, height):  # noqa: F811
    """A player who scrolled away (to the score sheet, to Next deal) finds the felt's top and
    his hand on screen when a deal starts, at each of his turns (bids, the contract, laying
    away, cards) and at each prompt."""
    t = new_table(server, "tapp/classic-1879", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
    ctx = browser.new_context(bypass_csp=True, viewport={"width": width, "height": height})
    ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'en')")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(server + t["seats"][0]["link"])
        page.get_by_test_id("players").locator(".player").first.wait_for()
        rng = random.Random(7)
        seen: list[dict] = []
        heads: set[str] = set()
        for _ in range(600):
            if page.get_by_test_id("deal-result").is_visible():
                if page.evaluate("game.info.deal_number") >= 3:
                    break
                page.evaluate(TO_THE_BOTTOM)
                next_deal(page)
                page.wait_for_function("game.msg.view && !game.msg.view.terminal")
                seen.append(page.evaluate(IN_VIEW))
                continue
            legal = my_legal(page)
            if not legal:
                time.sleep(0.03)
                continue
            seen.append(page.evaluate(IN_VIEW))
            heads.update(a.partition(":")[0] for a in legal)
            page.evaluate(TO_THE_BOTTOM)  # the player reads the score sheet before he acts
            before = event_of(page)
            action = choose(legal, rng, ["bid:", "hold", "discard:", "contract:", "trump:", "play:"])
            perform(page, action)
            wait_moved_on(page, before, action)
        else:
            raise AssertionError("three deals never ended")
        assert page.evaluate("document.documentElement.scrollHeight") > height  # there was room to scroll away
        out = [s for s in seen if s["felt_top"] < 0 or s["hand_bottom"] > s["height"]]
        assert out == [], out
        assert {s["deal"] for s in seen} >= {2, 3} and "play" in heads and len(seen) > 20, (seen, heads)
    finally:
        ctx.close()
    assert errors == []
