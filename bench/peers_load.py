"""The web table on several server processes over one PostgreSQL database, under load.

Starts a throw-away PostgreSQL server, then for each configuration (``--servers``, default
1 and 2 processes: A and B; with more than one, once for each ``--routing``) a fresh
database and that many ``stammtisch serve`` processes on it. It creates ``--tables`` tables
round-robin over the processes (POST /api/tables on process k) and connects the three seat
clients of each table as the proxy would send them (``--routing``):

  spread   seat s of table i to process (i + s) mod n, as nginx's ``least_conn`` spreads
           them: with two processes every table has clients on both, and a client on the
           process that does not run its table is relayed to the one that does
  table    every client of a table to process crc32(table id) mod n, as nginx's consistent
           ``hash`` on the table id in the path sends them (docs/deployment.md): a table
           made elsewhere is handed to that process when its first client comes, and
           nothing is relayed after that

The clients are bench/server_load.py's: each answers its turns with a random legal action
after ``--think-ms``.

One JSON line per configuration, then a summary line. A configuration's figures:

  actions_per_s, p50_ms, p90_ms, p99_ms  actions answered a second; latency from sending an
                          action to receiving the state that carries it (same client)
  errors                  refusals the clients got
  lost_events             0 when sound. Every state a client saw must be in the database with
                          the same content (its deal's log length, the seat and the kind of the
                          last action), each client must have seen its table's events without
                          a gap up to the last one committed, and the serving process's count
                          must be the database's: ``lost_detail`` tells which check failed
  cpu_s                   CPU seconds while the tables played: the server processes (and
                          their children), PostgreSQL (the postmaster and its backends), the
                          clients (this process), and the rest of the machine (other jobs)
  us_per_action           the same per action answered
  cores_busy              the whole machine's busy cores meanwhile (2.0 of 2: saturated)
  relayed_clients         the share of clients on a process that does not run their table
  saturation              the same tables again with --think-ms 0 for --saturation-seconds:
                          the most actions a second this machine gives the configuration
  takeover (2 processes)  a table run by process 0, its three clients on process 1; process 0
                          is killed with SIGKILL, the clients reconnect to process 1 as the
                          page does (after 0.5 s, 1 s, 2 s ... at most 30 s, each pause half
                          fixed and half random) and act at once:
                          ``takeover_s`` is from the kill to the first event after it that a
                          client sees (``reconnected_s``: to its first state); the lease must
                          expire first (``lease_left_s`` at the kill, up to LEASE_SECONDS), and
                          the backoff rounds the wait up to its next attempt. ``lost_events``:
                          as above, and acknowledged events that did not survive

The summary, for each routing: ``ratio_2_to_1``, B's actions a second at saturation over
A's, and ``ratio_cpu_bound`` (below); and ``cpus``.
On a machine of few cores the ratio is bounded by the cores, not by the servers: PostgreSQL,
every server process and the clients (one Python process, the measuring instrument) share
them. With one process the server's event loop fills at most one core while PostgreSQL and
the clients use the other; with two, everything shares both, and each action costs more
CPU in all (a relayed client's messages pass through two processes). So the ratio is at
most about cpus / (B's CPU seconds per action, all processes) / (A's actions a second), on
an otherwise idle machine: ``ratio_cpu_bound`` gives that figure, well below 2 on 2 cores
(other jobs on the machine lower the ratio further: see ``cpu_s.other``); it can never pass
cpus / A's busy cores, as A's PostgreSQL and clients take their share too. With a core for
each server process and PostgreSQL and the clients elsewhere, what two processes give is
2 x A's server CPU per action / B's (``ratio_servers``): 2.0 when a second process costs
no CPU per action in all, less as relaying costs the servers more.

PostgreSQL runs with fsync=off unless --fsync (``pg_fsync`` says which), as in the tests: a
throw-away server on a shared disk measures the disk's flushes otherwise.

    python bench/peers_load.py [--tables 1000] [--seconds 30] [--saturation-seconds 15]
                                 [--think-ms 250] [--servers 1,2] [--routing spread,table]
                                 [--fsync]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import glob
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import server_load as sl  # noqa: E402  (the clients, the HTTP and CPU helpers)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from throwaway_postgres import ThrowAwayPostgres  # noqa: E402  (as the tests' PostgreSQL)

ROOT = Path(__file__).resolve().parent.parent
#: the per-address caps of a public server: every client of the bench comes from 127.0.0.1
LIMITS = {name: 100_000 for name in (
    "tables_per_address", "creations_per_minute", "creation_burst", "ws_per_address",
    "conns_per_address", "max_live_tables", "seat_rate", "seat_burst")}
LIMITS["max_connections"] = 10_000  # a client per seat, and within the open-file limit


# ----------------------------------------------------------------------------- CPU
def tree_cpu(root: int) -> float:
    """CPU seconds of a process and all its descendants, those they have reaped included
    (Linux /proc: utime + stime + cutime + cstime of each). A PostgreSQL backend's command
    line names no data directory, so its postmaster's tree is how they are all found; a
    backend that ends between two readings moves into the postmaster's cutime, whole."""
    children: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            f = Path(stat).read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # ended meanwhile
            continue
        pid = int(stat.split("/")[2])
        children.setdefault(int(f[1]), []).append(pid)
        times[pid] = sum(int(x) for x in f[11:15]) / os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += times.get(pid, 0.0)
        todo += children.get(pid, [])
    return total


