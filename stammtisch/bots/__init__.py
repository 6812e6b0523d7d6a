"""Players that are programs. A bot sees only its seat's ``observation(seat)`` and the legal actions."""

from __future__ import annotations

import importlib
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

#: Bots of optional extras, by the module that makes them, imported by name when asked for:
#: OpenSpiel's ISMCTS plays through the RL adapters of ``stammtisch.envs``, which seat bots of
#: this package as opponents, so a static import either way would be a circle. Each module has
#: ``unavailable_reason(family)`` (nothing heavy imported) and ``make_bot(rng)``.
OPTIONAL_BOT_MODULES = {"openspiel-ismcts": "stammtisch.envs.openspiel_bot"}


def _optional_module(name: str) -> Any:
    return importlib.import_module(OPTIONAL_BOT_MODULES[name])


def _optional_bots() -> tuple[str, ...]:
    """Bots from optional extras, listed only where they can play (nothing heavy is imported)."""
    return tuple(name for name in OPTIONAL_BOT_MODULES
                 if all(_optional_module(name).unavailable_reason(f) is None for f in ("tippen", "tapp")))


#: Bots that search (``pimc``) take a per-move budget (``make_bot``'s ``samples``,
#: ``time_per_move``); the others decide at once.
SEARCH_BOTS = ("pimc",)

BOT_NAMES = ("random", "heuristic", *SEARCH_BOTS, *_optional_bots())


@dataclass(frozen=True)
class Level:
    """An opponent in words: an algorithm (one of ``BOT_NAMES``) with its budget.

    ``samples`` per game family (None: the bot's own default), ``blunders`` the share of
    decisions (with more than one legal action) made at random instead of by the bot,
    ``inference``: the search weighs its worlds by the other seats' actions (``pimc`` only,
    ``stammtisch.bots.inference``); ``equilibrium``: Tippen's tap or pass and exchange by the
    equilibrium (``stammtisch.bots.equilibrium``) where it has an opinion (``pimc`` only).
    """

    bot: str
    samples: Mapping[str, int] | None = None
    time_per_move: float | None = None
    blunders: float = 0.0
    inference: bool = False
    equilibrium: bool = False


#: The levels a player chooses from, weakest first; each beats the one below it in both games
#: (bench/strength.py plays the ladder; docs/performance.md has the figures). Their names and
#: one-line descriptions are the catalogue's ``bot.level.<name>`` and ``bot.level.<name>.about``.
LEVELS: dict[str, Level] = {
    "beginner": Level("heuristic", blunders=0.3),
    "club": Level("heuristic"),
    "expert": Level("pimc"),  # pimc's default worlds per decision (pimc.DEFAULT_SAMPLES)
    # inference, and the time the compiled engines saved spent on more worlds. Its Tippen tap or
    # pass and exchange are searched too, not read from the equilibrium: played on from the same
    # deals, the search's choices paid more where the two differed (docs/performance.md)
    "master": Level("pimc", samples={"tapp": 48, "tippen": 128}, inference=True),
}
LEVEL_NAMES = tuple(LEVELS)

#: Every name ``make_bot`` accepts: the levels first, then the algorithms.
PLAYER_NAMES = (*LEVEL_NAMES, *BOT_NAMES)


def algorithm_of(name: str) -> str:
    """The algorithm behind a level or bot name (``expert`` -> ``pimc``); other names as they are."""
    level = LEVELS.get(name)
    return name if level is None else level.bot

class Seen(Protocol):
    """The part of a deal in progress a bot may ask (every engine's state has it): what its seat
    knows (``observation``: ints and card masks, the facts of the seat's view) and the legal
    actions."""

    def legal_actions(self) -> list[int]: ...

    def action_to_string(self, action: int) -> str: ...

    def observation(self, seat: int | None) -> Any: ...


class Bot(Protocol):
    """A player: returns the action id for ``seat`` (on turn) in ``state``."""

    def act(self, state: Seen, seat: int) -> int: ...


class RandomBot:
    """Chooses uniformly among the legal actions."""

    def __init__(self, rng: random.Random | None = None):
        self.rng = rng or random.Random()

    def act(self, state: Seen, seat: int) -> int:
        return self.rng.choice(state.legal_actions())


class BlunderBot:
    """A bot that now and then errs: a share ``rate`` of its decisions with more than one legal
    action is made at random (a beginner's level: it plays sensibly, but not always)."""

    def __init__(self, inner: Bot, rate: float, rng: random.Random | None = None):
        if not 0.0 <= rate <= 1.0:
            raise ValueError("the blunder rate lies between 0 and 1")
        self.inner = inner
        self.rate = rate
        self.rng = rng or random.Random()

    def act(self, state: Seen, seat: int) -> int:
        legal = state.legal_actions()
        if len(legal) > 1 and self.rng.random() < self.rate:
            return self.rng.choice(legal)
        return self.inner.act(state, seat)


def make_bot(name: str, family: str, rng: random.Random | None = None, *, samples: int | None = None,
             time_per_move: float | None = None, inference: bool = False, equilibrium: bool = False) -> Bot:
    """A bot by level or algorithm name (``PLAYER_NAMES``) for a game family ("tippen" or
    "tapp"). The search bot takes a budget per move: ``samples`` (worlds for ``pimc``)
    and/or ``time_per_move`` (seconds); a level brings its own,
    which these arguments override. The rng is the bot's seed (with a sample budget alone its
    decisions repeat). ``inference`` and ``equilibrium`` turn on ``pimc``'s inference and its
    Tippen equilibrium (a level brings its own)."""
    rng = rng or random.Random()
    level = LEVELS.get(name)
    if level is not None:
        if samples is None and level.samples is not None:
            samples = level.samples.get(family)
        inner = make_bot(level.bot, family, random.Random(rng.getrandbits(64)), samples=samples,
                         time_per_move=level.time_per_move if time_per_move is None else time_per_move,
                         inference=level.inference or inference,
                         equilibrium=level.equilibrium or equilibrium)
        return BlunderBot(inner, level.blunders, random.Random(rng.getrandbits(64))) if level.blunders else inner
    if name == "pimc":
        from .pimc import PimcBot

        return PimcBot(family, rng, samples, time_per_move, inference=inference, equilibrium=equilibrium)
    if name == "random":
        return RandomBot(rng)
    if name == "heuristic":
        if family == "tippen":
            from .tippen import TippenHeuristic

            return TippenHeuristic(rng)
        from .tapp import TappHeuristic

        return TappHeuristic(rng)
    if name in OPTIONAL_BOT_MODULES:
        module = _optional_module(name)
        reason = module.unavailable_reason(family)
        if reason is not None:
            raise ValueError(reason)
        bot: Bot = module.make_bot(rng)
        return bot
    raise ValueError(f"unknown bot {name!r}; bots are {', '.join(PLAYER_NAMES)}")
