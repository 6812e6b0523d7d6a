"""A table that has ended stays readable, in Chromium against a real server: ended by its
admin in the middle of a deal, the page says so instead of "Your turn" and shows no hand of the
broken-off deal; once the table is archived, the seat's, the spectator's and the admin's links
still open it read-only: the score sheet, every finished deal in the Deals panel, the record
(whole for a seat and the admin), in English and German."""

from __future__ import annotations

import random
import time

import pytest
from test_browser import browser  # noqa: F401  (fixture)
from test_web_reconnect_browser import status_of
from test_web_table_browser import new_table, next_deal, open_page, play_until, post

from stammtisch.i18n import catalogue
from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits
from stammtisch.server.threaded import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def test_an_ended_table_stays_readable_for_every_link(browser, tmp_path):  # noqa: F811
    with serve_in_thread(create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0.02, deal_pause=0.2,
                                    limits=ServerLimits(sweep_interval=0.1))) as base:
        t = new_table(base, "tippen/grupp-1975", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
        link = t["seats"][0]["link"]
        ctx, page, errors = open_page(browser, base, link, 390, "en")
        try:
            play_until(page, random.Random(2), ["tap", "exchange:-", "play:"],
                       lambda p, legal: p.get_by_test_id("deal-result").is_visible())
            next_deal(page)
            page.wait_for_function("game.info.deal_number === 2 && !game.msg.view.terminal")
            post(base, f"/api/tables/{t['id']}/close", {"token": t["admin_token"]})
            ended = catalogue("en")["web.tableEnded"]
            page.get_by_test_id("turn").filter(has_text=ended).wait_for()
            assert page.get_by_test_id("hand").locator(".card").count() == 0
            assert page.locator("[data-testid=next-deal]:visible").count() == 0
            assert page.get_by_test_id("record-link").get_attribute("data-full") == "true"
        finally:
            ctx.close()
        assert errors == []
        deadline = time.monotonic() + 60
        while status_of(base, f"/api/tables/{t['id']}") != 410:  # nobody there: archived
            assert time.monotonic() < deadline, "the table was never archived"
            time.sleep(0.1)
        admin = f"/t/{t['id']}#{t['admin_token']}"
        for who, lnk, lang in (("seat", link, "en"), ("spectator", t["spectator"]["link"], "de"),
                               ("admin", admin, "en")):
            texts = catalogue(lang)
            ctx, page, errors = open_page(browser, base, lnk, 1280, lang)
            try:
                page.get_by_test_id("turn").filter(has_text=texts["web.tableEnded"]).wait_for()
                assert page.get_by_test_id("error").text_content() == ""
                assert page.get_by_test_id("conn-status").text_content() == ""
                assert page.get_by_test_id("hand").locator(".card").count() == 0
                assert page.get_by_test_id("score-row-1").count() == 1
                assert page.get_by_test_id("rematch").is_hidden()
                assert page.get_by_test_id("record-link").get_attribute("data-full") == (
                    "false" if who == "spectator" else "true")
                page.get_by_test_id("deals-button").click()
                panel = page.get_by_test_id("deals-panel")
                panel.get_by_test_id("deal-explanation").wait_for()
                assert panel.get_by_test_id("deals-list").locator("button").count() == 1
                with page.expect_download() as download:
                    page.get_by_test_id("deals-close").click()
                    page.get_by_test_id("record-link").click()
                assert download.value.suggested_filename == f"stammtisch-{t['id']}.json"
            finally:
                ctx.close()
            assert errors == []
