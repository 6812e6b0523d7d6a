"""``stammtisch serve``: the web table."""

from __future__ import annotations

import dataclasses
import errno
import socket
from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from ..i18n import t
from ..server.limits import ServerLimits
from .common import CliError, console
from .root import app

#: ``--host`` values that listen on every address of the machine
EVERY_ADDRESS = frozenset({"0.0.0.0", "::", ""})


def check_port(host: str, port: int, busy: str = "cli.port_busy") -> None:
    """Refuse, before the server starts, a port that is taken or an address we cannot listen on.
    (uvicorn would log the failure after the startup banner and exit; this is one line first.)
    ``busy``: the message for a port in use (it names the option to change)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError, OverflowError) as e:
        raise CliError(t("cli.port_unusable", host=host, port=port, reason=str(e))) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                raise CliError(t(busy, host=host, port=port)) from None
            raise CliError(t("cli.port_unusable", host=host, port=port, reason=e.strerror or e)) from None


def check_socket_path(path: str) -> None:
    """Refuse, before the server starts, a Unix socket path it cannot take (``--uds``)."""
    from ..server.transport import check_unix_socket

    try:
        check_unix_socket(path)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise CliError(t("cli.socket_busy", path=path)) from None
        raise CliError(t("cli.socket_unusable", path=path, reason=e.strerror or e)) from None


def check_database_url(url: str) -> None:
    """A URL we can use: its scheme known, a SQLite file's folder present, PostgreSQL's driver installed."""
    if not url.startswith(("sqlite:", "postgresql", "postgres:")):
        raise CliError(t("cli.bad_database_url", url=repr(url)))
    if url.startswith("sqlite:///") and url not in ("sqlite:///:memory:",):
        path = Path(url[len("sqlite:///"):])
        if path.is_dir():
            raise CliError(t("cli.database_unusable", url=repr(url), reason=f"{path} is a folder"))
        if not path.absolute().parent.is_dir():
            raise CliError(t("cli.database_folder_missing", url=repr(url), folder=path.absolute().parent))
    if url.startswith("postgres"):
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise CliError(t("cli.postgres_driver")) from None


def parse_limits(items: list[str]) -> ServerLimits:
    """``NAME=VALUE`` overrides of the server's limits (numbers), refused one line each."""
    fields = {f.name: f for f in dataclasses.fields(ServerLimits)}
    changes: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in fields:
            raise CliError(t("cli.limit_unknown", item=item, names=", ".join(sorted(fields))))
        default = fields[name].default
        try:
            value: float | int = int(raw) if isinstance(default, int) else float(raw)
        except ValueError:
            raise CliError(t("cli.limit_not_number", name=name, value=raw)) from None
        if not 0 < value < 10**9:
            raise CliError(t("cli.limit_range", name=name, value=raw))
        changes[name] = value
    return dataclasses.replace(ServerLimits(), **changes)


def _limits_help() -> str:
    return "; ".join(f"{f.name}={f.default}" for f in dataclasses.fields(ServerLimits))


