"""The report's HTML page opens in Chromium and shows its plots (Playwright, Debian's Chromium)."""

from __future__ import annotations

import pytest
from test_browser import launched
from typer.testing import CliRunner

from stammtisch.cli import app

pytestmark = pytest.mark.browser


def test_report_page_shows_every_plot_in_chromium(tmp_path):
    result = CliRunner().invoke(app, ["report", "tippen/grupp-1975", "tapp/modern", "--deals", "60",
                                      "--chunk-deals", "20", "-w", "1", "--out", str(tmp_path)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    with launched() as browser:
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto((tmp_path / "report.html").as_uri())
        images = page.locator("figure img")
        assert images.count() >= 10  # Tippen and Tapp figures side by side
        sizes = images.evaluate_all("els => els.map(e => [e.complete, e.naturalWidth, e.naturalHeight])")
        assert all(done and width > 200 and height > 100 for done, width, height in sizes), sizes
        assert page.locator("h1").inner_text() == "stammtisch report"
        assert "seed 1" in page.content()
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 50_000
        assert all(url.startswith(("file:", "data:")) for url in requests), requests  # self-contained
