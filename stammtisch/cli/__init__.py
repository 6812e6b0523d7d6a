"""The ``stammtisch`` command line: rules, play, simulate, replay, serve.

A thin shell: every rule question is asked of the engine through the table and its states.
One module per command; ``common`` holds what the commands share, ``root`` the Typer app, which
``app`` here has with every command registered. ``main`` runs a plain ``simulate`` or
``analyze`` without Typer (``fast``) and everything else through the app.
"""

from __future__ import annotations

import sys
from typing import Any

from .errors import CliError

__all__ = ["CliError", "app", "main"]


def _app() -> Any:
    """The Typer app, every command registered on it."""
    from . import (  # noqa: F401  (register the commands)
        analyze_cmd,
        play_cmd,
        replay_cmd,
        report_cmd,
        rules_cmd,
        serve_cmd,
        simulate_cmd,
        tournament_cmd,
    )
    from .root import app

    return app


def __getattr__(name: str) -> Any:
    # ``app`` is made on first use: the commands' modules are imported only when Typer runs
    if name == "app":
        return _app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    from . import fast

    try:
        if not fast.run(sys.argv[1:]):
            _app()()
    except CliError as e:
        from .common import print_error

        print_error(e)
        sys.exit(2)
