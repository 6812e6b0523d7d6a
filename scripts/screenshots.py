"""Screenshots of the web table for the docs (not a test).

Starts the server on a temporary SQLite database, creates bot-filled tables, plays one seat in
Chromium (Playwright, Debian's /usr/bin/chromium) to the settlement and saves PNGs:

    docs/screenshots/settlement-tippen-en.png   settlement-tippen-de.png
    docs/screenshots/settlement-tapp-en.png     settlement-tapp-de.png
    docs/screenshots/phone-deal-de.png          phone-settlement-de.png   (390×844 phone)
    docs/screenshots/phone-lobby-en.png

    python scripts/screenshots.py [--out docs/screenshots] [--seed 3]

It prints JSON: each file, and for the phone pages whether anything is wider than the screen
(``overflow`` lists the elements that stick out; an empty list is what we want).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
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


def create_table(base: str, ruleset: str, names: list[str], bot: str) -> str:
    seats = [{"name": names[0]}] + [{"name": n, "bot": bot} for n in names[1:]]
    req = urllib.request.Request(f"{base}/api/tables", method="POST",
                                 data=json.dumps({"ruleset": ruleset, "options": {}, "seats": seats}).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req) as r:
        res = json.load(r)
    with urllib.request.urlopen(urllib.request.Request(
            f"{base}/api/tables/{res['id']}/start", method="POST",
            data=json.dumps({"token": res["admin_token"]}).encode(),
            headers={"content-type": "application/json"})):
        pass
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
    elif head == "play" and page.get_by_test_id(f"card-{arg}").count():
        page.get_by_test_id(f"card-{arg}").click()
    else:
        page.get_by_test_id(f"action-{action}").click()


def event(page: Any) -> int:
    return int(page.evaluate("document.body.dataset.event || '-1'"))


def play(page: Any, rng: random.Random, prefer: list[str], stop_after: int | None = None,
         want_tricks: bool = True) -> int:
    """Play seat 0 until the settlement (or ``stop_after`` own actions); returns own actions.
    A deal that ended without a trick (all passed, a lone tapper) is followed by another when
    ``want_tricks``."""
    acted = 0
    for _ in range(2000):
        if page.get_by_test_id("deal-result").is_visible():
            tricks = page.get_by_test_id("last-trick").locator(".card").count()
            if tricks or not want_tricks:
                return acted
            before = event(page)
            page.get_by_test_id("next-deal").click()
            page.wait_for_function(f"Number(document.body.dataset.event) > {before}", timeout=10000)
            page.get_by_test_id("deal-result").wait_for(state="hidden")
            continue
        legal = json.loads(page.get_by_test_id("legal-actions").text_content() or "[]")
        if page.get_by_test_id("turn").get_attribute("data-mine") != "true" or not legal:
            time.sleep(0.05)
            continue
        if stop_after is not None and acted >= stop_after:
            return acted
        before = event(page)
        act(page, choose(legal, rng, prefer))
        page.wait_for_function(f"Number(document.body.dataset.event) > {before}", timeout=10000)
        acted += 1
    raise SystemExit("the deal did not end")


def settle(page: Any) -> None:
    """Wait until the last trick has moved off the middle and open the log."""
    page.locator("[data-testid=trick][data-finished=false]").wait_for()
    summary = page.locator("details:has(#log) > summary")
    if page.locator("details:has(#log)").get_attribute("open") is None:
        summary.click()
    page.get_by_test_id("deal-result").scroll_into_view_if_needed()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="docs/screenshots", help="folder for the PNGs (created)")
    ap.add_argument("--seed", type=int, default=3, help="seed of the clicking player's choices")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        from playwright.sync_api import ViewportSize, sync_playwright
    except ImportError:
        print("error: Playwright is missing: pip install playwright (and apt install chromium)", file=sys.stderr)
        return 2

    from stammtisch.server.app import create_app
    from stammtisch.server.threaded import serve_in_thread

    phone: ViewportSize = {"width": 390, "height": 844}
    report: dict[str, Any] = {"files": []}
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(f"sqlite:///{Path(tmp) / 'screens.sqlite'}", bot_delay=0.02, deal_pause=3600)
        with serve_in_thread(app) as base:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
                games = [("tippen", "tippen/grupp-1975", ["Anna", "Bernd", "Carla", "Dieter"], "heuristic",
                          ["tap", "exchange:", "play:"]),
                         ("tapp", "tapp/modern", ["Anna", "Bernd", "Carla"], "heuristic",
                          ["play", "contract:frage", "discard:", "play:"])]
                for family, rid, names, bot, prefer in games:
                    for lang in ("en", "de"):
                        ctx = browser.new_context(bypass_csp=True, viewport={"width": 1100, "height": 900},
                                                  device_scale_factor=1)
                        ctx.add_init_script(f"localStorage.setItem('stammtisch.lang', {lang!r})")
                        page = ctx.new_page()
                        page.goto(create_table(base, rid, names, bot))
                        page.get_by_test_id("hand").locator(".card").first.wait_for()
                        play(page, random.Random(args.seed), prefer)
                        settle(page)
                        path = out / f"settlement-{family}-{lang}.png"
                        page.screenshot(path=str(path), full_page=True)
                        report["files"].append(str(path))
                        ctx.close()
                # the phone: a deal under way, the settlement, the lobby
                ctx = browser.new_context(bypass_csp=True, viewport=phone, device_scale_factor=2,
                                          is_mobile=True, has_touch=True)
                ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'de')")
                page = ctx.new_page()
                page.goto(create_table(base, "tippen/grupp-1975", ["Anna", "Bernd", "Carla", "Dieter"], "heuristic"))
                page.get_by_test_id("hand").locator(".card").first.wait_for()
                rng = random.Random(args.seed)
                play(page, rng, ["tap", "exchange:-", "play:"], stop_after=3)
                path = out / "phone-deal-de.png"
                page.screenshot(path=str(path))
                report["files"].append(str(path))
                report["phone-deal-de"] = page.evaluate(OVERFLOW)
                play(page, rng, ["tap", "exchange:-", "play:"])
                settle(page)
                path = out / "phone-settlement-de.png"
                page.screenshot(path=str(path), full_page=True)
                report["files"].append(str(path))
                report["phone-settlement-de"] = page.evaluate(OVERFLOW)
                ctx.close()
                ctx = browser.new_context(bypass_csp=True, viewport=phone, device_scale_factor=2,
                                          is_mobile=True, has_touch=True)
                ctx.add_init_script("localStorage.setItem('stammtisch.lang', 'en')")
                page = ctx.new_page()
                page.goto(base + "/")
                page.get_by_test_id("ruleset-select").locator("option").first.wait_for(state="attached")
                page.locator("#options-box > summary").click()
                path = out / "phone-lobby-en.png"
                page.screenshot(path=str(path), full_page=True)
                report["files"].append(str(path))
                report["phone-lobby-en"] = page.evaluate(OVERFLOW)
                ctx.close()
                browser.close()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
