"""``stammtisch tournament``: bots against each other on the same decks (duplicate play)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table as RichTable
from rich.text import Text

from ..bots import PLAYER_NAMES
from ..i18n import language, t
from .common import CliError, _build_rules, check_output_folder, console, err_console
from .root import app

if TYPE_CHECKING:
    from ..sim.stats import Interval
    from ..sim.tournament import Verdict


def _refuse(key: str, lang: str, **values: Any) -> CliError:
    """A refusal in one line; ``rule`` carries the catalogue key as a stable code."""
    error = CliError(t(key, lang, **values))
    error.rule = key  # type: ignore[attr-defined]
    return error


@app.command("tournament")
def tournament_cmd(
    ruleset_id: str = typer.Argument(..., metavar="RULESET", help="e.g. tippen/grupp-1975 or tapp/modern"),
    bots: str = typer.Option(..., "--bots", "-b", help="The bots, comma-separated: levels (beginner, club, "
                                                       "expert, master) or algorithms, e.g. heuristic,random."),
    deals: int = typer.Option(1000, "--deals", "-k", min=1,
                              help="Deals per arrangement of the bots (the same decks for every arrangement)."),
    seed: int | None = typer.Option(None, "--seed", help="Random seed (the same seed, the same figures on "
                                                         "any number of workers). Drawn and printed if not given."),
    players: int | None = typer.Option(None, "--players", "-n", help="Number of players."),
    option: list[str] = typer.Option([], "--option", "-o", help="Rule option key=value (repeatable)."),
    session_deals: int = typer.Option(10, "--session-deals", min=1,
                                      help="Deals per session: a table on which the deal rotates and the pot "
                                           "carries; sessions are the independent units of the intervals."),
    workers: int | None = typer.Option(None, "--workers", "-w", min=1,
                                       help="Worker processes (default: all cores; 1 runs in this process)."),
    ray: str | None = typer.Option(None, "--ray", help="Run on a Ray cluster: auto, HOST:PORT or local."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as one JSON object."),
    records: Path | None = typer.Option(None, "--records",
                                        help="Write the game records into this folder: one record per session "
                                             "and arrangement (replayable with `stammtisch replay`)."),
    german: bool = typer.Option(False, "--german", help="The report in German."),
) -> None:
    """Duplicate tournament: every session's decks are played with every arrangement of the bots
    over the seats, so the luck of the cards cancels. Per bot the mean net per deal with a 95%
    interval, every pair's paired difference, and the figures by role (declarer/defender in
    Tapp, tapper/passer in Tippen).

    Example: stammtisch tournament tapp/modern --bots heuristic,random --deals 2000 --seed 1
    """
    from ..sim.batch import BatchError, choose_backend, progress_bar
    from ..sim.simulate import new_seed
    from ..sim.tournament import arrangements, run_tournament, verdict

    lang = language(german)
    names = [b.strip() for b in bots.split(",") if b.strip()]
    for b in names:
        if b not in PLAYER_NAMES:
            raise _refuse("cli.unknown_bot", lang, bot=repr(b), bots=", ".join(PLAYER_NAMES))
    if len(set(names)) < 2:
        raise _refuse("tournament.two_bots", lang)
    rules = _build_rules(ruleset_id, players, option)
    if len(set(names)) > rules.players:
        raise _refuse("tournament.too_many", lang, count=len(set(names)), players=rules.players)
    if records is not None:
        check_output_folder("--records", records, lang)
    job_seed = seed if seed is not None else new_seed()
    sessions = -(-deals // session_deals)
    try:
        backend = choose_backend(workers, ray)
        with progress_bar(ruleset_id, sessions, unit="sessions",
                          disable=as_json and not err_console.is_terminal) as tick:
            result = run_tournament(rules, names, deals, job_seed, backend, session_deals, tick,
                                    records=records)
    except BatchError as e:
        raise CliError(str(e)) from None
    if not result.sessions:
        raise CliError("no session finished")
    data = {"ruleset": ruleset_id, **result.to_json()}
    for line in data["problems"]:
        err_console.print(Text(t("tournament.problems", lang, line=line), style="yellow"))
    if as_json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
        return
    console.print(Text(t("tournament.title", lang, ruleset=ruleset_id, deals=data["deals_per_arrangement"],
                         arrangements=len(arrangements(names, rules.players)), seed=job_seed), style="bold"))
    table = RichTable()
    for col in ("bot", "mean", "ci", "deals"):
        table.add_column(t(f"tournament.col_{col}", lang), justify="left" if col == "bot" else "right")
    for bot, interval in result.per_bot().items():
        deals_played = sum(s[bot].deals for s in result.sessions)
        table.add_row(Text(bot), f"{interval.estimate:+.3f}", f"[{interval.low:+.3f}, {interval.high:+.3f}]",
                      str(deals_played))
    console.print(table)
    for a, b, interval in result.pairs():
        console.print(Text(pair_line(a, b, interval, lang)))
        note = unsettled_line(verdict(interval, result.session_deals), lang)
        if note:
            console.print(Text(note, style="yellow"))
    console.print(Text(t("tournament.roles", lang)))
    for bot, roles in result.roles().items():
        parts = [f"{role} {i.estimate:+.2f} ({d})" for role, (i, d) in roles.items()]
        console.print(Text(f"  {bot}: " + ", ".join(parts)))


def pair_line(a: str, b: str, interval: Interval, lang: str = "en") -> str:
    """One pair's difference with its interval and which bot it shows better, if any."""
    key = ("tournament.better_first" if interval.low > 0 else "tournament.better_second" if interval.high < 0
           else "tournament.not_distinguishable")
    return t("tournament.pair", lang, a=a, b=b, estimate=f"{interval.estimate:+.3f}",
             low=f"{interval.low:+.3f}", high=f"{interval.high:+.3f}", n=interval.n, verdict=t(key, lang, a=a, b=b))


def unsettled_line(v: Verdict, lang: str = "en") -> str:
    """One line saying that a pair's interval settles nothing, and how many deals would; empty
    when it settles."""
    if v.settled:
        return ""
    if v.reason == "wide":
        return t("tournament.unsettled", lang, deals=v.deals_needed, sessions=v.sessions_needed)
    return t(f"tournament.unsettled_{v.reason}", lang)
