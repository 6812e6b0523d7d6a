"""Whether this process should get traffic, and how it stops.

- ``GET /healthz``: the process is alive (its event loop answers); nothing else is looked at.
- ``GET /readyz``: it should get traffic: its database answers and holds the schema this
  server knows (the migrations are done), its leases were renewed on time (several processes
  over one database, ``peers.py``), and it is not draining. ``503`` otherwise, with the
  checks that failed. The database is asked at most once a second, on a thread of its own, so
  probes cost nothing the tables would notice.

Both are unauthenticated and say nothing secret: no address, no version, no error text.

Stopping (SIGTERM, Ctrl-C): ``DrainingServer`` drains the app before uvicorn's own graceful
shutdown (``Drain``): no new tables or connections (``/readyz`` says not ready, table requests
are answered ``503`` "restarting", WebSockets closed with 1012), every table stops once the
event it is committing is committed, the leases are given up (several processes), and every
client is closed with 1012, so that its page comes back at once, to another process if there
is one. All within ``--drain-seconds``; then the process exits with 0.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import uvicorn
from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from .migrations import LATEST, VERSION_TABLE
from .protocol import CloseCode
from .refusals import MESSAGES, STORAGE_ERRORS, error_response

if TYPE_CHECKING:
    from .manager import TableManager
    from .peers import Peers
    from .storage import Storage

log = logging.getLogger("stammtisch.server")

#: How long a database probe's answer stands (seconds): probes more often cost no more.
PROBE_KEPT = 1.0
#: How long ``/readyz`` waits for the database (seconds); a slower database is "not ready".
PROBE_TIMEOUT = 2.0

router = APIRouter()


class Readiness:
    """The checks of ``/readyz`` (see the module's docstring)."""

    def __init__(self, storage: Storage, manager: TableManager, peers: Peers | None):
        self.storage = storage
        self.manager = manager
        self.peers = peers
        # an in-memory database is one connection: asked where its other reads run
        self._io: Executor = (manager.store.reader if storage.one_connection else
                              ThreadPoolExecutor(max_workers=1, thread_name_prefix="stammtisch-probe"))
        self._answer: tuple[float, dict[str, bool]] | None = None  # (when, database checks)
        self._probe: asyncio.Future[dict[str, bool]] | None = None  # a probe under way

    def _ask_database(self) -> dict[str, bool]:
        try:
            with self.storage.engine.connect() as conn:
                version = conn.execute(text(f"SELECT version FROM {VERSION_TABLE}")).scalar()
        except STORAGE_ERRORS:  # whatever the database says, the answer is "not ready"
            log.info("the readiness probe could not ask the database", exc_info=True)
            return {"database": False, "schema": False}
        return {"database": True, "schema": version == LATEST}

    async def _database(self) -> dict[str, bool]:
        now = time.monotonic()
        if self._answer is not None and now - self._answer[0] < PROBE_KEPT:
            return self._answer[1]
        if self._probe is None:  # one probe at a time, whoever asks meanwhile waits for it
            self._probe = asyncio.get_running_loop().run_in_executor(self._io, self._ask_database)
        probe = self._probe
        try:
            answer = await asyncio.wait_for(asyncio.shield(probe), PROBE_TIMEOUT)
        except TimeoutError:
            return {"database": False, "schema": False}
        if self._probe is probe:
            self._probe = None
            self._answer = (time.monotonic(), answer)
        return answer

    async def checks(self) -> dict[str, bool]:
        """Each check, true when it passes."""
        out = await self._database()
        return {**out, "leases": self.peers is None or self.peers.fresh(),
                "accepting": not self.manager.draining}

    def shutdown(self) -> None:
        if self._io is not self.manager.store.reader:
            self._io.shutdown(wait=False)


@router.get("/healthz", include_in_schema=False)
def healthz() -> dict[str, bool]:
    return {"alive": True}


@router.get("/readyz", include_in_schema=False)
async def readyz(conn: HTTPConnection) -> JSONResponse:
    readiness: Readiness = conn.app.state.readiness
    checks = await readiness.checks()
    ready = all(checks.values())
    return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)


class RefuseWhileDraining:
    """ASGI middleware: while the process drains, a request about tables (``/api/tables…``)
    is answered ``503`` "restarting" with ``Retry-After: 1`` (another process of the service
    may serve it at once); the others (the page, the rules, ``/readyz``) are served."""

    def __init__(self, app: ASGIApp, manager: TableManager):
        self.app = app
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.manager.draining and scope["type"] == "http" and \
                scope["path"].startswith("/api/tables"):
            refusal = error_response(503, MESSAGES["restarting"], "restarting", {"Retry-After": "1"})
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


class Drain:
    """The app's part of stopping (see the module's docstring); once."""

    def __init__(self, manager: TableManager, peers: Peers | None):
        self.manager = manager
        self.peers = peers
        self.started = False

    async def __call__(self) -> None:
        if self.started:
            return
        self.started = True
        tables = await self.manager.drain()
        if self.peers is not None:  # nothing more is committed here: the others take over
            self.peers.stop()
        for live in tables:
            live.fanout.close(CloseCode.RESTARTING)
        await self.manager.sockets_closed()
        log.info("drained: %d tables stopped, every client told to come again", len(tables))


class DrainingServer(uvicorn.Server):
    """uvicorn's server, whose shutdown drains the app first (``drain``), then closes what is
    left as uvicorn does; the whole within ``drain_seconds`` (what uvicorn would still wait
    for connections and tasks after that is cut short)."""

    def __init__(self, config: uvicorn.Config, drain: Drain, drain_seconds: float):
        super().__init__(config)
        self.drain = drain
        self.drain_seconds = drain_seconds

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        deadline = time.monotonic() + self.drain_seconds
        try:
            async with asyncio.timeout(self.drain_seconds):
                await self.drain()
        except TimeoutError:
            log.warning("draining took longer than %.0f s; stopping anyway", self.drain_seconds)
        left = deadline - time.monotonic()
        self.config.timeout_graceful_shutdown = max(1, math.ceil(left))
        await super().shutdown(sockets)
