"""Duplicate tournaments: the same decks played with every arrangement of the bots over the
seats, so that the luck of the cards cancels and a difference between bots shows early.

A *session* is a short run of deals at one table (the pot carries within it, as at a real
table); its decks come from one seed. Each session is played once per *arrangement*: every
way to put the bots on the seats in which each bot sits at least once. Per session and bot
the mean net per deal over all its seats and arrangements is one paired observation; the
95 % intervals are over sessions (the independent units), and the difference of two bots is
the mean of their per-session differences (``stats.paired_difference_interval``).

Sessions are cut into chunks and run by ``batch`` (every core, or Ray), with seeds derived
from the user's seed and the chunk number: the same seed gives the same figures whatever the
number of workers.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..bots import make_bot
from ..record import save, table_to_record
from ..rules import Rules
from ..table import Table, draw_first_dealer
from .batch import Backend, BatchOutcome, Chunk, ProgressCallback, derive_seed, plan_chunks, run_batch
from .stats import Interval, clustered_mean_interval, mean_interval, paired_difference_interval

DEFAULT_SESSION_DEALS = 10
SESSIONS_PER_CHUNK = 4


def arrangements(bots: Sequence[str], seats: int) -> list[tuple[str, ...]]:
    """Every way to seat the bots (one name per seat) in which each bot sits at least once,
    in a fixed order. Over all of them each bot holds every seat equally often."""
    names = list(dict.fromkeys(bots))
    if len(names) > seats:
        raise ValueError(f"{len(names)} bots do not fit at a table of {seats}")
    return [lineup for lineup in itertools.product(names, repeat=seats) if set(lineup) == set(names)]


def role_of(family: str, final_view: dict[str, Any], seat: int) -> str:
    """The part a seat played in a deal, from the public end-of-deal view: Tapp ``declarer``,
    ``defender`` or ``ramsch``/``passed``; Tippen ``tapper``, ``passer``, ``compulsory``
    (a hand everyone had to play) or ``sniffer``."""
    if family == "tapp":
        contract = final_view.get("contract")
        if contract is None:
            return "passed"
        if contract == "ramsch":
            return "ramsch"
        return "declarer" if final_view.get("declarer") == seat else "defender"
    declared = (final_view.get("declared") or [None] * (seat + 1))[seat]
    if declared == "tap":
        return "tapper"
    if declared == "pass":
        return "passer"
    if declared in ("drop", "stay"):
        return "sniffer"
    return "compulsory"


@dataclass
class BotTally:
    """One bot's takings in one session (over all its seats and arrangements)."""

    net: int = 0
    deals: int = 0
    roles: dict[str, list[int]] = field(default_factory=dict)  # role -> [net, deals]

    def add(self, net: int, role: str) -> None:
        self.net += net
        self.deals += 1
        entry = self.roles.setdefault(role, [0, 0])
        entry[0] += net
        entry[1] += 1


SessionResult = dict[str, BotTally]


@dataclass(frozen=True)
class Verdict:
    """What a pair's interval settles. ``settled``: its 95 % interval excludes zero (or is no
    wider than the estimate). Otherwise ``reason`` says why not: ``wide`` (the interval holds
    zero and its half-width exceeds the estimate: ``sessions_needed`` and ``deals_needed`` per
    arrangement would bring the half-width below the estimate at the observed variance, since
    it shrinks with the square root of the sessions); ``zero`` (the estimate is zero: no number
    of deals settles a difference of zero, and the data state no size to look for instead);
    ``one_session`` (one session gives no interval)."""

    settled: bool
    reason: str | None = None
    sessions_needed: int | None = None
    deals_needed: int | None = None

    def to_json(self) -> dict[str, object]:
        return {"settled": self.settled, "unsettled_reason": self.reason,
                "sessions_to_settle": self.sessions_needed, "deals_to_settle": self.deals_needed}


def verdict(interval: Interval, session_deals: int) -> Verdict:
    """Whether ``interval`` (over sessions of ``session_deals`` deals) settles its difference,
    and if not how many sessions and deals would: n = n_now × (half-width / |estimate|)²,
    rounded up."""
    half = interval.half_width
    if not math.isfinite(half):
        return Verdict(False, "one_session")
    if half <= abs(interval.estimate) or not interval.covers(0.0):
        return Verdict(True)
    if interval.estimate == 0:
        return Verdict(False, "zero")
    sessions = math.ceil(interval.n * (half / abs(interval.estimate)) ** 2)
    return Verdict(False, "wide", sessions, sessions * session_deals)


@dataclass(frozen=True)
class TournamentJob:
    """Everything a worker needs (picklable)."""

    rules: Rules
    bots: tuple[str, ...]
    session_deals: int
    records: str | None = None  # a folder: one game record per session and arrangement


def session_record_name(rules: Rules, seed: int, lineup: Sequence[str]) -> str:
    """File name of one session's record in one arrangement (the session's seed names its
    decks; the lineup the bot in each seat)."""
    return f"{rules.id.replace('/', '_')}-session{seed:016x}-{'-'.join(lineup)}.json"


