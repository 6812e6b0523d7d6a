"""Shared fixtures: a throw-away PostgreSQL server for the storage tests.

Like the browser tests, these need a program from Debian (``postgresql``), which
``scripts/test`` installs; without it they fail rather than skip, so CI cannot pass by
testing less.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid

import pytest


def _pg_bin(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                                                   reverse=True)), None)
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is not installed (apt-get install postgresql)")
    return found


def _as_db_user(cmd: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root: run it as the postgres account the package creates.
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@pytest.fixture(scope="session")
def postgres_server():
    """A PostgreSQL cluster on a free loopback port for this test session."""
    root = tempfile.mkdtemp(prefix="stammtisch-pg-")
    data = os.path.join(root, "data")
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    subprocess.run(_as_db_user([_pg_bin("initdb"), "-D", data, "--auth=trust", "-U", "postgres",
                                "--no-sync"]), check=True, capture_output=True)
    subprocess.run(_as_db_user([
        _pg_bin("pg_ctl"), "-D", data, "-l", os.path.join(root, "log"), "-w", "-o",
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"]) + ["start"],
        check=True, capture_output=True)
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(_as_db_user([_pg_bin("pg_ctl"), "-D", data, "-m", "immediate", "stop"]),
                       capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh, empty database on the session's PostgreSQL server."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgres_server + "/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{postgres_server}/{name}"
