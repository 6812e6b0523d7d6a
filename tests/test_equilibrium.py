"""The Tippen equilibrium of the decisions before the play: the shipped data, the runtime
(``equilibrium_action`` reads only the seat's observation), the trainer on a real bank, and
the people-facing tables of the report and the guide."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stammtisch.bots.equilibrium import (
    decision_probability,
    entry_for,
    equilibrium_action,
    load_data,
    tap_blocks,
)
from stammtisch.bots.equilibrium_train import make_bank, tricks_bank
from stammtisch.games import TableState, new_game
from stammtisch.games.tippen import DECLARE, EXCHANGE, PLAY
from stammtisch.rules import TIPPEN_PRESETS, ruleset
from stammtisch.solve.cfr import Trainer, exploitability

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("players", [3, 4, 5])
def test_every_tippen_preset_has_a_strategy_the_runtime_reads(players: int) -> None:
    data = load_data()["rulesets"]
    assert set(data) == set(TIPPEN_PRESETS)
    for rid in TIPPEN_PRESETS:
        entry = entry_for(ruleset(rid, {"players": players}))
        assert entry is not None, rid
        n = players
        for level in entry["levels"]:
            assert len(level["tap"]) == n and len(level["tap"][0]) == 1 << n
            assert all(p is None or 0.0 <= p <= 1.0 for row in level["tap"] for hist in row for p in hist)
            assert any(p is not None for p in level["tap"][n - 1][0])  # the dealer after all passed
            assert len(level["tap"][0][0]) == len(entry["edges"]) + 1
            if entry["exchange"]:
                assert len(level["swap"]) == n and len(level["swap"][0]) == 1 << n
    assert entry_for(ruleset("tippen/meyers-1905", {"players": 6})) is None  # not trained


def test_no_opinion_outside_what_was_trained() -> None:
    assert entry_for(ruleset("tippen/dreiblatt-1859", {"schieben": "true"})) is None
    assert entry_for(ruleset("tippen/meyers-1905", {"lone_tapper": "dealer-defends"})) is None
    assert entry_for(ruleset("tippen/meyers-1905", {"suits": "german"})) is not None


def decision_state(rid: str, seed: int, phase: int, players: int = 4) -> tuple[object, int] | None:
    """A deal of ``rid`` (a bête standing) played at random up to a decision of ``phase``."""
    rules = ruleset(rid, {"players": players})
    game = new_game(rules)
    rng = random.Random(seed)
    deck = list(range(game.size))
    rng.shuffle(deck)
    state = game.new_deal(TableState(dealer=rng.randrange(rules.players), pot=rules.stake), deck)
    while not state.is_terminal():
        if state.phase == phase and len(state.legal_actions()) > 1:
            return state, state.current_player()
        state.apply(rng.choice(state.legal_actions()))
    return None


@settings(max_examples=40, deadline=None)
@given(rid=st.sampled_from(sorted(TIPPEN_PRESETS)), seed=st.integers(0, 2**32 - 1),
       phase=st.sampled_from([DECLARE, EXCHANGE]), players=st.sampled_from([3, 4, 5]))
def test_the_action_is_legal(rid: str, seed: int, phase: int, players: int) -> None:
    found = decision_state(rid, seed, phase, players)
    if found is None:
        return
    state, seat = found
    action = equilibrium_action(state, seat, random.Random(seed))
    if phase == EXCHANGE and not ruleset(rid).exchange:
        assert action is None
        return
    if decision_probability(state.observation(seat)) is None:  # a situation training never reached
        assert action is None
        return
    assert action is not None and action in state.legal_actions()


def test_card_play_has_no_opinion() -> None:
    found = decision_state("tippen/meyers-1905", 3, PLAY)
    assert found is not None
    state, seat = found
    assert equilibrium_action(state, seat, random.Random(1)) is None


def twin_deals(rid: str, seed: int, players: int = 4) -> tuple[object, object, int]:
    """Two deals alike for one seat (its hand, the trump card, what is said) but with every
    other seat's cards and the talon shuffled among themselves; that seat is on turn."""
    rules = ruleset(rid, {"players": players})
    game = new_game(rules)
    rng = random.Random(seed)
    n = rules.players
    dealer = rng.randrange(n)
    deck = list(range(game.size))
    rng.shuffle(deck)
    first = game.new_deal(TableState(dealer=dealer, pot=rules.stake), deck)
    seat = rng.randrange(n)
    keep = first.hands[seat] | (1 << first.upcard if first.upcard >= 0 else 0)
    if first.trump_card >= 0:
        keep |= 1 << first.trump_card
    free = [i for i, c in enumerate(deck) if not keep >> c & 1]
    cards = [deck[i] for i in free]
    rng.shuffle(cards)
    other = deck[:]
    for i, c in zip(free, cards, strict=True):
        other[i] = c
    second = game.new_deal(TableState(dealer=dealer, pot=rules.stake), other)
    # the seats before it declare alike in both deals
    while first.phase == DECLARE and first.current_player() != seat:
        word = rng.choice(first.legal_actions())
        first.apply(word)
        second.apply(word)
    return first, second, seat


