"""The web page in German: Playwright + Debian's Chromium against a real server.

The page is switched to German in the lobby, a table is created, and a deal is played to the
settlement (Tippen and Tapp); on the way, no visible text may be an English text of the
catalogue (one whose German differs), checked at every step of the player. The detector is
shown to find English on the English page, so the check cannot pass vacuously.
"""

from __future__ import annotations

import json
import random
import re
import time

import pytest
from test_browser import browser, choose, create_via_lobby, event_of, perform, server, wait_moved_on  # noqa: F401

from stammtisch.i18n import catalogue

pytestmark = pytest.mark.browser

# Visible text nodes of the page (and the chosen entries of visible selects), trimmed; text in
# <code> is notation (sniffing=modern), the same in every language.
VISIBLE_TEXTS = """() => {
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const p = n.parentElement;
    // <code> is the notation (option=value), the same in every language
    if (!p || p.closest("script, code") || !p.checkVisibility()) continue;
    const s = n.textContent.trim();
    if (s) out.push(s);
  }
  for (const sel of document.querySelectorAll("select")) {
    if (sel.checkVisibility() && sel.selectedOptions[0]) out.push(sel.selectedOptions[0].textContent.trim());
  }
  return out;
}"""


# what a placeholder can stand for on the page (names are one word at these tables)
PLACEHOLDER = {"suit": r"[A-Z][a-z]+", "who": r"\S+", "name": r"\S+", "n": r"[-+]?\d+",
               "count": r"\d+", "s": r"\d+"}


def english_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """Every English catalogue text whose German differs, as a whole-text pattern (placeholders
    match anything); texts whose words are all placeholders are left out (they match anything),
    and so are the letters that mark German-suited suits (only ever part of a card's label, "EO":
    alone, the English one is a rank's letter on a German face, "A" or "B")."""
    en, de = catalogue("en"), catalogue("de")
    out = []
    for key, text in en.items():
        if key.startswith(("_", "suit_symbol.")) or de.get(key) == text:
            continue
        literal = re.sub(r"\{\w+\}", "", text)
        if not re.search(r"[A-Za-z]", literal):
            continue
        parts = re.split(r"(\{\w+\})", text)
        pattern = "".join(PLACEHOLDER.get(p[1:-1], ".+") if re.fullmatch(r"\{\w+\}", p) else re.escape(p)
                          for p in parts)
        out.append((key, re.compile(pattern)))
    return out


PATTERNS = english_patterns()


def english_on(page) -> list[tuple[str, str]]:
    return [(s, key) for s in page.evaluate(VISIBLE_TEXTS) for key, rx in PATTERNS if rx.fullmatch(s)]


def open_log(page) -> None:
    summary = page.locator("details:has(#log) > summary")
    if page.locator("details:has(#log)").get_attribute("open") is None:
        summary.click()


def play_in_german(page, rng, prefer, limit=400) -> int:
    """Click through a deal as seat 0 (bots at the other seats), checking each step for English."""
    checks = 0
    for _ in range(limit):
        if page.get_by_test_id("deal-result").is_visible():
            return checks
        if page.get_by_test_id("turn").get_attribute("data-mine") != "true":
            time.sleep(0.05)
            continue
        legal = json.loads(page.get_by_test_id("legal-actions").text_content())
        if not legal:
            time.sleep(0.05)
            continue
        assert english_on(page) == []
        checks += 1
        before = event_of(page)
        perform(page, choose(legal, rng, prefer))
        wait_moved_on(page, before)
    raise AssertionError("the deal did not end")


