"""Batch work in parallel: in this process, on every core, or on a Ray cluster, same answer.

Every batch job of stammtisch (simulate, report, tournament, analyze) is cut into
chunks of a fixed number of units (deals). A chunk's random seed is derived from the job's
seed and the chunk's number only, and results are combined in chunk order, so a job gives the
same result for any number of workers and any backend.

Backends:
- ``inline``: one worker, in this process (no start-up cost; what tests and small jobs use);
- ``processes``: local worker processes (default: one per core), started with forkserver/spawn
  so that no half-initialised state of the parent is copied;
- ``ray``: tasks on a Ray cluster (``pip install 'stammtisch[cluster]'``): ``auto`` joins the
  cluster this machine belongs to (``ray start``), ``HOST:PORT`` a given head node, ``local``
  starts a private Ray instance on this machine with ``workers`` CPUs. (Ray's old single-process
  "local mode" is gone from current Ray; tests use a private local instance.) When Ray is
  already initialised in this process (``ray.init`` by the caller), that cluster is used.

Failures are never a silent hole: a worker process that dies is retried in a fresh pool (Ray
retries by itself) up to ``retries`` times and then reported with the chunks it took with it;
a chunk whose task raises is reported with the error. Ctrl-C stops the workers and keeps the
chunks that finished; the outcome says how much that is.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ..i18n import t
from ..workers import process_pool

R = TypeVar("R")

DEFAULT_RETRIES = 2


class BatchError(Exception):
    """A batch job that cannot start (bad backend, Ray missing or unreachable).

    ``rule`` is a stable machine code beside the message.
    """

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule


# --- chunks and seeds -------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """A piece of a job: units ``start … start + size - 1`` with their own seed."""

    index: int
    start: int
    size: int
    seed: int


def derive_seed(seed: int, index: int) -> int:
    """The seed of chunk ``index`` of a job with seed ``seed`` (64 bits of SHA-256).

    A hash rather than ``seed + index`` so that the jobs of neighbouring seeds do not share
    chunks; stable across Python versions and machines (unlike ``hash()``).
    """
    digest = hashlib.sha256(f"stammtisch-chunk:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def plan_chunks(total: int, chunk_size: int, seed: int) -> list[Chunk]:
    """Cut ``total`` units into chunks of ``chunk_size`` (the last one may be smaller)."""
    if total < 0 or chunk_size < 1:
        raise ValueError("total must be >= 0 and chunk_size >= 1")
    return [
        Chunk(index=i, start=start, size=min(chunk_size, total - start), seed=derive_seed(seed, i))
        for i, start in enumerate(range(0, total, chunk_size))
    ]


# --- backends ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Backend:
    """How a job runs. Build it with ``choose_backend``."""

    kind: str  # "inline" | "processes" | "ray"
    workers: int
    ray_address: str | None = None  # "auto", "local" or "HOST:PORT" (kind "ray" only)
    retries: int = DEFAULT_RETRIES

    def describe(self) -> str:
        if self.kind == "ray":
            return f"Ray ({self.ray_address})"
        return "1 process" if self.kind == "inline" else f"{self.workers} processes"


def available_cores() -> int:
    """The cores this process may use (respects CPU affinity, e.g. in containers)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def choose_backend(workers: int | None = None, ray: str | None = None,
                   retries: int = DEFAULT_RETRIES) -> Backend:
    """``workers`` None means all cores; 1 runs in this process; ``ray`` selects Ray."""
    if workers is not None and workers < 1:
        raise BatchError("workers", t("batch.bad_workers", workers=workers))
    if ray is not None:
        return Backend("ray", workers or available_cores(), ray_address=ray, retries=retries)
    count = workers or available_cores()
    return Backend("inline" if count == 1 else "processes", count, retries=retries)


# --- outcome ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkFailure:
    chunk: Chunk
    reason: str


@dataclass
class BatchOutcome(Generic[R]):
    """What a job produced: the finished chunks' results in chunk order, and what is missing."""

    planned: list[Chunk]
    results: list[tuple[Chunk, R]] = field(default_factory=list)
    failures: list[ChunkFailure] = field(default_factory=list)
    interrupted: bool = False

    @property
    def total_units(self) -> int:
        return sum(c.size for c in self.planned)

    @property
    def done_units(self) -> int:
        return sum(c.size for c, _ in self.results)

    @property
    def complete(self) -> bool:
        return len(self.results) == len(self.planned)

    @property
    def missing(self) -> list[Chunk]:
        done = {c.index for c, _ in self.results}
        return [c for c in self.planned if c.index not in done]

    def problems(self, unit: str = "deals") -> list[str]:
        """One line per kind of problem (interrupted, failed chunks); empty when complete."""
        lines = []
        if self.interrupted:
            lines.append(t(
                "batch.interrupted",
                done=len(self.results), chunks=len(self.planned), units=self.done_units,
                total=self.total_units, unit=unit))
        if self.failures:
            reasons = sorted({f.reason for f in self.failures})
            lines.append(t(
                "batch.failed",
                failed=len(self.failures), chunks=len(self.planned),
                units=sum(f.chunk.size for f in self.failures), unit=unit, reasons="; ".join(reasons)))
        return lines


