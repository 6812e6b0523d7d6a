"""The replay of a finished deal on the felt, in Chromium against a real server: from the Deals
panel, step through the deal (buttons, arrow keys, a swipe, the timeline) as this seat saw it
while the table plays (no other hand), every hand once it has ended; the analysis's costly cards
marked on the timeline and said on the felt, the value over the deal as a graph; a record file
opened in the lobby replayed the same way, in English and German."""

from __future__ import annotations

import json
import random

import pytest
from server_helpers import roomy_limits
from test_browser import browser  # noqa: F401  (fixture)
from test_web_table_browser import get, new_table, open_page, play_until, post

from stammtisch.i18n import catalogue
from stammtisch.server.app import create_app
from stammtisch.server.threaded import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

SWIPE = """(dx) => {
  const felt = document.querySelector('[data-testid=felt]');
  const r = felt.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
  const touch = (cx) => new Touch({identifier: 1, target: felt, clientX: cx, clientY: y});
  felt.dispatchEvent(new TouchEvent('touchstart', {touches: [touch(x)], changedTouches: [touch(x)], bubbles: true}));
  felt.dispatchEvent(new TouchEvent('touchend', {touches: [], changedTouches: [touch(x + dx)], bubbles: true}));
}"""


def open_under_csp(browser, base, link, width, lang):  # noqa: F811
    """The page under the server's Content-Security-Policy (no inline style, no eval: only
    locators wait here); a violation it reports counts as an error."""
    ctx = browser.new_context(viewport={"width": width, "height": 900})
    ctx.add_init_script(f"localStorage.setItem('stammtisch.lang', {lang!r})")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(base + link)
    page.get_by_test_id("players").locator(".player").first.wait_for()
    return ctx, page, errors


def step_of(page) -> int:
    return int(page.get_by_test_id("replay-slider").input_value())


