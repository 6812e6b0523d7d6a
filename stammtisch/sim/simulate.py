"""Run deals between bots at a table and summarise them; whole jobs in chunks on many workers.

A job of K deals is cut into chunks (``stammtisch.sim.batch``); each chunk is one table session:
a fresh table with its own seed, where the dealer rotates and the pot carries from deal to deal
as at a real table. The per-chunk summaries add up, in chunk order, to the job's summary, which
is therefore the same for any number of workers and any backend.
"""

from __future__ import annotations

import functools
import random
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..bots import make_bot
from ..games.tapp import Kind
from ..table import Table, draw_first_dealer
from .batch import Backend, BatchOutcome, Chunk, ProgressCallback, plan_chunks, run_batch
from .stats import Interval, clustered_mean_interval, mean_interval_from_moments, wilson_interval

DEFAULT_CHUNK_DEALS = 100
# Below this many sessions the per-session interval has too few degrees of freedom to be
# useful; the per-deal interval is used instead (and says so in its ``method``).
MIN_SESSIONS_FOR_CLUSTERED_CI = 10


def unit_of(rules: Any) -> str:
    """What the balances count: Tippen counters, historic Tapp game points, Modern Tapp cents."""
    if rules.family == "tippen":
        return "counters"
    return "cents" if rules.id == "tapp/modern" else "game points"


def has_pot(rules: Any) -> bool:
    """Tippen always plays for a pot; Tapp only historic Tapp with the option pot=true."""
    return rules.family == "tippen" or bool(getattr(rules, "pot", False))


@dataclass
class SeatStats:
    """Per seat: the money per deal (moments and distribution) and the decisions counted."""

    net_total: int = 0
    net_squares: int = 0
    net_counts: Counter[int] = field(default_factory=Counter)  # net of one deal → how many deals
    declarations: int = 0  # Tippen: tap-or-pass decisions taken
    taps: int = 0
    active: int = 0  # Tippen: hands played as an active player in played deals
    betes: int = 0  # Tippen: of those, hands without a trick
    declarer: int = 0  # Tapp: deals as declarer
    declarer_wins: int = 0  # Tapp: of those, deals the declarer gained

    def merge(self, other: SeatStats) -> None:
        self.net_total += other.net_total
        self.net_squares += other.net_squares
        self.net_counts.update(other.net_counts)
        self.declarations += other.declarations
        self.taps += other.taps
        self.active += other.active
        self.betes += other.betes
        self.declarer += other.declarer
        self.declarer_wins += other.declarer_wins


@dataclass
class SimulationSummary:
    players: list[str]
    deals: int = 0
    balances: dict[str, int] = field(default_factory=dict)
    pot: int = 0  # what the pots (with reserves) hold at the end of the sessions
    outcomes: Counter[str] = field(default_factory=Counter)
    taps: int = 0  # Tippen: tap declarations ("ich spiele")
    betes: int = 0  # Tippen: active players who took no trick
    contracts: Counter[str] = field(default_factory=Counter)  # Tapp: contract → count
    declarer_wins: int = 0  # Tapp: contracts whose declarer gained
    seats: list[SeatStats] = field(default_factory=list)
    sessions: list[tuple[int, list[int]]] = field(default_factory=list)  # per session: deals, net per seat

    def __post_init__(self) -> None:
        if not self.seats:
            self.seats = [SeatStats() for _ in self.players]
        if not self.balances:
            self.balances = {name: 0 for name in self.players}

    def merge(self, other: SimulationSummary) -> None:
        """Add another session's (chunk's) summary to this one."""
        if other.players != self.players:
            raise ValueError("summaries of different players cannot be merged")
        self.deals += other.deals
        for name, value in other.balances.items():
            self.balances[name] += value
        self.pot += other.pot
        self.outcomes.update(other.outcomes)
        self.taps += other.taps
        self.betes += other.betes
        self.contracts.update(other.contracts)
        self.declarer_wins += other.declarer_wins
        for mine, theirs in zip(self.seats, other.seats, strict=True):
            mine.merge(theirs)
        self.sessions.extend(other.sessions)

    def mean_interval(self, seat: int) -> Interval:
        """Mean net per deal of ``seat`` with its 95% interval (per session when there are enough)."""
        if len(self.sessions) >= MIN_SESSIONS_FOR_CLUSTERED_CI:
            return clustered_mean_interval([nets[seat] for _, nets in self.sessions],
                                           [deals for deals, _ in self.sessions])
        stats = self.seats[seat]
        return mean_interval_from_moments(self.deals, stats.net_total, stats.net_squares)

    def to_json(self, family: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "players": self.players,
            "deals": self.deals,
            "balances": self.balances,
            "pot": self.pot,
            "outcomes": dict(self.outcomes),
        }
        if family == "tippen":
            out.update(taps=self.taps, betes=self.betes)
        else:
            out.update(contracts=dict(self.contracts), declarer_wins=self.declarer_wins)
        out["sessions"] = len(self.sessions)
        out["per_player"] = {name: self._player_json(i, family) for i, name in enumerate(self.players)}
        out["rates"] = self._rates_json(family)
        return out

    def _player_json(self, seat: int, family: str) -> dict[str, Any]:
        stats = self.seats[seat]
        entry: dict[str, Any] = {"mean_per_deal": self.mean_interval(seat).to_json() if self.deals else None}
        if family == "tippen":
            entry["tap_rate"] = rate_json(stats.taps, stats.declarations, "taps", "tap-or-pass decisions")
            entry["bete_rate"] = rate_json(stats.betes, stats.active, "bêtes", "hands played")
        else:
            entry["declarer_rate"] = rate_json(stats.declarer, self.deals, "deals as declarer", "deals")
            entry["declarer_win_rate"] = rate_json(stats.declarer_wins, stats.declarer,
                                                   "won as declarer", "deals as declarer")
        return entry

    def _rates_json(self, family: str) -> dict[str, Any]:
        seats = self.seats
        if family == "tippen":
            return {
                "tap_rate": rate_json(sum(s.taps for s in seats), sum(s.declarations for s in seats),
                                      "taps", "tap-or-pass decisions"),
                "bete_rate": rate_json(sum(s.betes for s in seats), sum(s.active for s in seats),
                                       "bêtes", "hands played"),
            }
        declared = sum(s.declarer for s in seats)
        return {
            "declarer_rate": rate_json(declared, self.deals, "deals with a declarer", "deals"),
            "declarer_win_rate": rate_json(sum(s.declarer_wins for s in seats), declared,
                                           "won by the declarer", "deals with a declarer"),
        }


