"""The numbers behind ``stammtisch report``: a simulation with more eyes, in chunks like simulate.

Besides the simulate summary, each chunk (table session) collects:
- every game: the dealer's net per deal (what dealing, with its ante, costs);
- Tippen: per *hand class* (trumps in hand, holding the trump Ace or King) at the moment a player
  decides to tap or pass: how often he taps, how often a played hand takes no trick (bête), and
  his net in the deals he tapped; the pot after each deal of a session; how often the pot is
  emptied (won back by the tricks);
- Tapp: per contract how often it is played, how often the declarer wins, his net; the
  declarer's card points; Ramsch: the loser's card points and how often a player is Jungfer
  (takes no trick).
Hands come from the public view of the seat (``state.view(seat)["hand"]``), never from engine
internals. Everything adds up in chunk order, so a report is the same for any number of workers.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..table import Table
from .batch import Backend, BatchOutcome, Chunk, ProgressCallback, plan_chunks, run_batch
from .simulate import SimulationJob, SimulationSummary, play_session
from .stats import Interval, mean_interval_from_moments, wilson_interval

HIGH_TRUMPS = ("A", "K")


def hand_class(view: dict[str, Any]) -> str:
    """A Tippen hand's class as a player sees it when he decides: trumps held, a high trump or not."""
    trump = view.get("trump")
    hand = view.get("hand") or []
    if trump is None:
        return "trump unknown"
    trumps = [card for card in hand if card[0] == trump]
    high = any(card[1] in HIGH_TRUMPS for card in trumps)
    label = f"{len(trumps)} trump" + ("" if len(trumps) == 1 else "s")
    return label + (" incl. A/K" if high else "")


@dataclass
class Tally:
    """Count, sum and sum of squares of a per-deal value, and how often it was a success."""

    count: int = 0
    successes: int = 0
    total: int = 0
    squares: int = 0

    def add(self, value: int, success: bool) -> None:
        self.count += 1
        self.successes += int(success)
        self.total += value
        self.squares += value * value

    def merge(self, other: Tally) -> None:
        self.count += other.count
        self.successes += other.successes
        self.total += other.total
        self.squares += other.squares

    def mean(self) -> Interval | None:
        return mean_interval_from_moments(self.count, self.total, self.squares) if self.count else None

    def rate(self) -> Interval:
        return wilson_interval(self.successes, self.count)


@dataclass
class HandClassStats:
    decisions: Tally = field(default_factory=Tally)  # successes: taps
    played: Tally = field(default_factory=Tally)  # hands played after tapping; successes: >= 1 trick; value: net

    def merge(self, other: HandClassStats) -> None:
        self.decisions.merge(other.decisions)
        self.played.merge(other.played)


@dataclass
class ReportStats:
    family: str
    hand_classes: dict[str, HandClassStats] = field(default_factory=dict)
    pot_after_deal: list[int] = field(default_factory=list)  # by deal number in the session: sum over sessions
    pot_sessions: list[int] = field(default_factory=list)  # how many sessions reached that deal number
    pot_emptied: int = 0  # deals after which pot and reserve were empty
    contracts: dict[str, Tally] = field(default_factory=dict)  # successes: declarer gained; value: his net
    declarer_points: Counter[int] = field(default_factory=Counter)
    ramsch_loser_points: Counter[int] = field(default_factory=Counter)
    ramsch_jungfer: int = 0  # Ramsch deals in which someone took no trick
    dealer: Tally = field(default_factory=Tally)  # the dealer's net per deal (what dealing costs); successes: gained

    def merge(self, other: ReportStats) -> None:
        self.dealer.merge(other.dealer)
        for label, stats in other.hand_classes.items():
            self.hand_classes.setdefault(label, HandClassStats()).merge(stats)
        for i, pot in enumerate(other.pot_after_deal):
            if i == len(self.pot_after_deal):
                self.pot_after_deal.append(0)
                self.pot_sessions.append(0)
            self.pot_after_deal[i] += pot
            self.pot_sessions[i] += other.pot_sessions[i]
        self.pot_emptied += other.pot_emptied
        for name, tally in other.contracts.items():
            self.contracts.setdefault(name, Tally()).merge(tally)
        self.declarer_points.update(other.declarer_points)
        self.ramsch_loser_points.update(other.ramsch_loser_points)
        self.ramsch_jungfer += other.ramsch_jungfer