def cpu_now(servers: list[int], postgres: int) -> dict[str, float]:
    return {"servers": sum(tree_cpu(p) for p in servers), "postgres": tree_cpu(postgres),
            "clients": time.process_time(), "machine": sl.machine_cpu_seconds()}


# ----------------------------------------------------------------------------- servers
class Servers:
    """``n`` ``stammtisch serve`` processes on one database, each with its own data folder
    and log, ready once each answers HTTP. The first starts alone and makes the database's
    schema: the bench measures play, not several processes making it at once."""

    def __init__(self, root: Path, db_url: str, n: int, pace: float, peer_flag: bool):
        self.procs: list[subprocess.Popen] = []
        self.urls: list[str] = []
        self.logs: list[Path] = []
        limits = [f"--limit={k}={v}" for k, v in {**LIMITS, "pace_min": pace}.items()]
        try:
            for k in range(n):
                port = sl.free_port()
                url = f"http://127.0.0.1:{port}"
                data = root / f"server{k}"
                data.mkdir(parents=True)
                cmd = [sys.executable, "-m", "stammtisch", "serve", "--database-url", db_url,
                       "--port", str(port), *limits, *(["--peer-url", url] if peer_flag else [])]
                env = dict(os.environ, STAMMTISCH_DATA=str(data),
                           PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
                with open(data / "log", "wb") as out:
                    self.procs.append(subprocess.Popen(cmd, env=env, stdout=out,
                                                       stderr=subprocess.STDOUT))
                self.urls.append(url)
                self.logs.append(data / "log")
                if k == 0:
                    self.wait_listening(0)
            for k in range(1, n):
                self.wait_listening(k)
        except BaseException:
            self.stop()
            raise

    def wait_listening(self, k: int) -> None:
        proc, url, deadline = self.procs[k], self.urls[k], time.monotonic() + 120
        while True:
            try:
                sl.http_json(None, url, "/api/rulesets", timeout=1)
                return
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the server at {url} did not start:\n"
                                     + self.logs[k].read_text(errors="replace")[-3000:]) from None
                time.sleep(0.2)

    def live_pids(self) -> list[int]:
        return [p.pid for p in self.procs if p.poll() is None]

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


# ----------------------------------------------------------------------------- clients
FINGERPRINTS: dict[tuple, tuple] = {}  # each fingerprint once: the clients keep many


def fingerprint(view: dict | None) -> tuple | None:
    """What a state is, alike in every seat's view and derivable from the database: the
    length of its deal's log and the seat and kind of the last action (the kind only: an
    exchange names its cards to its own seat alone)."""
    if not view or "log" not in view:
        return None
    log = view["log"]
    fp = (len(log), log[-1][0], str(log[-1][1]).split(":", 1)[0]) if log else (0,)
    return FINGERPRINTS.setdefault(fp, fp)


