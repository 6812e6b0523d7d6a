"""Does the equilibrium's declaring pay at the table? One JSON line per Tippen rule set.

Sessions of ``--session-deals`` deals at a 4-player table (the pot carries, the dealer
rotates). Each session is played twice from the same seed, so with the same decks: once with
every seat the heuristic bot, once with seat 0 declaring (and exchanging) by the equilibrium
(``EquilibriumBot``, card play still the heuristic's). ``gain``: seat 0's mean net per deal in
the second run minus the first, with a 95 % interval over the paired sessions;
``heuristic_seat0``: seat 0's mean in the all-heuristic run, for scale. Play, not the
abstraction: this is the real game with the other seats playing the heuristic, not a best
response.

    nice -n 10 python bench/equilibrium_play.py [--sessions 40] [--session-deals 100] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stammtisch.bots import Bot  # noqa: E402
from stammtisch.bots.equilibrium import EquilibriumBot, load_data  # noqa: E402
from stammtisch.bots.tippen import TippenHeuristic  # noqa: E402
from stammtisch.rules import TIPPEN_PRESETS, ruleset  # noqa: E402
from stammtisch.sim.simulate import play_deal  # noqa: E402
from stammtisch.table import Table  # noqa: E402


def session(rid: str, deals: int, seed: int, equilibrium: bool) -> float:
    rules = ruleset(rid)
    n = rules.players
    bots: list[Bot] = [TippenHeuristic(random.Random(seed + s)) for s in range(n)]
    if equilibrium:
        bots[0] = EquilibriumBot(random.Random(seed), TippenHeuristic(random.Random(seed)))
    table = Table(rules, [f"P{i + 1}" for i in range(n)], seed % n)
    rng = random.Random(seed)
    total = 0
    for _ in range(deals):
        play_deal(table, bots, rng)
        result = table.deals[-1].result
        assert result is not None
        total += result.net(n)[0]
    return total / deals


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--session-deals", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", action="append")
    args = ap.parse_args()
    trained = load_data().get("rulesets", {})
    for rid in args.only or list(TIPPEN_PRESETS):
        if rid not in trained:
            continue
        start = time.perf_counter()
        diffs, base = [], []
        for k in range(args.sessions):
            seed = args.seed * 1_000_003 + k
            h = session(rid, args.session_deals, seed, False)
            e = session(rid, args.session_deals, seed, True)
            diffs.append(e - h)
            base.append(h)
        mean = statistics.fmean(diffs)
        half = 1.96 * statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else float("nan")
        print(json.dumps({"ruleset": rid, "players": 4, "sessions": args.sessions,
                          "session_deals": args.session_deals, "seed": args.seed, "units": "counters per deal",
                          "gain": round(mean, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)],
                          "heuristic_seat0": round(statistics.fmean(base), 4),
                          "seconds": round(time.perf_counter() - start, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
