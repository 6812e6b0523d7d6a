"""``stammtisch analyze``: where were points lost? Every card of a record judged with all cards open."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from ..i18n import language, render, t
from .common import EXIT_FAILED_CHUNKS, EXIT_INTERRUPTED, CliError, console, err_console
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
    from ..analysis.deals import analyze_record_batch
    from ..record import RecordError, load
    from ..sim.batch import BatchError, choose_backend, progress_bar

    lang = language(german)
    if not record.is_file():
        raise CliError(t("analyze.no_file", lang, path=record))
    try:
        data = load(record)
        if deal is not None and deal > len(data["deals"]):
            raise CliError(t("analyze.no_deal", lang, deal=deal, count=len(data["deals"])))
        backend = choose_backend(workers, ray)
        total = 1 if deal is not None else len(data["deals"])
        with progress_bar(record.name, total, unit="deals",
                          disable=as_json and not err_console.is_terminal) as tick:
            outcome = analyze_record_batch(data, deal, backend, tick, all_discards=all_discards)
    except RecordError as e:
        if e.rule == "redacted record":
            raise CliError(t("analyze.redacted", lang, path=record)) from None
        raise CliError(f"{record}: {e}") from None
    except BatchError as e:
        raise CliError(str(e)) from None
    for line in outcome.problems():
        err_console.print(Text(t("analyze.problems", lang, line=line), style="yellow"))
    if not outcome.results and outcome.failures:
        raise CliError(outcome.failures[0].reason)
    analyses = [a for _, chunk_analyses in outcome.results for a in chunk_analyses]
    if as_json:
        sys.stdout.write(json.dumps({"deals": [a.to_json() for a in analyses]}, ensure_ascii=False) + "\n")
    elif not analyses:
        console.print(Text(t("analyze.no_play", lang)))
    else:
        print_analyses(analyses, [str(p) for p in data["players"]], lang, _suits(data))
    # a partial answer is printed, but the command did not do all it was asked
    if outcome.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if outcome.failures:
        raise typer.Exit(EXIT_FAILED_CHUNKS)


def _suits(data: dict[str, Any]) -> str:
    from ..rules import ruleset

    options = dict(data.get("options", {}))
    options.setdefault("players", len(data["players"]))
    return str(getattr(ruleset(data["ruleset"], options), "suits", "french"))


def print_analyses(analyses: list[Any], names: list[str], lang: str = "en", suits: str = "french") -> None:
    from ..analysis.lines import analysis_lines

    for a in analyses:
        for i, line in enumerate(analysis_lines(a, names, suits)):
            console.print(Text(render(line, lang), style="bold" if i == 0 else ""), highlight=False)