class Player(sl.Client):
    """bench/server_load.py's client, which also reconnects when its connection ends (as the
    page does: after a pause of 0.5 s, 1 s, 2 s ... at most 30 s, each half fixed and half
    random, again from 0.5 s after a connection that lasted 10 s) and remembers each event's
    fingerprint, to compare clients and database event by event."""

    def __init__(self, *args: Any, **kw: Any):
        super().__init__(*args, **kw)
        self.seen: dict[int, tuple] = {}
        self.running = True
        self.retry = 0
        self.fresh = False  # the next state is a reconnected client's first
        self.went_back = 0  # events a reconnected client found undone
        self.differ = 0  # events seen twice with different content
        self.first_after: float | None = None  # when a reconnected client got its first state

    async def run(self) -> None:
        while True:
            started = time.monotonic()
            try:
                await super().run()
            except OSError:  # refused, ended, or no answer in time (a TimeoutError)
                pass
            if not self.running:
                return
            self.pending = self.thinking = None  # an action in flight went with the connection
            self.fresh = True
            if time.monotonic() - started >= 10.0:
                self.retry = 0
            pause = min(30.0, 0.5 * 2 ** self.retry)
            await asyncio.sleep(pause / 2 + self.rng.random() * pause / 2)
            self.retry = min(self.retry + 1, 16)

    def on_state(self, m: dict) -> None:
        ev = m["event"]
        if self.fresh:  # a new connection gets the latest state only: no gap to count
            self.fresh, self.first_after = False, self.first_after or time.perf_counter()
            if self.first_event is not None:
                self.went_back += max(0, self.last_event - ev)
                self.last_event = ev - 1
        super().on_state(m)
        fp = fingerprint(m["view"])
        if fp is not None and self.seen.setdefault(ev, fp) is not fp:
            self.differ += 1

    def stop(self) -> None:
        self.running = False
        if self.ws is not None:
            self.ws.close()
            if self.ws.transport is not None:
                self.ws.transport.close()


def routed(table_id: str, n: int) -> int:
    """The process a proxy that routes by table sends a table's clients to."""
    return zlib.crc32(table_id.encode()) % n


def make_players(tables: list[dict], urls: list[str], think: float, seed: int,
                 stats: sl.Stats, only: list[int] | None = None,
                 routing: str = "spread") -> list[Player]:
    """The seat clients of ``tables``: seat s of table i on process (i + s) mod n (routing
    by table: on process ``routed``), or on process ``only[s]``."""
    rng = random.Random(seed)
    out = []
    for i, t in enumerate(tables):
        for s in t["seats"]:
            k = only[s["seat"]] if only else routed(t["id"], len(urls)) if routing == "table" \
                else (i + s["seat"]) % len(urls)
            url = urls[k].replace("http://", "ws://") + f"/ws/{t['id']}"
            out.append(Player(url, s["token"], s["seat"], t["id"], random.Random(rng.random()),
                              stats, think))
    return out


async def connect(players: list[Player]) -> list[asyncio.Task]:
    tasks: list[asyncio.Task] = []
    for i in range(0, len(players), 50):  # in waves, as bench/server_load.py
        batch = players[i:i + 50]
        tasks += [asyncio.create_task(p.run()) for p in batch]
        await asyncio.wait_for(asyncio.gather(*(p.ready.wait() for p in batch)), 120)
    return tasks


async def finish(players: list[Player], tasks: list[asyncio.Task]) -> None:
    for p in players:
        p.acting = False
    await asyncio.sleep(1.5)  # answers in flight; any next deal after the pace
    for p in players:
        p.stop()
    _, waiting = await asyncio.wait(tasks, timeout=10)
    for task in waiting:  # one between two attempts to connect, or in the middle of one
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def play(tables: list[dict], servers: Servers, pg: ThrowAwayPostgres, seconds: float, think: float,
               seed: int, start: bool, routing: str
               ) -> tuple[sl.Stats, list[Player], float, dict[str, float]]:
    stats = sl.Stats()
    players = make_players(tables, servers.urls, think, seed, stats, routing=routing)
    tasks = await connect(players)
    gc.collect()
    gc.freeze()  # the connected clients are long-lived: keep them out of collections
    stats.latencies.clear()
    stats.actions = 0
    if start:
        loop = asyncio.get_running_loop()
        n = len(servers.urls)
        await asyncio.gather(*(loop.run_in_executor(
            None, sl.http_json, None,
            servers.urls[routed(t["id"], n) if routing == "table" else i % n],
            f"/api/tables/{t['id']}/start",
            {"token": t["admin_token"]}) for i, t in enumerate(tables)))
    cpu0, t0 = cpu_now(servers.live_pids(), pg.pid), time.perf_counter()
    await asyncio.sleep(seconds)
    cpu1, elapsed = cpu_now(servers.live_pids(), pg.pid), time.perf_counter() - t0
    await finish(players, tasks)
    gc.unfreeze()
    return stats, players, elapsed, {k: cpu1[k] - cpu0[k] for k in cpu0}


