"""Random play-phase states for tests and benchmarks, built through the engines' public API.

A shuffled deck goes to ``new_deal``; the bidding is then driven with legal actions (chosen by
their action strings) until the play phase of the wanted contract begins; optionally a number
of random legal cards are played after that, to reach an ending.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

from ..games import TableState, new_game
from ..rules import ruleset

#: Modern Tapp contracts a benchmark or test may ask for (``contract:NAME``), and Ramsch.
TAPP_CONTRACTS = ("frage", "solo:C", "herzsolo", "bettel", "rufer:C", "herzrufer", "bettel-ouvert",
                  "durch:S", "herzdurch", "ramsch")

_TIPPEN_PREFERRED = ("tap", "deal", "stay", "turn", "no-rob", "exchange:-")


@lru_cache(maxsize=32)
def _game(ruleset_id: str, players: int) -> Any:
    return new_game(ruleset(ruleset_id, {"players": players}))


def _names(state: Any) -> dict[str, int]:
    return {state.action_to_string(a): a for a in state.legal_actions()}


def _in_play(names: dict[str, int]) -> bool:
    return bool(names) and all(name.startswith("play:") for name in names)


def tapp_state(rng: random.Random, contract: str, players: int = 3, ruleset_id: str = "tapp/modern") -> Any:
    """A ``tapp/modern`` state at the first lead of ``contract`` (``ramsch``: everybody weg)."""
    game = _game(ruleset_id, players)
    deck = list(range(game.pack.size))
    rng.shuffle(deck)
    state = game.new_deal(TableState(dealer=rng.randrange(players)), deck)
    declared = False
    while not _in_play(names := _names(state)):
        if state.is_terminal():
            raise AssertionError("the deal ended before play")
        if "play" in names and "weg" in names:
            want = "weg" if contract == "ramsch" or declared else "play"
            declared = declared or want == "play"
            state.apply(names[want])
        elif f"contract:{contract}" in names:
            state.apply(names[f"contract:{contract}"])
        else:  # call, give, discard: any legal choice
            state.apply(rng.choice(state.legal_actions()))
    return state


def tippen_state(rng: random.Random, ruleset_id: str = "tippen/grupp-1975", players: int = 4) -> Any:
    """A Tippen state at the first lead, every player tapping where he may choose."""
    game = _game(ruleset_id, players)
    while True:
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        state = game.new_deal(TableState(dealer=rng.randrange(players)), deck)
        while not state.is_terminal() and not _in_play(names := _names(state)):
            for word in _TIPPEN_PREFERRED:
                if word in names:
                    state.apply(names[word])
                    break
            else:
                state.apply(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            return state


def play_randomly(state: Any, rng: random.Random, tricks: int) -> Any:
    """Play ``tricks`` complete tricks (or until the deal ends) with random legal cards."""
    done = 0
    while done < tricks and not state.is_terminal():
        before = sum(state.observation(None).tricks_won)
        state.apply(rng.choice(state.legal_actions()))
        if state.is_terminal() or sum(state.observation(None).tricks_won) > before:
            done += 1
    return state
