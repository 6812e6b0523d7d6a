"""The event store of the live tables: the group commit of their events, the spill file, the
checkpoints of the write-ahead log, and the other database calls, all off the tables' rules.

Database work runs on one writer thread (``EventStore.commit``), never on the event loop:
a stalled write holds up only the tables waiting for it. Events (actions, decks) go through a
group commit (``EventStore.write``): the rows that arrive while one commit is under way, or
within ``EventStore.commit_wait`` after the first of them (up to ``ServerLimits.commit_window``
on a busy server, next to nothing on a quiet one), are committed together, and each table
hears of its commit only after it happened.

What it retries: the database's own errors (``refusals.STORAGE_ERRORS``: a lost connection, a
lock, a full disk under the spill file), with backoff for ``ServerLimits.commit_deadline``
seconds; then it raises one ``StorageUnavailable`` (the last error as its cause), the only
storage error the code above catches. Any other error is a fault of the server's: it is not
retried and goes up as it is (the table undoes the event and answers a server fault).

Several processes over one database (peers.py): each group commit checks, in its own
transaction, that this process still holds the lease of every table whose rows it writes,
under the epoch the table was taken with (``lease_fence``); the rows of a table that lost it
are not written, and their events are refused with ``LeaseLost``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from .limits import ServerLimits
from .refusals import STORAGE_ERRORS, LeaseLost, NotHolding, StorageUnavailable
from .scheduler import Scheduler
from .spill import Spill
from .storage import LeaseFence, Storage, Write

log = logging.getLogger("stammtisch.server")

T = TypeVar("T")

#: Rows the event loop commits itself between two checkpoints of the write-ahead log, which
#: the writer thread runs (``EventStore._checkpoint``). A checkpoint copies each page once,
#: however often the log holds it, so rarer checkpoints cost the writer thread less CPU per
#: action, at the price of a larger log (some MiB at this setting; bench/server_load.py shows
#: the writer thread's CPU per action).
ROWS_BETWEEN_CHECKPOINTS = 4000

#: How long the event loop's next group commit waits for a checkpoint (seconds); a slower
#: one goes on by itself, and the log starts over at a later one.
CHECKPOINT_WAIT = 0.05

#: The time over which ``EventStore.row_rate`` counts the event rows (seconds).
RATE_SECONDS = 0.5

#: Rows of the spill file moved into the database in one transaction (``EventStore._drain``).
DRAIN_CHUNK = 2_000

#: The pause before a failed group commit's first retry (seconds); each next one doubles, up
#: to a second (``EventStore.write``).
FIRST_RETRY_PAUSE = 0.05


class Holder(Protocol):
    """Whose event a row is (a live table): the lease epoch it was taken with (peers.py;
    None: not taken yet), and whether it was dropped here (another process runs it now)."""

    @property
    def id(self) -> str: ...

    @property
    def lease(self) -> int | None: ...

    @property
    def dropped(self) -> bool: ...


class EventStore:
    """The database and the spill file as the live tables use them (see the module's
    docstring)."""

    def __init__(self, storage: Storage, limits: ServerLimits, spill: Spill | None,
                 scheduler: Scheduler):
        self.storage = storage
        self.limits = limits
        self._scheduler = scheduler
        # one writer thread: SQLite has one writer anyway, and the writer connection is its own
        self.db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stammtisch-db")
        # reads (a table's record, an archived table) on a thread of their own: a long read
        # must not hold up the group commits every table's next event waits for. (An
        # in-memory database has one connection: its reads stay on the writer thread.)
        self.reader = (self.db if storage.one_connection
                       else ThreadPoolExecutor(max_workers=1, thread_name_prefix="stammtisch-read"))
        # rows for the next group commit, each with its future and whose event it is
        self._batch: list[tuple[Write, asyncio.Future[None], Holder | None]] = []
        self._flushing = False
        self.row_rate = 0.0  # event rows a second lately (``commit_wait``)
        self._last_group_at = time.monotonic()
        self.rows_written_now = 0  # by the event loop since the last checkpoint
        # events that the database did not commit in time go to the spill file (spill.py)
        self.spill = spill if limits.spill_after is not None else None
        self.spill_io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stammtisch-spill")
        self._draining = False
        # several processes over one database (peers.py): whether this one may commit now
        # (it renewed its leases lately; a quick refusal before any database work); None: always
        self.fence: Callable[[], bool] | None = None
        # … and the check in each group commit's transaction that this process still holds
        # each table's lease under its epoch (``Storage.write_batch``); None: one process
        self.lease_fence: Callable[[dict[str, int]], LeaseFence] | None = None
        # told of each group commit made: its rows and the seconds it took (metrics.py)
        self.on_group: Callable[[list[Write], float], None] | None = None

    def _check_fence(self) -> None:
        if self.fence is not None and not self.fence():
            raise NotHolding("this process could not renew its leases lately; it commits "
                             "nothing until it has")

    async def commit(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a database write on the writer thread; retry with backoff until
        ``commit_deadline``; raise the last error if it never succeeds."""
        return await self._retried(self.db, fn, *args)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a database read on the reader thread, retried like ``commit``."""
        return await self._retried(self.reader, fn, *args)

    async def _retried(self, executor: ThreadPoolExecutor, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + self.limits.commit_deadline
        pause = 0.05
        while True:
            try:
                if executor is self.db:
                    self._check_fence()
                return await loop.run_in_executor(executor, fn, *args)
            except STORAGE_ERRORS as e:
                if time.monotonic() + pause > deadline:
                    raise StorageUnavailable(f"the database did not do it in time: {e}") from e
                log.info("a database call failed; retrying in %.2f s", pause, exc_info=True)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)

    async def write(self, row: Write, deadline: float | None = None,
                    failed: BaseException | None = None, holder: Holder | None = None) -> None:
        """Commit one event row (an action or a later deal's deck) in a group commit: rows that
        arrive while a commit is under way go together in the next one. A storage error is
        retried with backoff like ``commit`` until ``deadline`` (``time.monotonic()``;
        default: ``commit_deadline`` from now), then ``StorageUnavailable`` is raised; any
        other error (a fault, ``LeaseLost``) at once. Returns once the row is committed.
        ``failed``: the error of a first try (``write_soon``) made already. ``holder``: the
        table whose event it is; once it is dropped here, no retry writes its row."""
        if deadline is None:
            deadline = time.monotonic() + self.limits.commit_deadline
        pause = FIRST_RETRY_PAUSE
        error = failed
        while True:
            if error is None:
                outcome = await self._try(row, holder)
                if outcome is None:
                    return
                error = outcome
            if not isinstance(error, STORAGE_ERRORS):
                raise error
            if time.monotonic() + pause > deadline:
                raise StorageUnavailable(f"the database did not commit in time: {error}") from error
            log.info("a group commit failed; retrying in %.2f s", pause, exc_info=error)
            error = None
            await asyncio.sleep(pause)
            pause = min(pause * 2, 1.0)
            if holder is not None and holder.dropped:  # another process runs the table now
                raise LeaseLost(f"table {holder.id}: dropped here while its event was retried")

    async def _try(self, row: Write, holder: Holder | None) -> BaseException | None:
        """One try of ``write``: its error, or None when the row is committed."""
        done = self.write_soon(row, holder)
        await asyncio.wait((done,))
        return done.exception()

    def write_soon(self, row: Write, holder: Holder | None = None) -> asyncio.Future[None]:
        """One try of ``write``: the row joins the next group commit; the future ends with it
        (its error if it failed)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._batch.append((row, done, holder))
        if not self._flushing:
            self._flushing = True
            loop.create_task(self._flush())
        return done

    async def _flush(self) -> None:
        try:
            while self._batch:
                wait = self.commit_wait()
                if wait > 0:  # let more events join this commit
                    await asyncio.sleep(wait)
                batch, self._batch = self._batch, []
                self._note_group(len(batch))
                fence = self._lease_fence(batch)
                rows = [row for row, _, holder in batch if holder is None or not holder.dropped]
                started = time.monotonic()
                # the group's outcome, an error or the tables refused, goes to each row's future
                # (its table answers it): nothing here catches
                group = asyncio.ensure_future(self._commit_group(rows, fence))
                await asyncio.wait((group,))
                error = group.exception()
                refused = set() if error is not None else group.result()
                if error is None and self.on_group is not None:
                    self.on_group(rows, time.monotonic() - started)
                for row, done, holder in batch:
                    if done.done():
                        continue
                    if row[1]["table_id"] in refused or (holder is not None and holder.dropped):
                        done.set_exception(LeaseLost(f"table {row[1]['table_id']}: this process "
                                                     f"no longer holds its lease"))
                    elif error is not None:
                        done.set_exception(error)
                    else:
                        done.set_result(None)
        finally:
            self._flushing = False

    def fence_for(self, holder: Holder) -> LeaseFence | None:
        """The lease check of a transaction that writes an event of one table (its first
        deal); None with one process."""
        if self.lease_fence is None:
            return None
        return self.lease_fence({holder.id: -1 if holder.lease is None else holder.lease})

    def _lease_fence(self, batch: list[tuple[Write, asyncio.Future[None], Holder | None]]
                     ) -> LeaseFence | None:
        """The lease check of a group's transaction (several processes): each table's epoch
        (-1, which no lease has, for a table not taken yet)."""
        if self.lease_fence is None:
            return None
        epochs = {row[1]["table_id"]: -1 if holder is None or holder.lease is None
                  else holder.lease for row, _, holder in batch}
        return self.lease_fence(epochs)

    async def _commit_group(self, rows: list[Write], fence: LeaseFence | None) -> set[str]:
        """``_commit_rows`` behind the quick fence; the tables whose rows were refused."""
        self._check_fence()
        if not rows:
            return set()
        return await self._commit_rows(rows, fence)

    def commit_wait(self) -> float:
        """How long a group commit waits for more events to join it: ``commit_window`` on a
        busy server (``commit_busy_rows`` event rows a second or more, lately), less in
        proportion on a quieter one, where few or no other events would come in the window
        and each would only wait longer (like PostgreSQL's ``commit_delay``, which waits
        only while enough other transactions are active)."""
        limits = self.limits
        if limits.commit_window <= 0 or self.row_rate >= limits.commit_busy_rows:
            return max(limits.commit_window, 0.0)
        return limits.commit_window * self.row_rate / limits.commit_busy_rows

    def _note_group(self, rows: int) -> None:
        """Count a group of ``rows`` into ``row_rate``, the rows of the last ``RATE_SECONDS``
        or so a second: each earlier row counts the less the longer ago its group was, so
        the rate falls at once when the server has been quiet."""
        now = time.monotonic()
        since, self._last_group_at = now - self._last_group_at, now
        self.row_rate = self.row_rate * math.exp(-since / RATE_SECONDS) + rows / RATE_SECONDS

    async def _commit_rows(self, rows: list[Write], fence: LeaseFence | None = None) -> set[str]:
        """Make one group of event rows durable: in the database, or in the spill file when
        the database does not commit them within ``spill_after`` seconds (or fails), and while
        it is stalled. (Groups need no order between them: a table's next event waits for the
        commit of its last, under the table's lock.) Returns the tables whose rows ``fence``
        refused (several processes, which have no spill file)."""
        loop = asyncio.get_running_loop()
        spill = self.spill
        if self._may_write_now(spill):
            if self.rows_written_now >= ROWS_BETWEEN_CHECKPOINTS:
                await self._checkpoint()
            try:
                self.storage.write_batch(rows, now=True)
            except STORAGE_ERRORS:
                pass  # locked, or failing: the writer thread waits, retries and spills below
            else:
                self.rows_written_now += len(rows)
                return set()
        if spill is None:
            return await loop.run_in_executor(self.db, self.storage.write_batch, rows, False, fence)
        attempt: asyncio.Future[set[str]] | None = None
        if not spill.stalled:
            attempt = loop.run_in_executor(self.db, self.storage.write_batch, rows)
            done, _ = await asyncio.wait({attempt}, timeout=self.limits.spill_after)
            if done and attempt.exception() is None:
                return set()
            if not done:  # it may still go through: the drain then skips its rows
                attempt.add_done_callback(lambda f: f.cancelled() or f.exception())
            elif not isinstance(attempt.exception(), STORAGE_ERRORS):
                return await attempt  # a fault, not the database failing: it goes up as it is
            else:
                attempt = None
            if not spill.stalled:
                spill.stalled = True
                spill.stalled_since = time.monotonic()
                log.info("the database did not commit in time: events go to the spill file "
                         "until it is back")
        spill.appending += 1
        try:
            await loop.run_in_executor(self.spill_io, spill.append, rows)
            spill.pending.extend(rows)
        except STORAGE_ERRORS:
            spill.appending -= 1
            spill.stalled = False  # the file fails too (a full disk): the next group tries the database
            if attempt is not None:
                # the database attempt still running decides: refusing the events while it
                # might commit them would fork the table
                return await attempt
            raise
        else:
            spill.appending -= 1
        if not self._draining:
            self._draining = True
            loop.create_task(self._drain())
        return set()

    def _may_write_now(self, spill: Spill | None) -> bool:
        """Whether the next group is committed on the event loop itself (``write_batch(now=
        True)``): on an SQLite file that is not stalled.

        Why this deviates from "database work only on the writer thread": under load the
        hand-off to the writer thread, and its fight with the busy loop for the interpreter
        lock, cost more CPU per action than the INSERTs themselves (bench/server_side_by_side.py).
        The loop's connection never waits (it fails at once when locked; the group then goes
        to the writer thread instead) and never checkpoints (a checkpoint syncs the file to
        disk): ``_checkpoint`` does, on the writer thread."""
        return self.storage.writes_now and (spill is None or not spill.stalled)

    async def _checkpoint(self) -> None:
        """Copy the write-ahead log into the database file, on the writer thread, while the
        loop commits nothing (for up to ``CHECKPOINT_WAIT``): a checkpoint that copies every
        frame lets the log start over at the next commit; one that overlaps commits leaves
        the newest frames behind, and with commits every few milliseconds the log would never
        start over and grow without end (tests/test_server_durability.py bounds it). Only a
        checkpoint, not a commit of the writer thread's: another connection's commit would
        empty the loop connection's page cache, which it then read back page by page."""
        self.rows_written_now = 0
        job = asyncio.get_running_loop().run_in_executor(self.db, self.storage.checkpoint)
        try:
            await asyncio.wait_for(asyncio.shield(job), CHECKPOINT_WAIT)
        except TimeoutError:
            job.add_done_callback(lambda f: f.cancelled() or f.exception())
        except STORAGE_ERRORS:
            log.warning("a checkpoint of the database failed", exc_info=True)

    async def _drain(self) -> None:
        """Move the spill file's rows into the database (retried with backoff until it takes
        them), then empty the file. The first rows the database takes show it is back: new
        groups go to it again, and the drain only has to catch up with the groups that were
        on their way into the file."""
        loop = asyncio.get_running_loop()
        spill = self.spill
        assert spill is not None
        pause = 0.05
        try:
            while spill.pending or spill.appending:
                # in chunks: the first one that goes in shows the database is back, and new
                # groups go to it again while the drain catches up
                rows = spill.pending[spill.drained:spill.drained + DRAIN_CHUNK]
                if not rows:  # a group is still on its way into the file
                    await asyncio.sleep(0.005)
                    continue
                try:
                    await loop.run_in_executor(self.db, self.storage.write_missing, rows)
                except STORAGE_ERRORS:
                    log.info("the spill file could not be drained yet; again in %.2f s", pause,
                             exc_info=True)
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 1.0)
                    continue
                pause = 0.05
                spill.drained += len(rows)
                if spill.stalled:
                    spill.stalled = False
                    stall = time.monotonic() - spill.stalled_since
                    # short stalls are common on a busy machine (a checkpoint, the writer
                    # thread waiting for the interpreter); long ones are worth an operator's eye
                    log.log(logging.WARNING if stall > 1.0 else logging.INFO,
                            "the database stalled for %.1f s; %d event(s) went to the spill file "
                            "meanwhile, and it takes them again", stall, len(spill.pending))
                if spill.drained == len(spill.pending) and not spill.appending:
                    # every row in the file is in the database; a group that spills from now
                    # on is appended after this, on the same thread
                    spill.pending.clear()
                    spill.drained = 0
                    await loop.run_in_executor(self.spill_io, spill.clear)
        finally:
            self._draining = False

    def drain_spill_now(self) -> None:
        """At shut-down: one attempt to move the spill file's rows into the database (what
        stays in the file is moved in at the next start)."""
        spill = self.spill
        if spill is None or not spill.pending:
            return
        try:
            self.storage.write_missing(spill.pending[spill.drained:])
        except STORAGE_ERRORS:
            log.warning("%d event(s) stay in the spill file until the next start",
                        len(spill.pending) - spill.drained)
            return
        if not spill.appending:
            spill.pending.clear()
            spill.drained = 0
            spill.clear()

    def replay_spill(self) -> None:
        """At start-up: move rows a crash left in the spill file into the database (before
        the tables are loaded from it)."""
        if self.spill is None:
            return
        rows = self.spill.read()
        if not rows:
            return
        deadline = time.monotonic() + max(30.0, self.limits.commit_deadline)
        while True:
            try:
                self.storage.write_missing(rows)
                break
            except STORAGE_ERRORS:
                if time.monotonic() > deadline:
                    raise
                log.warning("the database does not take the spill file's rows yet; retrying",
                            exc_info=True)
                time.sleep(0.5)
        self.spill.clear()
        log.warning("%d event(s) from the spill file are now in the database", len(rows))

    def background(self, fn: Callable[..., Any], *args: Any) -> None:
        """A write nobody waits for (bookkeeping such as "somebody joined"), retried. (A
        fault is logged with its traceback by the scheduler.)"""
        async def run() -> None:
            try:
                await self.commit(fn, *args)
            except StorageUnavailable:
                log.warning("a bookkeeping write failed", exc_info=True)
        self._scheduler.run_soon(run())

    def shutdown(self) -> None:
        """The threads end (after their work), then one last drain of the spill file."""
        self.db.shutdown(wait=True)
        self.reader.shutdown(wait=True)
        self.spill_io.shutdown(wait=True)
        self.drain_spill_now()


