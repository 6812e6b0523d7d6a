"""Hints: the search bot's choice for a seat and one line of why, from its own figures; legal,
blind to the hidden cards, in both languages, in the terminal and in the server's worker."""

from __future__ import annotations

import asyncio
import os
import random
import re
from typing import Any

import pytest
from test_bots_search import _hidden, deal_states
from test_server_workers import a_deal

from stammtisch.bots import LEVELS
from stammtisch.bots.pimc import Advice, PimcBot, advise, number_message
from stammtisch.i18n import render
from stammtisch.rules import ruleset
from stammtisch.server import thinker as thinker_module
from stammtisch.server.thinker import DealSoFar, Thinker
from stammtisch.table import Table

RULE_SETS = ["tapp/modern", "tapp/classic-1879", "tippen/grupp-1975"]
#: small budgets: the tests check what a hint says, not how good it is
SAMPLES = 4


def states_of(rid: str, seed: int = 3, step: int = 3) -> list[tuple[Any, int]]:
    return deal_states(ruleset(rid, {}), seed=seed, deals=2)[::step]


@pytest.mark.parametrize("rid", RULE_SETS)
def test_a_hint_is_a_legal_action_of_the_seat_with_its_figures(rid):
    phases = set()
    for i, (state, seat) in enumerate(states_of(rid)):
        legal = state.legal_actions()
        advice = advise(state, seat, i, samples=SAMPLES)
        assert advice.action_id in legal
        assert advice.action == state.action_to_string(advice.action_id)
        assert advice.action in state.view(seat)["legal_actions"]
        assert advice.chosen is not None
        assert all(o.worlds == SAMPLES and 0 <= o.good <= SAMPLES for o in advice.options)
        assert {o.action for o in advice.options} <= set(state.view(seat)["legal_actions"])
        in_play = state.view(seat)["phase"] == "play"
        assert all((o.takes is not None) == in_play for o in advice.options)
        phases.add(state.view(seat)["phase"])
    assert "play" in phases and len(phases) >= 2


@pytest.mark.parametrize("rid", RULE_SETS)
def test_a_hint_is_what_the_bot_would_play(rid):
    """``advise`` chooses as ``act`` does with the same seed (the figures draw nothing)."""
    for i, (state, seat) in enumerate(states_of(rid, step=4)):
        advised = PimcBot(ruleset(rid, {}).family, random.Random(i), samples=SAMPLES).advise(state, seat)
        acted = PimcBot(ruleset(rid, {}).family, random.Random(i), samples=SAMPLES).act(state, seat)
        assert advised.action_id == acted


@pytest.mark.parametrize("rid", RULE_SETS)
def test_a_hint_is_the_masters_search(rid):
    """A hint is what the Master level searches: its worlds, weighed by the inference (Tippen's
    tap or pass searched too, not read from the equilibrium: a hint tells its figures)."""
    family = ruleset(rid, {}).family
    master = LEVELS["master"]
    assert master.inference and master.samples is not None
    for i, (state, seat) in enumerate(states_of(rid, step=4)):
        hinted = advise(state, seat, i, samples=SAMPLES)
        assert hinted.action_id == PimcBot(family, random.Random(i), SAMPLES, inference=True).act(state, seat)
    state, seat = states_of(rid, step=4)[0]
    assert {o.worlds for o in advise(state, seat, 0).options} == {master.samples[family]}


@pytest.mark.parametrize("rid", RULE_SETS)
def test_a_hint_does_not_depend_on_the_hidden_cards(rid):
    """Twin states (the hidden cards moved consistently with the seat's view) get the same
    advice, figures and line included, for the same seed."""
    moved = False
    for i, (state, seat) in enumerate(states_of(rid, step=2)):
        twin = state.resample(seat, random.Random(500 + i))
        assert twin.view(seat) == state.view(seat)
        moved |= _hidden(twin) != _hidden(state)
        first, second = advise(state, seat, 11 + i, samples=SAMPLES), advise(twin, seat, 11 + i, samples=SAMPLES)
        assert first == second
        assert render(first.why()) == render(second.why())
    assert moved


