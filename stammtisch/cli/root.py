"""The Typer app of the ``stammtisch`` command and its root options; the commands register
themselves on it (``stammtisch.cli`` imports them all before the app runs)."""

from __future__ import annotations

import typer

from .. import __version__
from .common import console

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
    # Markdown: a paragraph of help flows with the terminal's width; the source's line breaks do not show
    rich_markup_mode="markdown",
)


def _version(value: bool) -> None:
    if value:
        console.print(f"stammtisch {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    pass
