"""Speed figure: complete random ``tapp/modern`` 3-player deals per second, against
OpenSpiel's ``skat`` random playouts per second measured in the same run (one core), per deal
and per action (a random Modern deal is much shorter than a Skat playout).

Both loops do the same kind of work: a random deal, then every decision chosen uniformly at
random from the public legal actions and applied through the public API. Rates are per second
of the measuring process's CPU time, in interleaved slices. With ``--other ROOT`` the same loop
also runs on another checkout (``bench/versions.py``). Called from ``bench/engine.py`` as
``measure(seconds, other)``; ``python bench/engine_tapp.py`` prints the JSON line.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from versions import builds, native  # noqa: E402

HERE = Path(__file__).resolve()
clock = time.process_time


def ours_per_s(seconds: float, seed: int = 1) -> float:
    from stammtisch.games import TableState, new_game
    from stammtisch.rules import ruleset

    game = new_game(ruleset("tapp/modern", {"players": 3}))
    rng = random.Random(seed)
    choice, shuffle = rng.choice, rng.shuffle
    deck = list(range(game.pack.size))
    tables = [TableState(dealer=d) for d in range(game.num_players)]
    deals = 0
    start = clock()
    deadline = start + seconds
    while True:
        for _ in range(50):
            shuffle(deck)
            state = game.new_deal(tables[deals % 3], deck)
            while not state.is_terminal():
                state.apply(choice(state.legal_actions()))
            state.returns()
            deals += 1
        now = clock()
        if now >= deadline:
            return deals / (now - start)


def peer_per_s(seconds: float, seed: int = 1) -> float:
    import pyspiel

    game = pyspiel.load_game("skat")
    rng = random.Random(seed)
    choice = rng.choice
    playouts = 0
    start = clock()
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
        now = clock()
        if now >= deadline:
            return playouts / (now - start)


def actions_per_deal(samples: int = 300, seed: int = 3) -> tuple[float, float]:
    """Untimed context: mean actions per random Tapp deal and per skat playout (chance
    actions included). Random Modern Tapp deals are short: Bettel, Rufer and Durch end at
    the first deciding trick, so this figure belongs beside the ratio."""
    import pyspiel

    from stammtisch.games import TableState, new_game
    from stammtisch.rules import ruleset

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


def measure(seconds: float = 5.0, other: Path | None = None) -> dict:
    """Measure every figure in the same run, interleaved in slices so that drift on a noisy
    machine hits all alike. ``seconds`` is the measuring time of each."""
    rounds = 4
    q = seconds / rounds
    runs = [b for b in builds(other, pure=False)]
    rates: dict[str, list[float]] = {"peer": [], **{b.name: [] for b in runs}}
    for r in range(rounds):
        for build in runs:
            rates[build.name].append(build.call(HERE, "ours_per_s", q, r + 1))
        rates["peer"].append(peer_per_s(q, r + 1))
    mean = {name: sum(v) / len(v) for name, v in rates.items()}
    apd = actions_per_deal()
    ours, peer = mean["this"], mean["peer"]
    out = {
        "figure": "tapp_modern_3p_random_deals_per_cpu_s",
        "ours": round(ours, 1),
        "ours_compiled": native(),
        "peer": round(peer, 1),
        "peer_name": "open_spiel skat",
        "ratio": round(ours / peer, 3),
        "ours_actions_per_deal": round(apd[0], 1),
        "peer_actions_per_playout": round(apd[1], 1),
        "ours_actions_per_s": round(ours * apd[0]),
        "peer_actions_per_s": round(peer * apd[1]),
        "ratio_per_action": round(ours * apd[0] / (peer * apd[1]), 3),
    }
    if "other" in mean:
        out.update(other=round(mean["other"], 1), ratio_to_other=round(ours / mean["other"], 3),
                   other_ratio_per_action=round(mean["other"] * apd[0] / (peer * apd[1]), 3))
    return out


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("seconds", nargs="?", type=float, default=5.0,
                        help="measuring time of each figure (default 5)")
    parser.add_argument("--other", type=Path, default=None, help="root of another checkout to compare with")
    args = parser.parse_args()
    print(json.dumps(measure(args.seconds, args.other)))
