"""Web table under load: N tables × 3 WebSocket clients playing random legal actions.

Starts the server in a subprocess on 127.0.0.1 (free port, temporary SQLite file), creates
N tables (default 200) with three human seats each, connects one WebSocket client per seat
(600 clients), and lets every client answer its turns with a random legal action from its
view for a bounded time. Each latency is measured from sending an action to receiving the
state broadcast that carries it (same client). Then the clients stop acting, the server is
stopped, and every client's received events are checked against the events the server
committed to its database (deal decks + actions per table): ``lost_events`` must be 0.

Prints one JSON line: tables, clients, ruleset, think_ms, seconds, actions, actions_per_s,
p50_ms, p90_ms, p99_ms, max_ms, errors, lost_events, the machine (cpus, load average before
and after the run: other jobs on the machine share its cores), the CPU seconds of server and
clients, the server's CPU per action in steady play (all threads, and split into the event
loop's user and system time and the other threads'), two figures of the machine's own speed
(``machine_calibration_us``: a fixed piece of engine work; ``machine_loopback_send_us``: one
message over loopback TCP), and ``meets_bar`` (the web table's target: p99 < 100 ms, 0 errors,
0 lost events).

The clients run in one process on uvloop (when installed) with the garbage collector tuned
like the server's: they are the measuring instrument and share the machine's cores with the
server, so their own overhead is kept small; what they measure is unchanged.

    python bench/server_load.py [--tables 200] [--seconds 30] [--think-ms 250]
                                [--ruleset tippen/grupp-1975] [--busy-cores 0] [--uds]
                                [--profile out.prof]

``--uds`` serves on a Unix socket (``stammtisch serve --uds``) and connects the clients there:
the link from a reverse proxy on the same machine to the server, where each message costs the
kernel far less than over loopback TCP (``transport`` says which in the JSON).

``--busy-cores N`` runs N busy-loop processes beside the run: a repeatable stand-in for the
other jobs that often share this machine (``other_jobs_cores`` reports what the rest of the
machine really used, busy loops included).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import gc
import http.client
import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import orjson

try:
    import uvloop

    new_event_loop, CLIENT_LOOP = uvloop.new_event_loop, "uvloop"
except ImportError:  # pragma: no cover
    new_event_loop, CLIENT_LOOP = asyncio.new_event_loop, "asyncio"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(db: Path, port: int, deal_pause: float, profile: str | None,
                 ws: str = "websockets-sansio", uds: str | None = None) -> subprocess.Popen:
    code = (
        "import sys\n"
        "from stammtisch.server.app import run\n"
        "from stammtisch.server.limits import ServerLimits\n"
        # all clients come from 127.0.0.1: the per-address caps of a public server do not apply
        "limits = ServerLimits(creation_burst=10**6, creations_per_minute=10**6, "
        "max_live_tables=10**6, tables_per_address=10**6, search_bots_per_address=10**6, pace_min=0, "
        "ws_per_address=10**6, conns_per_address=10**6, "
        "max_connections=10**6)\n"
        f"kw = dict(port={port}, database_url={f'sqlite:///{db}'!r}, bot_delay=0, "
        f"deal_pause={deal_pause}, log_level='warning', ws={ws!r}, limits=limits, uds={uds!r})\n"
    )
    if profile:
        code += (
            "import cProfile, signal\n"
            "prof = cProfile.Profile()\n"
            "prof.enable()\n"
            "try:\n    run(**kw)\nfinally:\n"
            f"    prof.disable(); prof.dump_stats({profile!r})\n"
        )
    else:
        code += "run(**kw)\n"
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            http_json(uds, f"http://127.0.0.1:{port}", "/api/rulesets", timeout=1)
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start")


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over the server's Unix socket (``--uds``)."""

    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def http_json(uds: str | None, base: str, path: str, body: dict | None = None,
              timeout: float = 30) -> Any:
    """GET (or POST ``body``) ``path`` and read the JSON answer: over TCP at ``base``, or over
    the Unix socket ``uds``."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"content-type": "application/json"} if body is not None else {}
    method = "GET" if body is None else "POST"
    if uds is None:
        req = urllib.request.Request(base + path, data=data, headers=headers, method=method)
        return json.loads(urllib.request.urlopen(req, timeout=timeout).read())
    conn = UnixHTTPConnection(uds, timeout)
    try:
        conn.request(method, path, body=data, headers=headers)
        answer = conn.getresponse()
        if answer.status >= 400:
            raise OSError(f"{method} {path}: {answer.status}")
        return json.loads(answer.read())
    finally:
        conn.close()


class Stats:
    def __init__(self):
        self.latencies: list[float] = []
        self.errors = 0
        self.error_samples: list[str] = []
        self.actions = 0


class WsProtocol(asyncio.Protocol):
    """A minimal WebSocket client (RFC 6455) for the bench: the handshake, unmasked text
    frames from the server (which neither fragments nor compresses here), masked frames to it,
    ping and close. The clients are the measuring instrument and share the server's cores:
    a general WebSocket library costs the clients many times the CPU per action, which it
    would take from the server being measured. Every frame still goes through the server's
    own WebSocket stack, unchanged."""

    def __init__(self, host: str, path: str, on_text):
        self.request = (f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: "
                        f"{base64.b64encode(os.urandom(16)).decode()}\r\n"
                        f"Sec-WebSocket-Version: 13\r\n\r\n").encode()
        self.on_text = on_text
        self.buf = bytearray()
        self.open = False
        self.opened = asyncio.get_running_loop().create_future()
        self.closed = asyncio.get_running_loop().create_future()
        self.close_code: int | None = None  # the server's close frame's code
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request)

    def connection_lost(self, exc) -> None:
        self.open = False
        if not self.opened.done():
            self.opened.set_exception(ConnectionError("closed"))
        if not self.closed.done():
            self.closed.set_result(None)

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        if not self.open:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(buf[:buf.find(b"\r\n")])
            del buf[:end + 4]
            if b" 101 " not in status:
                self.opened.set_exception(ConnectionError(status.decode("latin-1")))
                self.transport.close()
                return
            self.open = True
            self.opened.set_result(None)
        while len(buf) >= 2:
            opcode, n, at = buf[0] & 0x0F, buf[1] & 0x7F, 2
            if n == 126:
                if len(buf) < 4:
                    return
                n, at = int.from_bytes(buf[2:4], "big"), 4
            elif n == 127:
                if len(buf) < 10:
                    return
                n, at = int.from_bytes(buf[2:10], "big"), 10
            if len(buf) < at + n:
                return
            payload = bytes(buf[at:at + n])
            del buf[:at + n]
            if opcode == 1:
                self.on_text(payload)
            elif opcode == 9:  # ping: pong with the same payload
                self._frame(0xA, payload)
            elif opcode == 8:  # the server closes: answer, then the socket ends
                self.close_code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
                self._frame(0x8, payload[:2])
                self.open = False
                self.transport.close()
                return

    def _frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else
                                         bytes([0x80 | 126]) + n.to_bytes(2, "big"))
        mask = os.urandom(4)
        key = int.from_bytes((mask * (n // 4 + 1))[:n], "big")
        masked = (int.from_bytes(payload, "big") ^ key).to_bytes(n, "big") if n else b""
        self.transport.write(head + mask + masked)

    def send_text(self, text: str) -> None:
        if self.open:
            self._frame(0x1, text.encode())

    def close(self) -> None:
        if self.open:
            self._frame(0x8, (1000).to_bytes(2, "big"))
            self.open = False


class Client:
    def __init__(self, url: str, token: str, seat: int, table: str, rng: random.Random,
                 stats: Stats, think: float, uds: str | None = None):
        self.url, self.seat, self.table, self.rng, self.stats = url, seat, table, rng, stats
        self.token = token  # sent in the first message (the server refuses it in the URL)
        self.uds = uds
        self.think = think
        self.first_event: int | None = None
        self.last_event = -1
        self.states = 0
        self.gaps = 0
        self.acting = True
        self.pending: tuple[int, float] | None = None  # the action sent: its event, when
        self.thinking: int | None = None  # the event an action is being thought about for
        self.ready = asyncio.Event()
        self.ws: WsProtocol | None = None

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        rest = self.url.split("://", 1)[1]
        hostport, path = rest.split("/", 1)
        host, port = hostport.rsplit(":", 1)
        if self.uds is None:
            _, ws = await loop.create_connection(
                lambda: WsProtocol(hostport, "/" + path, self.on_text), host, int(port))
        else:
            _, ws = await loop.create_unix_connection(
                lambda: WsProtocol(hostport, "/" + path, self.on_text), self.uds)
        self.ws = ws
        await asyncio.wait_for(ws.opened, 60)
        ws.send_text(json.dumps({"type": "hello", "token": self.token}))
        await ws.closed

    def on_text(self, raw: bytes) -> None:
        m = orjson.loads(raw)
        kind = m["type"]
        if kind == "state":
            self.on_state(m)
            self.ready.set()
            if self.acting and self.pending is None:
                self.maybe_act(m)
        elif kind == "error":
            self.stats.errors += 1
            if len(self.stats.error_samples) < 5:
                self.stats.error_samples.append(m.get("message", ""))
            self.pending = None

    def on_state(self, m: dict) -> None:
        ev = m["event"]
        if self.first_event is None:
            self.first_event = ev
        elif ev != self.last_event + 1:
            self.gaps += max(0, ev - self.last_event - 1)
        self.last_event = ev
        self.states += 1
        if self.pending is not None and ev > self.pending[0]:
            self.stats.latencies.append(time.perf_counter() - self.pending[1])
            self.pending = None
        if self.thinking is not None and ev > self.thinking:  # the table moved on meanwhile
            self.thinking = None

    def maybe_act(self, m: dict) -> None:
        view = m["view"]
        if not view or view["terminal"] or view["current_player"] != self.seat:
            return
        legal = view["legal_actions"]
        if not legal:
            return
        event = m["event"]
        if self.thinking == event:
            return
        action = self.rng.choice(legal)
        self.thinking = event
        delay = self.rng.uniform(0.5, 1.5) * self.think if self.think else 0.0
        asyncio.get_running_loop().call_later(delay, self.act, event, action)

    def act(self, event: int, action: str) -> None:
        if self.thinking != event:
            return
        self.thinking = None
        if not self.acting or self.ws is None or self.last_event != event:
            return
        self.pending = (event, time.perf_counter())
        self.stats.actions += 1
        self.ws.send_text(json.dumps({"type": "action", "action": action, "event": event},
                                     separators=(",", ":")))


async def drive(base: str, ws_base: str, tables: list[dict], seconds: float, think: float,
                seed: int, server_pid: int, uds: str | None = None
                ) -> tuple[Stats, list[Client], float, tuple[float, int], dict[str, float]]:
    stats = Stats()
    rng = random.Random(seed)
    clients: list[Client] = []
    for t in tables:
        for s in t["seats"]:
            url = f"{ws_base}/ws/{t['id']}"
            clients.append(Client(url, s["token"], s["seat"], t["id"], random.Random(rng.random()),
                                  stats, think, uds))
    tasks = []
    for i in range(0, len(clients), 50):  # connect in waves
        batch = clients[i:i + 50]
        tasks += [asyncio.create_task(c.run()) for c in batch]
        await asyncio.wait_for(asyncio.gather(*(c.ready.wait() for c in batch)), 60)
    # every client is connected and has its first state: start the tables (which deals)
    gc.collect()
    gc.freeze()  # the connected clients are long-lived: keep them out of collections
    stats.latencies.clear()
    stats.actions = 0
    loop = asyncio.get_running_loop()
    await asyncio.gather(*(loop.run_in_executor(None, http_json, uds, base, f"/api/tables/{t['id']}/start",
                                                {"token": t["admin_token"]}) for t in tables))
    t0 = time.perf_counter()
    # the steady state: the second half of the run, when every table has been playing for a
    # while (no start requests, no connecting): the server's CPU per action answered then
    await asyncio.sleep(seconds / 2)
    cpu0, answered0 = cpu_seconds(server_pid), len(stats.latencies)
    split0 = thread_cpu_seconds(server_pid)
    await asyncio.sleep(seconds / 2)
    window = (cpu_seconds(server_pid) - cpu0, len(stats.latencies) - answered0)
    split1 = thread_cpu_seconds(server_pid)
    split = {k: (split1[k] - split0[k]) / max(1, window[1]) * 1e6 for k in split0}
    for c in clients:
        c.acting = False
    elapsed = time.perf_counter() - t0
    await asyncio.sleep(1.5)  # answers in flight; any next deal after deal_pause
    for c in clients:
        if c.ws is not None:
            c.ws.close()
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
    return stats, clients, elapsed, window, split


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """A process's user and system CPU seconds, split into its main thread (the server's event
    loop) and all its other threads (the database writer and reader) (Linux /proc)."""
    out = dict.fromkeys(("loop_user", "loop_system", "other_user", "other_system"), 0.0)
    tick = os.sysconf("SC_CLK_TCK")
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # the thread ended meanwhile
                continue
            who = "loop" if task.name == str(pid) else "other"
            out[who + "_user"] += int(fields[11]) / tick
            out[who + "_system"] += int(fields[12]) / tick
    except (OSError, IndexError, ValueError):
        return {k: float("nan") for k in out}
    return out


def calibrate(seconds: float = 1.0) -> float:
    """Microseconds of one fixed piece of the server's Python work on this machine now: an
    action applied to one of 1,000 Tippen deals and the three seats' views of the result
    serialised (as the server renders every event). Machines differ, and one machine from
    hour to hour, by a third and more: this puts the run's per-action figures in scale."""
    from stammtisch.games import TableState, new_game
    from stammtisch.rules import ruleset

    dumps = orjson.dumps
    rng = random.Random(1)
    games = [new_game(ruleset("tippen/grupp-1975", {"players": 3})) for _ in range(1000)]

    def fresh(i: int) -> Any:
        deck = list(range(games[i].pack.size))
        rng.shuffle(deck)
        return games[i].new_deal(TableState(dealer=i % 3), deck)

    states = [fresh(i) for i in range(1000)]
    events, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        for i, state in enumerate(states):
            if state.is_terminal():
                state = states[i] = fresh(i)
            state.apply(rng.choice(state.legal_actions()))
            for view in state.views([0, 1, 2]):
                dumps(view)
            events += 1
    return (time.process_time() - start) / events * 1e6


