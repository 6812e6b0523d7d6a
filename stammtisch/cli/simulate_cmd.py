"""``stammtisch simulate``: many deals between bots on every core, summarised with intervals.

Also ``stammtisch merge``: the per-chunk records of a simulation added up to the same summary.
The work is ``simulate_run``'s; here are the commands' options and help.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..i18n import t
from ..record import RecordError
from .common import CliError, console
from .root import app
from .simulate_run import print_summary, shown_error, simulate, summary_json

__all__ = ["merge_cmd", "simulate_cmd", "summary_json"]


@app.command("simulate")
def simulate_cmd(
    ruleset_id: str = typer.Argument(..., metavar="RULESET", help="e.g. tippen/dreiblatt-1859 or tapp/modern"),
    players: int | None = typer.Option(None, "--players", "-n", help="Number of players."),
    deals: int = typer.Option(1000, "--deals", "-k", min=1, help="How many deals to play in all."),
    seed: int | None = typer.Option(None, "--seed",
                                    help="Random seed: the same seed (and --chunk-deals) gives the same games "
                                         "on any number of workers. Without it a seed is drawn and printed."),
    bots: list[str] = typer.Option(["heuristic"], "--bots", "-b",
                                   help="Bot per seat: a level (beginner, club, expert, master) or an algorithm "
                                        "(random, heuristic, pimc); repeat for several seats, "
                                        "the last one fills the rest."),
    option: list[str] = typer.Option([], "--option", "-o", help="Rule option key=value (repeatable)."),
    records: Path | None = typer.Option(None, "--records",
                                        help="Write the game records into this folder: one record per session "
                                             "(chunk); `stammtisch merge FOLDER` adds them up again."),
    first_dealer: int | None = typer.Option(None, "--first-dealer",
                                            help="Seat of the first dealer of every session "
                                                 "(default: the first Ace dealt, drawn per session)."),
    chunk_deals: int = typer.Option(100, "--chunk-deals", min=1,
                                    help="Deals per chunk. Each chunk is one table session: a fresh table "
                                         "with its own seed, on which the deal rotates and the pot (Stamm) "
                                         "carries from deal to deal; what is left in the pot at the end "
                                         "of a session stays there. Chunks are what the workers share out."),
    workers: int | None = typer.Option(None, "--workers", "-w", min=1,
                                       help="Worker processes (default: all cores; 1 runs in this process)."),
    ray: str | None = typer.Option(None, "--ray",
                                   help="Run on a Ray cluster: auto (the cluster this machine joined with "
                                        "`ray start`), HOST:PORT of a head node, or local (a private Ray on "
                                        "this machine). Needs pip install 'stammtisch\\[cluster]'."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
) -> None:
    """Simulate many deals between bots and summarise them: per player the mean per deal with a 95%
    confidence interval, tap and bête rates (Tippen) or declarer rates (Tapp) with their
    denominators, the pot where the game has one.

    The deals are played in chunks (sessions, see --chunk-deals) spread over all cores, or a Ray
    cluster: the summary is the same for any --workers and --ray. Ctrl-C stops and summarises
    the sessions that finished.
    """
    status = simulate(ruleset_id, players, deals, seed, bots, option, records, first_dealer, chunk_deals, workers,
                      ray, as_json)
    if status:
        raise typer.Exit(status)


@app.command("merge")
def merge_cmd(
    sources: list[Path] = typer.Argument(..., metavar="RECORDS...",
                                         help="Record files or folders of them (as written by simulate --records)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
) -> None:
    """Add up the per-session records of `simulate --records` into one summary.

    Every record is replayed through the engine (so it is verified) and the sessions are added
    in chunk order: the summary is the one simulate printed for the same job.
    """
    from ..sim.records import merge_records

    for source in sources:
        if not source.exists():
            raise CliError(f"{source}: no such file or folder")
    try:
        rules, summary, count = merge_records(sources)
    except RecordError as e:
        raise shown_error(e) from None
    data = summary_json(summary, rules, rules.id)
    data["records"] = count
    if as_json:
        print(json.dumps(data, ensure_ascii=False))
        return
    print_summary(summary, rules, rules.id, None, None, None)
    console.print(t("simulate.merged", count=count))