ProgressCallback = Callable[[int], None]  # called with the units finished so far
ResultCallback = Callable[[Chunk, Any], None]  # called in the driver as each chunk finishes


class _Collector:
    """Gathers results as they arrive (any order) and reports progress."""

    def __init__(self, chunks: Sequence[Chunk], progress: ProgressCallback | None,
                 on_result: ResultCallback | None):
        self.outcome: BatchOutcome[Any] = BatchOutcome(planned=list(chunks))
        self.by_index: dict[int, tuple[Chunk, Any]] = {}
        self.failed: dict[int, ChunkFailure] = {}
        self.progress, self.on_result = progress, on_result
        self.units = 0

    def done(self, chunk: Chunk, result: Any) -> None:
        self.by_index[chunk.index] = (chunk, result)
        self.units += chunk.size
        if self.on_result is not None:
            self.on_result(chunk, result)
        if self.progress is not None:
            self.progress(self.units)

    def fail(self, chunk: Chunk, reason: str) -> None:
        self.failed[chunk.index] = ChunkFailure(chunk, reason)

    def finish(self, interrupted: bool) -> BatchOutcome[Any]:
        out = self.outcome
        out.results = [self.by_index[i] for i in sorted(self.by_index)]
        out.failures = [self.failed[i] for i in sorted(self.failed)]
        out.interrupted = interrupted
        return out


def run_batch(task: Callable[[Chunk], R], chunks: Sequence[Chunk], backend: Backend,
              progress: ProgressCallback | None = None,
              on_result: ResultCallback | None = None) -> BatchOutcome[R]:
    """Run ``task(chunk)`` for every chunk on ``backend``.

    ``task`` must be picklable for processes and Ray (a module-level function, or a
    ``functools.partial`` of one with picklable arguments). ``on_result`` and ``progress`` run
    in this process. Ctrl-C (KeyboardInterrupt, also when raised by a callback) stops the
    workers; the outcome then has ``interrupted`` set and holds the chunks that finished.
    """
    collector = _Collector(chunks, progress, on_result)
    if backend.kind == "processes" and len(chunks) <= 1:
        backend = Backend("inline", 1, retries=backend.retries)  # no pool for a single chunk
    runner = {"inline": _run_inline, "processes": _run_processes, "ray": _run_ray}[backend.kind]
    try:
        with _terminate_stops_like_ctrl_c():
            runner(task, list(chunks), backend, collector)
    except KeyboardInterrupt:
        return collector.finish(interrupted=True)
    return collector.finish(interrupted=False)


@contextmanager
def _terminate_stops_like_ctrl_c() -> Iterator[None]:
    """SIGTERM (``kill PID``, a service manager) stops the job as Ctrl-C does.

    It reaches the driver alone; by default it would end the driver at once and leave its
    worker processes running as orphans. Signal handlers can only be set in the main thread;
    elsewhere SIGTERM keeps its handler.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_inline(task: Callable[[Chunk], Any], chunks: list[Chunk], backend: Backend,
                collector: _Collector) -> None:
    for chunk in chunks:
        try:
            result = task(chunk)
        except Exception as e:  # a failing chunk is reported, the others still run
            collector.fail(chunk, t("batch.task_failed", error=_error_text(e)))
            continue
        collector.done(chunk, result)


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _ignore_sigint() -> None:
    """Workers ignore Ctrl-C: the driver decides, stops them and keeps what finished."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _process_context() -> multiprocessing.context.BaseContext:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    # Workers forked from a fork server that this starts ignore Ctrl-C from their start
    # (ctrl_c_ignored.py); one started before, by something else, leaves it to _ignore_sigint.
    context.set_forkserver_preload(["__main__", "stammtisch.sim.ctrl_c_ignored"])
    return context


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the running workers now (Ctrl-C).

    ``shutdown`` alone would wait for the running chunks; the executor has no public way to
    end its processes, hence its ``_processes`` table. Its manager thread, which sees its
    workers gone and ends, is waited for (``shutdown`` forgets it too): left running, it could
    close its wake-up pipe while the interpreter's exit writes to that pipe (an "OSError: Bad
    file descriptor" traceback at exit, now and then).
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)
    if manager is not None:
        manager.join(timeout=10)


