"""How strong are the levels? Fixed-seed duplicate tournaments up the ladder of opponents.

The ladder is ``stammtisch.bots.LEVELS`` (beginner, club, expert, master), weakest first. For each rung
(a level against the one below it), in ``tapp/modern`` with 3 and with 4 players and
``tippen/grupp-1975`` with 4, one JSON line:

* ``per_bot``: mean net per deal of each side with its 95 % interval, and ``difference``: the
  upper level's mean minus the lower's, with the 95 % interval of the paired per-session
  differences (``stammtisch.sim.tournament``: every deck is played with every arrangement of
  the two sides over the seats, so the luck of the cards cancels);
* ``bar_met``: the difference's interval lies above zero (each level must beat the one below);
* ``decision_seconds``: per side the median, p95 and max seconds per decision (decisions with
  more than one legal action), measured in this run on ``--timing-deals`` deals, one process,
  before the tournament: the upper side in one seat and the lower in the others, the lower side
  among its own kind (after an untimed warm-up deal: numba loads its compiled kernel on the
  first solve); and under ``cpu`` the same of the process's CPU seconds per decision, which is
  what a decision takes on a core of its own: a shared machine's other work lengthens the wall
  clock's, not these;
* ``decks`` (deals per arrangement), ``session_deals``, ``seed``, the ``budget`` of each side
  (algorithm, worlds per decision, blunder rate), ``seconds`` of the tournament.

Sessions of ``--session-deals`` deals are the independent units of the intervals. Each deck is
played once per arrangement (6 in Tapp with 3 seats, 14 with 4 seats), so the decks per
rung are as few as keep the intervals above zero (``DECKS``; ``--decks`` overrides them).
``--pair expert:openspiel-ismcts`` plays any two names ``make_bot`` knows instead of the ladder.

    nice -n 10 python bench/strength.py [--decks N] [--workers N] [--seed 1] [--pair A:B]
                                        [--game tapp/modern] [--players 4]
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

from stammtisch.bots import LEVEL_NAMES, LEVELS, PLAYER_NAMES, make_bot  # noqa: E402
from stammtisch.bots.pimc import DEFAULT_SAMPLES  # noqa: E402
from stammtisch.rules import ruleset  # noqa: E402
from stammtisch.sim.batch import choose_backend, derive_seed  # noqa: E402
from stammtisch.sim.tournament import run_tournament  # noqa: E402
from stammtisch.table import Table, draw_first_dealer  # noqa: E402

GAMES = (("tapp/modern", 3), ("tapp/modern", 4), ("tippen/grupp-1975", 4))
#: the ladder's rungs: (upper, lower), each level against the one below it
RUNGS = [(LEVEL_NAMES[i + 1], LEVEL_NAMES[i]) for i in range(len(LEVEL_NAMES) - 1)]
#: decks per rung and game: enough for the interval to lie above zero with the seed 1, with room
DECKS = {("club", "beginner"): {"tapp/modern": 100, "tippen/grupp-1975": 100},
         ("expert", "club"): {"tapp/modern": 60, "tippen/grupp-1975": 200},
         ("master", "expert"): {"tapp/modern": 200, "tippen/grupp-1975": 200}}
DEFAULT_DECKS = 200


def budget(name: str, family: str) -> dict[str, object]:
    """What a side plays with: its algorithm, worlds per decision, blunder rate."""
    level = LEVELS.get(name)
    bot = name if level is None else level.bot
    out: dict[str, object] = {"bot": bot}
    samples = None if level is None or level.samples is None else level.samples.get(family)
    if bot == "pimc":
        out["samples"] = samples or DEFAULT_SAMPLES[family]
    if level is not None and level.blunders:
        out["blunders"] = level.blunders
    if level is not None and level.inference:
        out["inference"] = True
    if level is not None and level.equilibrium and family == "tippen":
        out["equilibrium"] = True
    return out


def decision_seconds(rid: str, players: int, bot: str, peer: str, deals: int, seed: int) -> dict[str, float | int]:
    """Median, p95 and max seconds of ``bot``'s decisions (more than one legal action) on
    ``deals`` deals, the bot in seat ``deal % players`` and ``peer`` in the others; ``cpu``: the
    same of the process's CPU seconds."""
    rules = ruleset(rid, {"players": players})
    rng = random.Random(seed)
    times: list[float] = []
    cpu: list[float] = []
    for deal in range(-1, deals):  # deal -1 warms up (numba loads its compiled kernel): not timed
        table = Table(rules, [f"P{i + 1}" for i in range(players)], draw_first_dealer(rules, rng))
        me = deal % players  # deal -1: the last seat
        bots = [make_bot(bot if s == me else peer, rules.family, random.Random(derive_seed(seed, deal * 8 + s)))
                for s in range(players)]
        state = table.start_deal(table.shuffled_deck(rng))
        while not state.is_terminal():
            seat = state.current_player()
            many = len(state.legal_actions()) > 1
            start, start_cpu = time.perf_counter(), time.process_time()
            action = bots[seat].act(state, seat)
            if seat == me and many and deal >= 0:
                times.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
            table.apply_id(action)
    if not times:
        return {"decisions": 0}
    return {"decisions": len(times), **_spread(times), "cpu": _spread(cpu)}


