"""Speed of the open-hand solver: random full deals, solved at the first lead.

Groups (each ``--deals N`` deals, built through the engine: shuffled deck, ``new_deal``, bidding
driven with legal actions into the wanted contract, then ``position_from_state``):

* ``tapp-points``: ``tapp/modern`` 3 players, Frage / Solo (C, S, D) / Herzsolo in turn: the
  exact card points of the declarer (full solve) and the 61-threshold query, each on a fresh
  transposition table;
* ``tapp-durch``, ``tapp-bettel``: all tricks yes/no (Durch, Herzdurch), no trick yes/no (Bettel);
* ``tippen``: ``tippen/grupp-1975`` 4 players: the guaranteed tricks of every active player
  (paranoid) and the max-n line.

One JSON line per group: median, p95 and max milliseconds, nodes per second, the targets
(``bar``; ``meets_bar_wall`` and ``meets_bar_cpu`` say whether they are met) and a peer figure
(``peer_quoted``); first a line with the JIT time (compiling, or loading numba's cache).
Times are wall-clock (``*_ms``) and the process's CPU time (``*_cpu_ms``) side by side: on a
shared machine the wall clock also counts the time other processes held the core, the CPU time
only the solver's own work; ``load_average_1min`` says how busy the machine was.
The peer figure (a straightforward numba solver) cannot be run here; its numbers are quoted,
not measured.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stammtisch.solve.deals import tapp_state, tippen_state  # noqa: E402
from stammtisch.solve.position import position_from_state  # noqa: E402
from stammtisch.solve.solver import Solver  # noqa: E402

POINT_CONTRACTS = ("frage", "solo:C", "solo:S", "solo:D", "herzsolo")
BAR = {"full_median_ms": 20, "full_p95_ms": 200, "threshold61_median_ms": 1}
QUOTED_PEER = {"what": "a straightforward numba solver (figures quoted, not run here)",
                  "full_median_ms": 23, "full_p95_ms": 160, "threshold61_median_ms": 0.2}


def summary(times: list[float]) -> dict[str, float]:
    ms = sorted(t * 1000 for t in times)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return {"median": round(statistics.median(ms), 3), "p95": round(p95, 3), "max": round(ms[-1], 3)}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def timed_both(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, result)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def meets_bar(full: dict[str, float], thr: dict[str, float]) -> bool:
    return (full["median"] <= BAR["full_median_ms"] and full["p95"] <= BAR["full_p95_ms"]
            and thr["median"] <= BAR["threshold61_median_ms"])


def jit_line() -> dict[str, Any]:
    start = time.perf_counter()
    from stammtisch.solve import _kernel  # noqa: F401  (numba import and cache load / compile)

    imported = time.perf_counter() - start
    state = tapp_state(random.Random(0), "herzsolo")
    pos = position_from_state(state)
    first, _ = timed(lambda: Solver(pos).declarer_points())
    return {"bench": "solver", "group": "jit", "import_s": round(imported, 3),
            "first_solve_s": round(first, 3), "load_average_1min": round(os.getloadavg()[0], 2),
            "note": "first solve compiles the kernel, or loads it from numba's cache (cache=True)"}


def progress(group: str, i: int, n: int) -> None:
    print(f"\r{group}: {i}/{n}", end="" if i < n else "\n", file=sys.stderr, flush=True)


def bench_points(deals: int, rng: random.Random) -> dict[str, Any]:
    full, thr, full_cpu, thr_cpu, nodes, node_time = [], [], [], [], 0, 0.0
    won = 0
    for i in range(deals):
        pos = position_from_state(tapp_state(rng, POINT_CONTRACTS[i % len(POINT_CONTRACTS)]))
        solver = Solver(pos)
        t, c, value = timed_both(solver.declarer_points)
        full.append(t)
        full_cpu.append(c)
        nodes += solver.nodes
        node_time += c
        solver = Solver(pos)  # a fresh table: the threshold query on its own
        t, c, reach = timed_both(solver.can_reach)  # target 61
        thr.append(t)
        thr_cpu.append(c)
        if reach != (value >= 61):
            raise AssertionError("threshold query disagrees with the full solve")
        won += reach
        progress("tapp-points", i + 1, deals)
    wall_full, wall_thr, cpu_full, cpu_thr = summary(full), summary(thr), summary(full_cpu), summary(thr_cpu)
    return {"bench": "solver", "group": "tapp-points", "ruleset": "tapp/modern", "players": 3,
            "contracts": list(POINT_CONTRACTS), "deals": deals, "full_ms": wall_full, "threshold61_ms": wall_thr,
            "full_cpu_ms": cpu_full, "threshold61_cpu_ms": cpu_thr, "nodes_per_cpu_s": round(nodes / node_time),
            "declarer_reaches_61": won, "bar": BAR, "meets_bar_wall": meets_bar(wall_full, wall_thr),
            "meets_bar_cpu": meets_bar(cpu_full, cpu_thr), "load_average_1min": round(os.getloadavg()[0], 2),
            "peer_quoted": QUOTED_PEER}


def bench_yes_no(group: str, contracts: tuple[str, ...], deals: int, rng: random.Random) -> dict[str, Any]:
    times, nodes, yes = [], 0, 0
    for i in range(deals):
        pos = position_from_state(tapp_state(rng, contracts[i % len(contracts)]))
        solver = Solver(pos)
        query = solver.no_trick if group == "tapp-bettel" else solver.all_tricks
        t, answer = timed(query)
        times.append(t)
        nodes += solver.nodes
        yes += answer
        progress(group, i + 1, deals)
    return {"bench": "solver", "group": group, "ruleset": "tapp/modern", "players": 3,
            "contracts": list(contracts), "deals": deals, "full_ms": summary(times),
            "nodes_per_s": round(nodes / sum(times)), "declarer_wins": yes}


def bench_tippen(deals: int, rng: random.Random) -> dict[str, Any]:
    para, maxn, nodes = [], [], 0
    for i in range(deals):
        pos = position_from_state(tippen_state(rng, "tippen/grupp-1975", 4))
        solver = Solver(pos)
        t, _ = timed(solver.guaranteed_tricks)
        para.append(t)
        nodes += solver.nodes
        t, _ = timed(solver.maxn)
        maxn.append(t)
        progress("tippen", i + 1, deals)
    return {"bench": "solver", "group": "tippen", "ruleset": "tippen/grupp-1975", "players": 4, "deals": deals,
            "paranoid_all_players_ms": summary(para), "maxn_python_ms": summary(maxn),
            "nodes_per_s": round(nodes / sum(para))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Time the open-hand (double dummy) solver on random deals of tapp/modern and Tippen; "
                    "prints one JSON line per group.")
    parser.add_argument("--deals", type=int, default=200, help="deals per group (default 200; use 10 for a quick look)")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the decks (default 1)")
    parser.add_argument("--groups", default="points,durch,bettel,tippen",
                        help="comma list of groups: points, durch, bettel, tippen (default all)")
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    unknown = set(groups) - {"points", "durch", "bettel", "tippen"}
    if unknown:
        parser.error(f"unknown group(s): {', '.join(sorted(unknown))}")
    rng = random.Random(args.seed)
    print(json.dumps(jit_line()), flush=True)
    if "points" in groups:
        print(json.dumps(bench_points(args.deals, rng)), flush=True)
    if "durch" in groups:
        print(json.dumps(bench_yes_no("tapp-durch", ("durch:C", "herzdurch"), args.deals, rng)), flush=True)
    if "bettel" in groups:
        print(json.dumps(bench_yes_no("tapp-bettel", ("bettel",), args.deals, rng)), flush=True)
    if "tippen" in groups:
        print(json.dumps(bench_tippen(args.deals, rng)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