def _run_processes(task: Callable[[Chunk], Any], chunks: list[Chunk], backend: Backend,
                   collector: _Collector) -> None:
    queue = list(reversed(chunks))  # pop() takes the lowest chunk first
    attempts: dict[int, int] = {}
    context = _process_context()
    fruitless_pools = 0  # pools that broke before running anything (workers cannot start at all)
    while queue:
        if fruitless_pools > backend.retries:
            for chunk in reversed(queue):
                collector.fail(chunk, t("batch.worker_died", attempts=fruitless_pools))
            return
        pool = process_pool(backend.workers, context, _ignore_sigint)  # workers end with this process
        running: dict[Future[Any], Chunk] = {}
        broken = False
        settled_before = len(collector.by_index) + sum(attempts.values())
        try:
            while queue or running:
                # two chunks in flight per worker: a worker never waits for this process to
                # hand it the next one; a dying worker takes at most these with it
                while queue and len(running) < 2 * backend.workers and not broken:
                    chunk = queue.pop()
                    try:
                        running[pool.submit(task, chunk)] = chunk
                    except BrokenProcessPool:  # a worker died while idle
                        queue.append(chunk)
                        broken = True
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(finished, key=lambda f: running[f].index):
                    chunk = running.pop(future)
                    error = future.exception()
                    if error is None:
                        collector.done(chunk, future.result())
                    elif isinstance(error, BrokenProcessPool):
                        broken = True
                        attempts[chunk.index] = attempts.get(chunk.index, 0) + 1
                        if attempts[chunk.index] > backend.retries:
                            collector.fail(chunk, t("batch.worker_died", attempts=attempts[chunk.index]))
                        else:
                            queue.append(chunk)
                    else:
                        collector.fail(chunk, t("batch.task_failed", error=_error_text(error)))
        except BaseException:
            _stop_pool(pool)
            raise
        pool.shutdown(wait=True)
        if broken:
            queue.sort(key=lambda c: -c.index)
            settled = len(collector.by_index) + sum(attempts.values())
            fruitless_pools = fruitless_pools + 1 if settled == settled_before else 0


def _run_ray(task: Callable[[Chunk], Any], chunks: list[Chunk], backend: Backend, collector: _Collector) -> None:
    try:
        import ray
        from ray import exceptions as ray_exceptions
    except ImportError:
        raise BatchError("no-ray", t("batch.no_ray")) from None
    started_here = not ray.is_initialized()
    if started_here:
        _ray_init(ray, backend)
    try:
        cluster_cpus = max(1, int(ray.cluster_resources().get("CPU", backend.workers)))  # type: ignore[no-untyped-call]
        remote = ray.remote(max_retries=backend.retries, retry_exceptions=False, num_cpus=1)(_call)
        queue = list(reversed(chunks))
        running: dict[Any, Chunk] = {}
        try:
            while queue or running:
                while queue and len(running) < 2 * cluster_cpus:  # a little queued on each node
                    chunk = queue.pop()
                    running[remote.remote(task, chunk)] = chunk
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    chunk = running.pop(ref)
                    try:
                        result = ray.get(ref)
                    except ray_exceptions.RayTaskError as e:  # the task raised: a bug, not retried
                        collector.fail(chunk, t("batch.task_failed", error=_error_text(e.cause or e)))
                    except ray_exceptions.RayError as e:  # worker or node died, after Ray's retries
                        collector.fail(chunk, f"{t('batch.worker_died', attempts=backend.retries + 1)}: "
                                              f"{type(e).__name__}")
                    else:
                        collector.done(chunk, result)
        except BaseException:
            for ref in running:
                ray.cancel(ref, force=True)
            raise
    finally:
        if started_here:
            ray.shutdown()


def _check_reachable(address: str) -> None:
    """A HOST:PORT that does not answer is one clear error now (Ray itself retries for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # not HOST:PORT; let Ray judge it
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise BatchError("ray-connect", t("batch.ray_connect", address=address, error=e)) from None


def _ray_init(ray: Any, backend: Backend) -> None:
    address = backend.ray_address
    if address not in (None, "auto", "local"):
        _check_reachable(address)
    try:
        if address == "local":
            ray.init(num_cpus=backend.workers, include_dashboard=False, log_to_driver=False,
                     configure_logging=False,
                     runtime_env={"env_vars": _worker_env()})
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise BatchError("ray-connect", t("batch.ray_connect", address=address, error=e)) from None


def _worker_env() -> dict[str, str]:
    """Local Ray workers import stammtisch from where this process does (e.g. a source tree)."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": path} if path else {}


def _call(task: Callable[[Chunk], Any], chunk: Chunk) -> Any:
    return task(chunk)


# --- one progress bar -------------------------------------------------------------------------


def _no_progress(done: int) -> None:
    pass


@contextmanager
def progress_bar(description: str, total: int, unit: str = "deals",
                 disable: bool = False) -> Iterator[ProgressCallback]:
    """One Rich progress bar on stderr for a whole job; yields the callback for ``run_batch``."""
    if disable:  # what a disabled Rich bar does, without importing Rich
        yield _no_progress
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn(unit), TimeRemainingColumn(), console=console, transient=True,
                  disable=disable) as bar:
        task_id = bar.add_task(description, total=total)

        def update(done: int) -> None:
            bar.update(task_id, completed=done)

        yield update
