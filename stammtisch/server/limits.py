"""Every limit of the web table in one place: what a public server allows, with defaults that
suit a club server (a few dozen tables, a few hundred players). ``stammtisch serve`` and
``create_app`` take a ``ServerLimits``; tests and the soak bench pass their own.

``OPTION_MAXIMA`` bounds the numeric rule options a web table accepts: the maxima the rule
sets document in their option specs (``stammtisch/rules/``). Without them a stake of 3
followed by 4,299 zeros was accepted and broke the table at its fourth deal.
"""

from __future__ import annotations

from collections.abc import Hashable, MutableMapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..rules import PRESETS, TappRules, TippenRules

K = TypeVar("K", bound=Hashable)


def _option_maxima() -> dict[str, int]:
    """The largest value per numeric rule option: the rule sets' own documented maxima
    (``OptionSpec.maximum``), and the most players any rule set seats."""
    out: dict[str, int] = {"players": max(p.max_players_whist52 or p.max_players for p in PRESETS.values())}
    for cls in (TippenRules, TappRules):
        for name, spec in cls.option_specs().items():
            if spec.maximum is not None:
                out[name] = max(out.get(name, 0), spec.maximum)
    return out


# The largest value a web table accepts per numeric rule option (from the rule sets).
OPTION_MAXIMA: dict[str, int] = _option_maxima()
# The longest text an option value may have (a number of 20 digits is far beyond any maximum).
OPTION_TEXT_MAX = 32

# The deal limit a table may ask for, and the default for a table without a human seat.
MAX_DEALS_LIMIT = 10_000


