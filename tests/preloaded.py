"""Server processes forked from one that has imported the server already (not a test module).

A server process spends about 0.7 s of CPU importing FastAPI, SQLAlchemy, psycopg, uvicorn
and the server before it serves, and the multi-process tests start dozens of them. Each test
process keeps one *preloaded* process that has done those imports once and forks a child per
server asked for: the child is a process of its own (its own pid, killed, stopped and
signalled like any), running the same code as ``python -c CODE`` would, with the asker's
environment, working directory and standard streams. Its exit status comes back over the
socket it was asked for on, so ``wait`` and ``poll`` work as on a ``Popen``.
"""

from __future__ import annotations

import array
import os
import pickle
import select
import signal
import socket
import subprocess
import sys
import threading

#: What the preloaded process imports before it forks anything: the server and what serves it.
PRELOAD = ("stammtisch.server.app", "stammtisch.server.limits", "uvicorn", "psycopg",
           "sqlalchemy.dialects.postgresql.psycopg", "sqlalchemy.dialects.sqlite")

_lock = threading.Lock()
_zygote: tuple[subprocess.Popen, str] | None = None


def _send(sock: socket.socket, data: bytes, fds: list[int]) -> None:
    sock.sendmsg([len(data).to_bytes(8, "big") + data],
                 [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])


def _receive(sock: socket.socket) -> tuple[bytes, list[int]]:
    msg, anc, _flags, _addr = sock.recvmsg(1 << 20, socket.CMSG_SPACE(16 * 4))
    fds = array.array("i")
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
    size = int.from_bytes(msg[:8], "big")
    body = msg[8:]
    return body + _read_exactly(sock, size - len(body), "the asker went away"), list(fds)


def _read_exactly(sock: socket.socket, size: int, gone: str) -> bytes:
    data = b""
    while len(data) < size:
        more = sock.recv(size - len(data))
        if not more:
            raise RuntimeError(gone)
        data += more
    return data


def _run_child(code: str, env: dict[str, str], cwd: str, fds: list[int]) -> None:
    """In the forked child: become ``python -c CODE``, then end as it would. ``fds``: the
    asker's standard input, output and error, and the write end it reads ``READY_FD`` from."""
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    os.environ.clear()
    os.environ.update(env)
    os.environ["READY_FD"] = str(fds[3])  # the same pipe, under this process's number for it
    os.chdir(cwd)
    sys.argv = ["-c"]
    status = 0
    try:
        exec(compile(code, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, int) and e.code is not None:
            print(e.code, file=sys.stderr)
    except BaseException:
        import traceback

        traceback.print_exc()
        status = 1
    finally:
        import logging

        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    os._exit(status)


def serve_forever(path: str) -> None:
    """The preloaded process: import, then fork a child per request until its asker is gone."""
    for name in PRELOAD:
        __import__(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    watching: dict[int, socket.socket] = {}  # child pid -> the connection that asked for it
    while True:
        readable, _, _ = select.select([listener, sys.stdin], [], [], 0.05)
        if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):
            return  # the test process has ended
        if listener in readable:
            conn, _ = listener.accept()
            body, fds = _receive(conn)
            code, env, cwd = pickle.loads(body)
            pid = os.fork()
            if pid == 0:
                listener.close()
                for other in watching.values():
                    other.close()
                conn.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _run_child(code, env, cwd, fds)
            for fd in fds:
                os.close(fd)
            conn.sendall(pid.to_bytes(8, "big", signed=True))
            watching[pid] = conn
        while watching:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = watching.pop(pid, None)
            if conn is not None:
                try:
                    conn.sendall(os.waitstatus_to_exitcode(status).to_bytes(8, "big", signed=True))
                except OSError:
                    pass
                conn.close()


def _preloaded() -> str:
    """The path of this test process's preloaded process's socket, started when first asked."""
    global _zygote
    with _lock:
        if _zygote is None or _zygote[0].poll() is not None:
            # Linux's abstract socket namespace: nothing on disk to clean up after the run
            path = f"\0stammtisch-preloaded-{os.getpid()}-{os.urandom(4).hex()}"
            proc = subprocess.Popen(
                [sys.executable, "-c", f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
                 f"import preloaded; preloaded.serve_forever({path!r})"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=os.getcwd())
            assert proc.stdout is not None and proc.stdout.readline() == b"ready\n", \
                "the preloaded server process did not start"
            _zygote = (proc, path)
        return _zygote[1]


def _read_number(conn: socket.socket, gone: str) -> int:
    """The next number the preloaded process sends on ``conn`` (a pid, an exit status)."""
    return int.from_bytes(_read_exactly(conn, 8, gone), "big", signed=True)


class Forked:
    """A ``Popen``'s handle on a server process forked by the preloaded process."""

    def __init__(self, conn: socket.socket, pid: int) -> None:
        self._conn = conn
        self.pid = pid
        self.returncode: int | None = None

    def _collect(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            ready, _, _ = select.select([self._conn], [], [], timeout)
            if ready:
                self.returncode = _read_number(self._conn, "the preloaded server process ended before its child")
                self._conn.close()
        return self.returncode

    def poll(self) -> int | None:
        return self._collect(0)

    def wait(self, timeout: float | None = None) -> int:
        code = self._collect(timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"forked server {self.pid}", timeout or 0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def fork_server(code: str, env: dict[str, str], ready_fd: int) -> Forked:
    """``python -c CODE`` with ``env``, this process's working directory and standard streams,
    and ``ready_fd`` passed on as ``READY_FD``, forked from the preloaded process."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(_preloaded())
    body = pickle.dumps((code, env, os.getcwd()))
    _send(conn, body, [0, 1, 2, ready_fd])
    return Forked(conn, _read_number(conn, "the preloaded server process did not fork"))
