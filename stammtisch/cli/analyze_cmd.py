"""``stammtisch analyze``: where were points lost? Every card of a record judged with all cards open."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from .common import EXIT_FAILED_CHUNKS, EXIT_INTERRUPTED, CliError, app, console, err_console

# User-facing texts, together until the i18n catalogue takes them.
TEXTS = {
    "no_file": "{path}: no such file",
    "no_deal": "the record has {count} deals; there is no deal {deal}",
    "no_play": "no deal of this record reached the play phase",
    "deal": "Deal {deal}: {measure} with best play by all at the start: {value}",
    "clean": "  no card cost anything with all cards open",
    "mistake": "  {who} {action}: {before} → {after} (−{loss})",
    "problems": "warning: {line}",
}
MEASURES = {"declarer-points": "the declarer's card points", "won": "won (1) or lost (0)",
            "own-points": "each player's own card points (Ramsch)", "own-tricks": "each player's tricks"}


@app.command("analyze")
def analyze_cmd(
    record: Path = typer.Argument(..., help="A game record (stammtisch-record/1 JSON)."),
    deal: int | None = typer.Option(None, "--deal", min=1, help="Only this deal (1 = the first)."),
    as_json: bool = typer.Option(False, "--json", help="Print deals[i].start_value and per card played "
                                                        "{seat, action, before, after, loss} as JSON."),
    workers: int | None = typer.Option(None, "--workers", "-w", min=1,
                                       help="Worker processes (default: all cores; 1 = this process)."),
    ray: str | None = typer.Option(None, "--ray", help="Run on a Ray cluster: auto, HOST:PORT or local."),
) -> None:
    """Analyse a game record with the open-hand solver: the value of each deal at the start of
    play, and for every card played what it cost with all cards open — the mistakes of the
    deal, the largest first. Values are in the contract's own terms: the declarer's card points
    (Frage, Solo), won or lost (Bettel, Rufer, Durch), a player's own points (Ramsch) or tricks
    (Tippen).

    The solver's compiled kernel is built on its first use on a machine (up to a minute); later
    runs load it from the cache.
    """
    from ..record import RecordError, load
    from ..sim.batch import BatchError, choose_backend, progress_bar
    from ..solve.analysis import analyze_record_batch

    if not record.is_file():
        raise CliError(TEXTS["no_file"].format(path=record))
    try:
        data = load(record)
        if deal is not None and deal > len(data["deals"]):
            raise CliError(TEXTS["no_deal"].format(deal=deal, count=len(data["deals"])))
        backend = choose_backend(workers, ray)
        total = 1 if deal is not None else len(data["deals"])
        with progress_bar(record.name, total, unit="deals",
                          disable=as_json and not err_console.is_terminal) as tick:
            outcome = analyze_record_batch(data, deal, backend, tick)
    except RecordError as e:
        raise CliError(f"{record}: {e}") from None
    except BatchError as e:
        raise CliError(str(e)) from None
    for line in outcome.problems():
        err_console.print(Text(TEXTS["problems"].format(line=line), style="yellow"))
    if not outcome.results and outcome.failures:
        raise CliError(outcome.failures[0].reason)
    analyses = [a for _, chunk_analyses in outcome.results for a in chunk_analyses]
    if as_json:
        sys.stdout.write(json.dumps({"deals": [a.to_json() for a in analyses]}, ensure_ascii=False) + "\n")
    elif not analyses:
        console.print(Text(TEXTS["no_play"]))
    else:
        print_analyses(analyses, data["players"])
    # a partial answer is printed, but the command did not do all it was asked
    if outcome.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if outcome.failures:
        raise typer.Exit(EXIT_FAILED_CHUNKS)


def print_analyses(analyses: list[Any], names: list[str]) -> None:
    for a in analyses:
        console.print(Text(TEXTS["deal"].format(deal=a.deal + 1, measure=MEASURES[a.measure],
                                                     value=a.start_value), style="bold"))
        mistakes = a.mistakes()
        if not mistakes:
            console.print(Text(TEXTS["clean"]))
        for p in mistakes:
            console.print(Text(TEXTS["mistake"].format(who=names[p.seat], action=p.action,
                                                            before=p.before, after=p.after, loss=p.loss)))
