"""Players that are programs. A bot sees only ``view(seat)`` and the legal actions."""

from __future__ import annotations

import random
from typing import Any, Protocol


def _optional_bots() -> tuple[str, ...]:
    """Bots from optional extras, listed only where they can play (nothing heavy is imported)."""
    from ..envs.openspiel_bot import unavailable_reason

    return ("openspiel-ismcts",) if all(unavailable_reason(f) is None for f in ("tippen", "tapp")) else ()


#: Bots that search (``pimc``, ``ismcts``) take a per-move budget (``make_bot``'s ``samples``,
#: ``iterations``, ``time_per_move``); the others decide at once.
SEARCH_BOTS = ("pimc", "ismcts")

BOT_NAMES = ("random", "heuristic", *SEARCH_BOTS, *_optional_bots())

#: What a bot is shown: ``state.view(seat)``, JSON-able data (the engines' view keys).
View = dict[str, Any]


class Seen(Protocol):
    """The part of a deal in progress a bot may ask (every engine's state has it)."""

    def legal_actions(self) -> list[int]: ...

    def action_to_string(self, action: int) -> str: ...

    def view(self, seat: int | None) -> View: ...


class Policy(Protocol):
    """Decides from the view alone: returns one of the ``legal`` action strings."""

    def choose(self, view: View, legal: list[str]) -> str: ...


class Bot(Policy, Protocol):
    """A policy that can also act on a state: returns the action id for ``seat``."""

    def act(self, state: Seen, seat: int) -> int: ...


class RandomBot:
    """Chooses uniformly among the legal actions."""

    def __init__(self, rng: random.Random | None = None):
        self.rng = rng or random.Random()

    def act(self, state: Seen, seat: int) -> int:
        return self.rng.choice(state.legal_actions())

    def choose(self, view: View, legal: list[str]) -> str:
        return self.rng.choice(legal)


class ViewBot:
    """Adapter: a bot whose ``choose(view, legal_strings)`` decides from the view alone."""

    def __init__(self, policy: Policy):
        self.policy = policy

    def act(self, state: Seen, seat: int) -> int:
        legal = state.legal_actions()
        strings = [state.action_to_string(a) for a in legal]
        choice = self.policy.choose(state.view(seat), strings)
        return legal[strings.index(choice)]

    def choose(self, view: View, legal: list[str]) -> str:
        return self.policy.choose(view, legal)


def make_bot(name: str, family: str, rng: random.Random | None = None, *, samples: int | None = None,
             time_per_move: float | None = None) -> Bot:
    """A bot by name for a game family ("tippen" or "tapp"). The search bots take a budget per
    move: ``samples`` (worlds for ``pimc``, iterations for ``ismcts``) and/or ``time_per_move``
    (seconds); the rng is their seed (with a sample budget alone their decisions repeat)."""
    rng = rng or random.Random()
    if name == "pimc":
        from .pimc import PimcBot

        return PimcBot(family, rng, samples, time_per_move)
    if name == "ismcts":
        from .ismcts import DEFAULT_ITERATIONS, IsmctsBot

        return IsmctsBot(family, rng, DEFAULT_ITERATIONS if samples is None else samples, time_per_move)
    if name == "random":
        return RandomBot(rng)
    if name == "heuristic":
        if family == "tippen":
            from .tippen import TippenHeuristic

            return ViewBot(TippenHeuristic(rng))
        from .tapp import TappHeuristic

        return ViewBot(TappHeuristic(rng))
    if name == "openspiel-ismcts":
        from ..envs.openspiel_bot import OpenSpielISMCTS, unavailable_reason

        reason = unavailable_reason(family)
        if reason is not None:
            raise ValueError(reason)
        return OpenSpielISMCTS(rng)
    raise ValueError(f"unknown bot {name!r}; bots are {', '.join(BOT_NAMES)}")