def play_session_duplicate(job: TournamentJob, seed: int) -> SessionResult:
    """One session's decks, played once per arrangement of the bots."""
    rules = job.rules
    n = rules.players
    tally: SessionResult = {b: BotTally() for b in dict.fromkeys(job.bots)}
    for lineup in arrangements(job.bots, n):
        deck_rng = random.Random(derive_seed(seed, 0))
        seat_bots = [make_bot(kind, rules.family, random.Random(derive_seed(seed, 1 + seat)))
                     for seat, kind in enumerate(lineup)]
        table = Table(rules, [f"P{i + 1}" for i in range(n)], draw_first_dealer(rules, deck_rng))
        for _ in range(job.session_deals):
            state = table.start_deal(table.shuffled_deck(deck_rng))
            while not state.is_terminal():
                seat = state.current_player()
                table.apply_id(seat_bots[seat].act(state, seat))
            final = state.view(None)
            net = state.returns()
            for seat, kind in enumerate(lineup):
                tally[kind].add(net[seat], role_of(rules.family, final, seat))
        if job.records is not None:
            save(table_to_record(table), Path(job.records) / session_record_name(rules, seed, lineup))
    return tally


def tournament_chunk(job: TournamentJob, chunk: Chunk) -> list[SessionResult]:
    return [play_session_duplicate(job, derive_seed(chunk.seed, i)) for i in range(chunk.size)]


@dataclass
class TournamentResult:
    bots: list[str]
    sessions: list[SessionResult]
    session_deals: int
    arrangements: int
    seed: int
    outcome: BatchOutcome[list[SessionResult]]

    def per_bot(self) -> dict[str, Interval]:
        """Mean net per deal of each bot, with a 95 % interval over sessions."""
        return {b: mean_interval([s[b].net / s[b].deals for s in self.sessions]) for b in self.bots}

    def pairs(self) -> list[tuple[str, str, Interval]]:
        """Every pair of bots: the mean of their per-session differences (duplicate pairing)."""
        out = []
        for a, b in itertools.combinations(self.bots, 2):
            first = [s[a].net / s[a].deals for s in self.sessions]
            second = [s[b].net / s[b].deals for s in self.sessions]
            out.append((a, b, paired_difference_interval(first, second)))
        return out

    def roles(self) -> dict[str, dict[str, tuple[Interval, int]]]:
        """Per bot and role: mean net per deal in that role (sessions as clusters), and deals."""
        out: dict[str, dict[str, tuple[Interval, int]]] = {}
        for b in self.bots:
            names = sorted({r for s in self.sessions for r in s[b].roles})
            out[b] = {}
            for role in names:
                totals = [s[b].roles[role][0] for s in self.sessions if role in s[b].roles]
                sizes = [s[b].roles[role][1] for s in self.sessions if role in s[b].roles]
                out[b][role] = (clustered_mean_interval(totals, sizes), sum(sizes))
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "bots": self.bots,
            "seed": self.seed,
            "sessions": len(self.sessions),
            "session_deals": self.session_deals,
            "arrangements": self.arrangements,
            "deals_per_arrangement": len(self.sessions) * self.session_deals,
            "complete": self.outcome.complete,
            "problems": self.outcome.problems("sessions"),
            "per_bot": {b: i.to_json() for b, i in self.per_bot().items()},
            "pairs": [{"first": a, "second": b, "difference": i.to_json(),
                       **verdict(i, self.session_deals).to_json()} for a, b, i in self.pairs()],
            "roles": {b: {role: {**i.to_json(), "deals": d} for role, (i, d) in roles.items()}
                      for b, roles in self.roles().items()},
        }


def run_tournament(rules: Rules, bots: Sequence[str], deals: int, seed: int, backend: Backend,
                   session_deals: int = DEFAULT_SESSION_DEALS,
                   progress: ProgressCallback | None = None,
                   on_result: Callable[[Chunk, Any], None] | None = None,
                   records: str | Path | None = None) -> TournamentResult:
    """Play ``deals`` deals per arrangement, in sessions of ``session_deals`` deals. With
    ``records`` (a folder, made if missing) every session writes its game record there, once
    per arrangement (``session_record_name``; ``stammtisch replay`` reads them)."""
    names = list(dict.fromkeys(bots))
    if len(names) < 2:
        raise ValueError("a tournament needs at least two different bots")
    lineups = arrangements(names, rules.players)
    sessions = max(1, -(-deals // session_deals))
    if records is not None:
        Path(records).mkdir(parents=True, exist_ok=True)
    job = TournamentJob(rules, tuple(names), session_deals, None if records is None else str(records))
    chunks = plan_chunks(sessions, SESSIONS_PER_CHUNK, seed)
    outcome = run_batch(functools.partial(tournament_chunk, job), chunks, backend, progress, on_result)
    played = [s for _, results in outcome.results for s in results]
    return TournamentResult(names, played, session_deals, len(lineups), seed, outcome)
