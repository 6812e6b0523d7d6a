"""The Analysis after a deal appears in parts, in Chromium against a real server: the verdict
on the cards played shows while the decisions before the play are still being judged (the
panel says so), then the whole analysis replaces it."""

from __future__ import annotations

import asyncio
import random
import threading
from typing import Any

import pytest
from server_helpers import HANG, roomy_limits
from test_browser import browser  # noqa: F401  (fixture)
from test_web_table_browser import new_table, open_page, play_until

from stammtisch.i18n import render
from stammtisch.server.analysis import analyse_deal
from stammtisch.server.app import create_app
from stammtisch.server.threaded import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


class HeldAnalyst:
    """The app's Analyst with the whole analysis held back until ``release`` is set; the
    first part (the cards played) is computed here at once."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.release = threading.Event()

    def cached(self, table_id: str, deal: int) -> Any:
        return None

    def begin(self, table_id: str, deal: int, record: dict, owner: str = "", cost: float = 1.0,
              staged: bool = False) -> tuple[asyncio.Future[Any], asyncio.Future[Any]]:
        loop = asyncio.get_running_loop()
        first, whole = loop.create_future(), loop.create_future()
        first.set_result(analyse_deal(record, deal, "play"))

        def later() -> None:
            self.release.wait(HANG)
            found = analyse_deal(record, deal)
            loop.call_soon_threadsafe(whole.set_result, found)

        threading.Thread(target=later, daemon=True).start()
        return (first if staged else whole), whole

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    db = tmp_path_factory.mktemp("analysis-stream") / "st.sqlite"
    app = create_app(f"sqlite:///{db}", bot_delay=0.02, deal_pause=1000, limits=roomy_limits())
    with serve_in_thread(app) as base:
        yield app, base


def test_the_verdict_shows_while_the_rest_of_the_analysis_is_computed(served, browser):  # noqa: F811
    app, base = served
    t = new_table(base, "tippen/grupp-1975", [("Anna", None), ("Bernd", "random"), ("Carla", "random")])
    live = app.state.manager.get(t["id"])
    held = HeldAnalyst(app.state.server.analyst)
    app.state.server.analyst = held
    ctx, page, errors = open_page(browser, base, t["seats"][0]["link"])

    def played(p: Any, legal: Any) -> bool:
        actions = [a if isinstance(a, str) else a["action"] for a in live.table.deals[-1].actions]
        return p.get_by_test_id("deal-result").is_visible() and any(a.startswith("play:") for a in actions)

    try:
        play_until(page, random.Random(3), ["tap", "exchange:", "play:"], played)
        page.get_by_test_id("analysis-btn").click()
        panel = page.locator("[data-testid=analysis][data-state=partial]")
        panel.wait_for(timeout=120_000)
        verdict = panel.get_by_test_id("analysis-lines").locator("li").first.text_content() or ""
        assert verdict.startswith("Deal ") and "the choices before the play are still being judged" in verdict
        assert panel.get_by_test_id("analysis-more").text_content() == "The rest of the analysis is being computed …"
        assert not held.release.is_set()
        held.release.set()
        done = page.locator("[data-testid=analysis][data-state=done]")
        done.wait_for(timeout=120_000)
        assert done.get_by_test_id("analysis-more").count() == 0
        lines = done.get_by_test_id("analysis-lines").locator("li").all_text_contents()
        assert "still being judged" not in lines[0]
        assert any(", tap or pass: " in line for line in lines)  # the decisions, judged at last
        assert render({"key": "web.analysisMore"}) == "The rest of the analysis is being computed …"
    finally:
        held.release.set()
        app.state.server.analyst = held.real
        ctx.close()
    assert errors == []
