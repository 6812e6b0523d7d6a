"""The web table's social features in the browser: Playwright for Python
driving Debian's Chromium against a real server. The lobby offers only what the rule set
allows, a seat that disconnects is played by the bot after the turn timer, a listed table is
joined by a stranger and a practice table says so in the list, a rematch takes the seat to the
new table, and chat with HTML in it is shown as text. These tests fail (they do not skip) when
Playwright or the browser is missing."""

from __future__ import annotations

import json
import random
import time
import urllib.request

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from server_helpers import roomy_limits
from test_browser import choose, event_of, launched, perform, wait_moved_on

from stammtisch.i18n import catalogue
from stammtisch.server.app import create_app
from stammtisch.server.threaded import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("social") / "st.sqlite"
    app = create_app(f"sqlite:///{db}", bot_delay=0.05, deal_pause=600,
                     limits=roomy_limits(turn_seconds_min=1))
    with serve_in_thread(app) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with launched() as b:
        yield b


def post(base, path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def api_table(base, seats, **extra):
    t = post(base, "/api/tables", {"ruleset": "tippen/grupp-1975", "seats": seats, **extra})
    post(base, f"/api/tables/{t['id']}/start", {"token": t["admin_token"]})
    return t


def fill_lobby(page, base, ruleset, names, bots, listed=False, turn_seconds=0):
    """The lobby form: rule set, seats (bot "" is a person, "open" a seat for the lobby)."""
    page.goto(base + "/")
    page.get_by_test_id("ruleset-select").select_option(ruleset)
    if listed:
        page.get_by_test_id("listed").check()
        assert page.get_by_test_id("turn-seconds").input_value() == "60"  # strangers get a timer
    page.get_by_test_id("turn-seconds").fill(str(turn_seconds))
    seats = page.get_by_test_id("seats")
    while seats.locator(".seat-row").count() > len(names):
        page.get_by_test_id("remove-seat").click()
    while seats.locator(".seat-row").count() < len(names):
        page.get_by_test_id("add-seat").click()
    for i, (name, bot) in enumerate(zip(names, bots, strict=True)):
        page.get_by_test_id(f"seat-name-{i}").fill(name)
        page.get_by_test_id(f"seat-bot-{i}").select_option(bot)
    page.get_by_test_id("create-table").click()
    page.get_by_test_id("created").wait_for()


def play_my_turns(page, rng, until, limit=400):
    """Click legal actions whenever it is this page's turn, until ``until()`` holds."""
    for _ in range(limit):
        if until():
            return
        if page.get_by_test_id("turn").get_attribute("data-mine") == "true":
            legal = json.loads(page.get_by_test_id("legal-actions").text_content())
            if legal:
                before = event_of(page)
                action = choose(legal, rng, ["tap", "exchange:", "play:"])
                try:
                    perform(page, action, timeout=5000)
                except PlaywrightTimeout:
                    if event_of(page) != before:
                        continue  # a turn timer ran out first: the stand-in played instead
                    raise
                wait_moved_on(page, before, action)
                continue
        time.sleep(0.05)
    raise AssertionError("never came")


def test_the_lobby_offers_only_the_options_and_seat_counts_of_the_rule_set(server, browser):
    from stammtisch.rules import PRESETS

    context = browser.new_context()
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server + "/")
        for rid in ("tapp/modern", "tapp/classic-1879", "tippen/grupp-1975"):
            page.get_by_test_id("ruleset-select").select_option(rid)
            shown = page.get_by_test_id("options").locator("[data-option]").evaluate_all(
                "els => els.map(e => e.dataset.option)")
            assert shown == [o for o in PRESETS[rid].options if o != "players"]
            preset = PRESETS[rid]
            rows = page.get_by_test_id("seats").locator(".seat-row")
            for _ in range(12):  # as many seats as the rule set takes, no more
                if page.get_by_test_id("add-seat").is_disabled():
                    break
                page.get_by_test_id("add-seat").click()
            assert rows.count() == (preset.max_players_whist52 or preset.max_players)
            for _ in range(12):
                if page.get_by_test_id("remove-seat").is_disabled():
                    break
                page.get_by_test_id("remove-seat").click()
            assert rows.count() == preset.min_players
        # Dreiblatt seats 10 with its 52-card extension, 6 with the 32-card pack
        page.get_by_test_id("ruleset-select").select_option("tippen/dreiblatt-1859")
        for _ in range(12):
            if page.get_by_test_id("add-seat").is_disabled():
                break
            page.get_by_test_id("add-seat").click()
        rows = page.get_by_test_id("seats").locator(".seat-row")
        assert rows.count() == 10
        page.locator("#options-box summary").click()  # the options fold out
        page.get_by_test_id("option-pack").select_option("piquet32")
        assert rows.count() == 6 and page.get_by_test_id("add-seat").is_disabled()
        # a turn timer out of bounds is not sent: the form says what it takes
        timer = page.get_by_test_id("turn-seconds")
        timer.fill("9999")
        page.get_by_test_id("create-table").click()
        assert timer.evaluate("e => e.validity.rangeOverflow") is True
        assert timer.evaluate("e => e.validationMessage") != ""
        assert page.get_by_test_id("created").is_hidden()
    finally:
        context.close()
    assert errors == []