def _spread(seconds: list[float]) -> dict[str, float]:
    """Median, p95 and max of ``seconds``, rounded to a tenth of a millisecond."""
    s = sorted(seconds)
    return {"median": round(statistics.median(s), 4), "p95": round(s[min(len(s) - 1, int(0.95 * len(s)))], 4),
            "max": round(s[-1], 4)}


def match(rid: str, players: int, bot: str, peer: str, decks: int, seed: int, workers: int | None,
          session_deals: int, timing_deals: int) -> dict[str, object]:
    rules = ruleset(rid, {"players": players})
    # the lower side is timed among its own kind: its decisions hardly depend on the others'
    # and an expensive upper side in the other seats would only lengthen the measurement
    timing = {bot: decision_seconds(rid, players, bot, peer, timing_deals, seed),
              peer: decision_seconds(rid, players, peer, peer, timing_deals, seed)}
    start = time.perf_counter()
    sessions = -(-decks // session_deals)

    def progress(done: int) -> None:  # on stderr: the JSON lines stay alone on stdout
        sys.stderr.write(f"\r{rid} {bot}-{peer}: {done}/{sessions} sessions, {time.perf_counter() - start:.0f} s")
        sys.stderr.flush()

    result = run_tournament(rules, [bot, peer], decks, seed, choose_backend(workers),
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
        "peer": peer,
        "budget": {side: budget(side, rules.family) for side in (bot, peer)},
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


def pair(text: str) -> tuple[str, str]:
    bot, _, peer = text.partition(":")
    if bot not in PLAYER_NAMES or peer not in PLAYER_NAMES or bot == peer:
        raise argparse.ArgumentTypeError(f"A:B with two different names of {', '.join(PLAYER_NAMES)}")
    return bot, peer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decks", type=int, default=None,
                        help=f"deals per arrangement (default: DECKS per rung, else {DEFAULT_DECKS})")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--session-deals", type=int, default=1,
                        help="deals per session, the independent unit (default 1)")
    parser.add_argument("--timing-deals", type=int, default=16,
                        help="deals of the decision-time measurement (default 16)")
    parser.add_argument("--pair", type=pair, action="append", metavar="A:B",
                        help="play A against B instead of the ladder (repeatable), e.g. expert:openspiel-ismcts")
    parser.add_argument("--game", choices=sorted({g for g, _ in GAMES}), action="append", help="only this game")
    parser.add_argument("--players", type=int, action="append", help="only with this many players")
    args = parser.parse_args(argv)
    if args.decks is not None and args.decks < 1 or args.session_deals < 1 or args.timing_deals < 0:
        parser.error("--decks and --session-deals must be at least 1, --timing-deals at least 0")
    for rid, players in GAMES:
        if args.game and rid not in args.game or args.players and players not in args.players:
            continue
        for bot, peer in args.pair or RUNGS:
            decks = args.decks or DECKS.get((bot, peer), {}).get(rid, DEFAULT_DECKS)
            line = match(rid, players, bot, peer, decks, args.seed, args.workers, args.session_deals,
                         args.timing_deals)
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
