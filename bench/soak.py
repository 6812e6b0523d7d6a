"""Soak of the web table under chaos: honest tables play while the server is killed,
its database locked, its table creation flooded and its sockets held half-open.

Starts ``stammtisch.server.app.run`` in a subprocess on 127.0.0.1 (free port, temporary SQLite
file) and creates ``--tables`` tables of two human clients and one bot each, plus
``--bot-tables`` tables of three bots watched by one spectator client. Every human client
answers its turns with a random legal action after a think time (uniform 0.5–1.5 ×
``--think-ms``), sending the event number it answers; after a refusal it tries again on the
latest state; after a lost connection it reconnects with backoff.

Meanwhile a chaos loop, every ``--chaos-every`` seconds (seeded), does one of:
  kill     SIGKILL the server and start it again at once (a "kill window" lasts from the kill
           until the server answers again plus one second);
  lock     hold an exclusive write lock on the SQLite file for 1–3 s (another process);
  flood    200 ``POST /api/tables`` as fast as they go (answers counted by status and rule);
  halfopen 300 sockets that send part of a request header and then nothing.

Prints one JSON object: actions_committed (rows in the database at the end), lost_events
(events some client saw that the database does not hold, plus events the server counted in
memory beyond what the database holds: must be 0), the p50/p99 latency of honest clients
(action sent → the state that carries it) outside kill windows, and outside kill and lock
windows, peak server memory (RSS) and its slope over the run in MiB per minute, refusals by
reason (WebSocket error rules, HTTP statuses of the flood, half-open sockets closed or refused
by the server), and the chaos events done.

    python bench/soak.py [--seconds 600] [--tables 200] [--bot-tables 20] [--think-ms 250]
                         [--bot-delay 0.6] [--chaos-every 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import orjson
import websockets

try:
    import uvloop

    new_event_loop = uvloop.new_event_loop
except ImportError:  # pragma: no cover
    new_event_loop = asyncio.new_event_loop

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db: Path, port: int, honest_connections: int, max_tables: int,
                 honest_tables: int, bot_delay: float) -> subprocess.Popen:
    # every client comes from 127.0.0.1: the per-address caps leave room for the honest clients,
    # so what the flood and the half-open sockets meet is what one attacking address would meet
    code = (
        "from stammtisch.server.app import run\n"
        "from stammtisch.server.limits import ServerLimits\n"
        f"limits = ServerLimits(max_live_tables={max_tables}, creation_burst={honest_tables + 20}, "
        f"tables_per_address={max_tables}, search_bots_per_address={max_tables * 4}, "
        "bot_table_max_deals=10_000, pace_min=0, "
        f"ws_per_address={honest_connections + 50}, "
        f"conns_per_address={honest_connections + 200}, "
        f"max_connections={honest_connections + 400}, conns_per_table=40)\n"
        f"run(port={port}, database_url={f'sqlite:///{db}'!r}, bot_delay={bot_delay}, deal_pause=0.5, "
        "log_level='error', limits=limits)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", code], env=env)


def wait_up(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/rulesets", timeout=1)
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the server did not start")


def post(port: int, path: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read())
        except ValueError:
            return e.code, {}


def rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


# --- attacks (each run in a process of its own, see Soak._attack) ----------------------------


def flood(port: int) -> Counter[str]:
    """200 table creations as fast as they go: the answers by status and rule."""
    counts: Counter[str] = Counter()
    body = {"ruleset": "tippen/grupp-1975", "options": {"players": 3},
            "seats": [{"name": "x"}, {"name": "y"}, {"name": "z", "bot": "random"}]}

    def one() -> None:
        try:
            status, answer = post(port, "/api/tables", body)
            counts[f"flood_http_{status}_{answer.get('rule', '')}".rstrip("_")] += 1
        except OSError as e:
            counts[f"flood_{type(e).__name__}"] += 1

    threads = [threading.Thread(target=one) for _ in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return counts


def half_open(port: int) -> Counter[str]:
    """300 sockets that send part of a request header and then nothing: how the server ended
    each."""
    counts: Counter[str] = Counter()
    socks = []
    for _ in range(300):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /api/rulesets HTTP/1.1\r\nHost: soak\r\nX-Slow: ")
            socks.append(s)
        except OSError:
            counts["halfopen_connect_failed"] += 1
    deadline = time.monotonic() + 20
    for s in socks:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            data = s.recv(1024)
            counts["halfopen_refused_503" if data.startswith(b"HTTP/1.1 503")
                   else "halfopen_closed_by_server"] += 1
        except TimeoutError:
            counts["halfopen_still_open_after_20s"] += 1
        except OSError:
            counts["halfopen_closed_by_server"] += 1
        finally:
            s.close()
    return counts


class Soak:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.rng = random.Random(args.seed)
        self.tmp = Path(tempfile.mkdtemp(prefix="stammtisch-soak-"))
        self.db = self.tmp / "soak.sqlite"
        self.port = free_port()
        self.honest = args.tables * 2 + args.bot_tables
        self.max_tables = args.tables + args.bot_tables + 100
        self.proc: subprocess.Popen | None = None
        self.kill_windows: list[tuple[float, float]] = []
        self.lock_windows: list[tuple[float, float]] = []
        self.latencies: list[tuple[float, float]] = []  # (sent at, seconds)
        self.refusals: Counter[str] = Counter()
        self.chaos: Counter[str] = Counter()
        self.chaos_spans: list[tuple[str, float, float]] = []  # (kind, start, end)
        self.seen: dict[str, int] = {}  # table → the highest event any client saw
        self.memory: list[tuple[float, float]] = []
        self.stopping = False
        self.chaos_over = False

    # --- the server -------------------------------------------------------------------------

    def start(self) -> None:
        self.proc = start_server(self.db, self.port, self.honest, self.max_tables,
                                 self.args.tables + self.args.bot_tables, self.args.bot_delay)
        wait_up(self.port)

    def kill_and_restart(self) -> None:
        t0 = time.monotonic()
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.start()
        self.kill_windows.append((t0, time.monotonic() + 1.0))

    # --- chaos --------------------------------------------------------------------------------

    def lock_database(self) -> None:
        hold = self.rng.uniform(1.0, 3.0)
        con = sqlite3.connect(str(self.db), isolation_level=None, timeout=10)
        try:
            con.execute("BEGIN EXCLUSIVE")
            t0 = time.monotonic()
            time.sleep(hold)
            con.execute("ROLLBACK")
            self.lock_windows.append((t0, time.monotonic() + 0.5))
        finally:
            con.close()

    def _attack(self, kind: str) -> None:
        """Run an attack in a process of its own (an attacker is another machine: its threads
        must not take the honest clients' interpreter lock and skew their latencies)."""
        out = subprocess.run([sys.executable, __file__, "--attack", kind, "--port", str(self.port)],
                             capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip()[-300:])
        self.refusals.update(json.loads(out.stdout))

    def chaos_loop(self) -> None:
        try:
            self._chaos_loop()
        finally:
            self.chaos_over = True  # the honest clients stop once both the time and the chaos are over

    def _chaos_loop(self) -> None:
        kinds = ["kill", "lock", "flood", "halfopen"]
        next_at = time.monotonic() + self.args.chaos_every
        end = self.t0 + self.args.seconds
        # in cycle order every kind runs at least once, on a slow machine past --seconds
        while time.monotonic() < end - 5 or self.args.chaos_order == "cycle" and len(self.chaos) < len(kinds):
            if time.monotonic() < next_at:
                time.sleep(0.2)
                continue
            kind = kinds[self.chaos.total() % len(kinds)] if self.args.chaos_order == "cycle" \
                else self.rng.choice(kinds)
            self.chaos[kind] += 1
            started = time.monotonic()
            try:
                if kind == "kill":
                    self.kill_and_restart()
                elif kind == "lock":
                    self.lock_database()
                else:  # flood, halfopen
                    self._attack(kind)
            except Exception as e:  # the soak goes on; the failure is counted
                self.refusals[f"chaos_{kind}_failed_{type(e).__name__}"] += 1
            self.chaos_spans.append((kind, started, time.monotonic()))
            next_at = time.monotonic() + self.args.chaos_every

    def memory_loop(self) -> None:
        while not self.stopping:
            if self.proc is not None:
                mib = rss_mib(self.proc.pid)
                if mib is not None:
                    self.memory.append((time.monotonic() - self.t0, mib))
            time.sleep(1.0)

    # --- honest clients -----------------------------------------------------------------------

    async def client(self, table: str, token: str, seat: int | None) -> None:
        rng = random.Random(self.rng.random())
        url = f"ws://127.0.0.1:{self.port}/ws/{table}"
        think = self.args.think_ms / 1000
        retry = 0
        while not self.stopping:
            try:
                async with websockets.connect(url, ping_interval=None, open_timeout=10,
                                              max_size=2 ** 22) as ws:
                    await ws.send(json.dumps({"type": "hello", "token": token}))
                    retry = 0
                    box: dict[str, dict | None] = {"latest": None}  # the newest state of this socket
                    pending: tuple[int, float] | None = None
                    act_task: asyncio.Task | None = None

                    async def act(state: dict, delay: float, box: dict = box) -> None:
                        nonlocal pending
                        await asyncio.sleep(delay)
                        view = state["view"]
                        if self.stopping or box["latest"] is not state or not view or view["terminal"] \
                                or view["current_player"] != seat or not view["legal_actions"]:
                            return
                        action = rng.choice(view["legal_actions"])
                        pending = (state["event"], time.monotonic())
                        try:
                            await ws.send(json.dumps({"type": "action", "action": action,
                                                      "event": state["event"]}))
                        except websockets.ConnectionClosed:
                            pending = None  # the receive loop reconnects

                    async for raw in ws:
                        m = orjson.loads(raw)
                        if m["type"] == "state":
                            ev = m["event"]
                            if ev > self.seen.get(table, 0):
                                self.seen[table] = ev
                            if pending is not None and ev > pending[0]:
                                self.latencies.append((pending[1], time.monotonic() - pending[1]))
                                pending = None
                            box["latest"] = m
                            if seat is not None:
                                if act_task is not None:
                                    act_task.cancel()
                                act_task = asyncio.create_task(
                                    act(m, rng.uniform(0.5, 1.5) * think))
                        elif m["type"] == "error":
                            self.refusals[f"ws_{m.get('rule')}"] += 1
                            pending = None
                            latest = box["latest"]
                            if seat is not None and latest is not None:  # try again a bit later
                                if act_task is not None:
                                    act_task.cancel()
                                act_task = asyncio.create_task(act(latest, 0.3))
            except (TimeoutError, OSError, websockets.WebSocketException):
                pass
            if not self.stopping:
                await asyncio.sleep(min(5.0, 0.2 * 2 ** retry) * rng.uniform(0.5, 1.0))
                retry += 1

    async def run_clients(self, tables: list[dict]) -> None:
        tasks = []
        for t in tables:
            if t["bots_only"]:
                tasks.append(asyncio.create_task(self.client(t["id"], t["spectator"]["token"], None)))
            else:
                for s in t["seats"]:
                    if s.get("token"):
                        tasks.append(asyncio.create_task(self.client(t["id"], s["token"], s["seat"])))
            await asyncio.sleep(0.005)  # connect gradually
        while time.monotonic() < self.t0 + self.args.seconds or not self.chaos_over:
            await asyncio.sleep(0.5)
        self.stopping = True
        await asyncio.sleep(1.0)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # --- the run ------------------------------------------------------------------------------

    def run(self) -> dict:
        self.start()
        try:
            return self._run()
        finally:
            self.stopping = True
            if self.proc is not None:
                self.proc.send_signal(signal.SIGINT)
                try:
                    self.proc.wait(30)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
            shutil.rmtree(self.tmp, ignore_errors=True)

    def _run(self) -> dict:
        tables = []
        for i in range(self.args.tables):
            _, t = post(self.port, "/api/tables", {
                "ruleset": "tippen/grupp-1975", "options": {"players": 3}, "pace": 0.5,
                "seats": [{"name": f"a{i}"}, {"name": f"b{i}"}, {"name": f"c{i}", "bot": "random"}]})
            t["bots_only"] = False
            tables.append(t)
        for i in range(self.args.bot_tables):
            _, t = post(self.port, "/api/tables", {
                "ruleset": "tippen/grupp-1975", "options": {"players": 3}, "max_deals": 10_000,
                "seats": [{"name": f"x{i}", "bot": "random"}, {"name": f"y{i}", "bot": "random"},
                          {"name": f"z{i}", "bot": "random"}]})
            t["bots_only"] = True
            tables.append(t)
        refused = [t for t in tables if "id" not in t]
        if refused:
            raise SystemExit(f"creating the honest tables failed: {refused[0]}")
        for t in tables:
            post(self.port, f"/api/tables/{t['id']}/start", {"token": t["admin_token"]})
        self.t0 = time.monotonic()
        threads = [threading.Thread(target=self.chaos_loop, daemon=True),
                   threading.Thread(target=self.memory_loop, daemon=True)]
        for th in threads:
            th.start()
        with asyncio.Runner(loop_factory=new_event_loop) as runner:
            runner.run(self.run_clients(tables))
        threads[0].join()
        self.stopping = True
        final = {}
        for t in tables:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/api/tables/{t['id']}",
                                        timeout=30) as r:
                final[t["id"]] = json.loads(r.read())["events"]
        if self.proc is not None:  # stopped before the database is read
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.report(tables, final)

    def report(self, tables: list[dict], final: dict[str, int]) -> dict:
        con = sqlite3.connect(str(self.db))
        stored: Counter[str] = Counter()
        for tid, n in con.execute("SELECT table_id, COUNT(*) FROM st_deals GROUP BY table_id"):
            stored[tid] += n
        actions = con.execute("SELECT COUNT(*) FROM st_moves").fetchone()[0]
        tables_in_db = con.execute("SELECT COUNT(*) FROM st_tables").fetchone()[0]
        spill = Path(str(self.db) + ".spill")  # emptied by the drain, or at the latest at shut-down
        spill_rows_left = spill.read_bytes().count(b"\n") if spill.exists() else 0
        # the actions, found as the server finds them: through their deal
        for tid, n in con.execute("SELECT d.table_id, COUNT(*) FROM st_moves m JOIN st_deals d "
                                  "ON m.deal_key = d.deal_key GROUP BY d.table_id"):
            stored[tid] += n
        con.close()
        # an event a client saw must be in the database; the server's own count (read before it
        # stopped: bots may act after that) may not exceed what the database holds either
        lost_seen = sum(max(0, self.seen.get(t["id"], 0) - stored[t["id"]]) for t in tables)
        lost_memory = sum(max(0, final[t["id"]] - stored[t["id"]]) for t in tables)
        lost = lost_seen + lost_memory

        def outside(windows: list[tuple[float, float]]) -> list[float]:
            return [lat for sent, lat in self.latencies
                    if not any(sent <= b and sent + lat >= a for a, b in windows)]

        def pct(xs: list[float], q: float) -> float | None:
            if not xs:
                return None
            xs = sorted(xs)
            return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1000, 1)

        no_kill = outside(self.kill_windows)
        # where the tail comes from: latencies of actions sent during a chaos event or in the
        # ``after`` seconds after it, by kind (kill windows left out), and of the rest ("quiet")
        after = 10.0
        by_phase: dict[str, list[float]] = {}
        for sent, lat in self.latencies:
            if any(sent <= b and sent + lat >= a for a, b in self.kill_windows):
                continue
            phase = next((kind for kind, a, b in self.chaos_spans if a <= sent <= b + after),
                         "quiet")
            by_phase.setdefault(phase, []).append(lat)
        no_chaos = outside(self.kill_windows + self.lock_windows)
        mem = [m for t, m in self.memory if t > 10] or [m for _, m in self.memory]
        times = [t for t, _ in self.memory if t > 10] or [t for t, _ in self.memory]
        slope = None
        if len(mem) > 2:
            mt, mm = sum(times) / len(times), sum(mem) / len(mem)
            var = sum((t - mt) ** 2 for t in times)
            covariance = sum((t - mt) * (m - mm) for t, m in zip(times, mem, strict=True))
            slope = round(covariance / var * 60, 2) if var else None
        return {
            "seconds": self.args.seconds,
            "tables": self.args.tables,
            "bot_tables": self.args.bot_tables,
            "honest_clients": self.honest,
            "think_ms": self.args.think_ms,
            "bot_delay_s": self.args.bot_delay,
            "actions_committed": actions,
            "events_committed": sum(stored[t["id"]] for t in tables),
            "tables_in_database": tables_in_db,
            "spill_rows_left": spill_rows_left,
            "lost_events": lost,
            "lost_events_seen_by_clients": lost_seen,
            "lost_events_in_server_memory": lost_memory,
            "latencies": len(self.latencies),
            "p50_ms_outside_kill_windows": pct(no_kill, 0.50),
            "p99_ms_outside_kill_windows": pct(no_kill, 0.99),
            "p99_ms_outside_kill_and_lock_windows": pct(no_chaos, 0.99),
            "max_ms_outside_kill_and_lock_windows": pct(no_chaos, 1.0),
            "p99_ms_by_phase": {k: pct(v, 0.99) for k, v in sorted(by_phase.items())},
            "latencies_by_phase": {k: len(v) for k, v in sorted(by_phase.items())},
            "peak_rss_mib": round(max((m for _, m in self.memory), default=0.0), 1),
            "rss_slope_mib_per_min": slope,
            "chaos": dict(self.chaos),
            "refusals": dict(sorted(self.refusals.items())),
            "cpus": os.cpu_count(),
            "load_after": [round(x, 2) for x in os.getloadavg()],
        }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--attack", choices=["flood", "halfopen"], help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--seconds", type=float, default=600.0, help="how long the soak runs (CI: 60)")
    ap.add_argument("--tables", type=int, default=200, help="tables of two human clients and a bot")
    ap.add_argument("--bot-tables", type=int, default=20, help="tables of three bots, one spectator")
    ap.add_argument("--think-ms", type=float, default=250.0, help="mean think time of a human client")
    ap.add_argument("--bot-delay", type=float, default=0.6,
                    help="seconds before a bot acts (the server's default)")
    ap.add_argument("--chaos-every", type=float, default=20.0, help="seconds between chaos events")
    ap.add_argument("--chaos-order", choices=["cycle", "random"], default="cycle",
                    help="cycle: kill, lock, flood, half-open in turn; random: seeded choice")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if args.attack:  # one attack of the chaos loop, in its own process
        print(json.dumps({"flood": flood, "halfopen": half_open}[args.attack](args.port)))
        return
    if args.seconds <= 0 or args.tables < 0 or args.bot_tables < 0 or args.chaos_every <= 0:
        ap.error("--seconds and --chaos-every must be positive, table counts not negative")
    print(json.dumps(Soak(args).run()))


if __name__ == "__main__":
    main()
