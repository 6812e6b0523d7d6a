"""The time of a ``pimc`` decision at the Expert budget (``pimc.DEFAULT_SAMPLES``: 16 worlds in
Tapp, 48 in Tippen), under every build side by side (``bench/versions.py``): this checkout as
installed (``ours``), its plain Python sources (``ours_python``) and with ``--other ROOT``
another checkout (``git worktree add ../base main``), in interleaved slices.

Positions: ``--positions N`` per game, drawn at random from every decision with a real choice
of deals played by the heuristic bot at every seat (bids, contracts, discards, taps,
exchanges, cards of the play), in ``tapp/modern`` (3 players) and ``tippen/grupp-1975``
(4 players); the same positions under every build. Untimed decisions come first, at one
position of each kind of action (bid, discard, card, …): numba loads each kernel of the solver
when first called, in every process. Per game: the mean and median CPU seconds per decision
and whether every build chose the same actions (``same_decisions``).

    python bench/pimc.py [--positions 60] [--rounds 2] [--other ../base] [--samples tapp=32]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from versions import builds, native  # noqa: E402

HERE = Path(__file__).resolve()
GAMES = {"tapp": ("tapp/modern", {"players": 3}), "tippen": ("tippen/grupp-1975", {"players": 4})}


def positions(rid: str, options: dict[str, Any], count: int, seed: int) -> list[tuple[Any, int]]:
    """``count`` (state, seat) decisions with a real choice, drawn from heuristic deals."""
    from stammtisch.bots import make_bot
    from stammtisch.rules import ruleset
    from stammtisch.table import Table, draw_first_dealer

    rng = random.Random(seed)
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


def warm_up(family: str, pool: list[tuple[Any, int]], samples: int | None) -> None:
    """Untimed decisions at one position of each kind of action in ``pool`` (bids, discards,
    cards, …): numba loads each kernel of the solver into the process when it is first called
    (0.6 s for the play's), which would otherwise fall into the first decision of that kind,
    in every process but the one that runs ``this`` build."""
    from stammtisch.bots.pimc import PimcBot

    kinds: dict[str, tuple[Any, int]] = {}
    for state, seat in pool:
        kinds.setdefault(state.action_to_string(state.legal_actions()[0]).partition(":")[0], (state, seat))
    for state, seat in kinds.values():
        PimcBot(family, random.Random(0), samples).act(state.clone(), seat)


def decisions(family: str, count: int, seed: int, samples: int | None, start: int, stop: int) -> dict[str, Any]:
    """pimc's decisions at positions ``start`` to ``stop`` of the ``count`` drawn: CPU seconds of
    each and the actions chosen."""
    from stammtisch.bots.pimc import PimcBot

    rid, options = GAMES[family]
    picked = positions(rid, options, count + 1, seed)
    warm_up(family, [picked.pop(), *positions(rid, options, 40, seed + 1)], samples)
    seconds, chosen = [], []
    for i in range(start, stop):
        state, seat = picked[i]
        bot = PimcBot(family, random.Random(i), samples)
        began = time.process_time()
        action = bot.act(state, seat)
        seconds.append(time.process_time() - began)
        chosen.append(state.action_to_string(action))
    return {"seconds": seconds, "chosen": chosen}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=60, help="positions per game (default 60)")
    parser.add_argument("--rounds", type=int, default=2, help="slices per game and build, interleaved")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--samples", action="append", default=[], metavar="FAMILY=N",
                        help="worlds per decision for a game family (default: the Expert budget)")
    parser.add_argument("--other", type=Path, default=None, help="root of another checkout to compare with")
    args = parser.parse_args()
    budget: dict[str, int | None] = {family: None for family in GAMES}
    for item in args.samples:
        family, _, value = item.partition("=")
        budget[family] = int(value)
    runs = builds(args.other)
    for family in GAMES:
        seconds: dict[str, list[float]] = {b.name: [] for b in runs}
        chosen: dict[str, list[str]] = {b.name: [] for b in runs}
        cut = [args.positions * r // args.rounds for r in range(args.rounds + 1)]
        for r in range(args.rounds):
            for build in runs:
                out = build.call(HERE, "decisions", family, args.positions, args.seed, budget[family],
                                 cut[r], cut[r + 1])
                seconds[build.name] += out["seconds"]
                chosen[build.name] += out["chosen"]
        mean = {name: sum(v) / len(v) for name, v in seconds.items()}
        line = {"figure": "pimc_decision_cpu_s", "ruleset": GAMES[family][0], "positions": args.positions,
                "samples": budget[family] or "expert", "ours_mean_s": round(mean["this"], 4),
                "ours_median_s": round(statistics.median(seconds["this"]), 4), "ours_compiled": native(),
                "ours_python_mean_s": round(mean["python"], 4),
                "same_decisions": len({tuple(c) for c in chosen.values()}) == 1}
        if "other" in mean:
            line.update(other_mean_s=round(mean["other"], 4),
                        other_median_s=round(statistics.median(seconds["other"]), 4),
                        speedup=round(mean["other"] / mean["this"], 2))
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