# ----------------------------------------------------------------------------- checks
def stored_events(pg: ThrowAwayPostgres, db: str) -> dict[str, list[tuple]]:
    """Each table's events as the database holds them, in order (event n is item n - 1): a
    deal's deck, then its actions; each as ``fingerprint`` makes them of a state."""
    moves: dict[int, list[tuple]] = {}
    for key, idx, seat, action in pg.query(
            db, "SELECT deal_key, idx, seat, action FROM st_moves ORDER BY deal_key, idx"):
        moves.setdefault(key, []).append((idx + 1, seat, action.split(":", 1)[0]))
    out: dict[str, list[tuple]] = {}
    for tid, key in pg.query(db, "SELECT table_id, deal_key FROM st_deals ORDER BY table_id, number"):
        out.setdefault(tid, []).extend([(0,), *moves.get(key, [])])
    return out


def check(players: list[Player], stored: dict[str, list[tuple]],
          served: dict[str, int] | None = None) -> dict[str, int]:
    """What the clients saw against the database (``lost_events`` in the docstring), and in
    ``checked`` how many of the states they saw were compared with it (not a loss)."""
    lost = dict.fromkeys(("gaps", "behind_db", "ahead_of_db", "differ", "went_back", "served_vs_db"), 0)
    checked = 0
    for p in players:
        events = stored.get(p.table, [])
        lost["gaps"] += p.gaps
        lost["behind_db"] += max(0, len(events) - p.last_event)
        lost["ahead_of_db"] += max(0, p.last_event - len(events))
        lost["differ"] += p.differ + sum(1 for ev, fp in p.seen.items()
                                         if 0 < ev <= len(events) and events[ev - 1] != fp)
        lost["went_back"] += p.went_back
        checked += len(p.seen)
    for tid, n in (served or {}).items():
        lost["served_vs_db"] += abs(n - len(stored.get(tid, [])))
    return {**lost, "checked": checked}


def lost_sum(lost: dict[str, int]) -> int:
    return sum(v for k, v in lost.items() if k != "checked")


def served_events(urls: list[str], tables: list[dict]) -> dict[str, int]:
    """Each table's event count as the process that runs it has it (asked of any process)."""
    with ThreadPoolExecutor(8) as pool:
        counts = pool.map(lambda it: sl.http_json(None, urls[it[0] % len(urls)],
                                                  f"/api/tables/{it[1]['id']}")["events"],
                          enumerate(tables))
        return {t["id"]: n for t, n in zip(tables, counts, strict=True)}


def figures(stats: sl.Stats, players: list[Player], elapsed: float, cpu: dict[str, float],
            lost: dict[str, int]) -> dict[str, Any]:
    lat, n = stats.latencies, max(1, len(stats.latencies))
    own = {"servers": cpu["servers"], "postgres": cpu["postgres"], "clients": cpu["clients"]}
    own["other"] = max(0.0, cpu["machine"] - sum(own.values()))
    return {
        "seconds": round(elapsed, 2), "actions": len(lat),
        "actions_per_s": round(len(lat) / elapsed, 1),
        **{f"p{q}_ms": round(sl.pct(lat, q / 100), 2) for q in (50, 90, 99)},
        "max_ms": round(max(lat) * 1000, 2) if lat else None,
        "errors": stats.errors, "lost_events": lost_sum(lost), "lost_detail": lost,
        "reconnects": sum(1 for p in players if p.first_after is not None),
        "cpu_s": {k: round(v, 1) for k, v in own.items()},
        "us_per_action": {k: round(v / n * 1e6) for k, v in own.items() if k != "other"},
        "cores_busy": round(cpu["machine"] / elapsed, 2),
        **({"error_samples": stats.error_samples} if stats.error_samples else {}),
    }


# ----------------------------------------------------------------------------- takeover
DB_NOW = "EXTRACT(EPOCH FROM clock_timestamp())"  # the clock of the leases' expiries


def relayed(pg: ThrowAwayPostgres, db: str, players: list[Player]) -> float:
    """The share of clients connected to a process other than the one that runs their table."""
    holders = dict(pg.query(db, "SELECT l.table_id, p.url FROM st_leases l JOIN st_processes p "
                                "ON p.id = l.owner"))
    far = sum(1 for p in players if not p.url.replace("ws://", "http://").startswith(
        holders.get(p.table, "?") + "/"))
    return round(far / max(1, len(players)), 3)


