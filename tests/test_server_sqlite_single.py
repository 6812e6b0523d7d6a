"""One server process per SQLite file: a second `stammtisch serve` on the same file is refused in
one line that names PostgreSQL, and the file is free again once the first process is gone,
however it ended (kill -9 included)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request

import pytest
from server_helpers import free_port, serving

from stammtisch.i18n import catalogue
from stammtisch.server.sqlite_guard import SqliteInUse, hold_sqlite, sqlite_path

pytestmark = pytest.mark.timeout(120)


def test_the_lock_is_one_holders_and_other_databases_need_none(tmp_path):
    url = f"sqlite:///{tmp_path / 'st.sqlite'}"
    fd = hold_sqlite(url)
    assert fd is not None
    with pytest.raises(SqliteInUse) as e:
        hold_sqlite(url)  # another open file description: as another process would be
    assert e.value.path == tmp_path / "st.sqlite"
    os.close(fd)
    again = hold_sqlite(url)
    assert again is not None
    os.close(again)
    assert hold_sqlite("sqlite:///:memory:") is None
    assert hold_sqlite("postgresql://u@h/db") is None
    assert sqlite_path(f"{url}?timeout=5") == tmp_path / "st.sqlite"


def serve_code(url: str, port: int) -> str:
    return ("import sys; from stammtisch.cli import main; "
            f"sys.argv = ['stammtisch', 'serve', '--port', '{port}', '--database-url', {url!r}]; main()")


def test_a_second_server_on_the_same_sqlite_file_is_refused_until_the_first_is_gone(tmp_path):
    url = f"sqlite:///{tmp_path / 'st.sqlite'}"
    first_port = free_port()
    first = serving(serve_code(url, first_port))
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{first_port}/api/rulesets", timeout=30) as r:
            assert r.status == 200
        second = subprocess.run([sys.executable, "-m", "stammtisch", "serve", "--port", str(free_port()),
                                 "--database-url", url], capture_output=True, text=True, timeout=60)
        assert second.returncode != 0
        lines = [ln for ln in (second.stdout + second.stderr).splitlines() if ln.strip()]
        assert len(lines) == 1 and "Traceback" not in second.stderr, lines
        expected = catalogue("en")["cli.sqlite_in_use"].split("{path}")[1][:40]
        assert expected in lines[0] and "PostgreSQL" in lines[0]
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    # the kernel let the lock go with the killed process: a new server serves the file
    third_port = free_port()
    third = serving(serve_code(url, third_port))
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{third_port}/api/rulesets", timeout=30) as r:
            assert r.status == 200
    finally:
        third.terminate()
        third.wait(timeout=30)
