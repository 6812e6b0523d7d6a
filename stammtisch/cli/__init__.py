"""The ``stammtisch`` command line: rules, play, simulate, replay, serve.

A thin shell: every rule question is asked of the engine through the table and its states.
One module per command; ``common`` holds the app and what the commands share.
"""

from __future__ import annotations

import sys

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
from .common import CliError, app, print_error

__all__ = ["CliError", "app", "main"]


def main() -> None:
    try:
        app()
    except CliError as e:
        print_error(e)
        sys.exit(2)