@dataclass(frozen=True)
class ServerLimits:
    """The limits of one server. Times are in seconds."""

    # --- tables: how many, how fast they are made, when idle ones are archived
    max_live_tables: int = 500  # tables loaded at once; creation beyond is refused (429)
    creations_per_minute: float = 10.0  # new tables per client address, refilled steadily
    creation_burst: int = 10  # … of which this many at once
    tables_per_address: int = 20  # live tables made by one client address (rematches too)
    unjoined_expiry: float = 24 * 3600.0  # a table nobody joined is archived after this
    unstarted_after: float = 3600.0  # … one that never started, after this without events or clients
    lonely_after: float = 6 * 3600.0  # … one that never had two people at it, likewise
    abandoned_after: float = 14 * 24 * 3600.0  # … any other table, likewise
    sweep_interval: float = 60.0  # how often expiry is checked
    watcher_grace: float = 30.0  # bots play on this long after the last person left
    bot_table_max_deals: int = 100  # the most deals a table without a human seat may play
    search_bots_per_address: int = 8  # search-bot seats (pimc and its levels) at the live tables of one address
    # --- requests and messages: sizes bounded before they are parsed
    max_body: int = 65_536  # bytes of an HTTP request body, enforced while it streams
    # … of a record file sent to be replayed or analysed (POST /api/replay, /api/replay/analysis):
    # an evening's record, below the 1 MiB the nginx site of docs/deployment.md lets through there
    max_record_body: int = 960 * 1024
    max_message: int = 4_096  # bytes of a WebSocket message
    max_json_depth: int = 32  # nesting of a WebSocket message
    # --- connections: per table, per address and in all, so one client cannot starve the rest
    conns_per_table: int = 40  # WebSocket clients of one table
    ws_per_address: int = 60  # WebSocket clients from one address, all tables together
    seat_rate: float = 20.0  # messages per second per seat (all its sockets together)
    seat_burst: float = 20.0
    presence_delay: float = 0.25  # presence changes within this window are sent once
    header_timeout: float = 10.0  # a request's headers must be complete within this
    max_header_bytes: int = 16_384  # a request's headers in all
    keep_alive_timeout: float = 5.0  # an idle HTTP connection is closed after this
    conns_per_address: int = 200  # TCP connections from one address
    max_connections: int = 2_000  # TCP connections in all (stay below the open-file limit)
    # --- social: turn timer, lobby, chat
    turn_seconds_min: int = 10  # a table's turn timer is 0 (off) or in this range
    turn_seconds_max: int = 600
    pace_min: float = 2.0  # seconds between deals a table may ask for (its "pace")
    pace_max: float = 60.0
    chat_max_chars: int = 200  # characters of one chat line
    chat_rate: float = 0.5  # chat lines per second per seat (all its sockets together)
    chat_burst: float = 4.0
    hint_rate: float = 0.2  # hints per second at a practice table per asking address (each a search)
    hint_burst: float = 3.0
    chat_keep: int = 50  # chat lines a client is shown when it connects
    rematch_seconds: float = 60.0  # a rematch question unanswered this long ends as declined
    listed_max: int = 100  # tables the lobby lists at once
    # --- downloads and analyses: each a burst, then refilled; built off the event loop
    records_per_minute: float = 10.0  # record downloads per token
    record_burst: int = 5
    record_cache_bytes: int = 32 * 1024 * 1024  # built records kept (per finished-deal count)
    deals_per_minute: float = 30.0  # past deals (the Deals panel) not answered from the cache, per token
    deal_burst: int = 10
    analyses_per_minute: float = 10.0  # analyses not answered from the cache, per token
    analysis_burst: int = 5
    analyses_per_minute_per_address: float = 30.0  # … per client address
    analysis_burst_per_address: int = 10
    analysis_queue: int = 16  # analyses waiting or running in all (one per table at a time)
    # records, past deals and analyses read from the database (not kept), per client address;
    # taken before the read, also before the token of an archived table is looked up
    stored_reads_per_minute_per_address: float = 60.0
    stored_read_burst_per_address: int = 20
    seat_takes_per_minute: float = 10.0  # lobby seats taken per client address
    # --- the database: how long a commit may take, and how commits are grouped
    commit_deadline: float = 5.0  # a commit is retried with backoff for at most this long
    # a group commit waits up to this long for more events to join it: each commit has a
    # fixed cost (a transaction, its WAL pages, a wake-up of every waiting table), so under
    # load a few milliseconds more latency per action buy fewer, larger commits, whose
    # events then run back to back. 20 ms is where the CPU saved per action levels off; a
    # longer window mainly adds latency (p99) and lowers the actions played a second. To
    # weigh a change, run bench/server_side_by_side.py (the CPU per action) and
    # bench/server_load.py (p99, actions a second). The whole window only when busy
    # (``commit_busy_rows``): see TableManager.commit_wait
    commit_window: float = 0.020
    # events stored a second from which a group commit waits the whole commit_window (fewer:
    # that share of it): only a busy server needs the CPU that batching saves, and a quieter
    # one answers sooner. The threshold sits between a full load (bench/server_load.py at
    # 1,000 tables: ``events_committed`` / ``seconds``) and the soak's quieter 200 tables.
    commit_busy_rows: float = 1500.0
    sqlite_busy_ms: int = 500  # one SQLite attempt waits this long for a lock
    # a group of events the database has not committed after this long goes to the spill
    # file (spill.py) and the tables play on; None: no spill file, events wait for the
    # database (up to commit_deadline) or are refused with "try again"
    spill_after: float | None = 0.05


def check_option_bounds(options: dict[str, Any]) -> str | None:
    """Why the raw options are out of bounds, or None. Checked before the rule set parses
    them (so a huge number is never even converted)."""
    for name, raw in options.items():
        if isinstance(raw, str) and len(raw) > OPTION_TEXT_MAX:
            return f"option {name} is too long ({OPTION_TEXT_MAX} characters at most)"
        maximum = OPTION_MAXIMA.get(name)
        if maximum is None or raw is None or isinstance(raw, bool):
            continue
        try:
            value = int(str(raw).strip())
        except ValueError:
            continue  # not a number: the rule set explains what it takes
        if value > maximum:
            return f"option {name} may be at most {maximum}, not {value}"
    return None


def check_rules_bounds(rules: Any) -> str | None:
    """Why a built rule set exceeds a maximum (an option that defaults from another), or None."""
    for name, maximum in OPTION_MAXIMA.items():
        value = getattr(rules, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > maximum:
            return f"option {name} may be at most {maximum}, not {value}"
    return None


def count_down(counts: MutableMapping[K, int], key: K) -> bool:
    """One less of ``key`` (connections of an address, jobs out for an owner); at zero the key
    goes, so the mapping holds only live counts and does not grow with every address ever
    seen. True when it went."""
    left = counts.get(key, 0) - 1
    if left > 0:
        counts[key] = left
        return False
    counts.pop(key, None)
    return True