def loopback_send_cost(sockets: int, sends: int = 6000, burst: int = 30, size: int = 2200) -> float:
    """Microseconds of the sender's CPU per message sent over loopback TCP to an idle reader
    holding ``sockets`` connections (the server's count: a send to one of thousands of
    sockets costs about twice one to one of a few, its kernel state being cold), each to a
    random one, in bursts like the server's broadcasts. The floor under each of the server's
    few sends per action: the kernel wakes the reader and does its receiving
    in the sender's system call."""
    rng = random.Random(2)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(min(sockets, 4096))
        reader = subprocess.Popen([sys.executable, "-c", _READER, str(listener.getsockname()[1]),
                                   str(sockets), str(sends * size)])
        accepted = [listener.accept()[0] for _ in range(sockets)]
    data = b"x" * size
    targets = [accepted[rng.randrange(sockets)] for _ in range(sends)]
    try:
        for s in accepted:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        start = time.process_time()
        for _ in range(sends // burst):  # the pauses alone: their CPU is not the sends'
            time.sleep(0.002)
        pauses = time.process_time() - start
        start = time.process_time()
        for i, target in enumerate(targets):
            target.sendall(data)
            if i % burst == burst - 1:
                time.sleep(0.002)  # the reader goes idle between bursts, as clients do
        cost = time.process_time() - start - pauses
        reader.wait(60)
    finally:
        for s in accepted:
            s.close()
        if reader.poll() is None:
            reader.kill()
    return max(0.0, cost) / sends * 1e6


#: the reader of ``loopback_send_cost``: one process, epoll over its sockets, reads until done
_READER = """
import select, socket, sys
port, n, want = (int(a) for a in sys.argv[1:4])
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
ep = select.epoll()
by_fd = {s.fileno(): s for s in socks}
for fd in by_fd:
    ep.register(fd, select.EPOLLIN)
got = 0
while got < want:
    for fd, _ in ep.poll(5):
        got += len(by_fd[fd].recv(65536))
"""


def machine_cpu_seconds() -> float:
    """Busy CPU seconds of the whole machine so far, all cores (Linux /proc/stat)."""
    try:
        f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = f[3] + (f[4] if len(f) > 4 else 0)  # idle + iowait
        return (sum(f[:8]) - idle) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def committed_events(db: Path) -> dict[str, int]:
    con = sqlite3.connect(str(db))
    out: dict[str, int] = {}
    for tid, n in con.execute("SELECT table_id, COUNT(*) FROM st_deals GROUP BY table_id"):
        out[tid] = out.get(tid, 0) + n
    # the actions, found as the server finds them: through their deal
    for tid, n in con.execute("SELECT d.table_id, COUNT(*) FROM st_moves m JOIN st_deals d "
                              "ON m.deal_key = d.deal_key GROUP BY d.table_id"):
        out[tid] = out.get(tid, 0) + n
    con.close()
    return out


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--think-ms", type=float, default=250.0,
                    help="mean pause of a client before it acts, uniform in 0.5–1.5 × this "
                         "(0: act at once, which saturates the server)")
    ap.add_argument("--deal-pause", type=float, default=0.2,
                    help="the server's pause between deals")
    ap.add_argument("--ruleset", default="tippen/grupp-1975")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ws", default="websockets-sansio",
                    help="uvicorn WebSocket implementation (websockets-sansio, websockets)")
    ap.add_argument("--uds", action="store_true",
                    help="serve on a Unix socket (stammtisch serve --uds: the link from a reverse "
                         "proxy on the same machine) and connect the clients there, instead of "
                         "TCP on 127.0.0.1")
    ap.add_argument("--profile", help="run the server under cProfile and write the stats here")
    ap.add_argument("--busy-cores", type=int, default=0,
                    help="busy-loop processes to run beside the bench (emulated other jobs)")
    args = ap.parse_args(argv)

    calibration = calibrate()  # before the server starts: the machine is as quiet as it gets
    tmp = Path(tempfile.mkdtemp(prefix="stammtisch-load-"))
    db = tmp / "load.sqlite"
    port = free_port()
    base, ws_base = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}"
    uds = str(tmp / "server.sock") if args.uds else None
    proc = start_server(db, port, args.deal_pause, args.profile, args.ws, uds)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(args.busy_cores)]
    try:
        # the next deal after deal_pause (not when every player pressed Next): steady load
        tables = [http_json(uds, base, "/api/tables", {"ruleset": args.ruleset, "options": {"players": 3},
                                             "seats": [{"name": f"p{i}"} for i in range(3)],
                                             "pace": args.deal_pause})
                  for _ in range(args.tables)]
        server_cpu0 = cpu_seconds(proc.pid)
        client_cpu0 = time.process_time()
        load0 = os.getloadavg()
        machine0, wall0 = machine_cpu_seconds(), time.perf_counter()
        gc.set_threshold(20_000, *gc.get_threshold()[1:])
        with asyncio.Runner(loop_factory=new_event_loop) as runner:
            stats, clients, elapsed, window, split = runner.run(
                drive(base, ws_base, tables, args.seconds, args.think_ms / 1000, args.seed,
                      proc.pid, uds))
        load1 = os.getloadavg()
        # (includes connecting and the 1.5 s drain: an upper bound for the run's CPU share)
        server_cpu = cpu_seconds(proc.pid) - server_cpu0
        client_cpu = time.process_time() - client_cpu0
        machine_cpu, wall = machine_cpu_seconds() - machine0, time.perf_counter() - wall0
        final = {t["id"]: http_json(uds, base, f"/api/tables/{t['id']}")["events"]
                 for t in tables}
    finally:
        for b in busy:
            b.kill()
            b.wait()
        proc.send_signal(2)  # SIGINT: uvicorn shuts down cleanly (and writes a profile)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    send_cost = loopback_send_cost(max(1, len(clients)))
    stored = committed_events(db)
    lost = 0
    for c in clients:
        server_events = stored.get(c.table, 0)
        lost += c.gaps + max(0, server_events - c.last_event)
        if final[c.table] != server_events:  # memory and database disagree
            lost += abs(final[c.table] - server_events)
    lat = stats.latencies
    p99 = pct(lat, 0.99)
    print(json.dumps({
        "tables": args.tables,
        "clients": len(clients),
        "transport": "unix" if uds else "tcp",
        "ruleset": args.ruleset,
        "think_ms": args.think_ms,
        "busy_cores": args.busy_cores,
        "seconds": round(elapsed, 2),
        "actions": len(lat),
        "actions_per_s": round(len(lat) / elapsed, 1),
        "p50_ms": round(pct(lat, 0.50), 2),
        "p90_ms": round(pct(lat, 0.90), 2),
        "p99_ms": round(p99, 2),
        "max_ms": round(max(lat) * 1000, 2) if lat else None,
        "errors": stats.errors,
        "lost_events": lost,
        "events_committed": sum(stored.values()),
        "server_cpu_s": round(server_cpu, 1),
        "client_cpu_s": round(client_cpu, 1),
        "server_us_per_action": round(server_cpu / max(1, len(lat)) * 1e6),
        # the server's CPU per action in the second half of the run only (every table
        # playing; no connecting, starting or draining): what one action costs
        "server_us_per_action_steady": round(window[0] / max(1, window[1]) * 1e6),
        # the same, split: the event loop's thread (user and system time: the system time is
        # mostly its socket writes) and the other threads (the database writer and reader)
        "server_us_per_action_steady_split": {k: round(v) for k, v in split.items()},
        "client_us_per_action": round(client_cpu / max(1, len(lat)) * 1e6),
        "client_loop": CLIENT_LOOP,
        "cpus": os.cpu_count(),
        "load_before": [round(x, 2) for x in load0],
        "load_after": [round(x, 2) for x in load1],
        # CPU the rest of the machine used meanwhile, in cores (other jobs share the cores)
        "other_jobs_cores": round(max(0.0, machine_cpu - server_cpu - client_cpu) / wall, 2),
        # this machine's speed, to compare runs on different machines (see calibrate and
        # loopback_send_cost): µs of a fixed piece of engine work, and of one loopback send
        "machine_calibration_us": round(calibration, 1),
        "machine_loopback_send_us": round(send_cost, 1),
        "meets_bar": bool(lat) and p99 < 100 and stats.errors == 0 and lost == 0,
        **({"error_samples": stats.error_samples} if stats.error_samples else {}),
    }))


if __name__ == "__main__":
    main()