def test_a_disconnected_seat_is_played_by_the_bot_after_the_timer(server, browser):
    rng = random.Random(7)
    c1, c2 = browser.new_context(bypass_csp=True), browser.new_context(bypass_csp=True)
    try:
        p1 = c1.new_page()
        fill_lobby(p1, server, "tippen/grupp-1975", ["Anna", "Bernd", "Robo"],
                   ["", "", "heuristic"], turn_seconds=2)
        links = {i: p1.get_by_test_id(f"link-seat-{i}").get_attribute("href") for i in (0, 1)}
        p1.get_by_test_id("start-table").click()
        p1.wait_for_url(server + links[0])  # Start takes the creator to his seat
        p2 = c2.new_page()
        p2.goto(server + links[1])
        p1.locator("[data-testid=seat-status-1][data-connected=true]").wait_for()
        c2.close()  # Bernd's browser goes away
        p1.locator("[data-testid=seat-status-1][data-connected=false]").wait_for()
        # Anna plays her turns; when Bernd's turn comes, the bot plays for him after 2 s
        away = p1.get_by_test_id("away-1")
        play_my_turns(p1, rng, lambda: away.count() > 0)
        assert away.text_content() == "played by bot"
        log = p1.get_by_test_id("log").locator("li")
        play_my_turns(p1, rng, lambda: any(x.startswith("Bernd ") for x in log.all_text_contents()))
        # Bernd comes back: the mark goes, he plays himself again
        c2 = browser.new_context(bypass_csp=True)
        p2 = c2.new_page()
        p2.goto(server + links[1])
        p2.get_by_test_id("players").locator(".player").first.wait_for()
        p1.get_by_test_id("away-1").wait_for(state="detached")
        assert p2.get_by_test_id("away-box").is_hidden()
    finally:
        c1.close()
        c2.close()


def test_a_listed_table_is_joined_by_a_stranger(server, browser):
    # bypass_csp: wait_for_function evaluates its predicate as a string, which the page's
    # Content-Security-Policy forbids
    c1, c2 = browser.new_context(), browser.new_context(bypass_csp=True)
    try:
        p1 = c1.new_page()
        fill_lobby(p1, server, "tippen/grupp-1975", ["Anna", "Gast", "Robo"],
                   ["", "open", "random"], listed=True)
        assert p1.get_by_test_id("link-seat-1").count() == 0  # the open seat is for the lobby
        anna = p1.get_by_test_id("link-seat-0").get_attribute("href")
        table_id = anna.split("/t/")[1].split("#")[0]
        p1.goto(server + anna)
        p1.get_by_test_id("open-1").wait_for()
        # the stranger finds the table in the lobby and takes the free seat, with his name
        p2 = c2.new_page()
        p2.goto(server + "/")
        entry = p2.get_by_test_id(f"open-table-{table_id}")
        entry.wait_for()
        assert "2 seated, 1 free" in entry.text_content()
        p2.get_by_test_id("guest-name").fill("Zoë")
        p2.get_by_test_id(f"take-seat-{table_id}").click()
        p2.wait_for_url(f"**/t/{table_id}#*")
        p2.get_by_test_id("player-1").filter(has_text="Zoë").wait_for()
        assert "me" in p2.get_by_test_id("player-1").get_attribute("class")
        p1.locator("[data-testid=seat-status-1][data-connected=true]").wait_for()
        p1.get_by_test_id("player-1").filter(has_text="Zoë").wait_for()
        assert p1.get_by_test_id("open-1").count() == 0
        # the host starts the table; the guest is told he will
        assert p2.get_by_test_id("start-from-table").is_hidden()
        assert p2.get_by_test_id("not-started").text_content() == catalogue("en")["web.waitForHost"]
        p1.get_by_test_id("start-from-table").click()
        p1.get_by_test_id("hand").locator(".card").first.wait_for()
        p2.get_by_test_id("hand").locator(".card").first.wait_for()
        # the table has no free seat now: the lobby no longer lists it
        p3 = c2.new_page()
        p3.goto(server + "/")
        p3.get_by_test_id("open-tables").wait_for()
        p3.wait_for_function("social.openTables !== null")  # the list has its first answer
        assert p3.get_by_test_id(f"open-table-{table_id}").count() == 0
    finally:
        c1.close()
        c2.close()


