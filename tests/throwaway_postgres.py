"""A PostgreSQL server of its own on a free loopback port, thrown away afterwards: the tests'
PostgreSQL fixtures (conftest.py) and ``bench/peers_load.py`` start theirs from here."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from typing import Any


def pg_bin(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                                                   reverse=True)), None)
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} is not installed (apt-get install postgresql)")
    return found


def as_db_user(cmd: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root: run it as the postgres account the package creates.
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


class ThrowAwayPostgres:
    """A PostgreSQL server on a free loopback port (fsync off unless ``fsync``), which its user
    may stop and start again (``stop``, ``start``); ``url`` reaches it, ``remove`` ends it and
    deletes its files."""

    def __init__(self, fsync: bool = False) -> None:
        self.fsync = fsync
        self.root = tempfile.mkdtemp(prefix="stammtisch-pg-")
        self.data = os.path.join(self.root, "data")
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}"
        subprocess.run(as_db_user([pg_bin("initdb"), "-D", self.data, "--auth=trust", "-U",
                                   "postgres", "--no-sync"]), check=True, capture_output=True)
        self.start()

    def start(self) -> None:
        subprocess.run(as_db_user([
            pg_bin("pg_ctl"), "-D", self.data, "-l", os.path.join(self.root, "log"), "-w", "-o",
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=200 "
            f"-c fsync={'on' if self.fsync else 'off'}", "start"]), check=True, capture_output=True)

    def stop(self, mode: str = "fast") -> None:
        subprocess.run(as_db_user([pg_bin("pg_ctl"), "-D", self.data, "-m", mode, "stop"]),
                       capture_output=True)

    @property
    def pid(self) -> int:
        """The postmaster's process id (a new one after each ``start``)."""
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            return int(f.readline())

    def query(self, db: str, sql: str, *params: Any) -> list[tuple]:
        """Run one statement in database ``db``: its rows, if it returns any."""
        import psycopg

        with psycopg.connect(f"{self.url}/{db}", autocommit=True) as conn:
            cur = conn.execute(sql, params or None)
            return cur.fetchall() if cur.description else []

    def new_database(self, name: str | None = None) -> str:
        """A fresh, empty database on it (a made-up name unless ``name``): its URL."""
        name = name or "t_" + uuid.uuid4().hex[:12]
        self.query("postgres", f'CREATE DATABASE "{name}"')
        return f"{self.url}/{name}"

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
