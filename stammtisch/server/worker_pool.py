"""The server's worker processes: rebuilt when one dies, within a bound, and shared fairly.

The search bots (thinker.py) and the Analysis (analysis.py) each run in a process pool of their
own. This is what both need around it:

- A worker that dies (the OOM killer, a crash) breaks its pool for good, so the pool is made
  anew; the job it took with it is tried once more. At most ``max_restarts`` new pools within
  ``restart_window`` seconds: a worker that keeps dying is a fault a new pool does not cure, and
  forking in a loop would only add load. Beyond the bound the pool refuses all work for
  ``restart_window`` seconds with ``WorkersFailing`` (one log line, not one per request), then
  starts afresh.
- Jobs wait here, not in the executor, and a worker is handed one job at a time, so the order is
  ours to choose: owners in turn by the worker time they have had (each job counts its expected
  cost; the one served least recently first among equals), and within an owner its keys in turn.
  One client with forty tables waiting gets one turn, then every other client with something
  waiting gets one: its tables slow down its own decisions, not everybody's; and a client whose
  jobs cost a hundred times more gets a turn for a hundred of the others'.
- The workers end with the server (``stammtisch.workers``), also when it is killed.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import time
from collections.abc import Callable, Hashable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..workers import process_pool
from .limits import count_down

log = logging.getLogger("stammtisch.server")

T = TypeVar("T")

DEFAULT_MAX_RESTARTS = 3
DEFAULT_RESTART_WINDOW = 60.0  # seconds


class WorkerError(Exception):
    """Work the server's worker processes refuse: ``rule`` is a stable machine code beside the
    (English) message."""

    rule = "workers"

    def __init__(self, message: str) -> None:
        super().__init__(message)


class JobFailed(WorkerError):
    """A job failed in its worker (its error is the cause): a fault of the work, not of the
    pool; asking again may fail the same way."""

    rule = "job failed"


class WorkersFailing(WorkerError):
    """The worker process keeps dying: no work for ``retry_after`` seconds (0: this request's
    worker died twice; others may go on)."""

    rule = "workers failing"

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class FairQueue(Generic[T]):
    """Items by owner and key, each with its cost (the worker time it is expected to take; 1
    unless told). ``pop`` takes the owner that has had the least of the worker, counted in
    cost, and within an owner its keys in turn; ``done`` tells that an item taken has been
    dealt with. A key has at most one item waiting.

    The count is a virtual clock (self-clocked fair queueing): an owner's items take up their
    cost after one another, from where the clock stood when the owner began to wait, and the
    clock moves to the end of each item taken. The owner whose next item ends first is taken;
    among equals the one served least recently (one never served, or with nothing waiting or
    out since, first), then the first to come. So an owner with forty items waiting gets one
    turn, then every other owner with something waiting gets one, also one that came after
    the forty were queued; and an owner whose items cost a hundred times more gets a turn for
    a hundred of the others' (an owner's first item is served before another's tenth).
    """

    def __init__(self) -> None:
        # owners with items waiting, by arrival: per key the item and its cost
        self._owners: dict[str, dict[Hashable, tuple[T, float]]] = {}
        self._tags: dict[str, float] = {}  # owner -> where its next item starts on the clock
        self._clock = 0.0  # where the latest item taken ends
        self._served: dict[str, int] = {}  # owner -> its latest turn, while it has items waiting or out
        self._out: dict[str, int] = {}  # owner -> items taken and not yet done
        self._turn = 0
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def put(self, owner: str, key: Hashable, item: T, cost: float = 1.0) -> None:
        if cost < 0:
            raise ValueError("an item's cost is >= 0")
        items = self._owners.get(owner)
        if items is None:  # it begins to wait: no credit from before, no debt beyond the clock
            items = self._owners[owner] = {}
            self._tags[owner] = max(self._tags.get(owner, 0.0), self._clock)
        if key in items:
            raise ValueError(f"{key!r} of {owner!r} has an item waiting already")
        items[key] = (item, cost)  # after the owner's other keys: its keys take turns
        self._count += 1

    def get(self, owner: str, key: Hashable) -> T | None:
        found = self._owners.get(owner, {}).get(key)
        return None if found is None else found[0]

    def pop(self) -> tuple[str, T]:
        """The owner whose turn it is and its first key's item."""
        if not self._count:
            raise IndexError("pop from an empty FairQueue")

        def order(owner: str) -> tuple[float, int]:
            first_cost = next(iter(self._owners[owner].values()))[1]
            return self._tags[owner] + first_cost, self._served.get(owner, -1)

        owner = min(self._owners, key=order)  # the first of equals
        items = self._owners[owner]
        item, cost = items.pop(next(iter(items)))
        if not items:
            del self._owners[owner]
        self._count -= 1
        self._tags[owner] += cost
        self._clock = max(self._clock, self._tags[owner])
        self._turn += 1
        self._served[owner] = self._turn
        self._out[owner] = self._out.get(owner, 0) + 1
        return owner, item

    def done(self, owner: str) -> None:
        """An item of ``owner`` taken by ``pop`` has been dealt with."""
        if count_down(self._out, owner):
            self._forget_idle(owner)

    def remove(self, owner: str, key: Hashable, item: T) -> bool:
        """Take back ``item`` if it still waits as ``key``'s."""
        items = self._owners.get(owner)
        if items is None or key not in items or items[key][0] is not item:
            return False
        del items[key]
        if not items:
            del self._owners[owner]
            self._forget_idle(owner)
        self._count -= 1
        return True

    def clear(self) -> list[T]:
        """Take back every item waiting."""
        items = [item for owned in self._owners.values() for item, _ in owned.values()]
        self._owners.clear()
        self._count = 0
        for owner in list(self._tags):
            self._forget_idle(owner)
        return items

    def _forget_idle(self, owner: str) -> None:
        """An owner with nothing waiting or out is forgotten (so the memory is bounded by the
        owners with work): when it comes back, it is served as one never served, from where
        the clock stands then."""
        if owner not in self._owners and owner not in self._out:
            self._served.pop(owner, None)
            self._tags.pop(owner, None)