def lease_holder(pg: ThrowAwayPostgres, db: str, table_id: str) -> str | None:
    """The URL of the process that holds ``table_id``'s lease (None: nobody), as
    stammtisch/server/peers.py keeps them (expiries in the database's clock)."""
    rows = pg.query(db, "SELECT p.url FROM st_leases l JOIN st_processes p ON p.id = l.owner "
                        f"WHERE l.table_id = %s AND l.expires > {DB_NOW}", table_id)
    return rows[0][0] if rows else None


async def takeover(tables: list[dict], servers: Servers, pg: ThrowAwayPostgres, db: str,
                   seed: int) -> dict[str, Any]:
    """Kill process 0 under a table it runs whose clients are on process 1 (docstring)."""
    table = next((t for t in tables if lease_holder(pg, db, t["id"]) == servers.urls[0]), None)
    if table is None:
        return {"error": "no table's lease is held by process 0"}
    stats = sl.Stats()
    # a spectator on process 0 while the players connect keeps the table there (a table
    # nobody is connected to goes to the process its first client reaches)
    keeper = Player(servers.urls[0].replace("http://", "ws://") + f"/ws/{table['id']}",
                    table["spectator"]["token"], -1, table["id"], random.Random(seed), stats, 0.0)
    kept = await connect([keeper])
    players = make_players([table], servers.urls, 0.0, seed, stats, only=[1, 1, 1])
    tasks = await connect(players)
    await finish([keeper], kept)
    await asyncio.sleep(2)  # play a little through the relay
    before = max(p.last_event for p in players)
    left = pg.query(db, f"SELECT expires - {DB_NOW} FROM st_leases WHERE table_id = %s", table["id"])
    killed = time.perf_counter()
    servers.procs[0].kill()
    deadline = killed + 120
    while max(p.last_event for p in players) <= before and time.perf_counter() < deadline:
        await asyncio.sleep(0.01)
    moved_on = time.perf_counter() if max(p.last_event for p in players) > before else None
    await asyncio.sleep(3)  # play on after the takeover
    await finish(players, tasks)
    stored = stored_events(pg, db)
    lost = check(players, stored, served_events(servers.urls[1:], [table]))
    lost["acknowledged_not_stored"] = max(0, before - len(stored.get(table["id"], [])))
    firsts = [p.first_after for p in players if p.first_after is not None]
    return {
        "table": table["id"], "event_before_kill": before,
        "lease_left_s": round(left[0][0], 2) if left else None,
        "takeover_s": None if moved_on is None else round(moved_on - killed, 2),
        "reconnected_s": round(min(firsts) - killed, 2) if firsts else None,
        "events_after": max(p.last_event for p in players) - before,
        "holder_after": lease_holder(pg, db, table["id"]),
        "errors": stats.errors, "lost_events": lost_sum(lost), "lost_detail": lost,
        **({"error_samples": stats.error_samples} if stats.error_samples else {}),
    }


