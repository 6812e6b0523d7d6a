"""``stammtisch simulate`` and ``stammtisch analyze`` with plain arguments, run without Typer.

Typer reads every option through a pydantic adapter: importing Typer, pydantic and every other
command costs a start-up longer than a thousand simulated Tippen deals, and a tenth of a
second of every analysis. A ``simulate`` or ``analyze`` whose arguments are all plain (known
options, each once unless repeatable, values that are whole numbers in the allowed range where
numbers are asked) is read here and run with the values Typer would have passed. Anything else
(``--help``, an unknown or malformed option, a value Typer would refuse, shell completion) goes
to Typer, so help, errors and their exit statuses are Typer's. The options are the commands'
(``simulate_cmd``, ``analyze_cmd``); ``tests/test_cli_fast.py`` checks they agree.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: ``simulate``'s options: name → (parameter, kind). Kinds: ``int``, ``count`` (an int of at
#: least 1), ``str``, ``path``, ``flag`` and ``strs`` (repeatable)
SIMULATE_OPTIONS: dict[str, tuple[str, str]] = {
    "--players": ("players", "int"), "-n": ("players", "int"),
    "--deals": ("deals", "count"), "-k": ("deals", "count"),
    "--seed": ("seed", "int"),
    "--bots": ("bots", "strs"), "-b": ("bots", "strs"),
    "--option": ("option", "strs"), "-o": ("option", "strs"),
    "--records": ("records", "path"),
    "--first-dealer": ("first_dealer", "int"),
    "--chunk-deals": ("chunk_deals", "count"),
    "--workers": ("workers", "count"), "-w": ("workers", "count"),
    "--ray": ("ray", "str"),
    "--json": ("as_json", "flag"),
}
#: the values of the options not given
SIMULATE_DEFAULTS: dict[str, Any] = {
    "players": None, "deals": 1000, "seed": None, "bots": ["heuristic"], "option": [], "records": None,
    "first_dealer": None, "chunk_deals": 100, "workers": None, "ray": None, "as_json": False,
}
#: ``analyze``'s options, as above
ANALYZE_OPTIONS: dict[str, tuple[str, str]] = {
    "--deal": ("deal", "count"),
    "--json": ("as_json", "flag"),
    "--workers": ("workers", "count"), "-w": ("workers", "count"),
    "--ray": ("ray", "str"),
    "--german": ("german", "flag"),
    "--all-discards": ("all_discards", "flag"),
}
ANALYZE_DEFAULTS: dict[str, Any] = {
    "deal": None, "as_json": False, "workers": None, "ray": None, "german": False, "all_discards": False,
}


@dataclass(frozen=True)
class Plain:
    """A command this module can read: its options, the values of those not given, and its one
    argument (the parameter, and ``str`` or ``path``)."""

    options: dict[str, tuple[str, str]]
    defaults: dict[str, Any]
    argument: str
    argument_kind: str


COMMANDS: dict[str, Plain] = {
    "simulate": Plain(SIMULATE_OPTIONS, SIMULATE_DEFAULTS, "ruleset_id", "str"),
    "analyze": Plain(ANALYZE_OPTIONS, ANALYZE_DEFAULTS, "record", "path"),
}


def _number(text: str, least: int | None) -> int | None:
    """A whole number written plainly (digits, no sign, no leading zero), or None."""
    if not (text.isascii() and text.isdigit()) or len(text) > 18 or (len(text) > 1 and text[0] == "0"):
        return None
    value = int(text)
    return None if least is not None and value < least else value


def parse(command: str, args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``command`` (one of ``COMMANDS``) from its arguments (after the
    command's name), as Typer would pass them; None when they are not all plain (Typer then
    reads them)."""
    plain = COMMANDS[command]
    values: dict[str, Any] = {}
    repeated: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if token.startswith("-"):
            name, eq, value = token.partition("=")
            spec = plain.options.get(name)
            if spec is None or (eq and not name.startswith("--")):
                return None
            param, kind = spec
            if kind == "flag":
                if eq or param in values:
                    return None
                values[param] = True
                continue
            if not eq:
                if i == len(args):
                    return None
                value = args[i]
                i += 1
            if value.startswith("-") or not value.isprintable():
                return None
            if kind == "strs":
                repeated.setdefault(param, []).append(value)
                continue
            if param in values:
                return None
            if kind == "str":
                values[param] = value
            elif kind == "path":
                if not value:
                    return None
                values[param] = Path(value)
            else:
                number = _number(value, 1 if kind == "count" else None)
                if number is None:
                    return None
                values[param] = number
        else:
            if plain.argument in values or not token.isprintable():
                return None
            if plain.argument_kind == "path":
                if not token:
                    return None
                values[plain.argument] = Path(token)
            else:
                values[plain.argument] = token
    if plain.argument not in values:
        return None
    values.update(repeated)
    return {**plain.defaults, **values}


def run(args: list[str]) -> bool:
    """Run ``stammtisch ARGS`` here if it is a plain ``simulate`` or ``analyze`` (then exit with
    its status); False when Typer is to run it."""
    if not args or args[0] not in COMMANDS or any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return False
    values = parse(args[0], args[1:])
    if values is None:
        return False
    command: Callable[..., int]
    if args[0] == "simulate":
        from .simulate_run import simulate as command
    else:
        from .analyze_run import analyze as command

    # What Typer's main does around a command (typer.core._main), for what can reach here.
    try:
        status = command(**values)
    except KeyboardInterrupt:
        status = 130
    except EOFError:
        from typer import rich_utils

        print(file=sys.stderr, flush=True)
        rich_utils.rich_abort_error()
        status = 1
    except OSError as e:
        if e.errno != errno.EPIPE:
            raise
        from typer._click.utils import PacifyFlushWrapper

        sys.stdout = PacifyFlushWrapper(sys.stdout)
        sys.stderr = PacifyFlushWrapper(sys.stderr)
        status = 1
    sys.exit(status)
