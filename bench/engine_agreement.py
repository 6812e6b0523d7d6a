"""The engines checked action for action: the compiled build against the plain Python one, and
the play's tables against the reference functions of ``games/tricks.py``. Prints JSON lines.

The compiled engines (mypyc, ``stammtisch/_native.py``) are built from the very sources the
plain Python build runs, and the hot path of the play reads tables built from
``tricks.beats`` and per-suit card lists instead of calling ``tricks.legal_follows``: both are
second ways to the same rules. Per rule set, random deals (random legal actions, random
option values drawn from the rule set's option specs, a few deals per table, the pot carried)
are played under both builds in two processes at once. Each build feeds into one SHA-256,
per deal, the legal actions at every step and the state after each action (``fingerprint()``:
every field of the deal), and at the end the transfers, the summary and the returns: equal
digests mean the builds agreed at every step of every deal. The compiled build also checks at
every card of the play, against the reference functions, the legal cards of a follower
(``legal_follows``, from the hand, the led suit, the trump and the card winning so far by
``trick_winner_index``) and the winner of every trick (``stammtisch/games/agreement.py``).

    python bench/engine_agreement.py [--deals 1000000] [--only tapp/modern] [--seed 1]

``agreement(ruleset_id, deals, seed)`` is also what ``tests/test_builds.py`` runs.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from versions import Build, native  # noqa: E402

HERE = Path(__file__).resolve()
DEALS_PER_TABLE = 20


def random_rules(ruleset_id: str, rng: random.Random) -> Any:
    """A valid rule set with random values for a random part of its options (bools, choices,
    the players, numbers near their defaults); a refused combination is drawn again."""
    from stammtisch.rules import PRESETS, RuleError, option_specs, ruleset

    preset = PRESETS[ruleset_id]
    specs = option_specs(ruleset_id)
    for _ in range(200):
        opts: dict[str, Any] = {}
        for name, spec in specs.items():
            if rng.random() < 0.5:
                continue
            if spec.kind == "bool":
                opts[name] = rng.random() < 0.5
            elif spec.kind == "choice":
                opts[name] = rng.choice(spec.choices)
            elif name == "players":
                opts[name] = rng.randint(preset.min_players, preset.max_players)
            elif spec.kind == "optint" and rng.random() < 0.3:
                opts[name] = None
            elif name not in ("stake", "max_bete", "tricks"):  # those must fit each other
                default = preset.defaults[name] or 1
                lo = spec.minimum if spec.minimum is not None else 0
                hi = spec.maximum if spec.maximum is not None else 4 * default
                opts[name] = max(lo, min(hi, default * rng.randint(1, 3)))
        try:
            return ruleset(ruleset_id, opts)
        except RuleError:
            continue
    return ruleset(ruleset_id)


def agreement(ruleset_id: str, deals: int, seed: int = 1, reference: bool = True) -> dict[str, Any]:
    """Play ``deals`` random deals of a rule set (``stammtisch.games.agreement``): their digest,
    and what the reference functions found (``follows`` and ``tricks`` checked, ``mismatches``)."""
    from stammtisch.games import TableState, new_game
    from stammtisch.games.agreement import Checked, play_checked

    rng = random.Random(f"agreement:{ruleset_id}:{seed}")
    found = Checked()
    start = time.process_time()
    done = 0
    while done < deals:
        game = new_game(random_rules(ruleset_id, rng))
        table = TableState(dealer=rng.randrange(game.num_players))
        k = min(DEALS_PER_TABLE, deals - done)
        play_checked(game, table, k, rng, found, reference)
        done += k
    return {"ruleset": ruleset_id, "deals": deals, "digest": found.digest.hexdigest(),
            "follows": found.follows, "tricks": found.tricks, "mismatches": found.mismatches,
            "compiled": native(), "cpu_s": round(time.process_time() - start, 1)}


def agreements(ruleset_ids: list[str], deals: int, seed: int = 1, reference: bool = True) -> list[dict[str, Any]]:
    """``agreement`` for each rule set, in this process."""
    return [agreement(rid, deals, seed, reference) for rid in ruleset_ids]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=1_000_000, help="deals per rule set")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", action="append", help="one rule set id (repeatable)")
    args = parser.parse_args()
    from stammtisch.rules import PRESETS

    compiled, python = Build("this", separate=True), Build("python", pure=True)
    for rid in args.only or list(PRESETS):
        with ThreadPoolExecutor(2) as pool:  # each build in a process of its own, at once
            ours = pool.submit(compiled.call, HERE, "agreement", rid, args.deals, args.seed)
            theirs = pool.submit(python.call, HERE, "agreement", rid, args.deals, args.seed, False)
            a, b = ours.result(), theirs.result()
        print(json.dumps({"ruleset": rid, "deals": args.deals, "compiled": a["compiled"],
                          "builds_agree": a["digest"] == b["digest"],
                          "follows_checked": a["follows"], "tricks_checked": a["tricks"],
                          "reference_mismatches": a["mismatches"],
                          "cpu_s": {"compiled": a["cpu_s"], "python": b["cpu_s"]}}), flush=True)


if __name__ == "__main__":
    main()
