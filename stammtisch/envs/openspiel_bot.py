"""The ``openspiel-ismcts`` bot: OpenSpiel's information-set MCTS playing through the adapter.

``stammtisch.bots.make_bot("openspiel-ismcts", family)`` builds it. Each move it wraps the deal
as an OpenSpiel state of ``stammtisch.envs.openspiel`` and runs OpenSpiel's own Python
``ISMCTSBot`` with random rollouts for ``SIMULATIONS`` simulations (the per-move budget). It
needs ``open_spiel`` (``pip install stammtisch[openspiel]``) and the engine's world sampling,
``State.resample(seat, rng)``: ``unavailable_reason`` says what is missing.
"""

from __future__ import annotations

import importlib.util
import random
from typing import Any

#: simulations per move (OpenSpiel's ``max_simulations``)
SIMULATIONS = 100
#: UCT exploration constant
UCT_C = 2.0


def unavailable_reason(family: str) -> str | None:
    """Why the bot cannot play ``family`` here, or None when it can (imports no OpenSpiel)."""
    if importlib.util.find_spec("pyspiel") is None:
        return "openspiel-ismcts needs OpenSpiel: pip install 'stammtisch[openspiel]'"
    from ..games.tapp import TappState
    from ..games.tippen import TippenState

    engine_state: type = TippenState if family == "tippen" else TappState
    if not hasattr(engine_state, "resample"):
        return (f"openspiel-ismcts needs the {family} engine's world sampling (State.resample), "
                "which this version does not have yet")
    return None


class OpenSpielISMCTS:
    """A bot (``act(state, seat)``) that asks OpenSpiel's ISMCTS for every move."""

    def __init__(self, rng: random.Random | None = None, simulations: int | None = None,
                 uct_c: float = UCT_C) -> None:
        self.rng = rng or random.Random()
        self.simulations = SIMULATIONS if simulations is None else simulations
        self.uct_c = uct_c

    def act(self, state: Any, seat: int) -> int:
        import numpy as np
        import pyspiel  # type: ignore[import-not-found]
        from open_spiel.python.algorithms import ismcts, mcts  # type: ignore[import-untyped]

        from .openspiel import wrap

        wrapped = wrap(state)
        np_rng = np.random.RandomState(self.rng.randrange(2**32))
        bot = ismcts.ISMCTSBot(wrapped.get_game(), mcts.RandomRolloutEvaluator(1, np_rng), self.uct_c,
                               self.simulations, random_state=np_rng)
        # its own resampling draws from a sampler seeded by the machine's entropy: the worlds
        # come from the bot's stream instead, so a seed gives the same moves
        sampler = pyspiel.UniformProbabilitySampler(int(np_rng.randint(2**31)), 0.0, 1.0)
        bot.set_resampler(lambda s, player: s.resample_from_infostate(player, sampler))
        dense = int(bot.step(wrapped))
        return int(wrapped.shared.actions.to_engine(state.legal_actions(), dense))


def make_bot(rng: random.Random) -> OpenSpielISMCTS:
    """The bot as ``stammtisch.bots.make_bot`` makes it (``OPTIONAL_BOT_MODULES``)."""
    return OpenSpielISMCTS(rng)