def rate_json(count: int, of: int, what: str, denominator: str) -> dict[str, Any]:
    """A proportion with its denominator and Wilson 95% interval."""
    interval = wilson_interval(count, of)
    return {"count": count, "of": of, "what": what, "denominator": denominator,
            "rate": interval.to_json()["estimate"], "ci": interval.to_json()["ci"]}


def bots_per_seat(kinds: list[str], num_players: int) -> list[str]:
    """One bot name per seat: the names in order, the last one filling the remaining seats."""
    return (list(kinds) + [kinds[-1]] * num_players)[:num_players]


class DealWatcher(Protocol):
    """Looks at a session as it is played (reports): each action before it is applied, each deal's end."""

    def before_action(self, state: Any, seat: int, action: int) -> None: ...

    def after_deal(self, table: Table, final_state: Any) -> None: ...


def play_deal(table: Table, bots: list[Any], rng: random.Random, watcher: DealWatcher | None = None) -> Any:
    """Play one deal at ``table`` to its end with one bot per seat; returns the final state."""
    state = table.start_deal(table.shuffled_deck(rng))
    apply_id = table.apply_id
    while not state.is_terminal():
        seat = state.current_player()
        action = bots[seat].act(state, seat)
        if watcher is not None:
            watcher.before_action(state, seat, action)
        apply_id(action)
    if watcher is not None:
        watcher.after_deal(table, state)
    return state


def account_deal(summary: SimulationSummary, table: Table, final_state: Any) -> None:
    """Add the last finished deal of ``table`` to ``summary`` (public API: the deal's money and
    what everyone saw, ``observation(None)``)."""
    rules = table.rules
    n = table.num_players
    result = table.deals[-1].result
    assert result is not None
    seen = final_state.observation(None)
    net = result.net(n)
    for seat in range(n):
        stats = summary.seats[seat]
        stats.net_total += net[seat]
        stats.net_squares += net[seat] * net[seat]
        stats.net_counts[net[seat]] += 1
    if rules.family == "tippen":
        summary.outcomes[seen.outcome] += 1
        for seat, word in enumerate(seen.declared):
            if word in ("tap", "pass"):
                summary.seats[seat].declarations += 1
            if word == "tap":
                summary.seats[seat].taps += 1
                summary.taps += 1
        if seen.outcome == "played":
            for seat in seen.active:
                summary.seats[seat].active += 1
                if seen.tricks_won[seat] == 0:
                    summary.seats[seat].betes += 1
                    summary.betes += 1
        return
    declarer = seen.declarer
    summary.outcomes["played" if seen.kind == Kind.RAMSCH or declarer >= 0 else "all-pass"] += 1
    if seen.contract:
        summary.contracts[seen.contract] += 1
        if declarer >= 0:
            summary.seats[declarer].declarer += 1
            if net[declarer] > 0:
                summary.seats[declarer].declarer_wins += 1
                summary.declarer_wins += 1


