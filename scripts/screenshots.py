"""Screenshots of the web table for the docs (not a test).

Starts the server on a temporary SQLite database, creates tables with bots at the other seats,
plays seat 0 in Chromium (Playwright, Debian's /usr/bin/chromium) and saves PNGs at 1× scale,
cropped to the part of the page that shows the point:

    docs/screenshots/table-tippen-en.png      a Tippen trick under way (1024 px)
    docs/screenshots/auction-tapp-en.png      a Tapp auction: the bids on the tiles, the bid to beat
    docs/screenshots/settlement-deals-en.png  a settlement with the Deals panel open on deal 1
    docs/screenshots/phone-lobby-en.png       the lobby on a phone (390 px)
    docs/screenshots/german-suits-de.png      German-suited faces on a phone, in German

    python scripts/screenshots.py [--out docs/screenshots] [--seed 3]

The PNGs are made small with Pillow when it is there (256 colours, optimised). It prints JSON:
each file, and for every page whether anything is wider than the screen (``overflow`` lists
the elements that stick out; an empty list is what we want).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
DESKTOP = 1024  # px: the page's main column fills it (the layout is the same at 1280)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

# Elements wider than the viewport (their right edge beyond it), by a short CSS-like name.
OVERFLOW = """() => {
  const w = document.documentElement.clientWidth;
  const out = [];
  for (const e of document.querySelectorAll('body *')) {
    if (!e.checkVisibility()) continue;
    const r = e.getBoundingClientRect();
    if (r.right <= w + 1 || e.closest('.scroll')) continue;  // a .scroll box scrolls on purpose
    const cls = typeof e.className === 'string' && e.className ? '.' + e.className.split(' ').join('.') : '';
    out.push(`${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${cls} right=${Math.round(r.right)}`);
  }
  return {viewport: w, scrollWidth: document.documentElement.scrollWidth, overflow: out.slice(0, 20)};
}"""


def post(base: str, path: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(f"{base}{path}", method="POST", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return json.load(r)


def create_table(base: str, ruleset: str, names: list[str], bot: str, options: dict[str, Any] | None = None) -> str:
    seats = [{"name": names[0]}] + [{"name": n, "bot": bot} for n in names[1:]]
    res = post(base, "/api/tables", {"ruleset": ruleset, "options": options or {}, "seats": seats})
    post(base, f"/api/tables/{res['id']}/start", {"token": res["admin_token"]})
    return str(base + res["seats"][0]["link"])


def choose(legal: list[str], rng: random.Random, prefer: list[str]) -> str:
    for p in prefer:
        hits = [a for a in legal if a == p or a.startswith(p)]
        if hits:
            return rng.choice(hits)
    return rng.choice(legal)


def act(page: Any, action: str) -> None:
    """Carry out an action as a person does: select cards and confirm, click a card or a button."""
    head, _, arg = action.partition(":")
    confirm = page.get_by_test_id(f"confirm-{head}")
    if confirm.count():
        for c in [] if arg in ("", "-") else arg.split(","):
            page.get_by_test_id(f"card-{c}").click()
        confirm.click()
    elif head == "play" and arg and page.get_by_test_id(f"card-{arg}").count():
        page.get_by_test_id(f"card-{arg}").click()
    else:
        page.get_by_test_id(f"action-{action}").click()


def event(page: Any) -> int:
    return int(page.evaluate("document.body.dataset.event || '-1'"))


def my_legal(page: Any) -> list[str]:
    if page.get_by_test_id("turn").get_attribute("data-mine") != "true":
        return []
    return list(json.loads(page.get_by_test_id("legal-actions").text_content() or "[]"))


def play_until(page: Any, rng: random.Random, prefer: list[str], until: Callable[[Any, list[str]], bool],
               deals: int = 40) -> None:
    """Play seat 0 until ``until(page, legal)`` holds; a finished deal is followed by the next
    one (Next deal), at most ``deals`` of them."""
    done = 0
    for _ in range(5000):
        legal = my_legal(page)
        if until(page, legal):
            return
        if page.get_by_test_id("deal-result").is_visible():
            done += 1
            if done >= deals:
                raise SystemExit("the wanted moment never came")
            page.get_by_test_id("next-deal").click()
            page.get_by_test_id("deal-result").wait_for(state="hidden")
            continue
        if not legal:
            time.sleep(0.03)
            continue
        before = event(page)
        act(page, choose(legal, rng, prefer))
        page.wait_for_function(f"Number(document.body.dataset.event) > {before}", timeout=10000)
    raise SystemExit("the wanted moment never came")


def crop(page: Any, bottom: str, margin: int = 8) -> dict[str, float]:
    """The page from the top down to the bottom of ``bottom`` (a selector)."""
    end = page.evaluate("""(sel) => Math.max(200, ...[...document.querySelectorAll(sel)]
      .filter((e) => e.checkVisibility()).map((e) => e.getBoundingClientRect().bottom + window.scrollY))""", bottom)
    return {"x": 0, "y": 0, "width": page.evaluate("document.documentElement.clientWidth"), "height": end + margin}


def save(page: Any, path: Path, report: dict[str, Any], clip: dict[str, float] | None = None) -> None:
    page.screenshot(path=str(path), clip=clip, full_page=clip is not None)
    try:  # small PNGs: 256 colours are plenty for a page of flat colours
        from PIL import Image

        with Image.open(path) as img:
            small = img.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        small.save(path, optimize=True)
    except ImportError:
        pass
    report["files"].append(str(path))
    report[path.stem] = page.evaluate(OVERFLOW)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="docs/screenshots", help="folder for the PNGs (created)")
    ap.add_argument("--seed", type=int, default=3, help="seed of the clicking player's choices")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("error: Playwright is missing: pip install playwright (and apt install chromium)", file=sys.stderr)
        return 2

    from stammtisch.server.app import create_app
    from stammtisch.server.threaded import serve_in_thread

    report: dict[str, Any] = {"files": []}
    tippen = ["tap", "exchange:", "play:"]
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(f"sqlite:///{Path(tmp) / 'screens.sqlite'}", bot_delay=0.02, deal_pause=3600)
        with serve_in_thread(app) as base, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)

            def page_for(lang: str, width: int, height: int = 900) -> tuple[Any, Any]:
                ctx = browser.new_context(bypass_csp=True, viewport={"width": width, "height": height},
                                          device_scale_factor=1)
                ctx.add_init_script(f"localStorage.setItem('stammtisch.lang', {lang!r})")
                return ctx, ctx.new_page()

            # a Tippen trick under way: cards in front of their players, the hand to choose from
            ctx, page = page_for("en", DESKTOP)
            page.goto(create_table(base, "tippen/grupp-1975", ["Anna", "Bernd", "Carla", "Dieter"], "heuristic"))
            play_until(page, random.Random(args.seed), tippen, lambda pg, legal: any(
                a.startswith("play:") for a in legal) and pg.locator("[data-testid=trick] .played").count() >= 2
                and pg.locator("[data-testid=trick][data-finished=false]").count() == 1)
            save(page, out / "table-tippen-en.png", report, crop(page, "#actions, #hand"))
            ctx.close()

            # a Tapp auction: what each seat said, the bid to beat, the bids with their words
            ctx, page = page_for("en", DESKTOP)
            page.goto(create_table(base, "tapp/classic-1879", ["Anna", "Bernd", "Carla"], "random"))
            play_until(page, random.Random(args.seed), ["pass", "play:", "no-tout"], lambda pg, legal: any(
                a.startswith("bid:") for a in legal) and pg.evaluate("!!(game.msg.view.standing)"))
            save(page, out / "auction-tapp-en.png", report, crop(page, "#actions"))
            ctx.close()

            # a settlement, and the Deals panel open on deal 1 after deal 2
            ctx, page = page_for("en", DESKTOP, 1000)
            page.goto(create_table(base, "tippen/grupp-1975", ["Anna", "Bernd", "Carla", "Dieter"], "heuristic"))
            rng = random.Random(args.seed)
            with_tricks = "document.querySelectorAll('[data-testid=last-trick] .card').length > 0"
            play_until(page, rng, tippen, lambda pg, legal: pg.get_by_test_id("deal-result").is_visible()
                       and pg.evaluate(with_tricks))
            page.get_by_test_id("next-deal").click()
            page.get_by_test_id("deal-result").wait_for(state="hidden")
            play_until(page, rng, tippen, lambda pg, legal: pg.get_by_test_id("deal-result").is_visible())
            page.locator("[data-testid=trick][data-finished=false]").wait_for()
            page.get_by_test_id("deals-button").click()
            page.get_by_test_id("deal-1").click()
            page.get_by_test_id("deal-explanation").wait_for()
            page.get_by_test_id("deal-analysis-btn").click()
            page.locator("[data-testid=deal-analysis]:not([data-state=loading])").wait_for(timeout=120_000)
            page.get_by_test_id("deal-analysis").scroll_into_view_if_needed()
            save(page, out / "settlement-deals-en.png", report)
            ctx.close()

            # the lobby on a phone
            ctx, page = page_for("en", 390, 844)
            page.goto(base + "/")
            page.get_by_test_id("ruleset-select").locator("option").first.wait_for(state="attached")
            save(page, out / "phone-lobby-en.png", report, crop(page, "#create-form"))
            ctx.close()

            # German-suited faces on a phone, in German
            ctx, page = page_for("de", 390, 844)
            page.goto(create_table(base, "tapp/classic-1879", ["Anna", "Bernd", "Carla"], "heuristic",
                                   {"suits": "german"}))
            play_until(page, random.Random(args.seed), ["bid:frage", "pass", "discard:", "no-tout", "play:"],
                       lambda pg, legal: any(a.startswith("play:") for a in legal)
                       and pg.locator("[data-testid=trick] .played").count() >= 1)
            save(page, out / "german-suits-de.png", report, crop(page, "#actions, #hand"))
            ctx.close()
            browser.close()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