def test_numbers_are_written_as_each_language_writes_them():
    assert render(number_message(6.24)) == "+6.2" and render(number_message(6.24), "de") == "+6,2"
    assert render(number_message(-1.36)) == "-1.4" and render(number_message(-1.36), "de") == "-1,4"
    assert render(number_message(0.0)) == "0.0" and render(number_message(12.0, signed=False)) == "12.0"


def _first_advice(rid: str, phase: str, measure: str | None = None) -> Advice:
    for i, (state, seat) in enumerate(states_of(rid, step=1)):
        if state.view(seat)["phase"] == phase:
            advice = advise(state, seat, i, samples=6)
            if measure is None or advice.measure == measure:
                return advice
    raise AssertionError(f"no {phase} decision in {rid}")


def test_the_why_of_a_card_renders_its_own_figures_in_english_and_german():
    advice = _first_advice("tippen/grupp-1975", "play")
    own = advice.chosen
    assert own is not None and own.takes is not None and advice.measure == "money"
    en, de = render(advice.why()), render(advice.why(), "de")
    assert (f"takes this trick in {own.takes} of {own.worlds} likely deals, given what you have seen "
            "and what the others did") in en
    assert (f"holt diesen Stich in {own.takes} von {own.worlds} Verteilungen, die zu dem passen, was du "
            "gesehen hast und was die anderen getan haben") in de
    assert render(number_message(own.mean)) + " counters on average" in en
    assert f"ahead in {own.good} of {own.worlds}" in en
    assert "im Schnitt " + render(number_message(own.mean), "de") + " Marken" in de
    card = advice.action.partition(":")[2]
    from stammtisch.i18n.words import card_name

    assert en.startswith(f"Best: {card_name(card)}") and de.startswith(f"Am besten: {card_name(card, 'de')}")
    assert f"In figures: {card_name(card)}: takes" in en and f"In Zahlen: {card_name(card, 'de')}: holt" in de


def test_a_hint_says_first_in_one_sentence_what_the_next_best_choice_would_cost():
    """Before the figures: the choice, and the next best choice with what it costs on average
    (the difference of the two averages, in the table's unit)."""
    advice = _first_advice("tippen/grupp-1975", "declare")
    own = advice.chosen
    assert own is not None and len(advice.options) == 2
    other = next(o for o in advice.options if o is not own)
    gap = own.mean - other.mean
    en, de = render(advice.why()), render(advice.why(), "de")
    head_en, _, figures_en = en.partition(". In figures: ")
    head_de, _, figures_de = de.partition(". In Zahlen: ")
    from stammtisch.bots.pimc import action_message

    mine, theirs = render(action_message(advice.action)), render(action_message(other.action))
    if round(gap * 10):
        gap_en = render(number_message(gap, signed=False))
        assert head_en == f"Best: {mine}; {theirs} would cost {gap_en} counters on average"
        assert head_de == (f"Am besten: {render(action_message(advice.action), 'de')}; "
                           f"{render(action_message(other.action), 'de')} würde im Schnitt "
                           f"{render(number_message(gap, signed=False), 'de')} Marken kosten")
    else:
        assert head_en == f"Best: {mine}; {theirs} is about as good"
    assert figures_en.startswith(f"{mine}: ") and "counters on average" in figures_en
    assert figures_de.startswith(f"{render(action_message(advice.action), 'de')}: ")


def test_the_why_of_a_contract_names_it_and_the_next_best_with_their_averages():
    advice = _first_advice("tapp/modern", "contract")
    own = advice.chosen
    assert own is not None and own.takes is None and len(advice.options) >= 2
    en, de = render(advice.why()), render(advice.why(), "de")
    assert f"{render(number_message(own.mean))} cents on average, ahead in {own.good} of {own.worlds}" in en
    assert f"over {own.worlds} likely deals, given what you have seen and what the others did; " in en
    assert f"im Schnitt {render(number_message(own.mean), 'de')} Cent, im Plus in {own.good} von {own.worlds}" in de
    runner = max((o for o in advice.options if o is not own), key=lambda o: o.mean)
    assert en.endswith(f"{render(number_message(runner.mean))} cents on average, ahead in {runner.good} of "
                       f"{runner.worlds}")
    assert "{" not in en + de


