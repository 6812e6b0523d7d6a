"""A single-agent Gymnasium environment: one seat learns, the others are played by named bots.

>>> from stammtisch.envs.gymnasium import StammtischEnv
>>> env = StammtischEnv("tippen/grupp-1975", players=4, seat=0, opponents="heuristic")
>>> obs, info = env.reset(seed=1)
>>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample(info["action_mask"]))

``opponents`` is a bot name for every other seat, or a list of names per other seat (``random``,
``heuristic``, any name ``stammtisch.bots.make_bot`` knows). The observation is the seat's
encoded view (``stammtisch.envs.observation``); ``info["action_mask"]`` marks the legal dense
actions (``stammtisch.envs.actions``). The episode is ``terminated`` at the end of the deal (of
the last deal with ``session_deals=N``); the reward is the seat's ledger change at each deal's
end. ``action_space.sample()`` without a mask draws a legal action of the current state.

An action that is illegal now (masked, or outside the action range) is answered as
``illegal_action`` says. ``"end"`` (the default, as PettingZoo's classic environments do): the
episode ends there, ``terminated`` with the reward ``illegal_reward`` (default -1.0), the deal
left as it was, no action legal and ``info["illegal_action"]`` naming the action and the legal
ones; Gymnasium's ``check_env`` passes unmodified. ``"raise"``: ``ValueError`` with that text,
the state unchanged and the episode going on.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces

from .core import DealTable


class LegalDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask draws among the legal actions now.

    With an explicit ``mask`` it behaves exactly as ``Discrete``; with no legal action (the deal
    is over) it draws from the whole range.
    """

    def __init__(self, n: int, legal_mask: Callable[[], np.ndarray | None], seed: int | None = None) -> None:
        super().__init__(n, seed=seed)
        self._legal_mask = legal_mask

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        if mask is None and probability is None:
            legal = self._legal_mask()
            if legal is not None and legal.any():
                mask = legal
        return super().sample(mask=mask, probability=probability)


class StammtischEnv(gymnasium.Env[np.ndarray, np.int64]):
    """One seat of a table learns; bots play the others (see the module's text).

    ``illegal_action``: ``"end"`` (default) ends the episode with the reward ``illegal_reward``
    when the learner's action is illegal now; ``"raise"`` raises ``ValueError`` naming it and
    leaves the state as it was. Further keyword arguments are rule options (and
    ``session_deals``, ``normalize_rewards``) as ``DealTable`` takes them.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, ruleset: str = "tippen/grupp-1975", players: int | None = None, seat: int = 0,
                 opponents: str | Sequence[str] = "random", render_mode: str | None = None,
                 illegal_action: Literal["end", "raise"] = "end", illegal_reward: float = -1.0,
                 **options: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be 'ansi' or None, not {render_mode!r}")
        if illegal_action not in ("end", "raise"):
            raise ValueError(f"illegal_action must be 'end' or 'raise', not {illegal_action!r}")
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.table = DealTable(ruleset, players, **options)
        n = self.table.num_players
        if not 0 <= seat < n:
            raise ValueError(f"seat must be a seat from 0 to {n - 1}, not {seat}")
        self.seat = seat
        names = [opponents] * (n - 1) if isinstance(opponents, str) else list(opponents)
        if len(names) != n - 1:
            raise ValueError(f"opponents names {len(names)} bots; the other seats are {n - 1}")
        from ..bots import make_bot

        family = self.table.rules.family
        make_bot(names[0], family)  # an unknown name fails here, with the bots' own message
        self.opponent_names = names
        self._make_bot = make_bot
        self.render_mode = render_mode
        enc = self.table.encoder
        self.observation_space = spaces.Box(0.0, enc.high, (enc.size,), np.float32)
        self.action_space = LegalDiscrete(self.table.actions.num_actions, self._current_mask)
        self._bots: dict[int, Any] = {}
        self._started = False
        self._ended_illegally = False

    def _current_mask(self) -> np.ndarray | None:
        if not self._started or self._ended_illegally:
            return None
        return self.table.action_mask(self.seat)

    def _observe(self) -> tuple[np.ndarray, dict[str, Any]]:
        observation, mask = self.table.observe(self.seat)
        return observation, {"action_mask": mask, "deal": self.table.deals_played}

    def _play_others(self) -> tuple[float, bool]:
        """Bots act until it is the learner's turn or the session is over."""
        reward = 0.0
        while self.table.current_seat() != self.seat:
            seat = self.table.current_seat()
            rewards, over = self.table.step_engine(self._bots[seat].act(self.table.state, seat))
            if rewards is not None:
                reward += rewards[self.seat]
            if over:
                return reward, True
        return reward, False

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        bot_rng = random.Random(int(self.np_random.integers(2**63)))
        others = [s for s in range(self.table.num_players) if s != self.seat]
        family = self.table.rules.family
        self._bots = {s: self._make_bot(name, family, random.Random(bot_rng.random()))
                      for s, name in zip(others, self.opponent_names, strict=True)}
        # A session in which the learner never acts has nothing to learn: deal again.
        while True:
            self.table.reset(self.np_random)
            _, over = self._play_others()
            if not over:
                break
        self._started = True
        self._ended_illegally = False
        return self._observe()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._ended_illegally or self.table.current_seat() != self.seat:
            raise ValueError(f"action {action}: the episode is over; call reset()")
        table, dense = self.table, int(action)
        try:
            engine = table.actions.to_engine(table.legal(), dense)
        except ValueError as refusal:
            if self.illegal_action == "raise":
                raise
            self._ended_illegally = True
            observation = table.encoder.encode_state(table.state, self.seat, ())
            info = {"action_mask": np.zeros(table.actions.num_actions, dtype=np.int8),
                    "deal": table.deals_played, "illegal_action": str(refusal)}
            return observation, self.illegal_reward, True, False, info
        rewards, over = table.step_engine(engine)
        reward = rewards[self.seat] if rewards is not None else 0.0
        if not over:
            more, over = self._play_others()
            reward += more
        obs, info = self._observe()
        return obs, float(reward), over, False, info

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() without render_mode: pass render_mode='ansi'")
            return None
        return self.table.render(self.seat)


#: ``gymnasium.make("stammtisch/Stammtisch-v0", ruleset="tapp/modern", opponents="heuristic")``
ENV_ID = "stammtisch/Stammtisch-v0"
if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point=StammtischEnv, disable_env_checker=True)