def test_the_lobby_says_which_listed_table_gives_hints(server, browser):
    seats = [{"name": "Anna"}, {"name": "Gast", "open": True}, {"name": "Robo", "bot": "random"}]
    practice = post(server, "/api/tables", {"ruleset": "tippen/grupp-1975", "seats": seats, "listed": True,
                                            "hints": True})["id"]
    plain = post(server, "/api/tables", {"ruleset": "tippen/grupp-1975", "seats": seats, "listed": True})["id"]
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(server + "/")
        page.get_by_test_id(f"open-table-{plain}").wait_for()
        assert "practice table: hints" in page.get_by_test_id(f"open-table-{practice}").text_content()
        assert "hints" not in page.get_by_test_id(f"open-table-{plain}").text_content()
        page.get_by_test_id("lang-toggle").click()  # the list is drawn again in German at once
        page.get_by_test_id(f"open-table-{practice}").filter(has_text="Übungstisch: Hinweise").wait_for()
    finally:
        context.close()


def play_the_deal_on(anna, bernd, rng):
    """Both pages play their turns until the deal is over."""
    result = anna.get_by_test_id("deal-result")
    for _ in range(400):
        if result.is_visible():
            return
        for p in (anna, bernd):
            legal = json.loads(p.get_by_test_id("legal-actions").text_content())
            if p.get_by_test_id("turn").get_attribute("data-mine") == "true" and legal:
                before = event_of(p)
                perform(p, choose(legal, rng, ["tap", "exchange:", "play:"]))
                wait_moved_on(p, before)
        time.sleep(0.05)
    raise AssertionError("the deal did not end")


def test_rematch_takes_the_player_to_his_seat_at_a_new_table(server, browser):
    rng = random.Random(8)
    t = api_table(server, [{"name": "Anna"}, {"name": "Robo", "bot": "random"},
                           {"name": "Rita", "bot": "random"}])
    context = browser.new_context(bypass_csp=True)
    try:
        page = context.new_page()
        page.goto(server + t["seats"][0]["link"])
        page.get_by_test_id("players").locator(".player").first.wait_for()
        assert page.get_by_test_id("rematch").is_hidden()  # not during a deal
        result = page.get_by_test_id("deal-result")
        play_my_turns(page, rng, result.is_visible)
        page.get_by_test_id("rematch").click()
        page.wait_for_url(lambda url: t["id"] not in url)
        page.get_by_test_id("hand").locator(".card").first.wait_for()
        assert page.get_by_test_id("deal-number").text_content() == "1"
        assert "me" in page.get_by_test_id("player-0").get_attribute("class")
        assert [x.split()[0] for x in page.locator(".player b").all_text_contents()] == \
            ["Anna", "Robo", "Rita"]
    finally:
        context.close()