@pytest.mark.parametrize(("ruleset", "names", "prefer"), [
    ("tippen/grupp-1975", ["Anna", "Bernd", "Carla", "Dieter"], ["tap", "exchange:", "play:"]),
    ("tapp/modern", ["Anna", "Bernd", "Carla"], ["play", "contract:frage", "discard:", "play:"]),
])
def test_the_whole_page_in_german_has_no_english_left(server, browser, ruleset, names, prefer):  # noqa: F811
    ctx = browser.new_context(bypass_csp=True, locale="en-US")
    try:
        page = ctx.new_page()
        page.goto(server + "/")
        page.get_by_test_id("ruleset-select").locator("option").first.wait_for(state="attached")
        page.get_by_test_id("lang-toggle").click()
        assert page.evaluate("document.documentElement.lang") == "de"
        # the lobby, its options open: German names, help and values
        page.get_by_test_id("ruleset-select").select_option(ruleset)
        page.locator("#options-box > summary").click()
        assert english_on(page) == []
        bots = [None] + ["heuristic"] * (len(names) - 1)
        create_via_lobby(page, server, ruleset, names, bots)  # and at the seat
        assert english_on(page) == []
        page.get_by_test_id("hand").locator(".card").first.wait_for()
        open_log(page)
        rng = random.Random(7)
        checks = play_in_german(page, rng, prefer)
        for _ in range(5):  # a deal can end at once (all pass, one lone tapper): play another
            if checks >= 5:
                break
            before = event_of(page)
            page.get_by_test_id("next-deal").click()
            wait_moved_on(page, before)
            page.get_by_test_id("deal-result").wait_for(state="hidden")
            checks += play_in_german(page, rng, prefer)
        assert checks >= 5
        page.get_by_test_id("explanation").wait_for()
        assert page.get_by_test_id("log").locator("li").count() > 3
        assert english_on(page) == []
        # the log speaks in words: "Du …" for one's own actions, no notation like play:HA
        log = page.get_by_test_id("log").locator("li").all_text_contents()
        assert any(line.startswith("Du ") for line in log)
        assert not any(re.search(r"\b[a-z]+:[A-Z0-9]", line) for line in log), log
        # the Rules panel of the table, in German
        page.get_by_test_id("rules-button").click()
        page.get_by_test_id("rules-options").wait_for()
        assert english_on(page) == [], page.get_by_test_id("rules-panel").inner_text()
        page.get_by_test_id("rules-close").click()
        # the detector finds English on the English page: the check above can fail
        page.get_by_test_id("lang-toggle").click()
        found = {key for _, key in english_on(page)}
        assert {"web.nextDeal", "web.scoreSheet"} <= found, found
    finally:
        ctx.close()


ACTIONS = ["tap", "pass", "shove", "deal", "sniff", "knock", "turn", "look", "drop", "stay", "rob",
           "no-rob", "hold", "tout", "no-tout", "play", "weg", "play:HA", "play:CT", "play:SQ",
           "discard:C7,D8", "discard:?", "exchange:2", "exchange:1", "exchange:-", "exchange:0", "exchange:HJ,S9",
           "bid:frage", "bid:herzsolo", "contract:solo:C", "contract:pass", "contract:rufer:S",
           "contract:bettel-ouvert", "contract:herzdurch", "call:SA", "give:?", "give:HK", "trump:D",
           "something:new"]


def test_the_pages_words_are_the_terminals_words(server, browser):  # noqa: F811
    """app.js puts actions and cards into words as stammtisch/i18n/words.py does: same texts."""
    from stammtisch.i18n.words import action_phrase, card_name

    ctx = browser.new_context(bypass_csp=True)
    try:
        page = ctx.new_page()
        page.goto(server + "/")
        page.get_by_test_id("ruleset-select").locator("option").first.wait_for(state="attached")
        cards = [s + r for s in "HDCS" for r in "AKQJT98765432"]
        for lang in ("en", "de"):
            page.evaluate(f"() => {{ lang = {lang!r}; }}")
            for suits in ("french", "german"):
                page.evaluate(f"() => {{ germanSuits = {str(suits == 'german').lower()}; }}")
                js = page.evaluate("(cs) => cs.map(cardName)", cards)
                assert js == [card_name(c, lang, suits) for c in cards]
                for who in (None, "Anna"):
                    js = page.evaluate("([as, who]) => as.map((a) => actionPhrase(a, who))", [ACTIONS, who])
                    assert js == [action_phrase(a, lang, who, suits) for a in ACTIONS], (lang, suits, who)
    finally:
        ctx.close()