def test_a_finished_deal_replays_on_the_felt(browser, tmp_path):  # noqa: F811
    with serve_in_thread(create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0.02, deal_pause=0.2,
                                    limits=roomy_limits())) as base:
        t = new_table(base, "tapp/modern", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
        ctx, page, errors = open_page(browser, base, t["seats"][0]["link"], 390, "en")
        texts = catalogue("en")
        try:
            # a deal that came to its tricks (everyone may say weg, or a contract end early):
            # about one deal in four with random bots, so up to 40 deals (12 missed it in 3 %)
            play_until(page, random.Random(3), ["play"],
                       lambda p, legal: p.get_by_test_id("deal-result").is_visible()
                       and p.evaluate("game.msg.view.tricks_won.reduce((a, b) => a + b, 0)") >= 3,
                       deals=40)
            deal = page.evaluate("game.info.deal_number")
            page.get_by_test_id("deals-button").click()
            page.get_by_test_id("deal-replay-btn").click()
            replay = page.get_by_test_id("replay")
            replay.wait_for()
            page.get_by_test_id("replay-action").filter(has_text=texts["web.replayDealt"]).wait_for()
            # step 0: the deal as dealt, Anna's own hand; nobody else's while the table plays
            assert step_of(page) == 0
            assert page.get_by_test_id("hand").locator(".card").count() == 11
            assert page.get_by_test_id("replay-hands").is_hidden()
            assert page.get_by_test_id("deal-result").is_hidden()
            page.keyboard.press("ArrowRight")
            page.wait_for_function("document.querySelector('[data-testid=replay-slider]').value === '1'")
            page.get_by_test_id("replay-next").click()
            assert step_of(page) == 2
            page.get_by_test_id("replay-prev").click()
            assert step_of(page) == 1
            page.evaluate(SWIPE, -120)  # to the left: on
            assert step_of(page) == 2
            page.evaluate(SWIPE, 120)
            assert step_of(page) == 1
            # the end: fewer cards in the hand, the deal's result said
            page.keyboard.press("End")
            last = int(page.get_by_test_id("replay-slider").get_attribute("max"))
            assert step_of(page) == last >= 10  # three tricks at least
            assert page.get_by_test_id("hand").locator(".card").count() < 11
            heading = page.get_by_test_id("deal-result").locator("h2").text_content()
            assert page.get_by_test_id("replay-action").text_content().startswith(heading)
            # a step in the middle of a trick: its cards on the felt
            page.get_by_test_id("replay-first").click()
            for _ in range(last):
                page.get_by_test_id("replay-next").click()
                if page.get_by_test_id("trick").locator(".card").count() == 2:
                    break
            assert page.get_by_test_id("trick").locator(".card").count() == 2
            # the analysis: the value over the deal, each costly card marked and said on the felt
            page.get_by_test_id("replay-graph").wait_for()
            marks = page.get_by_test_id("replay-marks").locator("button")
            if marks.count():
                marks.first.click()
                note = page.get_by_test_id("replay-finding")
                assert note.text_content().strip() == marks.first.get_attribute("aria-label")
                assert note.is_visible()
            page.get_by_test_id("replay-close").click()
            assert replay.is_hidden()
            page.get_by_test_id("deal-result").wait_for()
        finally:
            ctx.close()
        assert errors == []

        # once the table has ended: every hand
        post(base, f"/api/tables/{t['id']}/close", {"token": t["admin_token"]})
        ctx, page, errors = open_under_csp(browser, base, t["seats"][0]["link"], 1280, "de")
        try:
            page.get_by_test_id("deals-button").click()
            page.get_by_test_id("deal-replay-btn").click()
            page.get_by_test_id("replay-hands").wait_for()
            page.get_by_test_id("replay-graph").wait_for()  # the timeline's marks placed under the policy too
            assert page.get_by_test_id("replay-hand-1").locator(".card").count() == 11
            assert page.get_by_test_id("replay-hand-2").locator(".card").count() == 11
            assert page.get_by_test_id("replay-title").text_content().startswith(
                catalogue("de")["web.replayTitle"].format(n=deal))
        finally:
            ctx.close()
        assert errors == []

        # a record file, opened in the lobby
        record = get(base, f"/api/tables/{t['id']}/record", token=t["admin_token"])
        path = tmp_path / "game.json"
        path.write_text(json.dumps(record), encoding="utf-8")
        bad = tmp_path / "bad.json"
        bad.write_text("not json", encoding="utf-8")
        ctx = browser.new_context(viewport={"width": 390, "height": 844})
        ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'en')")
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            page.goto(base + "/")
            page.get_by_test_id("replay-file").set_input_files(str(bad))
            page.get_by_test_id("replay-file-error").filter(has_text=texts["web.replayFileBad"]).wait_for()
            page.get_by_test_id("replay-file").set_input_files(str(path))
            page.get_by_test_id("replay-action").filter(has_text=texts["web.replayDealt"]).wait_for()
            assert page.get_by_test_id("replay-hand-1").locator(".card").count() == 11
            assert page.get_by_test_id("replay-deal").input_value() == "1"
            page.get_by_test_id("replay-deal").select_option(str(deal))
            page.get_by_test_id("replay-title").filter(has_text=texts["web.replayTitle"].format(n=deal)).wait_for()
            page.get_by_test_id("replay-last").click()
            assert step_of(page) == last
            # the file's analysis, asked of the server: its costly cards marked, the value graphed
            page.get_by_test_id("replay-graph").wait_for()
            found = post(base, "/api/replay/analysis", {"record": {**record, "deals": record["deals"][:deal]},
                                                        "deal": deal})  # the page's, kept
            costly = [i for i, p in enumerate(found["plays"]) if p["loss"] > 0]
            assert page.get_by_test_id("replay-marks").locator("button").count() == len(costly)
            line = page.get_by_test_id("replay-graph-line")
            assert line.count() == 1 and line.get_attribute("data-seat") == ""  # the declarer's side
            assert line.get_attribute("data-values") == ",".join(
                str(v) for v in [found["plays"][0]["before"], *(p["after"] for p in found["plays"])])
            assert page.get_by_test_id("replay-graph-legend").text_content() == texts["web.replayLegendOne"].format(
                measure=texts[f"web.measure.{found['measure']}"])
            assert page.get_by_test_id("replay-analysis-state").text_content() == ""
            page.get_by_test_id("replay-close").click()
            page.get_by_test_id("replay-file-box").wait_for()
        finally:
            ctx.close()
        assert errors == []


ACTIVE_AND_PLAYED = """() => { const v = game.msg && game.msg.view;
  return !!v && Array.isArray(v.active) && v.active.includes(game.seat) && v.active.length >= 2
    && v.log.some((e) => String(e[1]).startsWith('play:')); }"""


def graph_lines(page) -> dict[str, list[int]]:
    """The graph's lines as the page drew them: per seat, its values step by step."""
    lines = page.get_by_test_id("replay-graph-line")
    return {lines.nth(i).get_attribute("data-seat"):
            [int(x) for x in lines.nth(i).get_attribute("data-values").split(",")] for i in range(lines.count())}


def seat_values(found: dict, seat: str) -> list[int]:
    return [found["start_value"][seat], *(p["values"][seat] for p in found["plays"])]


