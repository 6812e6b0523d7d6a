"""How the web table shows a deal: Playwright + Debian's Chromium.

- a finished trick stays in the middle for a moment, its winner marked, then moves to "last
  trick", where the winner stays marked;
- while a card is to be chosen, the playable cards are raised and clickable, the others dimmed
  and marked as not to be chosen (aria-disabled); with no choice due every card looks alike;
- the pot in the top bar and in the score sheet are the same number at every step;
- the tapp, once the declarer has taken it, is not on the table (it is in his hand, marked
  while he lays cards away).
"""

from __future__ import annotations

import json
import random
import time

import pytest
from test_browser import browser, choose, create_via_lobby, event_of, perform, server, wait_moved_on  # noqa: F401

pytestmark = pytest.mark.browser

HAND_LOOK = """() => [...document.querySelectorAll('[data-testid=hand] .card')].map((e) => {
  const st = getComputedStyle(e);
  return {card: e.dataset.card, legal: e.dataset.legal === 'true',
          opacity: getComputedStyle(e.querySelector('.face')).opacity,
          role: e.getAttribute('role'), cursor: st.cursor, disabled: e.getAttribute('aria-disabled') === 'true'};
})"""


# read in one go, so that no render falls between the parts
TRICKS = """() => {
  const cards = (id) => [...document.querySelectorAll(`[data-testid=${id}] .played`)].map((e) =>
    [Number(e.dataset.seat), e.querySelector('.card').dataset.card, e.dataset.winner === 'true']);
  const text = (id) => document.querySelector(`[data-testid=${id}]`).textContent;
  return {finished: document.querySelector('[data-testid=trick]').dataset.finished === 'true',
          trick: cards('trick'), trickWinner: text('trick-winner'),
          last: cards('last-trick'), lastWinner: text('last-trick-winner'),
          pots: [text('pot'), text('score-pot')],
          done: game.msg && game.msg.view ? game.msg.view.tricks_won.reduce((a, b) => a + b, 0) : null};
}"""


def check_hand_look(page) -> tuple[int, int]:
    """Every card is a button; the legal ones are clickable and bright, the others say that they
    cannot be chosen and are dimmed while a choice is due. Returns (legal, other)."""
    cards = page.evaluate(HAND_LOOK)
    choosing = any(c["legal"] for c in cards)
    for c in cards:
        assert c["role"] == "button", c
        if c["legal"]:
            assert c["opacity"] == "1" and not c["disabled"] and c["cursor"] == "pointer", c
        else:
            assert c["disabled"] and c["cursor"] != "pointer", c
            assert (float(c["opacity"]) < 1) == choosing, c
    return sum(c["legal"] for c in cards), sum(not c["legal"] for c in cards)


def test_tippen_trick_hold_winner_card_look_and_pot(server, browser):  # noqa: F811
    ctx = browser.new_context(bypass_csp=True)
    rng = random.Random(4)
    try:
        page = ctx.new_page()
        names = ["Anna", "Bernd", "Carla", "Dieter"]
        create_via_lobby(page, server, "tippen/grupp-1975", names, [None] + ["heuristic"] * 3)
        page.get_by_test_id("hand").locator(".card").first.wait_for()
        held_checked = False
        seen_unplayable_on_turn = False
        deals = 0
        while not (held_checked and seen_unplayable_on_turn):
            assert deals < 6, "no trick was held or no unplayable card was seen"
            for _ in range(400):
                seen = page.evaluate(TRICKS)
                # the pot: top bar and score sheet agree at every step
                assert seen["pots"][0] == seen["pots"][1], seen["pots"]
                _, other_n = check_hand_look(page)
                if seen["finished"] and not held_checked:
                    held = seen["trick"]
                    winners = [s for s, _, w in held if w]
                    assert len(held) >= 2 and len(winners) == 1, held
                    assert names[winners[0]] in seen["trickWinner"]
                    page.locator("[data-testid=trick][data-finished=false]").wait_for(timeout=5000)
                    after = page.evaluate(TRICKS)
                    # the same cards, the same winner marked, unless the next trick already ended
                    # (the bots play fast where this seat sits out)
                    if not after["finished"] and after["done"] == seen["done"]:
                        assert after["last"] == held
                        assert names[winners[0]] in after["lastWinner"]
                        held_checked = True
                if page.get_by_test_id("deal-result").is_visible():
                    break
                legal = json.loads(page.get_by_test_id("legal-actions").text_content())
                if page.get_by_test_id("turn").get_attribute("data-mine") != "true" or not legal:
                    time.sleep(0.03)
                    continue
                if any(a.startswith("play:") for a in legal) and other_n:
                    seen_unplayable_on_turn = True
                before = event_of(page)
                perform(page, choose(legal, rng, ["tap", "exchange:-", "play:"]))
                wait_moved_on(page, before)
            else:
                raise AssertionError("the deal did not end")
            deals += 1
            pots = page.evaluate(TRICKS)["pots"]
            assert pots[0] == pots[1], pots
            before = event_of(page)
            page.get_by_test_id("next-deal").click()
            wait_moved_on(page, before)
            page.get_by_test_id("deal-result").wait_for(state="hidden")
    finally:
        ctx.close()


def test_tapp_taken_tapp_is_not_on_the_table(server, browser):  # noqa: F811
    ctx = browser.new_context(bypass_csp=True)
    rng = random.Random(9)
    try:
        page = ctx.new_page()
        create_via_lobby(page, server, "tapp/modern", ["Anna", "Bernd", "Carla"], [None, "random", "random"])
        page.get_by_test_id("hand").locator(".card").first.wait_for()
        discarded_after_taking = False
        for _deal in range(30):  # Anna must win the bidding with a Frage once (random bots bid too)
            for _ in range(400):
                # nothing lies on the table outside the trick: the tapp is face down or in a hand
                assert page.locator("[data-testid=upcard] .card").count() == 0
                if page.get_by_test_id("deal-result").is_visible():
                    break
                legal = json.loads(page.get_by_test_id("legal-actions").text_content())
                if page.get_by_test_id("turn").get_attribute("data-mine") != "true" or not legal:
                    time.sleep(0.03)
                    continue
                if any(a.startswith("discard:") for a in legal):
                    # the cards picked up from the tapp are marked in the hand
                    marked = page.locator("[data-testid=hand] .card.from-tapp").count()
                    assert marked >= 2, marked
                    discarded_after_taking = True
                before = event_of(page)
                perform(page, choose(legal, rng, ["play", "contract:frage", "discard:", "play:"]))
                wait_moved_on(page, before)
            else:
                raise AssertionError("the deal did not end")
            if discarded_after_taking:
                break
            before = event_of(page)
            page.get_by_test_id("next-deal").click()
            wait_moved_on(page, before)
            page.get_by_test_id("deal-result").wait_for(state="hidden")
        assert discarded_after_taking, "Anna never declared a Frage in 30 deals"
        assert page.locator("[data-testid=hand] .card.from-tapp").count() == 0  # only while discarding
    finally:
        ctx.close()