def test_the_why_of_a_solved_tapp_card_counts_the_contract_made_or_beaten():
    advice = _first_advice("tapp/modern", "play", measure="wins")
    own = advice.chosen
    assert own is not None
    en, de = render(advice.why()), render(advice.why(), "de")
    made = re.search(r"the contract is (made|beaten) in (\d+) of (\d+) with best play", en)
    assert made and int(made.group(2)) == own.good and int(made.group(3)) == own.worlds
    assert (made.group(1) == "made") == advice.declarer
    assert re.search(rf"in {own.good} von {own.worlds} (gewonnen|geschlagen)", de)


def test_a_forced_action_is_said_to_be_the_only_choice():
    rules = ruleset("tapp/modern", {})
    table = Table(rules, ["a", "b", "c"], 0)
    state = table.start_deal(table.shuffled_deck(random.Random(1)))
    while len(state.legal_actions()) > 1:
        state.apply(state.legal_actions()[0])
    seat = state.current_player()
    advice = advise(state, seat, 1, samples=SAMPLES)
    assert advice.measure == "forced" and advice.options == ()
    assert render(advice.why()).endswith(": the only legal choice")
    assert render(advice.why(), "de").endswith(": die einzige erlaubte Wahl")


# --- the server's worker ---------------------------------------------------------------------


def stand_in_advise(deal: DealSoFar, seat: int, seed: int) -> dict:
    """Where the hint was computed (module level: the worker imports it by name)."""
    return {"action": "tap", "why": {"key": "hint.only"}, "pid": os.getpid()}


def test_the_thinker_advises_in_its_worker():
    thinker = Thinker()
    deal, seat, legal = a_deal()

    async def main() -> tuple[dict, dict]:
        first = await thinker.advise(deal, seat, 5, "10.0.0.1", "t1")
        again = await thinker.advise(deal, seat, 5, "10.0.0.1", "t1")
        return first, again

    try:
        first, again = asyncio.run(main())
        pids = thinker.worker_pids()
    finally:
        thinker.shutdown()
    assert first == again and first["action"] in legal
    assert set(first) == {"action", "why"} and first["why"]["key"].startswith("hint.")
    assert render(first["why"]) and render(first["why"], "de") != render(first["why"])
    assert pids and os.getpid() not in pids


def test_the_thinker_advice_is_computed_in_the_worker_process(monkeypatch):
    monkeypatch.setattr(thinker_module, "advise", stand_in_advise)
    thinker = Thinker()
    deal, seat, _ = a_deal()
    try:
        answer = asyncio.run(thinker.advise(deal, seat, 5, "10.0.0.1", "t1"))
        pids = thinker.worker_pids()
    finally:
        thinker.shutdown()
    assert answer["pid"] != os.getpid() and answer["pid"] in pids


def test_a_hint_waits_beside_the_tables_bot_decision_but_not_beside_another_hint():
    thinker = Thinker()
    deal, seat, legal = a_deal()

    async def main() -> None:
        decision = thinker.decide(deal, "heuristic", seat, 1, "10.0.0.1", "t1")
        hint = thinker.advise(deal, seat, 5, "10.0.0.1", "t1")
        both = asyncio.gather(decision, hint)
        await asyncio.sleep(0)  # both are queued
        with pytest.raises(ValueError):
            await thinker.advise(deal, seat, 6, "10.0.0.1", "t1")
        action, answer = await both
        assert action in legal and answer["action"] in legal

    try:
        asyncio.run(main())
    finally:
        thinker.shutdown()
