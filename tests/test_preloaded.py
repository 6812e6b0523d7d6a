"""The preloaded process the server tests fork their servers from (``preloaded.py``) gives
each a process of its own, which ends, is signalled and tells its exit as ``Popen``'s would."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest
from preloaded import fork_server


def forked(code: str) -> tuple[object, str]:
    read_end, write_end = os.pipe()
    proc = fork_server(code, {**os.environ, "ASKED": "yes"}, write_end)
    os.close(write_end)
    with os.fdopen(read_end) as said:
        return proc, said.read()


def test_a_forked_child_runs_the_code_in_a_process_of_its_own_with_the_askers_environment():
    proc, said = forked("import os; os.write(int(os.environ['READY_FD']), "
                        "f\"{os.getpid()} {os.getppid()} {os.environ['ASKED']} {os.getcwd()}\".encode())")
    pid, parent, asked, cwd = said.split()
    assert int(pid) == proc.pid and int(parent) not in (os.getpid(), proc.pid)
    assert (asked, cwd) == ("yes", os.getcwd())
    assert proc.wait(30) == 0


def test_its_exit_status_and_the_signal_that_ended_it_come_back():
    proc, _ = forked("import sys; sys.exit(3)")
    assert proc.wait(30) == 3 and proc.poll() == 3
    proc, _ = forked("import os, time; os.close(int(os.environ['READY_FD'])); time.sleep(600)")
    assert proc.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(0.1)
    proc.send_signal(signal.SIGSTOP)
    proc.send_signal(signal.SIGCONT)
    assert proc.poll() is None  # stopped and resumed, not ended
    proc.kill()
    assert proc.wait(30) == -signal.SIGKILL
