"""``stammtisch analyze``: where were points lost? Every card of a record judged with all cards open."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.text import Text

from .common import CliError, app, console

# User-facing texts, together until the i18n catalogue takes them.
TEXTS = {
    "no_file": "{path}: no such file",
    "no_play": "no deal of this record reached the play phase",
    "deal": "Deal {deal}: {measure} with best play by all at the start: {value}",
    "clean": "  no card cost anything with all cards open",
    "mistake": "  {who} {action}: {before} → {after} (−{loss})",
}
MEASURES = {"declarer-points": "the declarer's card points", "won": "won (1) or lost (0)",
            "own-points": "each player's own card points (Ramsch)", "own-tricks": "each player's tricks"}


@app.command("analyze")
def analyze_cmd(
    record: Path = typer.Argument(..., help="A game record (stammtisch-record/1 JSON)."),
    deal: int | None = typer.Option(None, "--deal", min=1, help="Only this deal (1 = the first)."),
    as_json: bool = typer.Option(False, "--json", help="Print deals[i].start_value and per card played "
                                                        "{seat, action, before, after, loss} as JSON."),
) -> None:
    """Analyse a game record with the open-hand solver: the value of each deal at the start of
    play, and for every card played what it cost with all cards open — the mistakes of the
    deal, the largest first. Values are in the contract's own terms: the declarer's card points
    (Frage, Solo), won or lost (Bettel, Rufer, Durch), a player's own points (Ramsch) or tricks
    (Tippen).

    Needs the solver's kernel (numba, in the test and solve extras); its first use on a machine
    compiles it (up to a minute), later runs load it from the cache.
    """
    from ..record import RecordError
    from ..solve.analysis import analyze_record

    if not record.is_file():
        raise CliError(TEXTS["no_file"].format(path=record))
    try:
        analyses = analyze_record(record, deal)
    except RecordError as e:
        raise CliError(f"{record}: {e}") from None
    if as_json:
        sys.stdout.write(json.dumps({"deals": [a.to_json() for a in analyses]}, ensure_ascii=False) + "\n")
        return
    if not analyses:
        console.print(Text(TEXTS["no_play"]))
        return
    names = json.loads(record.read_text(encoding="utf-8"))["players"]
    for a in analyses:
        console.print(Text(TEXTS["deal"].format(deal=a.deal + 1, measure=MEASURES[a.measure],
                                                     value=a.start_value), style="bold"))
        mistakes = a.mistakes()
        if not mistakes:
            console.print(Text(TEXTS["clean"]))
        for p in mistakes:
            console.print(Text(TEXTS["mistake"].format(who=names[p.seat], action=p.action,
                                                            before=p.before, after=p.after, loss=p.loss)))
