"""The web table: a FastAPI app (REST + one WebSocket per client) and its static web client.

The routes, one router per resource, are in ``routes/`` (each module lists its endpoints):
the tables, seats and links (``routes/tables.py``), records, past deals and analyses
(``routes/records.py``), a finished deal step by step (``routes/replays.py``), the WebSocket
(``routes/live.py``; its messages: ``protocol.py`` and docs/protocol.md), the web client
(``routes/pages.py``) and the Rules panel (``routes/guide.py``). ``GET /api/docs`` and
``/api/openapi.json`` only when the app is made with ``api_docs=True``. ``GET /healthz`` and
``/readyz`` for a proxy or an orchestrator, and how the process drains when it stops:
``health.py``; the metrics for Prometheus, on a port of their own: ``metrics.py``.

Every refusal is JSON ``{"error": "…", "rule": "…"}`` with the status of its kind
(``refusals.py``); a fault of the server's is logged with its traceback and answered 500, never
with a stack trace. Limits (sizes, rates, caps, timeouts) are in ``limits.ServerLimits``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import math
import os
import re
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from .analysis import Analyst
from .api_docs import api_docs_router
from .guard import BodyTooLarge, Guard, too_large
from .health import Drain, DrainingServer, Readiness, RefuseWhileDraining
from .health import router as health_router
from .limits import ServerLimits
from .manager import TableManager
from .metrics import Metrics, MetricsServer
from .peers import Peers, default_peer_url
from .refusals import Refusal, RefusalKind, StorageUnavailable, error_response, refusal_response
from .relay import PeerRelay, RelayFigures
from .routes import live, pages, records, replays, tables
from .routes.deps import Server
from .routes.guide import router as guide_router
from .spill import Spill
from .storage import Storage, default_database_url, spill_path_for
from .table_core import TRY_AGAIN
from .transport import KeepWebSocketSend

log = logging.getLogger("stammtisch.server")


class _RedactTokens(logging.Filter):
    """Keep tokens out of the access log: a client that puts one in a URL (``?token=…``) is
    refused, but the token is still a credential."""

    _re = re.compile(r"(token=)[^&\s\"]+")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.args = tuple(self._re.sub(r"\1…", a) if isinstance(a, str) else a
                                for a in record.args)
        return True


def _describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for e in exc.errors():
        loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        msg = e.get("msg", "invalid")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts) or "invalid request"


def create_app(database_url: str | None = None, data_dir: Path | None = None,
               bot_delay: float = 0.6, deal_pause: float = 8.0,
               limits: ServerLimits | None = None, api_docs: bool = False,
               peer_url: str | None = None,
               metrics_address: tuple[str, int] | None = None) -> FastAPI:
    """The app. ``bot_delay``: seconds before a bot acts; ``deal_pause``: seconds between a
    finished deal and the next one (a human may send ``next`` to go on at once); ``limits``:
    sizes, rates and caps; ``api_docs``: serve ``/api/docs`` and ``/api/openapi.json``;
    ``peer_url``: on PostgreSQL, this process is one of a service of several over the same
    database, reached by the others at this URL (``peers.py``); ``metrics_address``: serve
    the metrics for Prometheus at ``http://HOST:PORT/metrics`` (``metrics.py``; port 0: a free
    one, ``app.state.metrics_server.port``)."""
    limits = limits or ServerLimits()
    url = database_url or default_database_url(data_dir)
    storage = Storage(url, busy_ms=limits.sqlite_busy_ms)
    peers = Peers(storage, peer_url) if peer_url is not None and not storage.is_sqlite else None
    # no spill file in a service of several processes: what one process spilled and then
    # died with, the process that takes its tables would never see
    spill_path = spill_path_for(url, data_dir) if peers is None else None
    manager = TableManager(storage, bot_delay=bot_delay, deal_pause=deal_pause, limits=limits,
                           spill=Spill(spill_path) if spill_path is not None else None)
    if peers is not None:
        peers.setup(manager)
    manager.load_all()
    analyst = Analyst(max_queued=limits.analysis_queue)
    readiness = Readiness(storage, manager, peers)
    relay_figures = RelayFigures() if peers is not None else None
    metrics = Metrics(manager, analyst, peers, relay_figures)
    metrics_server = MetricsServer(metrics, *metrics_address) if metrics_address else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        manager.resume()
        sweeper = asyncio.get_running_loop().create_task(manager.sweeper())
        if peers is not None:
            peers.start()
        if metrics_server is not None:
            await metrics_server.start()
        try:
            yield
        finally:
            sweeper.cancel()
            if metrics_server is not None:
                await metrics_server.stop()
            readiness.shutdown()
            analyst.shutdown()
            manager.shutdown()
            if peers is not None:  # after the last commit: then the others may take over
                peers.stop()
            storage.close()

    app = FastAPI(title="stammtisch", lifespan=lifespan, docs_url=None, redoc_url=None,  # docs: api_docs.py
                  openapi_url="/api/openapi.json" if api_docs else None)
    app.state.server = Server(manager, storage, analyst, limits)
    app.state.manager = manager
    app.state.analyst = analyst
    app.state.storage = storage
    app.state.limits = limits
    app.state.readiness = readiness
    app.state.metrics = metrics
    app.state.metrics_server = metrics_server
    app.state.drain = Drain(manager, peers)
    if peers is not None:  # inside Guard: a relayed request is checked here first
        app.add_middleware(PeerRelay, peers=peers, max_body=limits.max_body,
                           max_listed=limits.listed_max, figures=relay_figures)
    app.add_middleware(RefuseWhileDraining, manager=manager)
    app.add_middleware(Guard, max_body=limits.max_body,
                       larger=dict.fromkeys(replays.RECORD_PATHS, limits.max_record_body))
    app.add_middleware(KeepWebSocketSend)
    install_handlers(app)
    for router in (tables.router, records.router, replays.router, live.router, pages.router):
        app.include_router(router)
    app.include_router(guide_router)  # the Rules panel: how to play the table's rule set
    app.include_router(health_router)  # /healthz, /readyz
    if api_docs:  # Swagger UI from this server, under its Content-Security-Policy
        app.include_router(api_docs_router("/api/openapi.json"))
    app.mount("/static", StaticFiles(directory=pages.STATIC), name="static")
    return app


def install_handlers(app: FastAPI) -> None:
    """Refusals answered by their kind, the database not answering in time 503 ("try
    again"), a body that does not fit its model 422, and any other
    error (a fault of the server's) logged with its traceback and answered 500."""

    @app.exception_handler(Refusal)
    async def _refused(request: Request, exc: Refusal) -> JSONResponse:
        return refusal_response(exc)

    @app.exception_handler(StorageUnavailable)
    async def _storage(request: Request, exc: StorageUnavailable) -> JSONResponse:
        log.warning("the database did not answer in time on %s: %s", request.url.path, exc)
        return refusal_response(Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE, 1))

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, _describe_validation(exc), "invalid")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc, BodyTooLarge):
            return JSONResponse(too_large(exc.limit), status_code=413)
        return error_response(exc.status_code, str(exc.detail), "size" if exc.status_code == 413 else None)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error on %s", request.url.path)
        return error_response(500, "internal server error", "server")


