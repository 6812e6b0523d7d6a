"""How strong are the search bots? Fixed-seed duplicate tournaments against the heuristic.

For each match (``pimc`` vs ``heuristic`` and ``ismcts`` vs ``heuristic``, in ``tapp/modern``
with 3 players and ``tippen/grupp-1975`` with 4) one JSON line:

* ``per_bot``: mean net per deal of each bot with its 95 % interval, and ``difference``: the
  search bot's mean minus the heuristic's, with the 95 % interval of the paired per-session
  differences (``stammtisch.sim.tournament``: every deck is played with every arrangement of
  the two bots over the seats, so the luck of the cards cancels);
* ``bar_met``: the difference's interval lies above zero (the bar ``pimc`` must meet);
* ``decision_seconds``: the search bot's median and p95 seconds per decision (decisions with
  more than one legal action), measured in this run on ``--timing-deals`` deals with the search
  bot in one seat and the heuristic in the others, one process, beside the tournament (after an
  untimed warm-up deal: numba loads its compiled kernel on the first solve);
* ``decks`` (deals per arrangement), ``session_deals``, ``seed``, the budget (the bots'
  defaults), ``seconds`` of the tournament.

Sessions of ``--session-deals`` deals are the independent units of the intervals (a table's pot
carries within a session). Expensive: each deck is played once per arrangement (6 in Tapp with
3 seats, 14 in Tippen with 4), so choose ``--decks`` after a small run.

    python bench/strength.py [--decks 500] [--workers N] [--seed 1] [--only pimc] [--game tapp/modern]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stammtisch.bots import make_bot  # noqa: E402
from stammtisch.bots.ismcts import DEFAULT_ITERATIONS  # noqa: E402
from stammtisch.bots.pimc import DEFAULT_SAMPLES  # noqa: E402
from stammtisch.rules import ruleset  # noqa: E402
from stammtisch.sim.batch import choose_backend, derive_seed  # noqa: E402
from stammtisch.sim.tournament import run_tournament  # noqa: E402
from stammtisch.table import Table, draw_first_dealer  # noqa: E402

GAMES = (("tapp/modern", 3), ("tippen/grupp-1975", 4))
SEARCH_BOTS = ("pimc", "ismcts")
PEER = "heuristic"
#: the bots' default budgets per move, per game family
BUDGETS: dict[str, dict[str, dict[str, int]]] = {
    "pimc": {"samples": DEFAULT_SAMPLES},
    "ismcts": {"iterations": {"tapp": DEFAULT_ITERATIONS, "tippen": DEFAULT_ITERATIONS}},
}


def decision_seconds(rid: str, players: int, bot: str, deals: int, seed: int) -> dict[str, float | int]:
    """Median and p95 seconds of the search bot's decisions (more than one legal action) on
    ``deals`` deals, the bot in seat ``deal % players`` and the heuristic in the others."""
    rules = ruleset(rid, {"players": players})
    rng = random.Random(seed)
    times: list[float] = []
    for deal in range(-1, deals):  # deal -1 warms up (numba loads its compiled kernel): not timed
        table = Table(rules, [f"P{i + 1}" for i in range(players)], draw_first_dealer(rules, rng))
        me = deal % players  # deal -1: the last seat
        bots = [make_bot(bot if s == me else PEER, rules.family, random.Random(derive_seed(seed, deal * 8 + s)))
                for s in range(players)]
        state = table.start_deal(table.shuffled_deck(rng))
        while not state.is_terminal():
            seat = state.current_player()
            many = len(state.legal_actions()) > 1
            start = time.perf_counter()
            action = bots[seat].act(state, seat)
            if seat == me and many and deal >= 0:
                times.append(time.perf_counter() - start)
            table.apply_id(action)
    times.sort()
    if not times:
        return {"decisions": 0}
    return {"decisions": len(times), "median": round(statistics.median(times), 4),
            "p95": round(times[min(len(times) - 1, int(0.95 * len(times)))], 4),
            "max": round(times[-1], 4)}


def match(rid: str, players: int, bot: str, decks: int, seed: int, workers: int | None,
          session_deals: int, timing_deals: int) -> dict[str, object]:
    rules = ruleset(rid, {"players": players})
    timing = decision_seconds(rid, players, bot, timing_deals, seed)
    start = time.perf_counter()
    sessions = -(-decks // session_deals)

    def progress(done: int) -> None:  # on stderr: the JSON lines stay alone on stdout
        sys.stderr.write(f"\r{rid} {bot}: {done}/{sessions} sessions, {time.perf_counter() - start:.0f} s")
        sys.stderr.flush()

    result = run_tournament(rules, [bot, PEER], decks, seed, choose_backend(workers),
                            session_deals=session_deals, progress=progress)
    sys.stderr.write("\n")
    seconds = time.perf_counter() - start
    data = result.to_json()
    difference = data["pairs"][0]["difference"]
    low = difference["ci"][0]
    return {
        "bench": "strength",
        "ruleset": rid,
        "players": players,
        "bot": bot,
        "peer": PEER,
        "budget": {k: v[rules.family] for k, v in BUDGETS[bot].items()},
        "decks": len(result.sessions) * session_deals,
        "session_deals": session_deals,
        "sessions": len(result.sessions),
        "arrangements": result.arrangements,
        "seed": seed,
        "per_bot": data["per_bot"],
        "difference": difference,
        "bar_met": low is not None and low > 0,
        "decision_seconds": timing,
        "seconds": round(seconds, 1),
        "complete": data["complete"],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decks", type=int, default=500, help="deals per arrangement (default 500)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--session-deals", type=int, default=1,
                        help="deals per session, the independent unit (default 1)")
    parser.add_argument("--timing-deals", type=int, default=16,
                        help="deals of the decision-time measurement (default 16)")
    parser.add_argument("--only", choices=SEARCH_BOTS, action="append", help="only this search bot")
    parser.add_argument("--game", choices=[g for g, _ in GAMES], action="append", help="only this game")
    args = parser.parse_args(argv)
    if args.decks < 1 or args.session_deals < 1 or args.timing_deals < 0:
        parser.error("--decks and --session-deals must be at least 1, --timing-deals at least 0")
    for rid, players in GAMES:
        if args.game and rid not in args.game:
            continue
        for bot in args.only or SEARCH_BOTS:
            line = match(rid, players, bot, args.decks, args.seed, args.workers, args.session_deals,
                         args.timing_deals)
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
