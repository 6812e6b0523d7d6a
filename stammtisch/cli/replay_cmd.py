"""``stammtisch replay``: verify a game record and print what happened."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table as RichTable

from ..record import RecordError
from ..record import replay as replay_record
from .common import CliError, _print_balances, _signed, app, console


@app.command("replay")
def replay_cmd(
    file: Path = typer.Argument(..., help="A game record (stammtisch-record/1 JSON)."),
    as_json: bool = typer.Option(False, "--json", help="Print balances, pot and deals as JSON."),
):
    """Replay a game record, verifying every action, and print the outcome.

    A record that does not replay (not JSON, unknown rule set, a deck that is not the pack,
    an illegal action) exits with status 2 and names the deal, the action and the rule.
    """
    if not file.exists():
        raise CliError(f"{file}: no such file")
    try:
        result = replay_record(file)
    except RecordError as e:
        raise CliError(f"{file}: {e}") from None
    summary = result.summary()
    if as_json:
        print(json.dumps(summary, ensure_ascii=False))
        return
    console.print(f"[bold]{summary['ruleset']}[/bold]: {len(summary['deals'])} deals, all actions verified.")
    _print_deals(summary)
    _print_balances(summary["balances"], summary["pot"])


def _print_deals(summary: dict) -> None:
    t = RichTable(title="Deals", title_justify="left")
    t.add_column("#", justify="right")
    t.add_column("dealer")
    t.add_column("outcome")
    for name in summary["players"]:
        t.add_column(name, justify="right")
    for i, d in enumerate(summary["deals"], 1):
        outcome = d.get("contract") or d.get("outcome") or ""
        if d.get("declarer"):
            outcome = f"{d['declarer']}: {outcome}"
        t.add_row(str(i), str(d.get("dealer")), outcome,
                  *[_signed(d.get("net", {}).get(n, 0)) for n in summary["players"]])
    console.print(t)
