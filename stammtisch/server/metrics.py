"""The server's metrics for Prometheus, served on a port of their own (``stammtisch serve
--metrics-port``, bound to 127.0.0.1 unless ``--metrics-host`` says otherwise): nothing a
table's player can reach through the web port, and no token to leak.

What is counted (names as Prometheus shows them; docs/deployment.md has the alerts):

- ``stammtisch_live_tables``, ``stammtisch_connected_clients``: tables loaded and WebSocket
  clients connected, in this process.
- ``stammtisch_actions_total``: actions committed (``rate()`` of it: actions a second).
- ``stammtisch_commit_seconds``, ``stammtisch_commit_group_rows``: per group commit, how long
  it took and how many event rows it held (histograms).
- ``stammtisch_spill_rows_waiting``: events in the spill file, not yet in the database.
- ``stammtisch_refusals_total{rule}``: requests and messages refused, by the rule they met;
  ``stammtisch_tables_evicted_total``: tables given up to make room.
- ``stammtisch_worker_queue_jobs{pool}``, ``stammtisch_worker_busy_jobs{pool}``,
  ``stammtisch_worker_queue_seconds{pool}``: the worker processes of the search bots and of
  the Analysis: jobs waiting, jobs being worked on, and how long each waited (histogram).
- ``stammtisch_draining``: 1 while the process drains before it stops.
- several processes (``peers.py``): ``stammtisch_relayed_requests_total``,
  ``stammtisch_relayed_sockets``, ``stammtisch_lease_takeovers_total``, when ``Peers`` or
  its relay (relay.py, ``RelayFigures``) keeps those figures (``PEER_FIGURES``).
- the process's own CPU, memory and open files (``process_*``, prometheus-client's).

Figures kept anyway (tables, clients, refusals, queues) are read when Prometheus asks; what
happens per group commit or job is observed by hooks of the event store and the worker pools,
never per message: the cost per action stays what it was (bench/server_side_by_side.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from .storage import Write

if TYPE_CHECKING:
    from .analysis import Analyst
    from .manager import TableManager
    from .peers import Peers
    from .worker_pool import WorkerPool

log = logging.getLogger("stammtisch.server")

#: Figures of the several-process mode read from its ``Peers`` when it has them: the
#: attribute, the metric's kind and name, and what it counts.
PEER_FIGURES = (
    ("relayed_requests", "counter", "stammtisch_relayed_requests",
     "HTTP requests relayed to the process that holds their table"),
    ("relayed_sockets", "gauge", "stammtisch_relayed_sockets",
     "WebSockets relayed to the process that holds their table, open now"),
    ("lease_takeovers", "counter", "stammtisch_lease_takeovers",
     "tables this process took over from a process that stopped or died"),
)

#: Seconds: a group commit takes a few milliseconds, a stalled database up to the spill.
COMMIT_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
GROUP_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
QUEUE_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class ServerCollector(Collector):
    """The figures the server keeps anyway, read at each scrape (on the event loop: the
    metrics port is served there, so nothing is read while it changes)."""

    def __init__(self, manager: TableManager, pools: dict[str, WorkerPool],
                 peers: Peers | None, relay: object | None = None):
        self.manager = manager
        self.pools = pools
        self.peers = peers
        self.relay = relay

    def collect(self) -> Iterator[Metric]:
        m = self.manager
        yield GaugeMetricFamily("stammtisch_live_tables", "tables loaded in this process",
                                value=len(m.tables))
        yield GaugeMetricFamily("stammtisch_connected_clients",
                                "WebSocket clients connected to this process", value=m.sockets_open())
        yield GaugeMetricFamily("stammtisch_draining", "1 while the process drains before it stops",
                                value=int(m.draining))
        spill = m.store.spill
        yield GaugeMetricFamily("stammtisch_spill_rows_waiting",
                                "event rows in the spill file, not yet in the database",
                                value=0 if spill is None else len(spill.pending) - spill.drained)
        refusals = CounterMetricFamily("stammtisch_refusals",
                                       "requests and messages refused, by the rule they met",
                                       labels=["rule"])
        for rule, n in sorted(m.refusals.items()):
            refusals.add_metric([rule], n)
        yield refusals
        yield CounterMetricFamily("stammtisch_tables_evicted",
                                  "tables nobody played, given up to make room for a new one",
                                  value=m.evictions)
        waiting = GaugeMetricFamily("stammtisch_worker_queue_jobs",
                                    "jobs waiting for a worker process", labels=["pool"])
        busy = GaugeMetricFamily("stammtisch_worker_busy_jobs",
                                 "jobs a worker process is working on", labels=["pool"])
        for name, pool in self.pools.items():
            waiting.add_metric([name], pool.waiting)
            busy.add_metric([name], pool.busy)
        yield waiting
        yield busy
        for attribute, kind, name, what in PEER_FIGURES:
            value = getattr(self.peers, attribute, None)
            if value is None:
                value = getattr(self.relay, attribute, None)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                family = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
                yield family(name, what, value=value)


class Metrics:
    """The registry of one server (one per app: several apps in one process, as in the tests,
    keep theirs apart) and the hooks that feed it."""

    def __init__(self, manager: TableManager, analyst: Analyst, peers: Peers | None,
                 relay: object | None = None):
        self.registry = CollectorRegistry()
        pools = {"search bots": manager.thinker.worker_pool, "analysis": analyst.worker_pool}
        self.collector = ServerCollector(manager, pools, peers, relay)
        self.registry.register(self.collector)
        ProcessCollector(registry=self.registry)
        self.actions = Counter("stammtisch_actions", "actions committed", registry=self.registry)
        self.commit_seconds = Histogram("stammtisch_commit_seconds", "how long a group commit took",
                                        buckets=COMMIT_BUCKETS, registry=self.registry)
        self.group_rows = Histogram("stammtisch_commit_group_rows", "event rows in a group commit",
                                    buckets=GROUP_BUCKETS, registry=self.registry)
        queue = Histogram("stammtisch_worker_queue_seconds", "how long a job waited for a worker",
                          ["pool"], buckets=QUEUE_BUCKETS, registry=self.registry)
        manager.store.on_group = self.group_committed
        for name, pool in pools.items():
            pool.on_start = queue.labels(name).observe

    def group_committed(self, rows: list[Write], seconds: float) -> None:
        self.actions.inc(len(rows) - sum(1 for kind, _ in rows if kind == "deal"))
        self.commit_seconds.observe(seconds)
        self.group_rows.observe(len(rows))

    def exposition(self, accept: str) -> tuple[bytes, str]:
        """The metrics as Prometheus asked for them (its Accept header): body, content type."""
        encoder, content_type = choose_encoder(accept)
        return encoder(self.registry), content_type


#: The most bytes of a scrape's request the metrics port reads; seconds it waits for them.
REQUEST_MAX = 8192
REQUEST_TIMEOUT = 5.0


class MetricsServer:
    """``GET /metrics`` on its own port, served on the event loop (see ``ServerCollector``);
    any other path ``404``. A plain HTTP/1.0-style exchange, one request a connection: what
    Prometheus needs, nothing a browser would."""

    def __init__(self, metrics: Metrics, host: str, port: int):
        self.metrics = metrics
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("metrics for Prometheus on http://%s:%d/metrics", self.host, self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), REQUEST_TIMEOUT)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            writer.close()
            return
        try:
            lines = head[:REQUEST_MAX].decode("latin-1").split("\r\n")
            method, target, *_ = lines[0].split(" ")
            headers = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
            accept = next((v.strip() for k, v in headers.items() if k.lower() == "accept"), "")
            if method == "GET" and target.split("?")[0] == "/metrics":
                body, content_type = self.metrics.exposition(accept)
                status = "200 OK"
            else:
                body, content_type, status = b"not found\n", "text/plain", "404 Not Found"
            writer.write(_response(status, content_type, body))
            await writer.drain()
        except (ValueError, OSError):
            pass
        finally:
            writer.close()


def _response(status: str, content_type: str, body: bytes) -> bytes:
    return (f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode() + body


def metrics_text(metrics: Metrics) -> str:
    """The metrics in Prometheus's text format (for tests and a quick look)."""
    body, _ = metrics.exposition("")
    return body.decode()
