"""``stammtisch replay``: verify a game record and print what happened."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table as RichTable
from rich.text import Text

from ..explain import explain, explain_tricks
from ..i18n import language, t
from ..i18n.words import contract_name
from ..record import RecordError, Replay
from ..record import replay as replay_record
from .common import CliError, _print_balances, check_input_file, console, signed_text, tx
from .root import app


@app.command("replay")
def replay_cmd(
    file: Path = typer.Argument(..., help="A game record (stammtisch-record/1 JSON)."),
    as_json: bool = typer.Option(False, "--json", help="Print balances, pot and deals as JSON."),
    german: bool = typer.Option(False, "--german", help="Texts, contracts and outcomes in German."),
    tricks: bool = typer.Option(False, "--tricks",
                                help="Show every deal trick by trick (who played which card, "
                                     "who took the trick)."),
) -> None:
    """Replay a game record, verifying every action, and print the outcome.

    A record that does not replay (not JSON, unknown rule set, a deck that is not the pack,
    an illegal action) exits with status 2 and names the deal, the action and the rule.
    """
    lang = language(german)
    check_input_file(file, lang)
    try:
        result = replay_record(file)
    except RecordError as e:
        raise CliError(f"{file}: {e}") from None
    except UnicodeDecodeError:
        raise CliError(f"{file}: not JSON (not a text file)") from None
    except OSError as e:
        raise CliError(f"{file}: {e.strerror or e}") from None
    summary = result.summary(lang)
    if as_json:
        print(json.dumps(summary, ensure_ascii=False))
        return
    suits = "german" if getattr(result.table.rules, "suits", "french") == "german" else "french"
    console.print(tx("replay.verified", lang, ruleset=Text(summary["ruleset"], style="bold"),
                     count=len(summary["deals"])), highlight=False)
    _print_deals(summary, lang, suits)
    _print_explanations(result, lang, suits, tricks)
    _print_balances(summary["balances"], summary["pot"], lang)


def _print_explanations(result: Replay, lang: str, suits: str, tricks: bool) -> None:
    """Per deal why it ended as it did (and with ``--tricks`` every trick), from the engine's
    summary through ``stammtisch.explain``."""
    names = result.table.players
    for number, deal in enumerate(result.table.deals, 1):
        if deal.result is None:
            continue
        console.print(Text(t("replay.deal_heading", lang, number=number), style="bold"))
        lines = explain(deal.result.summary, names, lang, suits)
        if tricks:
            lines = explain_tricks(deal.result.summary, names, lang, suits) + lines
        for line in lines:
            console.print(Text("  " + line), highlight=False)


def _outcome(deal: dict[str, Any], lang: str, suits: str) -> str:
    if deal.get("contract"):
        outcome = contract_name(deal["contract"], lang, suits)
    elif deal.get("outcome"):
        outcome = t(f"outcome.{deal['outcome']}", lang)
    else:
        outcome = ""
    if deal.get("declarer"):
        outcome = f"{deal['declarer']}: {outcome}"
    return outcome


def _print_deals(summary: dict[str, Any], lang: str, suits: str) -> None:
    # Every cell is a Text: a player called "[/]" or an outcome with colons stays as written.
    table = RichTable(title=Text(t("replay.deals", lang)), title_justify="left")
    table.add_column("#", justify="right")
    table.add_column(Text(t("word.dealer", lang)))
    table.add_column(Text(t("word.outcome", lang)))
    for name in summary["players"]:
        table.add_column(Text(name), justify="right")
    for i, deal in enumerate(summary["deals"], 1):
        net = deal.get("net", {})
        table.add_row(Text(str(i)), Text(str(deal.get("dealer"))), Text(_outcome(deal, lang, suits)),
                      *[signed_text(net.get(n, 0)) for n in summary["players"]])
    console.print(table)
