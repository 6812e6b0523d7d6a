"""Speed figure: complete random ``tapp/modern`` 3-player deals per second, against
OpenSpiel's ``skat`` random playouts per second measured in the same run (one core).

Both loops do the same kind of work: a random deal, then every decision chosen uniformly at
random from the public legal actions and applied through the public API. Called from
``bench/engine.py`` as ``measure(seconds)``; ``python bench/engine_tapp.py`` prints the JSON line.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stammtisch.games import TableState, new_game  # noqa: E402
from stammtisch.rules import ruleset  # noqa: E402


def ours_per_s(seconds: float, seed: int = 1) -> float:
    game = new_game(ruleset("tapp/modern", {"players": 3}))
    rng = random.Random(seed)
    choice, shuffle = rng.choice, rng.shuffle
    deck = list(range(game.pack.size))
    tables = [TableState(dealer=d) for d in range(game.num_players)]
    deals = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(50):
            shuffle(deck)
            state = game.new_deal(tables[deals % 3], deck)
            while not state.is_terminal():
                state.apply(choice(state.legal_actions()))
            state.returns()
            deals += 1
        now = time.perf_counter()
        if now >= deadline:
            return deals / (now - start)


def peer_per_s(seconds: float, seed: int = 1) -> float:
    import pyspiel

    game = pyspiel.load_game("skat")
    rng = random.Random(seed)
    choice = rng.choice
    playouts = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(50):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    action, _prob = choice(state.chance_outcomes())
                    state.apply_action(action)
                else:
                    state.apply_action(choice(state.legal_actions()))
            state.returns()
            playouts += 1
        now = time.perf_counter()
        if now >= deadline:
            return playouts / (now - start)


def actions_per_deal(samples: int = 300, seed: int = 3) -> tuple[float, float]:
    """Untimed context: mean actions per random Tapp deal and per skat playout (chance
    actions included). Random Modern Tapp deals are short: Bettel, Rufer and Durch end at
    the first deciding trick, so this figure belongs beside the ratio."""
    import pyspiel

    rng = random.Random(seed)
    game = new_game(ruleset("tapp/modern", {"players": 3}))
    ours = 0
    for _ in range(samples):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        state = game.new_deal(TableState(), deck)
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
            ours += 1
    skat = pyspiel.load_game("skat")
    peer = 0
    for _ in range(samples):
        state = skat.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            peer += 1
    return ours / samples, peer / samples


def measure(seconds: float = 5.0) -> dict:
    """Measure both figures in the same run, interleaved in eight slices so that drift on a
    noisy machine hits both alike. ``seconds`` is the total time spent measuring."""
    rounds = 4
    q = seconds / (2 * rounds)
    ours_runs, peer_runs = [], []
    for r in range(rounds):
        ours_runs.append(ours_per_s(q, r + 1))
        peer_runs.append(peer_per_s(q, r + 1))
    ours, peer = sum(ours_runs) / rounds, sum(peer_runs) / rounds
    apd = actions_per_deal()
    return {
        "figure": "tapp_modern_3p_random_deals_per_s",
        "ours": round(ours, 1),
        "peer": round(peer, 1),
        "peer_name": "open_spiel skat",
        "ratio": round(ours / peer, 3),
        "ours_actions_per_deal": round(apd[0], 1),
        "peer_actions_per_playout": round(apd[1], 1),
    }


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("seconds", nargs="?", type=float, default=5.0,
                        help="measuring time, split between ours and OpenSpiel (default 5)")
    print(json.dumps(measure(parser.parse_args().seconds)))
