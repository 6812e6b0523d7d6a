"""The single-agent Gymnasium environment: Gymnasium's env checker, unmodified, for every
preset, bots as opponents, the action mask in ``info``, illegal actions (ending the episode with
a penalty by default, raising on request) and refusals of bad input.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils import env_checker
from gymnasium.utils.env_checker import check_env

from stammtisch.envs.gymnasium import ENV_ID, StammtischEnv
from stammtisch.rules import RuleError, ruleset_ids


@pytest.mark.parametrize("opponents", ["random", "heuristic"])
@pytest.mark.parametrize("rid", ruleset_ids())
def test_gymnasium_env_checker_passes(rid: str, opponents: str) -> None:
    env = gymnasium.make(ENV_ID, ruleset=rid, opponents=opponents, render_mode="ansi")
    check_env(env.unwrapped)


def _past_the_first_decision(env: StammtischEnv) -> None:
    """Play on until the learner's legal actions differ from those of a fresh deal."""
    env.reset(seed=1)
    while True:
        obs, _, terminated, _, info = env.step(env.action_space.sample())
        if terminated:
            env.reset()
        elif info["action_mask"][64:66].sum() == 0:  # not tap/pass
            return


def test_the_checkers_stale_action_ends_the_episode_by_default_and_raises_on_request() -> None:
    """``check_step_determinism`` draws its action *before* a seeded reset and steps it in the
    new deal, where it is usually illegal: the default answer (the episode ends, the same way
    both times) passes; raising, on request, fails that check for exactly that reason."""
    env = StammtischEnv("tippen/grupp-1975")
    _past_the_first_decision(env)
    env_checker.check_step_determinism(env)
    strict = StammtischEnv("tippen/grupp-1975", illegal_action="raise")
    _past_the_first_decision(strict)
    with pytest.raises(ValueError, match="is not legal now"):
        env_checker.check_step_determinism(strict)


@pytest.mark.parametrize("action", ["masked", -1, 10**9])
def test_an_illegal_action_ends_the_episode_with_the_penalty(action) -> None:
    env = StammtischEnv("tippen/grupp-1975", illegal_reward=-2.5)
    obs, info = env.reset(seed=2)
    if action == "masked":
        action = int(np.flatnonzero(info["action_mask"] == 0)[0])
    log = env.table.state.view(None)["log"]
    obs2, reward, terminated, truncated, info2 = env.step(action)
    assert (reward, terminated, truncated) == (-2.5, True, False)
    assert info2["illegal_action"].startswith(f"action {action} ")  # the refusal's own words
    assert not info2["action_mask"].any() and info2["deal"] == info["deal"]
    assert env.table.state.view(None)["log"] == log  # the deal as it was, nothing booked
    assert env.table.ledger.player_balances() == [0] * env.table.num_players
    assert obs2.shape == obs.shape and env.observation_space.contains(obs2)
    with pytest.raises(ValueError, match="the episode is over; call reset"):
        env.step(int(np.flatnonzero(info["action_mask"])[0]))
    obs3, info3 = env.reset(seed=2)  # a new episode as from any other end
    np.testing.assert_array_equal(obs3, obs)
    np.testing.assert_array_equal(info3["action_mask"], info["action_mask"])
    assert "illegal_action" not in env.step(int(np.flatnonzero(info3["action_mask"])[0]))[4]


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


def test_with_illegal_action_raise_a_masked_action_is_refused_by_name_and_changes_nothing() -> None:
    env = StammtischEnv("tippen/grupp-1975", illegal_action="raise")
    obs, info = env.reset(seed=2)
    masked = int(np.flatnonzero(info["action_mask"] == 0)[0])
    log = env.table.state.view(None)["log"]
    with pytest.raises(ValueError, match=rf"action {masked} \("):
        env.step(masked)
    assert env.table.state.view(None)["log"] == log
    np.testing.assert_array_equal(env.table.observation(0), obs)
    legal = int(np.flatnonzero(info["action_mask"])[0])
    assert "illegal_action" not in env.step(legal)[4]  # the episode goes on


def test_bad_names_are_refused() -> None:
    with pytest.raises(RuleError, match="unknown rule set 'tapp/moden'"):
        StammtischEnv("tapp/moden")
    with pytest.raises(ValueError, match="unknown bot 'genius'"):
        StammtischEnv("tapp/modern", opponents="genius")
    with pytest.raises(ValueError, match="seat must be a seat from 0 to 2"):
        StammtischEnv("tapp/modern", seat=3)
    with pytest.raises(ValueError, match="illegal_action must be 'end' or 'raise'"):
        StammtischEnv("tapp/modern", illegal_action="ignore")