class TableRecord:
    """What one live table writes of itself, through the event store: one method per kind of
    write, for that table alone, so the table never reaches through the store into
    ``Storage``. The storage methods are looked up at each call (a test may replace one)."""

    __slots__ = ("_holder", "_store")

    def __init__(self, store: EventStore, holder: Holder) -> None:
        self._store = store
        self._holder = holder

    @property
    def _storage(self) -> Storage:
        return self._store.storage

    def new_deal_key(self) -> int:
        return self._storage.new_deal_key()

    def write_soon(self, row: Write) -> asyncio.Future[None]:
        """An event's row in the next group commit, one try (``EventStore.write_soon``)."""
        return self._store.write_soon(row, self._holder)

    async def write(self, row: Write, deadline: float, failed: BaseException) -> None:
        """The row's first try failed with ``failed``: retried until ``deadline``
        (``EventStore.write``)."""
        await self._store.write(row, deadline, failed=failed, holder=self._holder)

    async def start(self, number: int, deck: list[str], first_dealer: int, key: int) -> None:
        """The first deal, and the table marked started, under the table's lease."""
        await self._store.commit(self._storage.start_deal, self._holder.id, number, deck,
                                 first_dealer, key, self._store.fence_for(self._holder))

    async def close(self) -> None:
        await self._store.commit(self._storage.close_table, self._holder.id)

    async def add_chat(self, idx: int, seat: int, text: str, at: float,
                       name: str | None = None) -> None:
        await self._store.commit(self._storage.add_chat, self._holder.id, idx, seat, text, at,
                                 name)

    async def set_spectator_chat(self, on: bool) -> None:
        await self._store.commit(self._storage.set_spectator_chat, self._holder.id, on)

    async def take_seat(self, seat: int, digest: str, open_seats: list[int],
                        name: str | None) -> None:
        await self._store.commit(self._storage.take_seat, self._holder.id, seat, digest,
                                 open_seats, name)

    async def mark_rematch(self, rematch_id: str) -> None:
        await self._store.commit(self._storage.mark_rematch, self._holder.id, rematch_id)

    async def set_rematch_claimed(self, seats: list[int]) -> None:
        await self._store.commit(self._storage.set_rematch_claimed, self._holder.id, seats)

    def mark_joined(self) -> None:
        """Somebody connected (bookkeeping nobody waits for)."""
        self._store.background(self._storage.mark_joined, self._holder.id)

    def set_humans(self, humans: list[int]) -> None:
        """The human seats that connected so far (bookkeeping nobody waits for)."""
        self._store.background(self._storage.set_humans, self._holder.id, humans)
