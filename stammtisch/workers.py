"""Worker processes that end with the process that started them.

A process pool's workers are not the children of the process that made the pool (with
forkserver they are the fork server's), so nothing ends them when that process is killed
(``kill -9``, the OOM killer): they would sit on their memory as orphans. Each worker of a pool
made here watches the process that made the pool and ends itself when that one is gone. The
fork server and multiprocessing's resource tracker then end by themselves: they stop when no
process holds their pipes any more, and the pool's maker and its workers were the last ones.
"""

from __future__ import annotations

import multiprocessing.context
import os
import select
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

#: The exit code of a worker that ended because the process that made its pool was gone.
ORPHANED = 70


def process_pool(workers: int, context: multiprocessing.context.BaseContext,
                 initializer: Callable[[], None] | None = None) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes that end when this process ends; ``initializer`` (a
    picklable function) runs in each worker after the watch has started."""
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                               initargs=(os.getpid(), initializer))


def _start_worker(parent: int, initializer: Callable[[], None] | None) -> None:
    die_with(parent)
    if initializer is not None:
        initializer()


def die_with(pid: int) -> None:
    """End this process (``os._exit``) as soon as process ``pid`` has ended, from a daemon thread."""
    threading.Thread(target=_exit_when_ended, args=(pid,), name="stammtisch-die-with", daemon=True).start()


def _exit_when_ended(pid: int) -> None:
    try:
        ended = os.pidfd_open(pid)
    except ProcessLookupError:  # gone already
        os._exit(ORPHANED)
    except (AttributeError, OSError):  # no pidfd_open (not Linux, Linux < 5.3, a seccomp filter)
        while _alive(pid):
            time.sleep(1.0)
        os._exit(ORPHANED)
    watch = select.poll()
    watch.register(ended, select.POLLIN)
    watch.poll()  # readable once the process has ended
    os._exit(ORPHANED)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # there, but not ours to signal
        return True
    return True
