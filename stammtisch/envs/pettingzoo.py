"""A PettingZoo AEC environment for every Tippen and Tapp rule set (``pip install stammtisch[rl]``).

>>> from stammtisch.envs.pettingzoo import env
>>> e = env(ruleset="tippen/grupp-1975", players=4)
>>> e.reset(seed=1)
>>> for agent in e.agent_iter():
...     obs, reward, termination, truncation, info = e.last()
...     action = None if termination or truncation else e.action_space(agent).sample(obs["action_mask"])
...     e.step(action)

Agents are the seats (``"seat_0"`` …, in the direction of play). ``observe(agent)`` gives
``{"observation": float32 vector, "action_mask": int8 vector}`` (``stammtisch.envs.observation``
and ``stammtisch.envs.actions`` document both). Rewards are the ledger's net change of each seat
at the end of each deal, divided by the rule set's value unit with ``normalize_rewards=True``.
One episode is one deal; ``session_deals=N`` plays N deals with the pot carried over. Any other
keyword is a rule option (``knocking=True``), refused with the CLI's ``RuleError`` text when
unknown. An illegal or masked action raises ``ValueError`` naming it, the state unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]
from pettingzoo.utils import wrappers  # type: ignore[import-untyped]
from pettingzoo.utils.wrappers.order_enforcing import (  # type: ignore[import-untyped]
    AECOrderEnforcingIterable,
    AECOrderEnforcingIterator,
)

from .core import DealTable, agent_name


class raw_env(AECEnv):  # type: ignore[misc]  # noqa: N801 (PettingZoo's naming)
    metadata: dict[str, Any] = {"name": "stammtisch_v0", "render_modes": ["ansi"], "is_parallelizable": False}
    _skip_agent_selection: str | None  # PettingZoo's, set by the dead steps only

    def __init__(self, ruleset: str = "tippen/grupp-1975", players: int | None = None,
                 render_mode: str | None = None, **options: Any) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be 'ansi' or None, not {render_mode!r}")
        self.table = DealTable(ruleset, players, **options)
        self.render_mode = render_mode
        n = self.table.num_players
        self.possible_agents = [agent_name(s) for s in range(n)]
        self.seat_of = {a: s for s, a in enumerate(self.possible_agents)}
        enc = self.table.encoder
        A = self.table.actions.num_actions
        self._observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(0.0, enc.high, (enc.size,), np.float32),
                "action_mask": spaces.Box(0, 1, (A,), np.int8),
            }) for a in self.possible_agents}
        self._action_spaces = {a: spaces.Discrete(A) for a in self.possible_agents}
        self._rng: np.random.Generator | None = None
        # no self.agents before reset(): PettingZoo's order enforcing expects AttributeError there

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        self.table.reset(self._rng)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._rewards_given = False  # whether self.rewards holds a deal's rewards (else all 0)
        self.agent_selection = agent_name(self.table.current_seat())

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        observation, mask = self.table.observe(self.seat_of[agent])
        return {"observation": observation, "action_mask": mask}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last``, without a call through ``observe`` (the per-step hot path)."""
        agent = self.agent_selection
        observation = None
        if observe:
            seen, mask = self.table.observe(self.seat_of[agent])
            observation = {"observation": seen, "action_mask": mask}
        return (observation, self._cumulative_rewards[agent], self.terminations[agent],
                self.truncations[agent], self.infos[agent])

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to act; None is only for agents whose episode is over")
        rewards, over = self.table.step(int(action))
        self._cumulative_rewards[agent] = 0.0
        if rewards is not None:
            self.rewards = {a: rewards[self.seat_of[a]] for a in self.agents}
            self._accumulate_rewards()
        elif self._rewards_given:
            self.rewards = dict.fromkeys(self.agents, 0.0)
        self._rewards_given = rewards is not None
        if over:
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self.possible_agents[self.table.current_seat()]

    def _was_dead_step(self, action: int | None) -> None:
        """PettingZoo's ``_was_dead_step`` for this environment, where a deal ends for every
        agent at once: the agents still listed are all done, so the next one is the first of
        them (PettingZoo looks for it among all); the rest is PettingZoo's, step for step."""
        if action is not None:
            raise ValueError("when an agent is dead, the only valid action is None")
        agent = self.agent_selection
        del self.terminations[agent]
        del self.truncations[agent]
        del self.rewards[agent]
        del self._cumulative_rewards[agent]
        del self.infos[agent]
        agents = self.agents
        agents.remove(agent)
        if agents:
            if getattr(self, "_skip_agent_selection", None) is None:
                self._skip_agent_selection = agent
            self.agent_selection = agents[0]
        else:
            skipped = getattr(self, "_skip_agent_selection", None)
            if skipped is not None:
                self.agent_selection = skipped
            self._skip_agent_selection = None
        rewards = self.rewards
        for a in rewards:
            rewards[a] = 0

    def render(self) -> str | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() without render_mode: pass render_mode='ansi' to env()")
            return None
        return self.table.render()

    def close(self) -> None:
        pass


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):  # type: ignore[misc]
    """PettingZoo's order-enforcing wrapper with the per-step paths made direct.

    The base wrapper reaches the episode's attributes through ``__getattr__`` (two Python-level
    lookups each, several times per step) and ``last``/``step`` through two layers; the checks
    are the same: nothing of the episode is readable before reset(), and calls out of order get
    PettingZoo's own errors.
    """

    # raw_env has these only after reset(): reading them earlier raises AttributeError as well
    rewards = property(lambda self: self.env.rewards)
    terminations = property(lambda self: self.env.terminations)
    truncations = property(lambda self: self.env.truncations)
    infos = property(lambda self: self.env.infos)
    agent_selection = property(lambda self: self.env.agent_selection)
    agents = property(lambda self: self.env.agents)
    _cumulative_rewards = property(lambda self: self.env._cumulative_rewards)
    possible_agents = property(lambda self: self.env.possible_agents)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        # Once reset, this wrapper's last() is the environment's (nothing more is checked there):
        # bound here, it is called without a layer in between.
        self.last = self.env.last  # type: ignore[method-assign]

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            return super().last(observe)  # type: ignore[no-any-return]  # PettingZoo's own error
        return self.env.last(observe)  # type: ignore[no-any-return]

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        if not self._has_reset:
            return super().agent_iter(max_iter)  # PettingZoo's own error
        return _AgentIterable(self, max_iter)

    def step(self, action: int | None) -> None:
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)  # PettingZoo's own error or warning


class _AgentIterable(AECOrderEnforcingIterable):  # type: ignore[misc]
    def __iter__(self) -> _AgentIterator:
        return _AgentIterator(self.env, self.max_iter)


class _AgentIterator(AECOrderEnforcingIterator):  # type: ignore[misc]
    """PettingZoo's iterator over the agents to act, its checks the same, read from the
    environment directly instead of through the wrapper's and the base iterator's layers."""

    def __next__(self) -> str:
        wrapper = self.env
        raw = wrapper.env
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return raw.agent_selection  # type: ignore[no-any-return]


def env(ruleset: str = "tippen/grupp-1975", players: int | None = None, render_mode: str | None = None,
        **options: Any) -> Any:
    """The AEC environment with PettingZoo's order-enforcing wrapper (see the module docstring)."""
    return _OrderEnforcing(raw_env(ruleset, players, render_mode, **options))