def test_a_tippen_replays_graph_follows_one_side_per_line(browser, tmp_path):  # noqa: F811
    """In Tippen everyone plays for himself: a player who played the deal sees his own value;
    a record file (no seat) one line per active player, each named."""
    with serve_in_thread(create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0.02, deal_pause=0.2,
                                    limits=roomy_limits())) as base:
        t = new_table(base, "tippen/grupp-1975", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
        ctx, page, errors = open_page(browser, base, t["seats"][0]["link"], 1280, "en")
        texts = catalogue("en")
        try:
            play_until(page, random.Random(5), ["tap", "exchange:-", "play"],
                       lambda p, legal: p.get_by_test_id("deal-result").is_visible() and p.evaluate(ACTIVE_AND_PLAYED))
            deal = page.evaluate("game.info.deal_number")
            found = get(base, f"/api/tables/{t['id']}/analysis/{deal}", token=t["seats"][0]["token"])
            assert found["measure"] == "own-tricks" and "0" in found["start_value"] and len(found["start_value"]) >= 2
            page.get_by_test_id("deals-button").click()
            page.get_by_test_id("deal-replay-btn").click()
            page.get_by_test_id("replay-graph").wait_for()
            # Anna's own tricks, step by step: one line, hers
            assert graph_lines(page) == {"0": seat_values(found, "0")}
            assert page.get_by_test_id("replay-graph-legend").text_content() == texts["web.replayLegendMineTricks"]
            names = page.get_by_test_id("replay-graph-lines").locator("li")
            assert names.count() == 1 and names.first.text_content() == "Anna"
            label = page.get_by_test_id("replay-graph").get_attribute("aria-label")
            assert texts["web.replayLegendMineTricks"] in label and "Anna" in label
        finally:
            ctx.close()
        assert errors == []

        # the record file, in German: one line per active player, each named
        post(base, f"/api/tables/{t['id']}/close", {"token": t["admin_token"]})
        record = get(base, f"/api/tables/{t['id']}/record", token=t["admin_token"])
        path = tmp_path / "tippen.json"
        path.write_text(json.dumps(record), encoding="utf-8")
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'de')")
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        de = catalogue("de")
        try:
            page.goto(base + "/")
            page.get_by_test_id("replay-file").set_input_files(str(path))
            page.get_by_test_id("replay-action").filter(has_text=de["web.replayDealt"]).wait_for()
            page.get_by_test_id("replay-deal").select_option(str(deal))
            page.get_by_test_id("replay-title").filter(has_text=de["web.replayTitle"].format(n=deal)).wait_for()
            page.get_by_test_id("replay-graph").wait_for()
            seats = sorted(found["start_value"], key=int)
            assert graph_lines(page) == {s: seat_values(found, s) for s in seats}
            assert page.get_by_test_id("replay-graph-legend").text_content() == de["web.replayLegendEachTricks"]
            names = page.get_by_test_id("replay-graph-lines").locator("li")
            shown = [names.nth(i).text_content() for i in range(names.count())]
            assert shown == [record["players"][int(s)] for s in seats]
            assert [names.nth(i).get_attribute("data-seat") for i in range(names.count())] == seats
        finally:
            ctx.close()
        assert errors == []


def test_a_record_file_the_server_refuses_is_said_why(browser, tmp_path):  # noqa: F811
    """Too large for the server, or a deal that does not replay: said in the page's words,
    with the server's reason; a deal that is fine still replays with its analysis."""
    from pathlib import Path

    record = json.loads((Path(__file__).parent / "records" / "rules-2.4-example-6-max-bete-dreiblatt-1859.json")
                        .read_text(encoding="utf-8"))
    first = len(json.dumps({"record": {**record, "deals": record["deals"][:1]}, "deal": 1}))
    limit = first + 4096  # the first deals fit, the whole record does not
    assert len(json.dumps({"record": record, "deal": len(record["deals"])})) > limit
    broken = json.loads(json.dumps(record))
    broken["deals"][1]["actions"][0] = "play:XX"
    with serve_in_thread(create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0.02, deal_pause=0.2,
                                    limits=roomy_limits(max_record_body=limit))) as base:
        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'en')")
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        texts = catalogue("en")
        try:
            page.goto(base + "/")
            path = tmp_path / "long.json"
            path.write_text(json.dumps(record), encoding="utf-8")
            page.get_by_test_id("replay-file").set_input_files(str(path))
            page.get_by_test_id("replay-graph").wait_for()  # deal 1 fits, and came to its cards
            page.get_by_test_id("replay-deal").select_option(str(len(record["deals"])))
            page.get_by_test_id("replay-error").filter(
                has_text=texts["web.replayFileTooBig"].format(kib=limit // 1024)).wait_for()
            page.get_by_test_id("replay-close").click()
            path = tmp_path / "broken.json"
            path.write_text(json.dumps(broken), encoding="utf-8")
            page.get_by_test_id("replay-file").set_input_files(str(path))
            page.get_by_test_id("replay-graph").wait_for()
            page.get_by_test_id("replay-deal").select_option("2")
            said = page.get_by_test_id("replay-error").filter(has_text=texts["web.replayFileInvalid"].format(reason=""))
            said.wait_for()
            assert "deal 2, action 1" in said.text_content() and "Traceback" not in said.text_content()
        finally:
            ctx.close()
        assert errors == []