@settings(max_examples=30, deadline=None)
@given(rid=st.sampled_from(sorted(TIPPEN_PRESETS)), seed=st.integers(0, 2**32 - 1),
       players=st.sampled_from([3, 4, 5]))
def test_only_the_seats_observation_counts(rid: str, seed: int, players: int) -> None:
    first, second, seat = twin_deals(rid, seed, players)
    if first.phase != DECLARE:
        return
    assert first.observation(seat).hand == second.observation(seat).hand
    p1 = decision_probability(first.observation(seat))
    p2 = decision_probability(second.observation(seat))
    assert p1 == p2
    draws1 = [equilibrium_action(first, seat, random.Random(k)) for k in range(5)]
    draws2 = [equilibrium_action(second, seat, random.Random(k)) for k in range(5)]
    assert draws1 == draws2


def test_the_mixed_strategy_is_sampled_with_its_probability(monkeypatch: pytest.MonkeyPatch) -> None:
    import stammtisch.bots.equilibrium as eq

    found = decision_state("tippen/katira-1983", 1, DECLARE)
    assert found is not None
    state, seat = found
    monkeypatch.setattr(eq, "decision_probability", lambda obs: 0.3)
    rng = random.Random(5)
    draws = [equilibrium_action(state, seat, rng) for _ in range(4000)]
    tap, pass_ = state.game.WORD_BASE, state.game.WORD_BASE + 1
    assert set(draws) == {tap, pass_}
    assert abs(draws.count(tap) / len(draws) - 0.3) < 0.03


def test_exploitability_falls_with_iterations_on_a_real_bank() -> None:
    raw = tricks_bank("tippen/meyers-1905", 4, 150, seed=11)
    bank = make_bank(raw, [0.4, 0.7, 1.0], ratio=3.0)
    gains: dict[int, float] = {}
    Trainer(bank, seed=2, batch=64).run(
        400, (3, 400), lambda it, s: gains.__setitem__(it, max(exploitability(bank, s)["gain"])))
    assert gains[400] < gains[3] / 3


@pytest.mark.parametrize("lang, words", [("en", ["forehand", "dealer", "Exploitability"]),
                                         ("de", ["Vorhand", "Geber", "Ausnutzbarkeit"])])
def test_the_report_section_renders(lang: str, words: list[str]) -> None:
    from stammtisch.bots.equilibrium import tap_table
    from stammtisch.sim.report_render import equilibrium_html

    numbers = [{"ruleset": "tippen/grupp-1975", "equilibrium": tap_table("tippen/grupp-1975")}]
    page = equilibrium_html(numbers, lang)
    for word in words:
        assert word in page
    assert page.count("<table>") == 3  # two pot levels shown, and the buckets
    assert equilibrium_html([{"ruleset": "tapp/modern"}], lang) == ""


@pytest.mark.parametrize("lang", ["en", "de"])
def test_the_guide_pages_carry_the_data(lang: str) -> None:
    """The generated section of docs/guide is what the data file says (rerun
    scripts/equilibrium_guide.py after training)."""
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    from equilibrium_guide import updated

    from stammtisch.guide import when_to_tap_section

    text = (ROOT / "docs" / "guide" / lang / "tippen.md").read_text(encoding="utf-8")
    assert updated(text, when_to_tap_section(lang)) == text
    block = tap_blocks("tippen/meyers-1905", lang)[0]
    first_row = "| " + " | ".join(block["rows"][0]) + " |"
    assert first_row in text
    assert re.search(r"<!-- section: when-to-tap -->", text)


@settings(max_examples=30, deadline=None)
@given(rid=st.sampled_from(["tippen/grupp-1975", "tippen/katira-1983"]), seed=st.integers(0, 2**32 - 1),
       players=st.sampled_from([3, 4, 5]))
def test_the_exchange_reads_only_the_seats_observation(rid: str, seed: int, players: int) -> None:
    first, second, seat = twin_deals(rid, seed, players)
    rng = random.Random(seed)
    while first.phase == DECLARE:  # the rest declare alike, the seat taps
        word = first.game.WORD_BASE if first.current_player() == seat else rng.choice(first.legal_actions())
        first.apply(word)
        second.apply(word)
    # the exchangers before the seat stand pat in both deals (their cards differ)
    while first.phase == EXCHANGE and first.current_player() != seat:
        first.apply(first.game.EXCHANGE_BASE)
        second.apply(second.game.EXCHANGE_BASE)
    if first.phase != EXCHANGE:
        return  # a lone tapper: no exchange
    p1 = decision_probability(first.observation(seat))
    assert p1 is not None and p1 == decision_probability(second.observation(seat))
    for k in range(5):
        a1 = equilibrium_action(first, seat, random.Random(k))
        a2 = equilibrium_action(second, seat, random.Random(k))
        assert a1 == a2 and a1 in first.legal_actions()
