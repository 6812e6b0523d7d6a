"""Whose Tippen tap or pass and exchange pay more? Decision-level duplicates of two deciders.

Deals are played by Expert bots at 4-player tables (the pot carried over ``--deals-per-table``
deals). At every tap or pass and every exchange with a choice, each decider is asked what it
would do there, seeing what the seat sees. Where two deciders differ, the true deal is played
on from each one's choice with the same continuation (Expert bots for every seat, the same
seeds for both branches), and the seat's net of the deal is compared. The mean of those
differences, with its 95 % interval, says which decider's choices paid more where they differ;
"per decision" spreads it over every decision of that kind.

The deciders:

* ``search``: the Master level's search (pimc over 128 worlds weighed by its inference), which
  searches its taps and exchanges as its card play;
* ``equilibrium``: the same search for the card play, its taps and exchanges read from the
  Tippen equilibrium (``stammtisch.bots.equilibrium``) where it has an opinion;
* ``expert``: the Expert level (pimc over 48 uniform worlds).

    nice -n 10 python bench/declaring.py [--ruleset tippen/grupp-1975] [--tables 120] [--seed 102]

One JSON line per kind of decision (``declare``, ``exchange``) and pair of deciders.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stammtisch.bots import Bot, make_bot  # noqa: E402
from stammtisch.bots.pimc import PimcBot  # noqa: E402
from stammtisch.rules import ruleset  # noqa: E402
from stammtisch.table import Table, draw_first_dealer  # noqa: E402

PLAYERS = 4
#: each asked afresh at every decision, from a fixed seed ("equilibrium" is made as make_bot made
#: the Master while it read its taps from the equilibrium, so that its draws are that Master's)
DECIDERS: dict[str, Callable[[], Bot]] = {
    "search": lambda: PimcBot("tippen", random.Random(1), 128, inference=True),
    "equilibrium": lambda: make_bot("expert", "tippen", random.Random(1), samples=128, inference=True,
                                    equilibrium=True),
    "expert": lambda: make_bot("expert", "tippen", random.Random(1)),
}
PAIRS = (("search", "equilibrium"), ("search", "expert"), ("equilibrium", "expert"))


def played_on(state: Any, action: int, seat: int, seed: int) -> float:
    """The seat's net of the deal, played on from ``action`` by Expert bots seeded by ``seed``."""
    branch = state.clone()
    branch.apply(action)
    bots = [make_bot("expert", "tippen", random.Random(seed * 10 + s)) for s in range(PLAYERS)]
    while not branch.is_terminal():
        turn = branch.current_player()
        branch.apply(bots[turn].act(branch, turn))
    return float(branch.returns()[seat])


def compare(rid: str, tables: int, deals_per_table: int,
            seed: int) -> tuple[dict[tuple[str, str, str], list[float]], Counter[str]]:
    """Per (kind, first decider, second decider): the differences of the seat's net where they
    differ; and per kind the number of decisions."""
    rules = ruleset(rid, {"players": PLAYERS})
    rng = random.Random(seed)
    found: dict[tuple[str, str, str], list[float]] = {}
    decisions: Counter[str] = Counter()
    for _ in range(tables):
        table = Table(rules, [f"P{i + 1}" for i in range(PLAYERS)], draw_first_dealer(rules, rng))
        for _ in range(deals_per_table):
            state = table.start_deal(table.shuffled_deck(rng))
            players = [make_bot("expert", "tippen", random.Random(rng.getrandbits(32))) for _ in range(PLAYERS)]
            while not state.is_terminal():
                seat = state.current_player()
                legal = state.legal_actions()
                word = state.action_to_string(legal[0]).split(":")[0]
                if len(legal) > 1 and word in ("tap", "pass", "exchange"):
                    kind = "exchange" if word == "exchange" else "declare"
                    decisions[kind] += 1
                    chosen = {name: make().act(state, seat) for name, make in DECIDERS.items()}
                    branch_seed = rng.getrandbits(32)
                    nets: dict[str, float] = {}
                    for a, b in PAIRS:
                        if chosen[a] == chosen[b]:
                            continue
                        for name in (a, b):
                            if name not in nets:
                                nets[name] = played_on(state, chosen[name], seat, branch_seed)
                        found.setdefault((kind, a, b), []).append(nets[a] - nets[b])
                table.apply_id(players[seat].act(state, seat))
    return found, decisions


def summary(diffs: list[float], decisions: int) -> dict[str, Any]:
    n = len(diffs)
    mean = sum(diffs) / n if n else 0.0
    sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / (n - 1)) if n > 1 else 0.0
    half = 1.96 * sd / math.sqrt(n) if n else 0.0
    return {"decisions": decisions, "differ": n,
            "mean_where_they_differ": round(mean, 3),
            "ci": [round(mean - half, 3), round(mean + half, 3)],
            "per_decision": round(sum(diffs) / decisions, 4) if decisions else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ruleset", default="tippen/grupp-1975", help="a Tippen rule set for 4 players")
    parser.add_argument("--tables", type=int, default=120)
    parser.add_argument("--deals-per-table", type=int, default=5)
    parser.add_argument("--seed", type=int, default=102)
    args = parser.parse_args()
    if not args.ruleset.startswith("tippen/"):
        parser.error("a Tippen rule set: the taps and exchanges are Tippen's")
    found, decisions = compare(args.ruleset, args.tables, args.deals_per_table, args.seed)
    for kind in ("declare", "exchange"):
        if not decisions[kind]:
            continue
        for a, b in PAIRS:
            print(json.dumps({"bench": "declaring", "ruleset": args.ruleset, "kind": kind, "pair": f"{a}-{b}",
                              "seed": args.seed, "tables": args.tables,
                              **summary(found.get((kind, a, b), []), decisions[kind])}), flush=True)


if __name__ == "__main__":
    main()
