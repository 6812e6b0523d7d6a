"""``stammtisch simulate``: many deals between bots, summarised."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table as RichTable

from ..bots import BOT_NAMES
from ..record import save, table_to_record
from .common import CliError, _build_rules, _check_seat, _signed, app, check_output_folder, console, err_console


@app.command("simulate")
def simulate_cmd(
    ruleset_id: str = typer.Argument(..., metavar="RULESET", help="e.g. tippen/dreiblatt-1859 or tapp/modern"),
    players: int | None = typer.Option(None, "--players", "-n", help="Number of players."),
    deals: int = typer.Option(1000, "--deals", "-k", min=1, help="How many deals to play."),
    seed: int | None = typer.Option(None, "--seed", help="Random seed (same seed, same games)."),
    bots: list[str] = typer.Option(["heuristic"], "--bots", "-b",
                                   help="Bot per seat (random|heuristic); repeat for several seats, "
                                        "the last one fills the rest."),
    option: list[str] = typer.Option([], "--option", "-o", help="Rule option key=value (repeatable)."),
    records: Path | None = typer.Option(None, "--records", help="Write the game record into this folder."),
    first_dealer: int | None = typer.Option(None, "--first-dealer",
                                               help="Seat of the first dealer (default: the first Ace dealt)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
) -> None:
    """Simulate many deals between bots and summarise balances, pot, taps and bêtes."""
    from ..sim import simulate
    from ..sim.simulate import bots_per_seat

    rules = _build_rules(ruleset_id, players, option)
    _check_seat("--first-dealer", first_dealer, rules.players)
    if records is not None:
        check_output_folder("--records", records)
    for b in bots:
        if b not in BOT_NAMES:
            raise CliError(f"unknown bot {b!r}; bots are {', '.join(BOT_NAMES)}")
    bot_list = bots_per_seat(bots, rules.players)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=err_console, transient=True,
                  disable=as_json and not err_console.is_terminal) as progress:
        task = progress.add_task(f"{ruleset_id}", total=deals)
        step = max(1, deals // 200)

        def tick(done: int) -> None:
            if done % step == 0 or done == deals:
                progress.update(task, completed=done)

        summary, table = simulate(rules, deals, seed=seed, bots=bot_list,
                                  first_dealer=first_dealer, progress=tick)
    if records is not None:
        records.mkdir(parents=True, exist_ok=True)
        path = records / f"{ruleset_id.replace('/', '_')}-seed{seed if seed is not None else 'x'}-{deals}.json"
        save(table_to_record(table), path)
    data = summary.to_json(rules.family)
    data["ruleset"] = ruleset_id
    if as_json:
        print(json.dumps(data, ensure_ascii=False))
        return
    t = RichTable(title=f"{ruleset_id}: {deals} deals", title_justify="left")
    t.add_column("player")
    t.add_column("bot")
    t.add_column("balance", justify="right")
    for name, kind in zip(summary.players, bot_list, strict=True):
        t.add_row(name, kind, _signed(summary.balances[name]))
    console.print(t)
    console.print(f"Pot (with reserve): {summary.pot}")
    console.print("Outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(summary.outcomes.items())))
    if rules.family == "tippen":
        console.print(f"Taps: {summary.taps}   Bêtes: {summary.betes}")
    else:
        console.print("Contracts: " + (", ".join(f"{k} {v}" for k, v in summary.contracts.most_common()) or "none"))
        console.print(f"Declarer won: {summary.declarer_wins}")
    if records is not None:
        console.print(f"Record written to {path}")
