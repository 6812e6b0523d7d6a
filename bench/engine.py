"""Engine speed: complete random deals per second, printed as JSON lines.

For each Tippen rule set (4 players) and each Tapp rule set: new deal from a random deck,
every action chosen uniformly from the public ``legal_actions()`` and applied with
``apply()``, until the deal is over. The pot carries between deals as at a real table.
Then the Tapp-versus-OpenSpiel-Skat figure (bench/engine_tapp.py), measured in the same run.

    python bench/engine.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from stammtisch.games import TableState, new_game
from stammtisch.rules import PRESETS, ruleset


def random_deals_per_second(rules, seconds: float, seed: int = 1) -> float:
    game = new_game(rules)
    rng = random.Random(seed)
    choice = rng.choice
    deck = list(range(game.pack.size))
    table = TableState()
    n = rules.players
    deals = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        rng.shuffle(deck)
        state = game.new_deal(table, deck)
        while not state.is_terminal():
            state.apply(choice(state.legal_actions()))
        result = state.result()
        pot, reserve = table.pot, table.reserve
        for t in result.transfers:
            pot += (t.target == "pot") * t.amount - (t.source == "pot") * t.amount
            reserve += (t.target == "reserve") * t.amount - (t.source == "reserve") * t.amount
        table = TableState(result.next_dealer % n, pot, reserve)
        deals += 1
        if deals % 50 == 0 and time.perf_counter() >= deadline:
            break
    return deals / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per figure")
    args = parser.parse_args()
    for rid in PRESETS:
        rules = ruleset(rid, ["players=4"] if rid.startswith("tippen/") else [])
        rate = random_deals_per_second(rules, args.seconds)
        print(json.dumps({"figure": "random_deals_per_s", "ruleset": rid, "players": rules.players,
                          "ours": round(rate, 1)}), flush=True)
    sys.path.insert(0, str(Path(__file__).parent))
    from engine_tapp import measure

    print(json.dumps(measure(args.seconds)), flush=True)


if __name__ == "__main__":
    main()
