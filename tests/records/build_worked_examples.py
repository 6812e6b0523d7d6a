"""Builds the worked-example record fixtures of docs/rules-reference.md §2.4 (run from the repo root:
``python tests/records/build_worked_examples.py``). The decks come from ``make_deck``, which
deals the hands the example names; the expected balances live in tests/test_worked_examples.py,
computed by hand from that page, not by the engine.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from test_tippen_support import game, make_deck  # noqa: E402

from stammtisch.bots import make_bot  # noqa: E402
from stammtisch.record import FORMAT, table_to_record  # noqa: E402
from stammtisch.rules import ruleset  # noqa: E402
from stammtisch.sim.simulate import play_deal  # noqa: E402
from stammtisch.table import Table  # noqa: E402

A, B, C, D = range(4)
NAMES = ["Anna", "Ben", "Cora", "Dirk"]


def deck(g, dealer, **kw):
    return [g.pack.cards[c] for c in make_deck(g, dealer, **kw)]


def record(rid, options, first, deals):
    return {"format": FORMAT, "ruleset": rid, "options": options, "players": NAMES,
            "first_dealer": NAMES[first],
            "deals": [{"deck": d, "actions": a.split()} for d, a in deals]}


def examples():
    g = game("tippen/dreiblatt-1859")
    yield "rules-2.4-examples-1-2-dreiblatt-1859", record("tippen/dreiblatt-1859", {}, A, [
        (deck(g, A, hands={B: "HA DA S8", C: "D7 C7 C8", D: "H9 C9 SA", A: "S7 D8 DT"}, upcard="H8"),
         "play:HA play:C7 play:H9 play:S7 play:DA play:D7 play:C9 play:D8 play:S8 play:C8 play:SA play:DT"),
        (deck(g, B, hands={C: "HA HK S7", D: "H9 ST C7"}, upcard="S8"),
         "tap tap pass pass play:HA play:H9 play:HK play:ST play:C7 play:S7"),
    ])
    for rid in ("tippen/grupp-1975", "tippen/katira-1983"):
        g = game(rid)
        all_pass = [(deck(g, dealer), "pass pass pass pass") for dealer in (B, C, D)]
        short = rid.split("/")[1]
        yield f"rules-2.4-example-3-{short}", record(rid, {}, B, all_pass + [
            (deck(g, A, hands={B: "HA HK SK", C: "H8 SA C7", A: "H9 HT S8"}, upcard="D7"),
             "tap tap pass tap exchange:- exchange:- exchange:- "
             "play:HA play:H8 play:H9 play:HK play:C7 play:HT play:SK play:SA play:S8"),
        ])
    g = game("tippen/grupp-1975")
    yield "rules-2.4-example-4-lone-tapper-grupp-1975", record("tippen/grupp-1975", {}, B, [
        (deck(g, dealer), "pass pass pass pass") for dealer in (B, C, D)] + [
        (deck(g, A), "tap pass pass pass")])
    g = game("tippen/grupp-1975", schieben=True)
    yield "rules-2.4-example-5-schieben-grupp-1975", record(
        "tippen/grupp-1975", {"schieben": True}, A,
        [(deck(g, C), "shove shove deal pass pass pass pass")])


def example_6_max_bete():
    """A 1859 table with max_bete=9, played by bots until 24 is carried into a deal."""
    rules = ruleset("tippen/dreiblatt-1859", {"max_bete": 9})
    for seed in range(1000):
        rng = random.Random(seed)
        table = Table(rules, NAMES, A)
        bots = [make_bot("random", "tippen", random.Random(seed * 10 + i)) for i in range(4)]
        for _ in range(30):
            carried = table.ledger.pot + table.ledger.reserve
            play_deal(table, bots, rng)
            if carried == 24:
                return "rules-2.4-example-6-max-bete-dreiblatt-1859", table_to_record(table)
    raise SystemExit("no table carried exactly 24")


def main():
    out = dict(examples())
    name, rec = example_6_max_bete()
    out[name] = rec
    for name, rec in out.items():
        (HERE / f"{name}.json").write_text(json.dumps(rec, ensure_ascii=False, indent=1) + "\n")
        print("wrote", name)


if __name__ == "__main__":
    main()
