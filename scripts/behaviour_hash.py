"""Hash the engines' observable behaviour, to prove a refactor changed nothing.

For every preset, with random valid options, play random deals at a table (pot carried) and
feed into one SHA-256 per preset, at every step: every seat's and the spectator's view, the
legal action strings, one refused random action (its rule and message, and that the state is
unchanged), and at the end of each deal the transfers, summary and next dealer. Run it before
and after a refactor and compare the printed hashes:

    python scripts/behaviour_hash.py --deals 30000 > before.json   # on the old commit
    python scripts/behaviour_hash.py --deals 30000 > after.json
    diff before.json after.json

Intended changes are folded away by ``normalise`` (each says what changed on purpose), so the
hashes compare like with like. Uses only the public API.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from stammtisch.games import IllegalAction, TableState, new_game
from stammtisch.rules import PRESETS, RuleError, ruleset

# Option values drawn from per preset (the old option names, which stay valid).
TIPPEN_TRIES: dict[str, list[Any]] = {
    "players": [3, 4, 5, 6],
    "max_bete": [None, None, 6, 9, 12],
    "robbing": [False, True],
    "sniffing": ["none", "1859", "modern"],
    "knocking": [False, True],
    "schieben": [False, True],
    "hupf_und_sprung": ["none", "single", "double"],
    "tipp_zwang": [False, True],
    "void_must_trump": ["always", "untrumped", "never"],
    "head_trick": [False, True],
    "lone_tapper": ["takes-pot", "dealer-defends"],
    "exchange": [False, True],
}
HISTORIC_TAPP_TRIES: dict[str, list[Any]] = {
    "pot": [False, True],
    "pot_ante": [2, 3],
    "tout_multiplier": [2, 3],
}
MODERN_TAPP_TRIES: dict[str, list[Any]] = {
    "players": [3, 4],
    "pack": ["tapp36", "skat32"],
    "frage_value": [5, 10],
    "rufer_in_tapp": ["none", "swap"],
}


def random_rules(rid: str, rng: random.Random):
    if rid.startswith("tippen/"):
        tries = TIPPEN_TRIES
    else:
        tries = MODERN_TAPP_TRIES if rid == "tapp/modern" else HISTORIC_TAPP_TRIES
    for _ in range(200):
        opts = {k: rng.choice(v) for k, v in tries.items() if rng.random() < 0.4}
        try:
            return ruleset(rid, opts)
        except RuleError:
            continue
    return ruleset(rid)


# Options that moved (a preset offers only the options that apply to it).
_DROPPED_OPTIONS = {"pot", "pot_ante", "tout_multiplier", "frage_value", "rufer_in_tapp"}


def normalise_view(view: dict) -> dict:
    v = dict(view)
    if v.get("phase") == "done":  # one name for the terminal phase: "over"
        v["phase"] = "over"
    v["options"] = {k: x for k, x in v["options"].items() if k not in _DROPPED_OPTIONS}
    if v["ruleset"] in ("tapp/wuerttemberg-tarock", "tapp/classic-1879"):
        v["options"].pop("pack", None)  # the historic games offer no pack option
    if v.get("phase") == "give" and v.get("called"):  # the called card may go back
        v["legal_actions"] = [a for a in v["legal_actions"] if a != f"give:{v['called']}"]
    return v


def normalise_legal(state, legal: list[str]) -> list[str]:
    """A Rufer declarer may now give back the called card too: left out of the legal actions."""
    view = state.view(None)
    called = view.get("called")
    if view.get("phase") == "give" and called:
        return [a for a in legal if a != f"give:{called}"]
    return legal


DUMP: str | None = None

SUMMARY_KEYS = ("tricks", "active", "outcome", "declarer", "contract", "card_points", "won",
                "ended_early")


def play(rid: str, deals: int, seed: int) -> dict:
    rng = random.Random(f"{rid}:{seed}")
    h = hashlib.sha256()
    counts = {"deals": 0, "actions": 0, "refusals": 0, "views": 0}

    dump = open(DUMP, "a") if DUMP else None  # noqa: SIM115  (a debugging aid: every fed object)

    def feed(obj: Any) -> None:
        text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
        h.update(text.encode())
        if dump is not None:
            dump.write(text + "\n")

    per_table = 20
    done = 0
    while done < deals:
        rules = random_rules(rid, rng)
        feed(["rules", rules.id, rules.players])
        game = new_game(rules)
        n = rules.players
        size = game.pack.size
        dealer, pot, reserve = rng.randrange(n), 0, 0
        for _ in range(min(per_table, deals - done)):
            deck = list(range(size))
            rng.shuffle(deck)
            state = game.new_deal(TableState(dealer=dealer, pot=pot, reserve=reserve), deck)
            while True:
                for seat in [*range(n), None]:
                    feed(normalise_view(state.view(seat)))
                    counts["views"] += 1
                if state.is_terminal():
                    break
                legal_ids = state.legal_actions()
                legal = normalise_legal(state, [state.action_to_string(a) for a in legal_ids])
                feed(["legal", state.current_player(), legal])
                # one refusal: a random id or string that is not legal
                before = json.dumps(state.view(None), sort_keys=True)
                probe = rng.choice([
                    rng.randrange(0, 4 * size + 40),
                    rng.choice(["pass", "tap", "hold", "play", "weg", "bid:solo", "contract:bettel",
                                f"play:{game.pack.cards[rng.randrange(size)]}",
                                f"give:{game.pack.cards[rng.randrange(size)]}",
                                f"call:{game.pack.cards[rng.randrange(size)]}",
                                "exchange:-", "discard:HA", "trump:H", "sniff", "knock", "rob"]),
                ])
                try:
                    pid = probe if isinstance(probe, int) else state.string_to_action(probe)
                    if pid in legal_ids:
                        raise LookupError
                    if state.action_to_string(pid).startswith("give:"):
                        raise LookupError  # legality of give changed on purpose (normalise_legal)
                    state.apply(pid)
                    feed(["accepted?!", probe])
                except IllegalAction as e:
                    feed(["refused", str(probe), e.rule, e.message])
                    counts["refusals"] += 1
                except LookupError:
                    pass
                if json.dumps(state.view(None), sort_keys=True) != before:
                    feed(["CHANGED by refusal", str(probe)])
                text = rng.choice(legal)
                state.apply(state.string_to_action(text))
                counts["actions"] += 1
            res = state.result()
            feed(["result", [t.to_json() for t in res.transfers], res.next_dealer, res.dealer,
                  {k: res.summary.get(k) for k in SUMMARY_KEYS}, state.returns()])
            for t in res.transfers:
                for acct, sign in ((t.source, -1), (t.target, 1)):
                    if acct == "pot":
                        pot += sign * t.amount
                    elif acct == "reserve":
                        reserve += sign * t.amount
            dealer = res.next_dealer
            done += 1
            counts["deals"] += 1
    return {"ruleset": rid, "seed": seed, "sha256": h.hexdigest(), **counts}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deals", type=int, default=30000, help="deals per preset (default 30000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--only", default=None, help="one rule-set id")
    ap.add_argument("--dump", default=None, help="also write every hashed object to this file (one worker)")
    args = ap.parse_args(argv)
    if args.dump:
        global DUMP
        DUMP = args.dump
        for rid in [args.only] if args.only else list(PRESETS):
            print(json.dumps(play(rid, args.deals, args.seed)), flush=True)
        return
    ids = [args.only] if args.only else list(PRESETS)
    with ProcessPoolExecutor(args.workers) as pool:
        for out in pool.map(play, ids, [args.deals] * len(ids), [args.seed] * len(ids)):
            print(json.dumps(out), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