class ReportWatcher:
    """Collects ``ReportStats`` while a session is played (``play_session``'s watcher)."""

    def __init__(self, family: str):
        self.stats = ReportStats(family)
        self.classes: dict[int, str] = {}  # this deal: seat → class at his tap-or-pass decision
        self.tapped: set[int] = set()
        self.deal_number = 0

    def before_action(self, state: Any, seat: int, action: int) -> None:
        if self.stats.family != "tippen":
            return
        word = state.action_to_string(action)
        if word in ("tap", "pass") and seat not in self.classes:
            label = hand_class(state.view(seat))
            self.classes[seat] = label
            stats = self.stats.hand_classes.setdefault(label, HandClassStats())
            stats.decisions.add(0, word == "tap")
            if word == "tap":
                self.tapped.add(seat)

    def after_deal(self, table: Table, final_state: Any) -> None:
        result = table.deals[-1].result
        assert result is not None
        net = result.net(table.num_players)
        summary = result.summary
        self.stats.dealer.add(net[result.dealer], net[result.dealer] > 0)
        if self.stats.family == "tippen":
            self._tippen_deal(table, summary, net)
        else:
            self._tapp_deal(summary, net)
        self.classes, self.tapped = {}, set()
        self.deal_number += 1

    def _tippen_deal(self, table: Table, summary: dict[str, Any], net: dict[int, int]) -> None:
        stats = self.stats
        tricks = {int(seat): n for seat, n in summary.get("tricks", {}).items()}
        if summary.get("outcome") == "played":
            for seat in self.tapped:
                if seat in tricks:
                    stats.hand_classes[self.classes[seat]].played.add(net[seat], tricks[seat] > 0)
        pot = table.ledger.pot + table.ledger.reserve
        if len(stats.pot_after_deal) == self.deal_number:
            stats.pot_after_deal.append(0)
            stats.pot_sessions.append(0)
        stats.pot_after_deal[self.deal_number] += pot
        stats.pot_sessions[self.deal_number] += 1
        stats.pot_emptied += int(pot == 0)

    def _tapp_deal(self, summary: dict[str, Any], net: dict[int, int]) -> None:
        stats = self.stats
        contract = summary.get("contract")
        points = summary.get("card_points", {})
        if contract == "ramsch":
            stats.ramsch_loser_points[max(points.values())] += 1
            stats.ramsch_jungfer += int(any(n == 0 for n in summary.get("tricks", {}).values()))
        elif contract and summary.get("declarer") is not None:
            declarer = summary["declarer"]
            stats.contracts.setdefault(contract, Tally()).add(net[declarer], net[declarer] > 0)
            if "declarer" in points:
                stats.declarer_points[points["declarer"]] += 1


@dataclass
class ReportChunk:
    summary: SimulationSummary
    stats: ReportStats


def report_chunk(job: SimulationJob, chunk: Chunk) -> ReportChunk:
    """One chunk = one table session, watched."""
    watcher = ReportWatcher(job.rules.family)
    summary, _ = play_session(job.rules, chunk.size, random.Random(chunk.seed), list(job.bots),
                              list(job.players), job.first_dealer, watcher=watcher)
    return ReportChunk(summary, watcher.stats)


@dataclass
class ReportRun:
    job: SimulationJob
    summary: SimulationSummary
    stats: ReportStats
    outcome: BatchOutcome[ReportChunk]
    seed: int
    chunk_deals: int


def run_report(job: SimulationJob, deals: int, seed: int, backend: Backend, chunk_deals: int,
               progress: ProgressCallback | None = None) -> ReportRun:
    """The report's simulation: the same chunks and seeds as ``simulate`` (same summary)."""
    outcome = run_batch(functools.partial(report_chunk, job), plan_chunks(deals, chunk_deals, seed), backend,
                        progress)
    summary = SimulationSummary(players=list(job.players))
    stats = ReportStats(job.rules.family)
    for _, part in outcome.results:
        summary.merge(part.summary)
        stats.merge(part.stats)
    return ReportRun(job, summary, stats, outcome, seed, chunk_deals)
