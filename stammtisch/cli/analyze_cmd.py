"""``stammtisch analyze``: where were points lost? Every card of a record judged with all cards open.

The work is ``analyze_run``'s; here are the command's options and help.
"""

from __future__ import annotations

from pathlib import Path

import typer

from .analyze_run import analyze
from .root import app


@app.command("analyze")
def analyze_cmd(
    record: Path = typer.Argument(..., help="A game record (stammtisch-record/1 JSON)."),
    deal: int | None = typer.Option(None, "--deal", min=1, help="Only this deal (1 = the first)."),
    as_json: bool = typer.Option(False, "--json", help="Print deals[i].start_value and per card played "
                                                        "{seat, action, before, after, loss, values} as JSON "
                                                        "(values: per seat, in Tippen and Ramsch)."),
    workers: int | None = typer.Option(None, "--workers", "-w", min=1,
                                       help="Worker processes (default: all cores; 1 = this process; "
                                            "a record of up to three deals or a Tippen record is analysed in "
                                            "this process)."),
    ray: str | None = typer.Option(None, "--ray", help="Run on a Ray cluster: auto, HOST:PORT or local."),
    german: bool = typer.Option(False, "--german", help="The analysis in German."),
    all_discards: bool = typer.Option(False, "--all-discards",
                                      help="Solve every Frage discard (up to 364), not the bounded set."),
) -> None:
    """Analyse a game record with the open-hand solver: the value of each deal at the start of
    play, and for every card played what it cost with all cards open — the mistakes of the
    deal, the largest first, each with the trick, the better card(s) and the cost from the
    player's own side, in the contract's terms (the declarer's card points, won or lost, a
    player's own points in Ramsch or tricks in Tippen) and in money where it changes. The
    decisions before the play are judged too: Tippen's tap or pass and exchange, the Tapp
    discard, and the Tapp par (every contract the declarer could have named, what it pays).

    The solver's compiled kernel is built on its first use on a machine (up to a minute); later
    runs load it from the cache.
    """
    status = analyze(record, deal, as_json, workers, ray, german, all_discards)
    if status:
        raise typer.Exit(status)
