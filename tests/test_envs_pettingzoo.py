"""The PettingZoo AEC environment: PettingZoo's own api_test and seed_test for every preset,
rewards equal to the ledger's change, sessions carrying the pot, and refusals of bad input."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from stammtisch.envs.pettingzoo import env, raw_env
from stammtisch.rules import RuleError, ruleset, ruleset_ids

PRESETS = ruleset_ids()


@pytest.mark.parametrize("rid", PRESETS)
def test_pettingzoo_api_test_passes(rid: str) -> None:
    api_test(env(rid), num_cycles=300, verbose_progress=False)


@pytest.mark.parametrize("rid", PRESETS)
def test_pettingzoo_seed_test_passes(rid: str) -> None:
    seed_test(functools.partial(env, rid), num_cycles=100)


def test_api_test_passes_with_options_and_a_session() -> None:
    api_test(env("tippen/grupp-1975", players=5, knocking=True, sniffing="modern", session_deals=3),
             num_cycles=300, verbose_progress=False)
    api_test(env("tapp/modern", players=4, pack="skat32", session_deals=2), num_cycles=300,
             verbose_progress=False)


def _play(e, rng: np.random.Generator) -> dict[str, float]:
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        assert legal.size > 0
        e.step(int(rng.choice(legal)))
    return totals


@pytest.mark.parametrize("rid", ["tippen/meyers-1905", "tapp/wuerttemberg-tarock"])
def test_rewards_are_the_ledger_change_of_each_deal_and_sessions_carry_the_pot(rid: str) -> None:
    e = raw_env(rid, session_deals=4, pot=True) if rid.startswith("tapp") else raw_env(rid, session_deals=4)
    e.reset(seed=7)
    totals = _play(e, np.random.default_rng(7))
    table = e.table
    assert len(table.results) == 4
    balances = table.ledger.player_balances()
    assert totals == {f"seat_{s}": float(b) for s, b in enumerate(balances)}
    assert balances == [sum(r.net(4 if rid.startswith("tippen") else 3)[s] for r in table.results)
                        for s in range(len(balances))]
    # the pot is carried: the last deal started with the pot the first three left
    pot_after_three = sum(t.amount if t.target == "pot" else -t.amount
                          for r in table.results[:3] for t in r.transfers if "pot" in (t.source, t.target))
    assert pot_after_three > 0
    assert table.table_state.pot == pot_after_three
    assert table.deals_played == 4


def test_normalised_rewards_are_divided_by_the_stake() -> None:
    plain, scaled = raw_env("tippen/grupp-1975", stake=6), raw_env("tippen/grupp-1975", stake=6, normalize_rewards=True)
    plain.reset(seed=3)
    scaled.reset(seed=3)
    a = _play(plain, np.random.default_rng(1))
    b = _play(scaled, np.random.default_rng(1))
    assert any(v != 0 for v in a.values())
    assert b == {k: v / 6 for k, v in a.items()}


def test_one_episode_is_one_deal_by_default() -> None:
    e = raw_env("tapp/modern")
    e.reset(seed=1)
    _play(e, np.random.default_rng(1))
    assert len(e.table.results) == 1 and e.table.state.is_terminal()


def test_a_masked_action_is_refused_by_name_and_changes_nothing() -> None:
    e = env("tippen/grupp-1975")
    e.reset(seed=5)
    agent = e.agent_selection
    obs = e.observe(agent)
    masked = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    log_before = e.unwrapped.table.state.view(None)["log"]
    with pytest.raises(ValueError, match=rf"action {masked} \(play:"):
        e.step(masked)
    assert e.agent_selection == agent
    assert e.unwrapped.table.state.view(None)["log"] == log_before
    np.testing.assert_array_equal(e.observe(agent)["observation"], obs["observation"])


def test_unknown_rule_set_and_option_give_the_cli_error() -> None:
    with pytest.raises(RuleError) as ours:
        env("tippen/grupp-1976")
    with pytest.raises(RuleError) as cli:
        ruleset("tippen/grupp-1976", [])
    assert str(ours.value) == str(cli.value)
    with pytest.raises(RuleError, match="unknown option 'knockin'"):
        env("tippen/grupp-1975", knockin=True)
    with pytest.raises(RuleError, match="for 3–5 players"):
        env("tippen/grupp-1975", players=7)


def test_render_ansi_shows_the_table() -> None:
    e = env("tapp/modern", render_mode="ansi")
    e.reset(seed=2)
    text = e.render()
    assert "tapp/modern" in text and "seat_0" in text and "seat_2" in text
