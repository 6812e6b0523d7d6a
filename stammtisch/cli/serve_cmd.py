"""``stammtisch serve``: the web table."""

from __future__ import annotations

import errno
import socket
from pathlib import Path

import typer
from rich.text import Text

from ..i18n import t
from .common import CliError, app, console


def check_port(host: str, port: int) -> None:
    """Refuse, before the server starts, a port that is taken or an address we cannot listen on.
    (uvicorn would log the failure after the startup banner and exit; this is one line first.)"""
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
                raise CliError(t("cli.port_busy", host=host, port=port)) from None
            raise CliError(t("cli.port_unusable", host=host, port=port, reason=e.strerror or e)) from None


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


@app.command("serve")
def serve_cmd(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    database_url: str | None = typer.Option(
        None, "--database-url",
        help="sqlite:///path.sqlite or postgresql://user@host/db (default: SQLite in ./data)."),
) -> None:
    """Start the web table: open http://HOST:PORT/ in a browser, create a table, invite friends."""
    from sqlalchemy.exc import SQLAlchemyError

    from ..server.app import run

    if database_url:
        check_database_url(database_url)
    check_port(host, port)
    console.print(Text(t("serve.listening", host=host, port=port)), highlight=False)
    try:
        run(host=host, port=port, database_url=database_url)
    except SQLAlchemyError as e:
        reason = str(getattr(e, "orig", None) or e).splitlines()[0]
        raise CliError(t("cli.database_unusable", url=repr(database_url or "./data"), reason=reason)) from None
    except OSError as e:  # the default ./data folder cannot be made
        raise CliError(t("cli.database_unusable", url=repr(database_url or "./data"),
                         reason=e.strerror or e)) from None
