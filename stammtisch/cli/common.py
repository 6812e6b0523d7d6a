"""What every command shares: the Typer app, the consoles, one-line user errors, rule building."""

from __future__ import annotations

import typer
from rich.console import Console

from .. import __version__
from ..rules import RuleError, ruleset

app = typer.Typer(
    help=(
        "stammtisch: the old German card games Tippen and Tapp.\n\n"
        "Tippen (Dreiblatt, Drei Karten, Loup, Vierblatt) is a gambling game of three-card "
        "hands: tap ('ich spiele') to play for a share of the pot, or pass; an active player "
        "who takes no trick pays a bête. Tapp (Württemberg Tarock, Classic and Modern Tapp) is "
        "a point-trick game for three or four: one declarer against the rest, with the tapp "
        "(talon), Frage, Solo, Bettel, Rufer, Durch and Ramsch.\n\n"
        "Start with `stammtisch rules`, then `stammtisch play tippen/grupp-1975`."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _build_rules(ruleset_id: str, players: int | None, options: list[str]):
    overrides = list(options or [])
    if players is not None:
        overrides.append(f"players={players}")
    try:
        return ruleset(ruleset_id, overrides)
    except RuleError as e:
        raise CliError(str(e)) from None


def _check_seat(flag: str, seat: int | None, num_players: int) -> None:
    if seat is not None and not 0 <= seat < num_players:
        raise CliError(f"{flag} must be a seat from 0 to {num_players - 1}, not {seat}")


def _version(value: bool):
    if value:
        console.print(f"stammtisch {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")):
    pass



def _signed(v: int) -> str:
    return f"[green]+{v}[/green]" if v > 0 else (f"[red]{v}[/red]" if v < 0 else "0")


def _print_balances(balances: dict, pot: int) -> None:
    parts = "  ".join(f"{n} {_signed(v)}" for n, v in balances.items())
    console.print(f"Balances: {parts}   Pot: {pot}")
