"""The single-agent Gymnasium environment: Gymnasium's env checker for every preset, bots as
opponents, the action mask in ``info``, and refusals of bad input.

``gymnasium.utils.env_checker.check_env`` runs every check it has, with one substitution: its
``check_step_determinism`` draws an action from ``action_space.sample()`` *before* it resets the
environment with a seed, and then steps that action in the new deal. In a card game with an
action mask that action is usually illegal there, and this environment refuses illegal actions
with a ValueError (the issue's rule). ``_step_determinism_after_reset`` checks the same property
(two seeded resets and the same action give the same transition) with the action drawn after
the reset. Everything else is Gymnasium's own code.
"""

from __future__ import annotations

from copy import deepcopy

import gymnasium
import numpy as np
import pytest
from gymnasium.utils import env_checker
from gymnasium.utils.env_checker import data_equivalence

from stammtisch.envs.gymnasium import ENV_ID, StammtischEnv
from stammtisch.rules import RuleError, ruleset_ids


def _step_determinism_after_reset(env: gymnasium.Env, seed: int = 123) -> None:
    env.action_space.seed(seed)
    env.reset(seed=seed)
    action = env.action_space.sample()
    first = deepcopy(env.step(action))
    env.reset(seed=seed)
    second = env.step(action)
    for a, b in zip(first, second, strict=True):
        assert data_equivalence(a, b)


@pytest.mark.parametrize("opponents", ["random", "heuristic"])
@pytest.mark.parametrize("rid", ruleset_ids())
def test_gymnasium_env_checker_passes(rid: str, opponents: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(env_checker, "check_step_determinism", _step_determinism_after_reset)
    env = gymnasium.make(ENV_ID, ruleset=rid, opponents=opponents, render_mode="ansi")
    env_checker.check_env(env.unwrapped)


def test_gymnasiums_own_step_determinism_check_refuses_a_stale_action() -> None:
    """Why the substitution above is needed (and that illegal actions really are refused)."""
    env = StammtischEnv("tippen/grupp-1975")
    env.reset(seed=1)
    while True:  # reach a state whose legal actions differ from those of a fresh deal
        obs, _, terminated, _, info = env.step(env.action_space.sample())
        if terminated:
            env.reset()
        elif info["action_mask"][64:66].sum() == 0:  # not tap/pass
            break
    with pytest.raises(ValueError, match="is not legal now"):
        env_checker.check_step_determinism(env)


def test_episode_ends_with_the_deal_and_the_reward_is_the_seats_ledger_change() -> None:
    env = StammtischEnv("tapp/modern", seat=1, opponents=["heuristic", "random"])
    obs, info = env.reset(seed=4)
    total = 0.0
    terminated = False
    steps = 0
    while not terminated:
        assert obs.shape == env.observation_space.shape
        assert info["action_mask"].any()
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample(info["action_mask"]))
        assert not truncated
        total += reward
        steps += 1
    assert env.table.state.is_terminal()
    assert total == env.table.ledger.player_balances()[1]
    assert not info["action_mask"].any()


def test_a_masked_action_is_refused_by_name_and_changes_nothing() -> None:
    env = StammtischEnv("tippen/grupp-1975")
    obs, info = env.reset(seed=2)
    masked = int(np.flatnonzero(info["action_mask"] == 0)[0])
    log = env.table.state.view(None)["log"]
    with pytest.raises(ValueError, match=rf"action {masked} \("):
        env.step(masked)
    assert env.table.state.view(None)["log"] == log
    np.testing.assert_array_equal(env.table.observation(0), obs)


def test_bad_names_are_refused() -> None:
    with pytest.raises(RuleError, match="unknown rule set 'tapp/moden'"):
        StammtischEnv("tapp/moden")
    with pytest.raises(ValueError, match="unknown bot 'genius'"):
        StammtischEnv("tapp/modern", opponents="genius")
    with pytest.raises(ValueError, match="seat must be a seat from 0 to 2"):
        StammtischEnv("tapp/modern", seat=3)
