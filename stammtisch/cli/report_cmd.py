"""``stammtisch report``: a simulation written up as HTML with plots, JSON and CSV; several rule sets compared."""

from __future__ import annotations

import shlex
from pathlib import Path

import typer
from rich.markup import escape

from ..bots import PLAYER_NAMES
from ..i18n import LANGUAGES, t
from .common import EXIT_FAILED_CHUNKS, EXIT_INTERRUPTED, CliError, _build_rules, console, err_console
from .root import app


@app.command("report")
def report_cmd(
    rulesets: list[str] = typer.Argument(..., metavar="RULESET...",
                                         help="One rule set, or several to compare side by side."),
    out: Path = typer.Option(..., "--out", help="Folder for report.html, report.json and the CSV files."),
    compare: bool = typer.Option(False, "--compare",
                                 help="Compare the rule sets (implied when several are given)."),
    deals: int = typer.Option(10000, "--deals", "-k", min=1, help="Deals per rule set."),
    seed: int = typer.Option(1, "--seed", help="Random seed (the report names it, so anyone can repeat it)."),
    players: int | None = typer.Option(None, "--players", "-n", help="Number of players (every rule set)."),
    bots: list[str] = typer.Option(["heuristic"], "--bots", "-b",
                                   help="Bot per seat: a level (beginner, club, expert, master) or an algorithm "
                                        "(random, heuristic, pimc); the last one fills the rest."),
    option: list[str] = typer.Option([], "--option", "-o", help="Rule option key=value (every rule set)."),
    chunk_deals: int = typer.Option(100, "--chunk-deals", min=1,
                                    help="Deals per chunk = one table session (the pot carries within it)."),
    workers: int | None = typer.Option(None, "--workers", "-w", min=1, help="Worker processes (default: all cores)."),
    ray: str | None = typer.Option(None, "--ray", help="Ray cluster: auto, HOST:PORT or local (see simulate)."),
    lang: str = typer.Option("en", "--lang", help="Language of the 'when to tap' section: en or de."),
) -> None:
    """Simulate and write a report: per seat the mean net per deal with its 95% interval and its
    distribution; Tippen tap rate, chance of a trick and net of tapping by hand class, the pot over
    a session; Tapp contract frequencies, declarer win rate and value per contract, card points,
    Ramsch. Several RULESETs (or --compare) put the same figures side by side.

    The page is self-contained (plots embedded) and says which command, deals and seed made it.
    Needs pip install 'stammtisch\\[report]' (matplotlib).
    """
    from ..sim.batch import BatchError, choose_backend, progress_bar
    from ..sim.report import run_report
    from ..sim.report_render import ReportError, write_report
    from ..sim.simulate import SimulationJob, bots_per_seat, default_names
    from .simulate_run import _check_players, shown_error

    if lang not in LANGUAGES:
        raise CliError(t("cli.unknown_language", lang=repr(lang), languages=", ".join(LANGUAGES)))
    del compare  # several rule sets are a comparison; the flag is there for the spelling in the docs
    _check_players(players, option)
    for b in bots:
        if b not in PLAYER_NAMES:
            raise CliError(t("cli.unknown_bot", bot=repr(b), bots=", ".join(PLAYER_NAMES)))
    if out.exists() and not out.is_dir():
        raise CliError(t("report.out_is_file", path=out))
    jobs = []
    for ruleset_id in rulesets:
        rules = _build_rules(ruleset_id, players, option)
        jobs.append(SimulationJob(rules, tuple(default_names(rules.players)),
                                  tuple(bots_per_seat(bots, rules.players))))
    try:
        backend = choose_backend(workers, ray)
        runs = []
        for job in jobs:
            with progress_bar(job.rules.id, deals, disable=not err_console.is_terminal) as tick:
                run = run_report(job, deals, seed, backend, chunk_deals, tick)
            for line in run.outcome.problems():
                err_console.print(f"[yellow]warning:[/yellow] {job.rules.id}: {escape(line)}", highlight=False,
                                  soft_wrap=True)
            runs.append(run)
            if run.outcome.interrupted:
                break
        command = _repeat_command(rulesets, deals, seed, players, bots, option, chunk_deals, out, lang)
        paths = write_report(runs, out, command, lang)
    except (BatchError, ReportError) as e:
        raise shown_error(e) from None
    console.print(t("report.written", path=out, files=", ".join(p.name for p in paths)))
    if any(run.outcome.interrupted for run in runs):
        raise typer.Exit(EXIT_INTERRUPTED)
    if any(run.outcome.failures for run in runs):
        raise typer.Exit(EXIT_FAILED_CHUNKS)


def _repeat_command(rulesets: list[str], deals: int, seed: int, players: int | None, bots: list[str],
                    options: list[str], chunk_deals: int, out: Path, lang: str = "en") -> str:
    """The command that makes the same report (workers and Ray do not change it)."""
    words = ["stammtisch", "report", *rulesets, "--deals", str(deals), "--seed", str(seed)]
    if players is not None:
        words += ["--players", str(players)]
    for bot in bots:
        words += ["--bots", bot]
    for text in options:
        words += ["-o", text]
    words += ["--chunk-deals", str(chunk_deals), "--out", str(out)]
    if lang != "en":
        words += ["--lang", lang]
    return " ".join(shlex.quote(w) for w in words)
