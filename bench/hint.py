"""Time of a hint (``stammtisch.bots.pimc.advise``: the Master level's worlds and inference) in the process, warm.

Positions: ``--positions N`` per game, drawn at random from every decision with a real choice
(two or more legal actions) of deals played by the heuristic bot at every seat, in
``tapp/modern`` (3 players) and ``tippen/grupp-1975`` (4 players): bids, contracts, discards,
taps, exchanges and cards of the play as they come. One hint per game is asked first and not
counted (numba's compiling or loading its cache). ``--samples tapp=16`` times another budget.

Prints one JSON line: per game and for both together the median, p90 and max seconds per hint
(wall clock) and the median CPU seconds, the worlds per hint, the bar (a median under 1 s) and
whether it is met; ``load_average_1min`` says how busy the machine was.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stammtisch.bots import LEVELS, make_bot  # noqa: E402
from stammtisch.bots.pimc import advise  # noqa: E402
from stammtisch.rules import ruleset  # noqa: E402
from stammtisch.table import Table, draw_first_dealer  # noqa: E402

GAMES = {"tapp": ("tapp/modern", {"players": 3}), "tippen": ("tippen/grupp-1975", {"players": 4})}
BAR_MEDIAN_S = 1.0


def positions(rid: str, options: dict[str, Any], count: int, rng: random.Random) -> list[tuple[Any, int]]:
    """``count`` (state, seat) decisions with a real choice, drawn from heuristic deals."""
    rules = ruleset(rid, options)
    n = rules.players
    table = Table(rules, [f"P{i}" for i in range(n)], draw_first_dealer(rules, rng))
    bots = [make_bot("heuristic", rules.family, random.Random(rng.random())) for _ in range(n)]
    pool: list[tuple[Any, int]] = []
    while len(pool) < 4 * count:
        state = table.start_deal(table.shuffled_deck(rng))
        while not state.is_terminal():
            seat = state.current_player()
            if len(state.legal_actions()) > 1:
                pool.append((state.clone(), seat))
            table.apply_id(bots[seat].act(state, seat))
    return rng.sample(pool, count)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def figures(wall: list[float], cpu: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(wall), 3), "p90_s": round(quantile(wall, 0.9), 3),
            "max_s": round(max(wall), 3), "median_cpu_s": round(statistics.median(cpu), 3), "hints": len(wall)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=40, help="positions per game")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--samples", action="append", default=[], metavar="FAMILY=N",
                        help="worlds per hint for a game family (default: the Master level's)")
    args = parser.parse_args()
    master = LEVELS["master"].samples
    assert master is not None
    budget = dict(master)
    for item in args.samples:
        family, _, value = item.partition("=")
        budget[family] = int(value)
    rng = random.Random(args.seed)
    out: dict[str, Any] = {"bench": "hint", "positions_per_game": args.positions, "samples": budget}
    every_wall: list[float] = []
    every_cpu: list[float] = []
    for family, (rid, options) in GAMES.items():
        picked = positions(rid, options, args.positions + 1, rng)
        warm_state, warm_seat = picked.pop()
        advise(warm_state, warm_seat, 0, budget[family])
        wall, cpu = [], []
        for i, (state, seat) in enumerate(picked):
            start, start_cpu = time.perf_counter(), time.process_time()
            advise(state, seat, i, budget[family])
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        out[family] = {"ruleset": rid, **figures(wall, cpu)}
        every_wall += wall
        every_cpu += cpu
    out["both"] = figures(every_wall, every_cpu)
    out["bar_median_s"] = BAR_MEDIAN_S
    out["meets_bar"] = all(out[f]["median_s"] < BAR_MEDIAN_S for f in GAMES)
    out["load_average_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