# ----------------------------------------------------------------------------- runs
def configuration(n: int, routing: str, args: argparse.Namespace, pg: ThrowAwayPostgres,
                  root: Path, peer_flag: bool) -> dict[str, Any]:
    db = f"load{n}{routing if n > 1 else ''}"
    servers = Servers(root / db, pg.new_database(db), n, args.pace, peer_flag)
    try:
        body = {"ruleset": args.ruleset, "options": {"players": 3}, "pace": args.pace,
                "seats": [{"name": f"p{i}"} for i in range(3)]}
        with ThreadPoolExecutor(8) as pool:
            tables = list(pool.map(lambda k: sl.http_json(None, servers.urls[k % n], "/api/tables", body),
                                   range(args.tables)))
        out: dict[str, Any] = {"servers": n, "routing": routing if n > 1 else None,
                               "tables": args.tables, "clients": 3 * args.tables,
                               "ruleset": args.ruleset, "think_ms": args.think_ms,
                               "pg_fsync": args.fsync, "load_before": os.getloadavg()[0]}
        with asyncio.Runner(loop_factory=sl.new_event_loop) as runner:
            started = False  # the tables are started once, by the first run
            for label, seconds, think in (("load", args.seconds, args.think_ms),
                                          ("saturation", args.saturation_seconds, 0.0)):
                if seconds <= 0:
                    continue
                stats, players, elapsed, cpu = runner.run(play(
                    tables, servers, pg, seconds, think / 1000, args.seed, not started, routing))
                started = True
                lost = check(players, stored_events(pg, db), served_events(servers.urls, tables))
                result = figures(stats, players, elapsed, cpu, lost)
                result["relayed_clients"] = relayed(pg, db, players)
                if label == "load":
                    out.update(result)
                else:
                    out["saturation"] = result
                del players
            if n > 1 and routing == "spread" and not args.no_takeover:
                out["takeover"] = runner.run(takeover(tables, servers, pg, db, args.seed))
        out["load_after"] = os.getloadavg()[0]
        return out
    finally:
        servers.stop()
        failed = [log for proc, log in zip(servers.procs, servers.logs, strict=True)
                  if proc.returncode not in (0, -signal.SIGKILL)]
        for log in failed:
            print(f"--- {log}\n" + log.read_text(errors="replace")[-3000:], file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tables", type=int, default=1000, help="tables of 3 seat clients each")
    ap.add_argument("--seconds", type=float, default=30.0, help="the timed play at --think-ms (0: none)")
    ap.add_argument("--saturation-seconds", type=float, default=15.0,
                    help="the timed play at --think-ms 0 (0: none)")
    ap.add_argument("--think-ms", type=float, default=250.0,
                    help="mean pause of a client before it acts, uniform in 0.5-1.5 x this")
    ap.add_argument("--servers", default="1,2",
                    help="the configurations: server processes of each, comma-separated")
    ap.add_argument("--pace", type=float, default=0.2,
                    help="seconds between deals (each table's pace; the server's pace_min too)")
    ap.add_argument("--routing", default="spread,table",
                    help="how the clients of several processes are routed (docstring), comma-separated")
    ap.add_argument("--fsync", action="store_true",
                    help="keep PostgreSQL's fsync on (default off, as the tests)")
    ap.add_argument("--no-takeover", action="store_true", help="skip the takeover")
    ap.add_argument("--ruleset", default="tippen/grupp-1975")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    counts = [int(x) for x in args.servers.split(",")]

    # several thousand sockets here and in each server: the soft open-file limit up to the hard
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the finally blocks run
    gc.set_threshold(20_000, *gc.get_threshold()[1:])
    # the service's processes tell each other where they are (--peer-url), once it exists
    peer_flag = "--peer-url" in subprocess.run(
        [sys.executable, "-m", "stammtisch", "serve", "--help"], cwd=ROOT,
        capture_output=True, text=True).stdout
    root = Path(tempfile.mkdtemp(prefix="stammtisch-peers-"))
    pg = None
    try:
        try:
            pg = ThrowAwayPostgres(fsync=args.fsync)
        except RuntimeError as e:  # PostgreSQL not installed
            raise SystemExit(str(e)) from None
        routings = args.routing.split(",")
        results: dict[str, dict[str, Any]] = {}
        for n in counts:
            for routing in routings if n > 1 else routings[:1]:
                key = f"{n}" if n == 1 else f"{n} {routing}"
                results[key] = configuration(n, routing, args, pg, root, peer_flag)
                print(json.dumps(results[key]), flush=True)
        sat = {k: r.get("saturation", {}).get("actions_per_s") for k, r in results.items()}
        summary: dict[str, Any] = {"summary": True, "cpus": os.cpu_count(), "pg_fsync": args.fsync,
                                   "saturation_actions_per_s": sat}
        for routing in routings:
            two = f"2 {routing}"
            if sat.get("1") and sat.get(two):
                per_action = sum(results[two]["saturation"]["us_per_action"].values()) / 1e6
                servers_1 = results["1"]["saturation"]["us_per_action"]["servers"]
                servers_2 = results[two]["saturation"]["us_per_action"]["servers"]
                summary[routing] = {
                    "ratio_2_to_1": round(sat[two] / sat["1"], 2),
                    "ratio_cpu_bound": round((os.cpu_count() or 1) / per_action / sat["1"], 2),
                    "ratio_servers": round(2 * servers_1 / servers_2, 2),
                    "relayed_clients": results[two]["saturation"]["relayed_clients"]}
        print(json.dumps(summary), flush=True)
    finally:
        if pg is not None:
            pg.remove()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