def close_session(summary: SimulationSummary, table: Table) -> None:
    """Balances and what is left in the pot at the end of the session; the session's totals."""
    summary.deals = len(table.deals)
    summary.balances = table.balances()
    summary.pot = table.ledger.pot + table.ledger.reserve
    summary.sessions = [(summary.deals, [s.net_total for s in summary.seats])]


def simulate(rules: Any, deals: int, seed: int | None = None, bots: list[str] | None = None,
             players: list[str] | None = None, first_dealer: int | None = None,
             progress: Callable[[int], None] | None = None) -> tuple[SimulationSummary, Table]:
    """Play ``deals`` deals at one table (one session); returns the summary and the table.

    The first dealer is drawn by the first Ace dealt (docs/rules-reference.md §2.1) unless a seat is given.
    """
    return play_session(rules, deals, random.Random(seed), bots, players, first_dealer, progress)


def play_session(rules: Any, deals: int, rng: random.Random, bots: list[str] | None = None,
                 players: list[str] | None = None, first_dealer: int | None = None,
                 progress: Callable[[int], None] | None = None,
                 watcher: DealWatcher | None = None) -> tuple[SimulationSummary, Table]:
    n = rules.players
    names = players or default_names(n)
    kinds = bots_per_seat(bots or ["heuristic"], n)
    seat_bots = [make_bot(k, rules.family, random.Random(rng.random())) for k in kinds]
    if first_dealer is None:
        first_dealer = draw_first_dealer(rules, rng)
    table = Table(rules, names, first_dealer)
    summary = SimulationSummary(players=list(names))
    for i in range(deals):
        final_state = play_deal(table, seat_bots, rng, watcher)
        account_deal(summary, table, final_state)
        if progress:
            progress(i + 1)
    close_session(summary, table)
    return summary, table


def default_names(num_players: int) -> list[str]:
    return [f"P{i + 1}" for i in range(num_players)]


# --- jobs in chunks ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SimulationJob:
    """Everything a worker needs to play one chunk (picklable)."""

    rules: Any
    players: tuple[str, ...]
    bots: tuple[str, ...]
    first_dealer: int | None = None
    keep_records: bool = False


@dataclass
class ChunkOutput:
    summary: SimulationSummary
    record: dict[str, Any] | None
    cpu_seconds: float = 0.0  # the worker's CPU time for this chunk (bench/scale.py), not in the summary


def simulate_chunk(job: SimulationJob, chunk: Chunk) -> ChunkOutput:
    """One chunk = one table session of ``chunk.size`` deals with the chunk's own seed."""
    start = time.process_time()
    summary, table = play_session(job.rules, chunk.size, random.Random(chunk.seed), list(job.bots),
                                  list(job.players), job.first_dealer)
    record = None
    if job.keep_records:
        from ..record import table_to_record  # records only when asked: a plain job starts without

        record = table_to_record(table)
    return ChunkOutput(summary, record, time.process_time() - start)


@dataclass
class SimulationRun:
    """A whole job: the summary of the finished chunks, and what the batch says about the rest."""

    summary: SimulationSummary
    outcome: BatchOutcome[ChunkOutput]
    seed: int
    chunk_deals: int

    @property
    def worker_cpu_seconds(self) -> float:
        """CPU time the workers spent playing the finished chunks (wherever they ran)."""
        return sum(output.cpu_seconds for _, output in self.outcome.results)


def new_seed() -> int:
    """A fresh seed for a job the user gave none; it is reported so the job can be repeated."""
    return secrets.randbits(48)


def run_simulation(job: SimulationJob, deals: int, seed: int, backend: Backend,
                   chunk_deals: int = DEFAULT_CHUNK_DEALS, progress: ProgressCallback | None = None,
                   on_record: Callable[[Chunk, dict[str, Any]], None] | None = None) -> SimulationRun:
    """Play ``deals`` deals in chunks of ``chunk_deals`` on ``backend``; merge in chunk order."""
    chunks = plan_chunks(deals, chunk_deals, seed)

    def received(chunk: Chunk, output: ChunkOutput) -> None:
        if on_record is not None and output.record is not None:
            on_record(chunk, output.record)
            output.record = None  # written: no need to keep it in memory

    outcome = run_batch(functools.partial(simulate_chunk, job), chunks, backend, progress, received)
    summary = SimulationSummary(players=list(job.players))
    for _, output in outcome.results:
        summary.merge(output.summary)
    return SimulationRun(summary, outcome, seed, chunk_deals)
