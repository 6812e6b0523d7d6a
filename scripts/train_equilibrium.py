"""Train the Tippen equilibrium for the decisions before the play and write the data file
``stammtisch/bots/equilibrium.json`` (read by ``stammtisch.bots.equilibrium``).

    nice -n 10 python scripts/train_equilibrium.py                 # every rule set, 3-5 players
    nice -n 10 python scripts/train_equilibrium.py --only tippen/grupp-1975 --players 4
    python scripts/equilibrium_guide.py                            # then the guide's tables

Deterministic given ``--seed``: the same arguments write the same file (apart from the
recorded seconds). The budgets below keep all seven rule sets with 3, 4 and 5 players under
about 15 minutes (about 6 minutes of CPU) on a shared 2-core machine;
``stammtisch.bots.equilibrium_train`` says what is trained and how.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from stammtisch.bots.equilibrium_train import ratios, train_ruleset
from stammtisch.rules import TIPPEN_PRESETS


def preset_exchange(rid: str) -> bool:
    return bool(TIPPEN_PRESETS[rid].defaults["exchange"])

OUT = Path(__file__).resolve().parent.parent / "stammtisch" / "bots" / "equilibrium.json"
#: per rule set: deals in the bank and CFR iterations. Deals with the exchange cost up to 72
#: playouts (4 players), without it 11, and Loup plays six tricks; iterations are per money
#: level (Grupp has five); the exploitability within the bank is near 0 by 1000.
BUDGET: dict[str, tuple[int, int]] = {
    "tippen/drei-karten-1821": (16000, 1000),
    "tippen/loup-1821": (6000, 1000),
    "tippen/dreiblatt-1859": (16000, 1000),
    "tippen/vierblatt-1859": (10000, 1000),
    "tippen/meyers-1905": (16000, 1000),
    "tippen/grupp-1975": (6000, 1000),
    "tippen/katira-1983": (6000, 1000),
}
CHECKPOINTS = (10, 30, 100, 300, 1000)
PLAYERS = (3, 4, 5)


def budget(rid: str, players: int, exchange: bool) -> tuple[int, int, int]:
    """Deals, iterations and batch for a player count: the 4-player budget, cut for 5 players
    (26 playouts a deal instead of 11; with the exchange 232 instead of 72, and 32 exchange
    profiles in every CFR step)."""
    deals, iterations = BUDGET[rid]
    if players <= 4:
        return deals, iterations, 256
    if exchange:
        return deals // 5, iterations * 3 // 10, 128
    return deals // 2, iterations, 256


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", help="train only this rule set (repeatable)")
    ap.add_argument("--players", type=int, action="append",
                    help="player count to train (repeatable; default 3, 4 and 5 where the rule set allows)")
    ap.add_argument("--deals", type=int, help="deals in the bank (default: per rule set)")
    ap.add_argument("--iterations", type=int, help="CFR iterations (default: per rule set)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    ids = args.only or [rid for rid in TIPPEN_PRESETS if rid in BUDGET]
    data: dict[str, Any] = {"version": 1, "rulesets": {}}
    if args.out.exists():
        data = json.loads(args.out.read_text(encoding="utf-8"))
    start = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    jobs = []
    for rid in ids:
        preset = TIPPEN_PRESETS[rid]
        for n in args.players or PLAYERS:
            if preset.min_players <= n <= preset.max_players:
                jobs.append((rid, n))
    with Progress(*columns, transient=False) as bar:
        for rid, n in jobs:
            deals, iterations, batch = budget(rid, n, bool(preset_exchange(rid)))
            deals = args.deals or deals
            iterations = args.iterations or iterations
            tasks: dict[str, Any] = {}

            def progress(kind: str, k: int, total: int, rid: str = rid, n: int = n,
                         tasks: dict[str, Any] = tasks) -> None:
                if kind not in tasks:
                    label = "deals" if kind == "bank" else "CFR"
                    if kind == "cfr":
                        total *= len(ratios(rid))  # one run per money level
                    tasks[kind] = bar.add_task(f"{rid} ({n}) {label}", total=total)
                bar.advance(tasks[kind], k)

            entry = train_ruleset(rid, n, deals, iterations, args.seed,
                                  tuple(c for c in CHECKPOINTS if c <= iterations), progress, batch)
            slot = data["rulesets"].setdefault(rid, {"players": {}})
            slot["players"][str(n)] = entry
            # written after each rule set, so an interrupted run keeps what it finished
            args.out.write_text(json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n",
                                encoding="utf-8")
    print(f"trained {len(jobs)} rule set and player count(s) in {time.perf_counter() - start:.0f} s -> {args.out}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
