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


def _episode_state(e) -> tuple:
    raw = e.unwrapped
    return (list(raw.agents), raw.agent_selection, dict(raw.rewards), dict(raw._cumulative_rewards),
            dict(raw.terminations), dict(raw.truncations), dict(raw.infos),
            getattr(raw, "_skip_agent_selection", "unset"))


@pytest.mark.parametrize("rid, options", [("tippen/grupp-1975", {}), ("tapp/modern", {"session_deals": 2}),
                                          ("tippen/dreiblatt-1859", {"players": 5})])
def test_the_environment_steps_as_with_pettingzoos_own_wrapper_and_dead_step(rid: str, options: dict) -> None:
    """The order-enforcing wrapper's direct paths (last, agent_iter) and the dead step written for
    deals that end for every agent at once leave everything as PettingZoo's own code does: the
    same agents, selections, rewards and flags after every step, the same observations."""
    from pettingzoo.utils import AECEnv, wrappers

    ours = env(rid, **options)
    plain_raw = raw_env(rid, **options)
    plain_raw._was_dead_step = functools.partial(AECEnv._was_dead_step, plain_raw)
    plain = wrappers.OrderEnforcingWrapper(plain_raw)
    rng = np.random.default_rng(3)
    for episode in range(30):
        ours.reset(seed=episode)
        plain.reset(seed=episode)
        theirs = iter(plain.agent_iter())
        for agent in ours.agent_iter():
            assert agent == next(theirs)
            mine, other = ours.last(), plain.last()
            for key in ("observation", "action_mask"):
                np.testing.assert_array_equal(mine[0][key], other[0][key])
                assert mine[0][key].dtype == other[0][key].dtype
            assert mine[1:] == other[1:]
            if mine[2] or mine[3]:
                action = None
            else:
                action = int(rng.choice(np.flatnonzero(mine[0]["action_mask"])))
            ours.step(action)
            plain.step(action)
            assert _episode_state(ours) == _episode_state(plain)
        assert next(theirs, None) is None


def test_the_order_is_enforced_as_by_pettingzoos_wrapper() -> None:
    """Before reset() and out of order, the wrapper answers as PettingZoo's OrderEnforcingWrapper:
    the same exceptions with the same messages."""
    from pettingzoo.utils import wrappers

    def outcome(call):
        try:
            call()
        except BaseException as e:  # noqa: BLE001 (what is compared is the exception itself)
            return type(e), str(e)
        return None

    def attempts(e):
        yield outcome(lambda: e.last())
        yield outcome(lambda: e.agent_iter())
        yield outcome(lambda: e.step(0))
        yield outcome(lambda: e.agent_selection)
        yield outcome(lambda: e.agents)
        e.reset(seed=1)
        it = iter(e.agent_iter())
        yield next(it)
        yield outcome(lambda: next(it))  # no step() in between
        yield outcome(lambda: e.step(None))  # None while the agent is to act

    assert list(attempts(env())) == list(attempts(wrappers.OrderEnforcingWrapper(raw_env())))
