"""The command line's one-line user errors, exit statuses and rule building: what a command
needs before it prints anything, without Rich or Typer (``common`` has the consoles)."""

from __future__ import annotations

from ..i18n import t
from ..rules import RuleError, Rules, ruleset

#: exit statuses of a batch command that printed a partial answer: some work failed, or Ctrl-C
EXIT_FAILED_CHUNKS = 1
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _build_rules(ruleset_id: str, players: int | None, options: list[str]) -> Rules:
    overrides = list(options or [])
    if players is not None:
        overrides.append(f"players={players}")
    try:
        return ruleset(ruleset_id, overrides)
    except RuleError as e:
        raise CliError(str(e)) from None


def _check_seat(flag: str, seat: int | None, num_players: int, lang: str = "en") -> None:
    if seat is not None and not 0 <= seat < num_players:
        raise CliError(t("cli.seat_range", lang, flag=flag, last=num_players - 1, seat=seat))
