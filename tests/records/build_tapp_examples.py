"""Builds the docs/rules-reference.md §3 example records (run from the repo root:
``python tests/records/build_tapp_examples.py``) from the full deals of test_tapp_deals.py.

A record starts with an empty pot, so a deal that the example plays with a pot already in it
is preceded by thrown-in deals (everyone passes) whose dealers' antes build that pot. The
expected balances live in tests/test_worked_examples.py, computed by hand from that page.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from test_tapp_deals import FIXTURES  # noqa: E402

from stammtisch.record import FORMAT  # noqa: E402
from stammtisch.rules import ruleset  # noqa: E402

NAMES = ["Anna", "Ben", "Cora", "Dirk"]
EXAMPLES = ["wt_frage_52", "wt_solo_80", "wt_frage_60", "classic_frage_65", "classic_frage_50",
            "classic_solo_63", "classic_herzsolo_75", "modern_herzsolo_72", "modern_herzsolo_60",
            "modern_frage_4p", "modern_bettel_lost", "ramsch_3p_jungfer", "ramsch_4p",
            "modern_skat32_solo"]


def build(name: str) -> dict:
    f = FIXTURES[name]
    rules = ruleset(f["rid"], f["ov"])
    n = rules.players
    throw_ins = []
    if f["pot"]:
        assert f["pot"] % rules.pot_ante == 0
        k = f["pot"] // rules.pot_ante
        pack = sorted(f["deck"].split())
        throw_ins = [{"deck": pack, "actions": ["pass"] * n} for _ in range(k)]
    first = (f["dealer"] - len(throw_ins)) % n
    return {"format": FORMAT, "ruleset": f["rid"], "options": f["ov"], "players": NAMES[:n],
            "first_dealer": NAMES[first],
            "deals": throw_ins + [{"deck": f["deck"].split(), "actions": f["actions"].split()}]}


def main():
    for name in EXAMPLES:
        path = HERE / f"rules-3-{name.replace('_', '-')}.json"
        path.write_text(json.dumps(build(name), ensure_ascii=False, indent=1) + "\n")
        print("wrote", path.name)


if __name__ == "__main__":
    main()
