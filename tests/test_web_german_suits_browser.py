"""A German-suited table speaks German suits everywhere, in Chromium against a real server: no
French suit sign (♠ ♦ ♣) in the top bar, the seats' tags, the buttons, the log, the settlement or
the analysis, in English and German; the short card labels use the German-suited ranks ("D" is
the Daus there, never a Dame); and the trump star stays visible on the cards of a fanned hand."""

from __future__ import annotations

import random

import pytest
from server_helpers import roomy_limits
from test_browser import browser  # noqa: F401  (fixture)
from test_web_table_browser import new_table, open_page, play_until

from stammtisch.server.app import create_app
from stammtisch.server.threaded import serve_in_thread

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

FRENCH = set("♠♦♣")

# every text of the page a person can read or hear: the visible text, the log and the names
TEXTS = """() => {
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  const named = [...document.querySelectorAll('[aria-label], [title]')].filter((e) => e.checkVisibility())
    .map((e) => (e.getAttribute('aria-label') || '') + ' ' + (e.getAttribute('title') || ''));
  return document.body.innerText + '\\n' + named.join('\\n');
}"""

# for each trump card of the hand but the last: how far its star reaches, and how much of the
# card the next one leaves uncovered
STARS = """() => {
  const cards = [...document.querySelectorAll('[data-testid=hand] .card')];
  const out = [];
  cards.forEach((c, i) => {
    if (!c.classList.contains('trump') || i === cards.length - 1) return;
    const face = c.querySelector('.face');
    const st = getComputedStyle(face, '::after');
    const reach = parseFloat(st.left) + parseFloat(st.fontSize);
    const open = cards[i + 1].getBoundingClientRect().left - c.getBoundingClientRect().left;
    out.push({card: c.dataset.card, reach, open});
  });
  return out;
}"""


@pytest.mark.parametrize("lang", ["de", "en"])
def test_a_german_suited_table_shows_no_french_suit(browser, tmp_path, lang):  # noqa: F811
    with serve_in_thread(create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0.02, deal_pause=0.2,
                                    limits=roomy_limits())) as base:
        t = new_table(base, "tapp/classic-1879", [("Anna", None), ("Bernd", "random"), ("Carla", "random")],
                      options={"suits": "german"})
        ctx, page, errors = open_page(browser, base, t["seats"][0]["link"], 390, lang)
        try:
            stars: list[dict] = []

            def trumps_in_hand(p, legal) -> bool:
                trumps = p.locator("[data-testid=hand] .card.trump").count()
                if any(a.startswith("play:") for a in legal) and trumps > 1:
                    stars.extend(p.evaluate(STARS))
                text = p.evaluate(TEXTS)
                assert not FRENCH & set(text), sorted(FRENCH & set(text))
                # a deal in which this hand held trumps while a card was to play
                return p.get_by_test_id("deal-result").is_visible() and bool(stars)

            play_until(page, random.Random(5), ["bid", "play"], trumps_in_hand)
            page.get_by_test_id("analysis-btn").click()
            page.locator("[data-testid=analysis][data-state=done]").wait_for(timeout=120_000)
            text = page.evaluate(TEXTS)
            assert not FRENCH & set(text), sorted(FRENCH & set(text))
            assert stars, "no trump in a fanned hand was ever seen"
            for s in stars:
                assert s["reach"] <= s["open"], s
            # the short labels: the German-suited ranks (Daus, Ober, Unter), one label per card
            labels = page.evaluate("""() => ['HA', 'DA', 'CQ', 'SJ', 'SK', 'D7'].map((c) => cardShort(c))""")
            expected = {"de": ["♥D", "SD", "EO", "LU", "LK", "S7"], "en": ["♥D", "BD", "AO", "LU", "LK", "B7"]}
            assert labels == expected[lang]
        finally:
            ctx.close()
        assert errors == []