def test_a_rematch_asks_the_other_seated_player_first(server, browser):
    rng = random.Random(9)
    t = api_table(server, [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Robo", "bot": "random"}])
    c1, c2 = browser.new_context(bypass_csp=True), browser.new_context(bypass_csp=True)
    try:
        anna, bernd = c1.new_page(), c2.new_page()
        anna.goto(server + t["seats"][0]["link"])
        bernd.goto(server + t["seats"][1]["link"])
        for p in (anna, bernd):
            p.get_by_test_id("players").locator(".player").first.wait_for()
        play_the_deal_on(anna, bernd, rng)
        anna.get_by_test_id("rematch").click()
        asked = bernd.get_by_test_id("rematch-asked")
        asked.get_by_role("status").filter(has_text="Anna").wait_for()
        assert anna.get_by_test_id("rematch-yes").is_hidden()  # she said yes already
        assert t["id"] in anna.url  # nobody moves before Bernd answers
        bernd.get_by_test_id("rematch-yes").click()
        for p in (anna, bernd):
            p.wait_for_url(lambda url: t["id"] not in url)
            p.get_by_test_id("hand").locator(".card").first.wait_for()
    finally:
        c1.close()
        c2.close()


def test_a_rematch_question_says_whom_it_waits_for_and_who_leaves_no_longer_holds_it(
        server, browser):
    rng = random.Random(10)
    t = api_table(server, [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Robo", "bot": "random"}])
    c1, c2 = browser.new_context(bypass_csp=True), browser.new_context(bypass_csp=True)
    try:
        anna, bernd = c1.new_page(), c2.new_page()
        anna.goto(server + t["seats"][0]["link"])
        bernd.goto(server + t["seats"][1]["link"])
        for p in (anna, bernd):
            p.get_by_test_id("players").locator(".player").first.wait_for()
        bernd.get_by_test_id("chat-input").fill("one more round?")
        bernd.get_by_test_id("chat-send").click()
        anna.get_by_test_id("chat-log").locator("li").first.wait_for()
        play_the_deal_on(anna, bernd, rng)
        first = table_total(anna)
        anna.get_by_test_id("rematch").click()
        waiting = anna.get_by_test_id("rematch-wait")
        waiting.filter(has_text="Bernd").wait_for()
        text = waiting.text_content()
        assert "Anna" not in text and " s)" in text  # whom, and the seconds left
        left = int(text.split("(")[1].split()[0])
        assert 0 < left <= 60
        c2.close()  # Bernd goes without answering: Anna, the only one seated, agreed
        anna.wait_for_url(lambda url: t["id"] not in url)
        anna.get_by_test_id("hand").locator(".card").first.wait_for()
        # the evening goes on: the first table's row and the evening's total on the score
        # sheet, the chat as it was
        earlier = anna.get_by_test_id("evening-table-1")
        earlier.wait_for()
        assert earlier.locator("td").first.text_content() == "Table 1 (1 deal)"  # one deal, said in the singular
        assert [int(x) for x in earlier.locator("td.num").all_text_contents()[:3]] == first
        assert anna.get_by_test_id("evening-total").locator("td").first.text_content() == "Evening"
        # both total rows of one rendering: this table's, then the evening's
        now, evening = anna.evaluate(
            "() => [...document.querySelectorAll('#score tr.total')].map((r) =>"
            " [...r.querySelectorAll('td.num')].slice(0, 3).map((td) => Number(td.textContent)))")
        assert evening == [a + b for a, b in zip(first, now, strict=True)]
        assert anna.get_by_test_id("chat-log").locator("li").first.text_content() == \
            "Bernd: one more round?"
    finally:
        c1.close()
        c2.close()


def table_total(page):
    """The score sheet's Total row of this table: each seat's balance."""
    row = page.locator("#score tr.total:not(.evening)")
    return [int(x) for x in row.locator("td.num").all_text_contents()[:3]]


def test_chat_with_html_in_it_is_shown_as_text(server, browser):
    t = api_table(server, [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Robo", "bot": "random"}])
    c1, c2 = browser.new_context(), browser.new_context()
    dialogs: list[str] = []
    try:
        p1, p2 = c1.new_page(), c2.new_page()
        for p in (p1, p2):
            p.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        p1.goto(server + t["seats"][0]["link"])
        p2.goto(server + t["seats"][1]["link"])
        p2.get_by_test_id("players").locator(".player").first.wait_for()
        evil = '<img src=x onerror="alert(1)"><b>fett</b> & Co'
        p1.get_by_test_id("chat-input").fill(evil)
        p1.get_by_test_id("chat-send").click()
        line = p2.get_by_test_id("chat-log").locator("li").first
        line.wait_for()
        assert line.text_content() == "Anna: " + evil
        assert p2.get_by_test_id("chat-log").locator("img, b:not(:first-child)").count() == 0
        assert line.locator("b").count() == 1  # only the name is bold
        # a reload shows the same line (kept with the table)
        p2.reload()
        p2.get_by_test_id("chat-log").locator("li").first.wait_for()
        assert p2.get_by_test_id("chat-log").locator("li").first.text_content() == "Anna: " + evil
        # the line that is too long is refused with a clear message, not sent
        p1.get_by_test_id("chat-input").evaluate("e => e.removeAttribute('maxlength')")
        p1.get_by_test_id("chat-input").fill("x" * 201)
        p1.get_by_test_id("chat-send").click()
        p1.get_by_test_id("error").filter(has_text="at most 200 characters").wait_for()
        assert p2.get_by_test_id("chat-log").locator("li").count() == 1
    finally:
        c1.close()
        c2.close()
    assert dialogs == []


def test_the_invite_links_show_who_took_the_seat_left_for_the_lobby(server, browser):
    context = browser.new_context()
    try:
        page = context.new_page()
        fill_lobby(page, server, "tippen/grupp-1975", ["Anna", "Gast", "Robo"],
                   ["", "open", "random"], listed=True)
        row = page.get_by_test_id("lobby-seat-1")
        assert "free seat for the lobby" in row.text_content()
        table_id = page.get_by_test_id("link-seat-0").get_attribute("href").split("/t/")[1].split("#")[0]
        # a stranger takes the seat from the lobby: the host's page says so, without a reload
        post(server, f"/api/tables/{table_id}/take", {"seat": 1, "name": "Zoë"})
        page.locator("[data-testid=lobby-seat-1][data-taken=true]").wait_for()
        assert row.text_content() == "Zoë: taken by Zoë"
        assert page.get_by_test_id("created").is_visible()
    finally:
        context.close()


def test_a_spectator_chats_until_a_player_switches_it_off(server, browser):
    t = api_table(server, [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Robo", "bot": "random"}])
    c1, c2 = browser.new_context(), browser.new_context()
    try:
        anna, watcher = c1.new_page(), c2.new_page()
        anna.goto(server + t["seats"][0]["link"])
        watcher.goto(server + t["spectator"]["link"])
        anna.get_by_test_id("players").locator(".player").first.wait_for()
        watcher.get_by_test_id("chat-input").wait_for()
        assert anna.get_by_test_id("chat-name").is_hidden()  # a seat chats under its name
        watcher.get_by_test_id("chat-name").fill("Zoë")
        watcher.get_by_test_id("chat-input").fill("Schönes Spiel")
        watcher.get_by_test_id("chat-send").click()
        line = anna.get_by_test_id("chat-log").locator("li.spectator").first
        line.wait_for()
        assert line.text_content() == "Zoë (spectator): Schönes Spiel"
        # a player switches the spectators' chat off: the spectator's box says so
        assert anna.get_by_test_id("spectator-chat").is_checked()
        assert watcher.get_by_test_id("spectator-chat").is_hidden()
        anna.get_by_test_id("spectator-chat").uncheck()
        watcher.get_by_test_id("chat-off").wait_for()
        assert watcher.get_by_test_id("chat-off").text_content() == \
            catalogue("en")["web.spectatorChatOff"]
        assert watcher.get_by_test_id("chat-input").is_disabled()
        assert anna.get_by_test_id("chat-input").is_enabled()  # the seats chat on
        anna.get_by_test_id("spectator-chat").check()
        watcher.get_by_test_id("chat-off").wait_for(state="hidden")
        assert watcher.get_by_test_id("chat-input").is_enabled()
    finally:
        c1.close()
        c2.close()


def test_my_tables_lists_a_table_joined_by_an_invite_with_its_result_and_status(server, browser):
    t = api_table(server, [{"name": "Anna"}, {"name": "Robo", "bot": "random"},
                           {"name": "Rita", "bot": "random"}])
    context = browser.new_context()  # the guest's browser: it made no table
    try:
        page = context.new_page()
        page.goto(server + t["seats"][0]["link"])
        page.get_by_test_id("players").locator(".player").first.wait_for()
        page.goto(server + "/")
        summary = page.get_by_test_id(f"mine-summary-{t['id']}")
        summary.wait_for()
        day = time.strftime("%d/%m/%Y", time.localtime())
        assert summary.text_content().strip() == f"{day} · 0 deals · your result 0 · playing"
        entry = page.get_by_test_id(f"mine-{t['id']}")
        assert entry.get_by_role("link").get_attribute("href") == t["seats"][0]["link"]
        assert page.get_by_test_id(f"mine-admin-{t['id']}").count() == 0  # a guest's entry
        post(server, f"/api/tables/{t['id']}/close", {"token": t["admin_token"]})
        page.reload()
        page.locator(f"[data-testid=mine-summary-{t['id']}][data-status=ended]").wait_for()
        assert summary.text_content().strip().endswith("· ended")
        page.get_by_test_id("lang-toggle").click()  # drawn again in German
        page.get_by_test_id(f"mine-summary-{t['id']}").filter(has_text="beendet").wait_for()
    finally:
        context.close()