GC_THRESHOLD0 = 20_000


def tune_gc() -> None:
    """Garbage-collector settings for a long-running server (called once the tables are loaded).

    With CPython's defaults the collector runs many times a second under load, and its full
    passes over every live table's objects stall the event loop long enough to make the whole
    p99 tail (bench/server_load.py shows it in ``p99_ms``). So everything
    loaded at start (modules, rebuilt tables) is frozen out of the collector's view, and the
    youngest generation is collected every 20,000 allocations instead of 700 (the objects of
    one action mostly die by reference counting; cycles are rare: HTTP requests, closed
    connections), so collections are rare and short."""
    gc.collect()
    gc.freeze()
    _, t1, t2 = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD0, t1, t2)


def run(host: str = "127.0.0.1", port: int = 8000, database_url: str | None = None,
        data_dir: Path | None = None, bot_delay: float = 0.6, deal_pause: float = 8.0,
        log_level: str = "info", ws: str = "websockets-sansio",
        ws_per_message_deflate: bool = False, limits: ServerLimits | None = None,
        api_docs: bool = False, uds: str | None = None, peer_url: str | None = None,
        drain_seconds: float = 10.0, metrics_address: tuple[str, int] | None = None) -> None:
    """Serve the web table with uvicorn (blocks). On PostgreSQL the process is one of a service
    of several over the same database (``peers.py``), reached by the others at ``peer_url``
    (default: this server's own address).

    Per-message deflate is off by default: a state message is ~2 KB of JSON, and compressing
    each one costs more CPU than everything else in sending it (bench/server_load.py).
    Connections are guarded by ``transport.GuardedHttpToolsProtocol``: a header timeout
    (slowloris), caps per address and in all, ``max_connections`` fitted to the open-file
    limit first (``transport.fit_open_files``). ``uds``: listen on this Unix socket instead of
    ``host``:``port``, for a reverse proxy on the same machine (``transport.unix_listener``;
    removed again when the server stops).

    SIGTERM stops the server as Ctrl-C (SIGINT) does, and the process then exits with 0: the
    app drains first, within ``drain_seconds`` (``health.DrainingServer``: no new tables or
    connections, the commits under way finished, the leases given up, every client told to
    come again); uvicorn catches both signals, shuts down, and raises the signal again into
    the handler it found, which for SIGTERM would end the process at once (before the socket
    file is removed); the handler set here turns it into ``SystemExit`` instead, so every
    ``finally`` runs. ``metrics_address``: see ``create_app``."""
    import signal
    import threading

    import uvicorn

    from .transport import fit_open_files, unix_listener

    limits = fit_open_files(limits or ServerLimits())
    if database_url is not None and database_url.startswith("postgres") and peer_url is None:
        peer_url = default_peer_url(host, port, uds)
    app = create_app(database_url=database_url, data_dir=data_dir, bot_delay=bot_delay,
                     deal_pause=deal_pause, limits=limits, api_docs=api_docs, peer_url=peer_url,
                     metrics_address=metrics_address)
    tune_gc()
    for name in ("uvicorn.access", "uvicorn.error"):  # "WebSocket /ws/…?token=…" [accepted]
        logging.getLogger(name).addFilter(_RedactTokens())

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    main_thread = threading.current_thread() is threading.main_thread()  # signals: there only
    previous = signal.signal(signal.SIGTERM, stop) if main_thread else None
    try:
        listener = unix_listener(uds) if uds is not None else None
        try:
            config = uvicorn.Config(app, **uvicorn_settings(
                host, port, log_level, ws, ws_per_message_deflate, limits, listener),
                timeout_graceful_shutdown=max(1, math.ceil(drain_seconds)))
            server = DrainingServer(config, app.state.drain, drain_seconds)
            try:
                server.run()
            except KeyboardInterrupt:  # uvicorn raises Ctrl-C again once it has shut down
                pass
            if not server.started:
                sys.exit(3)  # as uvicorn.run: the start-up failed (and said why)
        finally:
            if listener is not None:
                listener.close()
            if uds is not None:
                with contextlib.suppress(OSError):
                    os.unlink(uds)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def uvicorn_settings(host: str, port: int, log_level: str, ws: str, ws_per_message_deflate: bool,
                     limits: ServerLimits, listener: socket.socket | None = None) -> dict[str, Any]:
    """The keyword arguments ``run`` gives ``uvicorn.run`` (or ``uvicorn.Config``).
    ``listener``: a Unix socket (``transport.unix_listener``) to serve on instead of
    ``host``:``port``, for a reverse proxy on the same machine: its X-Forwarded-For names the
    client, as only the socket's owner and group can connect (its right-most entry, taken by
    the guarded protocol: proxy.py; uvicorn's own handling, which takes the left-most one,
    is off there)."""
    from .transport import framed_websocket_protocol, guarded_protocol

    protocol: Any = framed_websocket_protocol() if ws == "websockets-sansio" else ws
    where: dict[str, Any] = dict(host=host, port=port) if listener is None else dict(
        fd=listener.fileno(), proxy_headers=False)
    return dict(**where, log_level=log_level, ws=protocol, ws_max_size=65536,
                ws_ping_interval=20.0, ws_ping_timeout=20.0,
                ws_per_message_deflate=ws_per_message_deflate,
                http=guarded_protocol(limits), timeout_keep_alive=int(limits.keep_alive_timeout),
                h11_max_incomplete_event_size=16_384)


if __name__ == "__main__":  # python -m stammtisch.server.app [port]
    run(port=int(sys.argv[1]) if len(sys.argv) > 1 else 8000)
