"""Engine speed: complete random deals per second, per rule set, printed as JSON lines.

For each Tippen rule set (4 players) and each Tapp rule set: new deal from a random deck,
every action chosen uniformly from the public ``legal_actions()`` and applied with
``apply()``, until the deal is over. The pot carries between deals as at a real table. Rates
are per second of the measuring process's CPU time.

Each rule set is measured under every build side by side (``bench/versions.py``): this checkout
as installed (``ours``: compiled where it was built so), its plain Python sources
(``ours_python``), and with ``--other ROOT`` another checkout (``other``, e.g. the main branch:
``git worktree add ../base main``), in interleaved slices; ``ratio`` is ours ÷ other. Then the
Tapp-versus-OpenSpiel-Skat figure (bench/engine_tapp.py), measured in the same run.

    python bench/engine.py [--seconds 3] [--rounds 3] [--other ../base] [--only tapp/modern]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from versions import builds, native  # noqa: E402

HERE = Path(__file__).resolve()


def random_deals_per_second(ruleset_id: str, seconds: float, seed: int = 1) -> float:
    """Random deals of a rule set (Tippen with 4 players) per CPU second, for ``seconds``."""
    from stammtisch.games import TableState, new_game
    from stammtisch.rules import ruleset

    rules = ruleset(ruleset_id, ["players=4"] if ruleset_id.startswith("tippen/") else [])
    game = new_game(rules)
    rng = random.Random(seed)
    choice = rng.choice
    deck = list(range(game.pack.size))
    table = TableState()
    n = rules.players
    deals = 0
    clock = time.process_time
    start = clock()
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
        if deals % 50 == 0 and clock() >= deadline:
            break
    return deals / (clock() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="measuring time per figure and build")
    parser.add_argument("--rounds", type=int, default=3, help="slices per figure and build, interleaved")
    parser.add_argument("--other", type=Path, default=None, help="root of another checkout to compare with")
    parser.add_argument("--only", action="append", help="one rule set id (repeatable)")
    args = parser.parse_args()
    from stammtisch.rules import PRESETS

    runs = builds(args.other)
    for rid in args.only or list(PRESETS):
        rates: dict[str, list[float]] = {b.name: [] for b in runs}
        for r in range(args.rounds):
            for build in runs:
                rates[build.name].append(build.call(HERE, "random_deals_per_second", rid,
                                                    args.seconds / args.rounds, r + 1))
        mean = {name: sum(v) / len(v) for name, v in rates.items()}
        line = {"figure": "random_deals_per_cpu_s", "ruleset": rid,
                "players": 4 if rid.startswith("tippen/") else 3, "ours": round(mean["this"]),
                "ours_compiled": native(), "ours_python": round(mean["python"])}
        if "other" in mean:
            line.update(other=round(mean["other"]), ratio=round(mean["this"] / mean["other"], 2))
        print(json.dumps(line), flush=True)
    from engine_tapp import measure

    print(json.dumps(measure(args.seconds, args.other)), flush=True)


if __name__ == "__main__":
    main()