@dataclass(eq=False)
class _Job:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    future: asyncio.Future[Any]
    owner: str
    key: Hashable
    queued_at: float = 0.0  # the pool's clock when it was submitted


class WorkerPool:
    """``workers`` worker processes (forkserver, started on first use) with the fair queue and
    the restart bound; ``what`` names them in log lines and messages ("the search bots' worker").
    ``clock`` is for tests."""

    def __init__(self, what: str, workers: int = 1, max_restarts: int = DEFAULT_MAX_RESTARTS,
                 restart_window: float = DEFAULT_RESTART_WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if workers < 1 or max_restarts < 0 or restart_window <= 0:
            raise ValueError("workers >= 1, max_restarts >= 0 and restart_window > 0 are needed")
        self.what = what
        self.workers = workers
        self.max_restarts = max_restarts
        self.restart_window = restart_window
        self.clock = clock
        self.executor: ProcessPoolExecutor | None = None
        self._processes: list[Any] = []  # the executor's worker processes (for pids, exit codes)
        self._queue: FairQueue[_Job] = FairQueue()
        self._busy = 0  # jobs handed to the workers
        self._restarts: list[float] = []  # when the pools of the window were made anew
        self._refusing_until = float("-inf")
        self._tasks: set[asyncio.Task[None]] = set()
        # told of the seconds each job waited for a worker (metrics.py)
        self.on_start: Callable[[float], None] | None = None

    # --- the callers' side --------------------------------------------------------------------

    def check(self) -> None:
        """Raise ``WorkersFailing`` while the pool refuses work."""
        left = self._refusing_until - self.clock()
        if left > 0:
            raise WorkersFailing(
                f"{self.what} died {self.max_restarts + 1} times within {self.restart_window:g} s; "
                f"no new work for {left:.0f} s", retry_after=left)

    def submit(self, owner: str, key: Hashable, fn: Callable[..., Any], *args: Any,
               cost: float = 1.0) -> asyncio.Future[Any]:
        """Queue ``fn(*args)`` for a worker (``fn`` and ``args`` picklable); its future. ``cost``:
        the worker time it is expected to take, in any unit the pool's callers share (the fair
        queue's count). Refused (``WorkersFailing``) while the pool refuses, ``ValueError`` when
        ``key`` of ``owner`` has a job waiting already. Cancelling the future takes the job back
        if no worker has it yet."""
        self.check()
        left = self._queue.get(owner, key)
        if left is not None and left.future.done():  # cancelled; its callback has not run yet
            self._queue.remove(owner, key, left)
        job = _Job(fn, args, asyncio.get_running_loop().create_future(), owner, key, self.clock())
        self._queue.put(owner, key, job, cost)
        job.future.add_done_callback(lambda future: self._queue.remove(owner, key, job))
        self._pump()
        return job.future

    @property
    def waiting(self) -> int:
        """Jobs waiting for a worker."""
        return len(self._queue)

    @property
    def busy(self) -> int:
        """Jobs a worker has."""
        return self._busy

    def worker_pids(self) -> list[int]:
        """The process ids of the current pool's workers (none before the first job)."""
        return [p.pid for p in self._processes if p.pid is not None and _exit_code(p) is None]

    def shutdown(self) -> None:
        """Cancel the waiting jobs, end the workers after their current job (the next ``submit``
        starts a new pool)."""
        for job in self._queue.clear():
            job.future.cancel()
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = None

    # --- the workers' side --------------------------------------------------------------------

    def _pump(self) -> None:
        while self._busy < self.workers and self._queue:
            _, job = self._queue.pop()
            if job.future.done():  # cancelled by its caller
                self._queue.done(job.owner)
                continue
            self._busy += 1
            if self.on_start is not None:
                self.on_start(self.clock() - job.queued_at)
            task = asyncio.get_running_loop().create_task(self._run(job))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, job: _Job) -> None:
        try:
            result = await self._call(job.fn, job.args)
        except asyncio.CancelledError:
            job.future.cancel()
            raise
        except Exception as e:  # a job may fail in any way: whoever waits gets it as JobFailed
            if isinstance(e, WorkerError):  # the pool's own refusal (WorkersFailing): as it is
                failed: Exception = e
            else:
                failed = JobFailed(f"{self.what}: {e!r}")
                failed.__cause__ = e
            if not job.future.done():
                job.future.set_exception(failed)
        else:
            if not job.future.done():
                job.future.set_result(result)
        finally:
            self._busy -= 1
            self._queue.done(job.owner)
            self._pump()

    async def _call(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        loop = asyncio.get_running_loop()
        for _ in range(2):  # the job a dying worker took with it is tried once more
            executor = self._ready()
            try:
                running = loop.run_in_executor(executor, fn, *args)
                if len(self._processes) < self.workers:  # the executor starts its workers on demand
                    self._processes = list((getattr(executor, "_processes", None) or {}).values())
                return await running
            except BrokenProcessPool:  # (also when it broke while idle: submit raises then)
                self._died(executor)
        raise WorkersFailing(f"{self.what} died twice on this request", retry_after=0.0)

    def _ready(self) -> ProcessPoolExecutor:
        self.check()
        if self.executor is None:
            self.executor = process_pool(self.workers, multiprocessing.get_context("forkserver"))
            self._processes = []
        return self.executor

    def _died(self, executor: ProcessPoolExecutor) -> None:
        """A worker of ``executor`` died: a new pool next time, or none for a while."""
        if executor is not self.executor:
            return  # counted already (another job of the same pool)
        # the broken pool's own thread reads each worker's exit status as it ends them; a status
        # read beside it can lose that race (a forkserver child's second reader gets 255), so it
        # is read after that thread has ended, which in a broken pool is at once
        executor.shutdown(wait=True, cancel_futures=True)
        codes = ", ".join(str(code) for code in map(_exit_code, self._processes) if code is not None) or "?"
        self.executor = None
        self._processes = []
        now = self.clock()
        self._restarts = [t for t in self._restarts if t > now - self.restart_window] + [now]
        if len(self._restarts) > self.max_restarts:
            self._restarts = []
            self._refusing_until = now + self.restart_window
            log.error("%s died %d times within %g s (exit code %s); no new work for %g s",
                      self.what, self.max_restarts + 1, self.restart_window, codes, self.restart_window)
        else:
            log.warning("%s died (exit code %s; -9 is SIGKILL, e.g. the OOM killer); starting a new one",
                        self.what, codes)


def _exit_code(process: Any) -> int | None:
    try:
        code: int | None = process.exitcode
    except ValueError:  # closed
        return None
    return code