@app.command("serve")
def serve_cmd(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    uds: str | None = typer.Option(
        None, "--uds", metavar="PATH",
        help="Listen on this Unix socket instead of --host/--port, for a reverse proxy on the "
             "same machine (nginx: server unix:PATH; in an upstream). Only the socket's owner and "
             "group may connect (mode 660), and the X-Forwarded-For header that comes through "
             "it names the client (its right-most entry, the one the proxy added: see "
             "docs/deployment.md). It costs the server less CPU per message than TCP. The socket "
             "is removed when the server stops (Ctrl-C, SIGTERM)."),
    database_url: str | None = typer.Option(
        None, "--database-url",
        help="sqlite:///path.sqlite or postgresql://user@host/db (default: SQLite in ./data)."),
    peer_url: str | None = typer.Option(
        None, "--peer-url", metavar="URL",
        help="On PostgreSQL, several `stammtisch serve` over the same database form one service: "
             "any of them serves any table, relaying to the process that runs it. This is how "
             "the others reach this process: http://HOST:PORT or unix:/path/to.sock (default: "
             "its own --host/--port, or unix:PATH with --uds). See docs/deployment.md, "
             "'Several server processes'."),
    api_docs: bool = typer.Option(False, "--api-docs",
                                  help="Serve the HTTP API's documentation at /api/docs (Swagger UI, "
                                       "from this server's own files) and /api/openapi.json."),
    drain_seconds: float = typer.Option(
        10.0, "--drain-seconds", min=0.1, max=3600.0, metavar="SECONDS",
        help="On SIGTERM (or Ctrl-C) the server drains within this many seconds, then exits with "
             "0: no new tables or connections (/readyz says not ready), the commits under way "
             "finished, the leases given up (several processes), every client told to come "
             "again (close code 1012). Give the service manager's stop timeout a few seconds "
             "more (systemd: TimeoutStopSec)."),
    metrics_port: int | None = typer.Option(
        None, "--metrics-port", min=0, max=65535, metavar="PORT",
        help="Serve metrics for Prometheus at http://METRICS-HOST:PORT/metrics (off unless "
             "given): tables, clients, actions, commit latency, refusals, worker queues. A port "
             "of its own, so that a table's player cannot read them; see docs/deployment.md."),
    metrics_host: str = typer.Option(
        "127.0.0.1", "--metrics-host",
        help="Address the metrics port listens on (default: this machine only)."),
    limit: list[str] = typer.Option(
        [], "--limit", "-l", metavar="NAME=VALUE",
        help="Change one of the server's limits (repeatable), e.g. --limit max_live_tables=2000. "
             "Limits and defaults (seconds, bytes, counts): " + _limits_help()),
) -> None:
    """Start the web table: open http://HOST:PORT/ in a browser, create a table, invite friends.

    For a public server, read docs/deployment.md (reverse proxy, TLS, limits)."""
    from sqlalchemy.exc import SQLAlchemyError

    from ..server.app import run
    from ..server.sqlite_guard import SqliteInUse, hold_sqlite
    from ..server.storage import default_database_url

    limits = parse_limits(limit)
    if database_url:
        check_database_url(database_url)
    try:
        # one process per SQLite file (held until this process ends): several need PostgreSQL
        hold_sqlite(database_url or default_database_url())
    except SqliteInUse as e:
        raise CliError(t("cli.sqlite_in_use", path=str(e.path))) from None
    except OSError as e:  # the lock file cannot be made: the database could not be either
        raise CliError(t("cli.database_unusable", url=repr(database_url or "./data"),
                         reason=e.strerror or e)) from None
    if uds is None:
        check_port(host, port)
        console.print(Text(t("serve.listening", host=host, port=port)), highlight=False)
        if host in EVERY_ADDRESS:  # 0.0.0.0 is no address to open, nor to make invite links from
            console.print(Text(t("serve.listening_everywhere", name=socket.gethostname(), port=port)),
                          highlight=False)
    else:
        check_socket_path(uds)
        console.print(Text(t("serve.listening_uds", path=uds)), highlight=False)
    if metrics_port is not None:
        if uds is None and metrics_port == port:
            raise CliError(t("cli.metrics_same_port"))
        if metrics_port:
            check_port(metrics_host, metrics_port, "cli.metrics_port_busy")
        console.print(Text(t("serve.metrics", host=metrics_host, port=metrics_port)), highlight=False)
    try:
        run(host=host, port=port, database_url=database_url, limits=limits, api_docs=api_docs,
            uds=uds, peer_url=peer_url, drain_seconds=drain_seconds,
            metrics_address=None if metrics_port is None else (metrics_host, metrics_port))
    except SQLAlchemyError as e:
        reason = str(getattr(e, "orig", None) or e).splitlines()[0]
        raise CliError(t("cli.database_unusable", url=repr(database_url or "./data"), reason=reason)) from None
    except OSError as e:  # the default ./data folder cannot be made
        raise CliError(t("cli.database_unusable", url=repr(database_url or "./data"),
                         reason=e.strerror or e)) from None
