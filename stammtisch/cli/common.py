"""What every command shares: the consoles, one-line user errors, rule building (the errors and
rule building are ``errors``', without Rich; the Typer app is ``root``: this module imports no
Typer, so that a command run without it starts sooner).

Everything a user or a record supplies (player names, action strings, paths, messages) is
printed as plain text, never as Rich markup or emoji codes: build output with ``rich.text.Text``
(``plain``/``styled`` below) or print with ``markup=False``. The consoles have emoji codes off,
so ``play:SA:`` stays ``play:SA:``.
"""

from __future__ import annotations

import os
import string
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from ..i18n import t
from .errors import EXIT_FAILED_CHUNKS as EXIT_FAILED_CHUNKS
from .errors import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from .errors import CliError as CliError
from .errors import _build_rules as _build_rules
from .errors import _check_seat as _check_seat


class TerminalConsole(Console):
    """A rich console that measures the terminal each time it prints: rich fixes ``$COLUMNS`` when
    the console is made, at import, so a window resized during a game (or a width set per run)
    would not be seen."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._width = None  # rich's own: measured again (terminal size, then $COLUMNS) per print


console = TerminalConsole(emoji=False)
err_console = TerminalConsole(stderr=True, emoji=False)


def print_error(error: CliError) -> None:
    """``error: …`` on stderr; the message is text, whatever brackets or colons it holds."""
    err_console.print(Text.assemble(("error:", "red"), " ", str(error)), highlight=False, soft_wrap=True)


def _nearest_existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_output_file(flag: str, path: Path, lang: str = "en") -> None:
    """Refuse, before any work, a file that could not be written: its folder missing, or a folder
    given where a file is meant. (``play --record``)"""
    if path.is_dir():
        raise CliError(t("cli.is_a_folder", lang, path=path))
    folder = path.absolute().parent
    if not folder.is_dir():
        raise CliError(t("cli.folder_missing", lang, flag=flag, path=path, folder=folder))
    if not os.access(folder, os.W_OK):
        raise CliError(t("cli.not_writable", lang, flag=flag, path=path, reason="no permission"))


def check_output_folder(flag: str, path: Path, lang: str = "en") -> None:
    """Refuse, before any work, a folder that cannot be made or written: a file given where a
    folder is meant, or a path under a file. A missing folder under an existing one is fine
    (the command creates it). (``simulate --records``)"""
    if path.exists() and not path.is_dir():
        raise CliError(t("cli.not_a_folder", lang, flag=flag, path=path))
    existing = _nearest_existing(path)
    if not existing.is_dir():
        raise CliError(t("cli.not_a_folder", lang, flag=flag, path=existing))
    if not os.access(existing, os.W_OK):
        raise CliError(t("cli.not_writable", lang, flag=flag, path=path, reason="no permission"))


def check_input_file(path: Path, lang: str = "en") -> None:
    """A file to read: it exists and is not a folder. (``replay FILE``)"""
    if path.is_dir():
        raise CliError(t("cli.is_a_folder", lang, path=path))
    if not path.exists():
        raise CliError(t("cli.no_such_file", lang, path=path))


def signed_text(v: int) -> Text:
    """An amount with its sign, green for a gain and red for a loss."""
    if v > 0:
        return Text(f"+{v}", style="green")
    return Text(str(v), style="red" if v < 0 else "")


def _signed(v: int) -> str:
    """The same as markup, for tables of numbers (kept for ``simulate``)."""
    return f"[green]+{v}[/green]" if v > 0 else (f"[red]{v}[/red]" if v < 0 else "0")


def amounts_text(amounts: dict[str, int]) -> Text:
    """``Anna +3  Ben -3``: names as text, amounts coloured."""
    out = Text()
    for i, (name, v) in enumerate(amounts.items()):
        if i:
            out.append("  ")
        out.append(f"{name} ")
        out.append_text(signed_text(v))
    return out


def tx(key: str, lang: str = "en", style: str = "", **params: object) -> Text:
    """A catalogue text as a Rich ``Text``: parameters that are ``Text`` keep their styles,
    every other parameter is inserted as plain text (never read as markup)."""
    out = Text(style=style)
    for literal, field, _, _ in string.Formatter().parse(t(key, lang)):
        out.append(literal)
        if field is None:
            continue
        value = params.get(field, "{" + field + "}")
        if isinstance(value, Text):
            out.append_text(value)
        else:
            out.append(str(value))
    return out


def _print_balances(balances: dict[str, int], pot: int, lang: str = "en") -> None:
    console.print(tx("play.balances", lang, amounts=amounts_text(balances), pot=pot), highlight=False)
