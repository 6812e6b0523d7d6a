"""The ``ismcts`` bot: single-observer information-set Monte Carlo tree search.

After Cowling, Powley and Whitehouse (2012), "Information Set Monte Carlo Tree Search": one tree
for the deciding seat (the observer), whose nodes are sequences of actions. Every iteration
draws one world consistent with what the observer knows (``state.resample(seat, rng)``; the bot
never reads the real hidden cards) and walks down the tree restricted to the actions legal in
that world: UCB1 with *availability* counts (an action's parent count is how often the action
was available, not how often the parent was visited), expands one untried action, plays the
rest of the deal out with the heuristic bot for every seat (or at random), and credits each node
with the net of the seat that chose its action. The action visited most at the root is played
(ties: the heuristic's choice).

Budget: ``iterations`` per move, cut short by ``time_per_move`` seconds if given (with
iterations alone, decisions repeat exactly for a seed). Works in every rule set: it needs only
the engine's state API.

Not on the ladder of levels (``stammtisch.bots.LEVELS``): at a budget that keeps a decision
under a second it loses to the heuristic in Tapp and does not beat it in Tippen
(``python bench/strength.py --pair ismcts:heuristic``; figures in docs/performance.md). A few
dozen heuristic play-outs per move spread over a tree of many branches give each action too
few visits to beat the rollout policy itself; ``pimc``, which compares every option on the
same sampled worlds and solves the ending exactly, is the expert level. It stays available by
name for research.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from .pimc import heuristic_for

#: iterations per move by default: a median decision stays a fraction of a second (bench/strength.py
#: reports the time per decision)
DEFAULT_ITERATIONS = 64
#: UCB1 exploration constant, on nets scaled to [-1, 1] by the largest net seen in the search
UCT_C = 0.7
ROLLOUTS = ("heuristic", "random")


class _Node:
    """An action's node: visits, how often it was available, and the chooser's summed nets."""

    __slots__ = ("children", "visits", "available", "total")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.available = 0
        self.total = 0.0


class IsmctsBot:
    """``act(state, seat)``: the root action visited most by the search."""

    name = "ismcts"

    def __init__(self, family: str, rng: random.Random | None = None, iterations: int = DEFAULT_ITERATIONS,
                 time_per_move: float | None = None, rollout: str = "heuristic", uct_c: float = UCT_C) -> None:
        if iterations < 1:
            raise ValueError("ismcts needs at least one iteration per move")
        if time_per_move is not None and time_per_move <= 0:
            raise ValueError("ismcts's time per move must be positive")
        if rollout not in ROLLOUTS:
            raise ValueError(f"unknown rollout {rollout!r}; choose one of {', '.join(ROLLOUTS)}")
        self.family = family
        self.rng = rng or random.Random()
        self.iterations = iterations
        self.time_per_move = time_per_move
        self.rollout = rollout
        self.uct_c = uct_c

    def act(self, state: Any, seat: int) -> int:
        legal: list[int] = state.legal_actions()
        rng = random.Random(self.rng.getrandbits(64))  # one draw per decision, forced or not
        if len(legal) == 1:
            return legal[0]
        helper = heuristic_for(self.family, random.Random(rng.getrandbits(64)))
        guide = helper.act(state, seat)
        deadline = None if self.time_per_move is None else time.perf_counter() + self.time_per_move
        root = _Node()
        scale = 1.0
        for _ in range(self.iterations):
            world = state.resample(seat, rng)
            path: list[tuple[_Node, int]] = []
            node = root
            while not world.is_terminal():
                actions = world.legal_actions()
                player = world.current_player()
                untried = []
                for a in actions:
                    child = node.children.get(a)
                    if child is None:
                        untried.append(a)
                    else:
                        child.available += 1
                if untried:
                    a = untried[rng.randrange(len(untried))]
                    child = node.children[a] = _Node()
                    child.available = 1
                    world.apply(a)
                    path.append((child, player))
                    break
                a = self._select(node, actions, scale)
                node = node.children[a]
                world.apply(a)
                path.append((node, player))
            while not world.is_terminal():
                if self.rollout == "heuristic":
                    world.apply(helper.act(world, world.current_player()))
                else:
                    world.apply(rng.choice(world.legal_actions()))
            nets = world.returns()
            scale = max(scale, *(abs(v) for v in nets))
            for child, player in path:
                child.visits += 1
                child.total += nets[player]
            if deadline is not None and time.perf_counter() >= deadline:
                break
        most = max(c.visits for c in root.children.values())
        best = [a for a in legal if a in root.children and root.children[a].visits == most]
        return guide if guide in best else best[0]

    def _select(self, node: _Node, actions: list[int], scale: float) -> int:
        """UCB1 over the available children (availability counts as the parent's count)."""
        best_action, best_value = actions[0], -math.inf
        for a in actions:
            child = node.children[a]
            value = child.total / (child.visits * scale) + self.uct_c * math.sqrt(
                math.log(child.available) / child.visits)
            if value > best_value:
                best_action, best_value = a, value
        return best_action
