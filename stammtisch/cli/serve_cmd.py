"""``stammtisch serve``: the web table."""

from __future__ import annotations

import typer

from .common import CliError, app, console


@app.command("serve")
def serve_cmd(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    database_url: str | None = typer.Option(
        None, "--database-url",
        help="sqlite:///path.sqlite or postgresql://user@host/db (default: SQLite in ./data)."),
):
    """Start the web table: open http://HOST:PORT/ in a browser, create a table, invite friends."""
    from ..server.app import run

    if database_url and not database_url.startswith(("sqlite:", "postgresql", "postgres:")):
        raise CliError(f"--database-url {database_url!r}: use sqlite:///path or "
                       "postgresql://user@host/db")
    if database_url and database_url.startswith("postgres"):
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise CliError("PostgreSQL needs its driver: pip install -e '.[postgres]'") from None
    console.print(f"stammtisch web table on http://{host}:{port}/  (Ctrl-C stops)")
    run(host=host, port=port, database_url=database_url)
