"""How well do the heuristic bots play? One JSON line per rule set.

For each rule set (Tippen with 4 players, Tapp with 3, Modern Tapp also with 4):

(a) one heuristic seat against random seats: the heuristic's mean result per deal and its 95 %
    confidence interval. The K deals are split over n sessions, one per heuristic seat, each
    session a table whose deal rotates, so the heuristic sits in every position relative to
    the dealer equally often. The interval uses batch means (batches of 50 deals) because
    Tippen pots carry from deal to deal, so single deals are not independent.
(b) all seats heuristic: Tapp: declarer win rate (net gain > 0), draws, contract mix;
    Tippen: tap rate (taps per tap/pass decision), bête rate (trickless hands per active
    player-hand of played deals), lone-tapper and all-pass deals, mean pot.
(c) the mean time of one heuristic decision (``act(state, seat)``, the observation included).

Everything goes through the public API (``stammtisch.sim.simulate``, ``play_deal``).

    python bench/bots.py [--deals 2000] [--seed 1] [--only tapp/modern]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stammtisch.bots.tapp import TappHeuristic  # noqa: E402
from stammtisch.bots.tippen import TippenHeuristic  # noqa: E402
from stammtisch.rules import ruleset  # noqa: E402
from stammtisch.rules.tippen import TIPPEN_PRESETS  # noqa: E402
from stammtisch.sim import simulate  # noqa: E402
from stammtisch.sim.simulate import play_deal  # noqa: E402
from stammtisch.table import Table  # noqa: E402

CONFIGS = ([(rid, {"players": 4}) for rid in TIPPEN_PRESETS]
           + [("tapp/wuerttemberg-tarock", {}), ("tapp/classic-1879", {}),
              ("tapp/modern", {}), ("tapp/modern", {"players": 4})])
BATCH = 50


class Progress:
    def __init__(self, label: str, total: int):
        self.label, self.total, self.done, self.last = label, total, 0, 0.0

    def add(self, k: int = 1) -> None:
        self.done += k
        now = time.monotonic()
        if now - self.last > 0.5 or self.done == self.total:
            self.last = now
            sys.stderr.write(f"\r{self.label:<34} {self.done:>6}/{self.total}")
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def mean_ci(xs: list[float], batch: int = BATCH) -> tuple[float, float, float]:
    """Mean and 95 % interval by batch means (normal approximation)."""
    n = len(xs)
    mean = sum(xs) / n
    batches = [sum(xs[i:i + batch]) / len(xs[i:i + batch]) for i in range(0, n - batch + 1, batch)]
    if len(batches) < 2:
        return mean, float("nan"), float("nan")
    bm = sum(batches) / len(batches)
    var = sum((b - bm) ** 2 for b in batches) / (len(batches) - 1)
    half = 1.96 * math.sqrt(var / len(batches))
    return mean, mean - half, mean + half


def session_returns(rules, deals: int, seed: int, kinds: list[str], seat: int, prog) -> list[int]:
    """Per-deal net of ``seat`` over one simulated session."""
    _, table = simulate(rules, deals, seed=seed, bots=kinds, progress=lambda i: prog.add())
    n = rules.players
    return [d.result.net(n)[seat] for d in table.deals]


def vs_random(rules, deals: int, seed: int, prog) -> dict:
    n = rules.players
    per_seat = [deals // n + (1 if h < deals % n else 0) for h in range(n)]
    xs: list[int] = []
    for h in range(n):
        kinds = ["random"] * n
        kinds[h] = "heuristic"
        xs += session_returns(rules, per_seat[h], seed * 1000 + h, kinds, h, prog)
    mean, lo, hi = mean_ci(xs)
    return {"mean": round(mean, 3), "ci95": [round(lo, 3), round(hi, 3)]}


def all_heuristic(rules, deals: int, seed: int, prog) -> dict:
    n = rules.players
    summary, table = simulate(rules, deals, seed=seed * 1000 + 999, bots=["heuristic"] * n,
                              progress=lambda i: prog.add())
    out: dict = {}
    if rules.family == "tapp":
        played = sum(summary.contracts.values())
        draws = 0
        won: Counter = Counter()
        for d in table.deals:
            s = d.result.summary
            if s.get("contract") and s.get("contract") != "ramsch":
                net = d.result.net(n)[s["declarer"]]
                draws += net == 0
                won[s["contract"]] += net > 0
        ramsch = summary.contracts.get("ramsch", 0)
        contracts = played - ramsch
        wins = summary.declarer_wins
        out.update(declarer_win_rate=round(wins / contracts, 3) if contracts else None,
                   declarer_wins=wins, draws=draws, contracts_played=contracts,
                   thrown_in=summary.outcomes.get("all-pass", 0), ramsch=ramsch,
                   contract_mix={k: v for k, v in sorted(summary.contracts.items(),
                                                         key=lambda kv: -kv[1])},
                   contract_wins={k: won[k] for k in sorted(won, key=lambda k: -won[k])})
    else:
        taps = passes = active_hands = betes = 0
        for d in table.deals:
            taps += d.actions.count("tap")
            passes += d.actions.count("pass")
            s = d.result.summary
            if s.get("outcome") == "played":
                tricks = s.get("tricks", {})
                active_hands += len(tricks)
                betes += sum(1 for v in tricks.values() if v == 0)
        out.update(tap_rate=round(taps / (taps + passes), 3) if taps + passes else None,
                   taps_per_deal=round(taps / deals, 3),
                   bete_rate=round(betes / active_hands, 3) if active_hands else None,
                   betes_per_deal=round(betes / deals, 3),
                   outcomes=dict(summary.outcomes),
                   final_pot=summary.pot)
    return out


class Timed:
    """Wraps a bot and times its ``act`` (the seat's observation is built inside the timing)."""

    def __init__(self, bot):
        self.bot, self.calls, self.seconds = bot, 0, 0.0

    def act(self, state, seat):
        t = time.perf_counter()
        a = self.bot.act(state, seat)
        self.seconds += time.perf_counter() - t
        self.calls += 1
        return a


def decision_time(rules, deals: int, seed: int) -> float:
    rng = random.Random(seed)
    cls = TippenHeuristic if rules.family == "tippen" else TappHeuristic
    timed = Timed(cls(random.Random(seed)))
    bots = [timed] * rules.players
    table = Table(rules, [f"P{i + 1}" for i in range(rules.players)], 0)
    for _ in range(deals):
        play_deal(table, bots, rng)
    return 1e6 * timed.seconds / max(1, timed.calls)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=2000, help="deals per rule set and part")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", action="append", help="rule set id (repeatable)")
    args = ap.parse_args(argv)
    for rid, ov in CONFIGS:
        if args.only and rid not in args.only:
            continue
        rules = ruleset(rid, ov)
        label = f"{rid} ({rules.players}p)"
        start = time.perf_counter()
        prog = Progress(label, 2 * args.deals)
        line = {"ruleset": rid, "players": rules.players, "deals": args.deals, "seed": args.seed}
        line["heuristic_vs_random"] = vs_random(rules, args.deals, args.seed, prog)
        line["all_heuristic"] = all_heuristic(rules, args.deals, args.seed, prog)
        line["decision_us"] = round(decision_time(rules, min(200, args.deals), args.seed), 1)
        line["seconds"] = round(time.perf_counter() - start, 1)
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
