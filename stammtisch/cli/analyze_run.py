"""``stammtisch analyze``'s work, apart from its Typer command (``analyze_cmd``): ``cli.fast`` runs
a plain ``analyze`` here without Typer, which would cost a tenth of a second of every analysis's
start-up."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.text import Text

from ..i18n import language, render, t
from .common import EXIT_FAILED_CHUNKS, EXIT_INTERRUPTED, CliError, console, err_console


def analyze(record: Path, deal: int | None, as_json: bool, workers: int | None, ray: str | None, german: bool,
            all_discards: bool) -> int:
    """``stammtisch analyze`` with its options' values: returns the exit status (0, or 1 when
    chunks failed, 130 when interrupted); a user error raises ``CliError``."""
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
        return EXIT_INTERRUPTED
    if outcome.failures:
        return EXIT_FAILED_CHUNKS
    return 0


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
