"""The ``simulate`` command's work, apart from its Typer declaration (``simulate_cmd``), so that
the command can run without importing Typer (``stammtisch.cli.fast``); also the summary as
JSON and as tables, which ``merge`` prints too.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from ..bots import PLAYER_NAMES
from ..i18n import t
from ..rules.base import RuleError, parse_override
from .errors import EXIT_FAILED_CHUNKS, EXIT_INTERRUPTED, CliError, _build_rules, _check_seat

CODES = {  # refusal (its text's catalogue key) → stable machine code
    "simulate.players_conflict": "players-conflict",
    "cli.unknown_bot": "unknown-bot",
    "simulate.records_not_dir": "records-not-a-folder",
}


def shown_error(error: Exception) -> CliError:
    """A library error as a CLI error (printed as text by ``main``, brackets and all)."""
    shown = CliError(str(error))
    shown.rule = getattr(error, "rule", None)  # type: ignore[attr-defined]
    return shown


def refuse(key: str, **values: Any) -> CliError:
    error = CliError(t(key, **values))
    error.rule = CODES[key]  # type: ignore[attr-defined]
    return error


def _check_players(players: int | None, options: list[str]) -> None:
    if players is None:
        return
    for text in options:
        try:
            key, value = parse_override(text)
        except RuleError:
            continue  # _build_rules reports a malformed option
        if key == "players" and str(value).strip() != str(players):
            raise refuse("simulate.players_conflict", flag=players, option=value)


def stderr_is_terminal() -> bool:
    """``err_console.is_terminal``: whether Rich takes stderr for a terminal (then ``--json``
    still shows the progress bar there). Where Rich's answer is certainly no (its own rules:
    ``TTY_COMPATIBLE=0``, or neither ``TTY_COMPATIBLE=1`` nor ``FORCE_COLOR`` set and stderr no
    tty) it is given without importing Rich, which is a third of a plain run's start-up."""
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible == "0":
        return False
    if compatible != "1" and "FORCE_COLOR" not in os.environ:
        isatty = getattr(sys.stderr, "isatty", None)
        try:
            if isatty is None or not isatty():
                return False
        except ValueError:
            return False
    from .common import err_console

    return err_console.is_terminal


def simulate(ruleset_id: str, players: int | None, deals: int, seed: int | None, bots: list[str],
             option: list[str], records: Path | None, first_dealer: int | None, chunk_deals: int,
             workers: int | None, ray: str | None, as_json: bool) -> int:
    """``stammtisch simulate`` with its options' values: returns the exit status (0, or 1 when
    chunks failed, 130 when interrupted); a user error raises ``CliError``."""
    from ..sim.batch import BatchError, choose_backend, progress_bar
    from ..sim.simulate import SimulationJob, bots_per_seat, default_names, new_seed, run_simulation

    _check_players(players, option)
    rules = _build_rules(ruleset_id, players, option)
    _check_seat("--first-dealer", first_dealer, rules.players)
    for b in bots:
        if b not in PLAYER_NAMES:
            raise refuse("cli.unknown_bot", bot=repr(b), bots=", ".join(PLAYER_NAMES))
    if records is not None and records.exists() and not records.is_dir():
        raise refuse("simulate.records_not_dir", path=records)
    try:
        backend = choose_backend(workers, ray)
    except BatchError as e:
        raise shown_error(e) from None
    bot_list = bots_per_seat(bots, rules.players)
    job_seed = seed if seed is not None else new_seed()
    job = SimulationJob(rules, tuple(default_names(rules.players)), tuple(bot_list), first_dealer,
                        keep_records=records is not None)
    written: list[Path] = []

    def write_record(chunk: Any, record: dict[str, Any]) -> None:
        from ..record import save  # records only when asked: a plain job starts without
        from ..sim.records import chunk_record_name

        assert records is not None
        path = records / chunk_record_name(ruleset_id, job_seed, chunk.index)
        save(record, path)
        written.append(path)

    if records is not None:
        records.mkdir(parents=True, exist_ok=True)
    try:
        with progress_bar(ruleset_id, deals, disable=as_json and not stderr_is_terminal()) as tick:
            run = run_simulation(job, deals, job_seed, backend, chunk_deals, tick, write_record)
    except BatchError as e:
        raise shown_error(e) from None
    summary = run.summary
    data = summary_json(summary, rules, ruleset_id)
    data.update(seed=job_seed, chunk_deals=chunk_deals, complete=run.outcome.complete,
                problems=run.outcome.problems())
    if run.outcome.problems():
        from rich.markup import escape

        from .common import err_console

        for line in run.outcome.problems():
            err_console.print(f"[yellow]warning:[/yellow] {escape(line)}", highlight=False, soft_wrap=True)
    if as_json:
        print(json.dumps(data, ensure_ascii=False))
    else:
        print_summary(summary, rules, ruleset_id, bot_list, chunk_deals, job_seed)
        if records is not None:
            from .common import console

            console.print(t("simulate.records_written", count=len(written), path=records))
    if run.outcome.interrupted:
        return EXIT_INTERRUPTED
    if run.outcome.failures:
        return EXIT_FAILED_CHUNKS
    return 0


def summary_json(summary: Any, rules: Any, ruleset_id: str) -> dict[str, Any]:
    from ..sim.simulate import has_pot, unit_of

    data: dict[str, Any] = summary.to_json(rules.family)
    data.update(ruleset=ruleset_id, unit=unit_of(rules), has_pot=has_pot(rules))
    return data


def _rate(count: int, of: int) -> str:
    return f"{count}/{of} = {count / of:.1%}" if of else f"{count}/0"


def _interval_text(interval: Any) -> str:
    if interval.n < 2:
        return "–"
    return f"{interval.low:+.3f} … {interval.high:+.3f}"


def print_summary(summary: Any, rules: Any, ruleset_id: str, bot_list: list[str] | None,
                  chunk_deals: int | None, seed: int | None) -> None:
    """The summary as tables and lines, for people."""
    from rich.table import Table as RichTable

    from ..sim.simulate import MIN_SESSIONS_FOR_CLUSTERED_CI, has_pot, unit_of
    from .common import _signed, console

    tippen = rules.family == "tippen"
    title = t("simulate.title", ruleset=ruleset_id, deals=summary.deals, sessions=len(summary.sessions),
              chunk=chunk_deals or "?", seed=seed if seed is not None else "?",
              unit=unit_of(rules))
    table = RichTable(title=title, title_justify="left")
    table.add_column("player")
    if bot_list:
        table.add_column("bot")
    table.add_column("balance", justify="right")
    table.add_column("mean per deal", justify="right")
    table.add_column("95% interval", justify="right")
    if tippen:
        table.add_column("taps / decisions", justify="right")
        table.add_column("bêtes / hands played", justify="right")
    else:
        table.add_column("declarer / deals", justify="right")
        table.add_column("won / as declarer", justify="right")
    for seat, name in enumerate(summary.players):
        stats = summary.seats[seat]
        interval = summary.mean_interval(seat) if summary.deals else None
        row = [name] + ([bot_list[seat]] if bot_list else [])
        row += [_signed(summary.balances[name]),
                f"{interval.estimate:+.3f}" if interval else "–",
                _interval_text(interval) if interval else "–"]
        if tippen:
            row += [_rate(stats.taps, stats.declarations), _rate(stats.betes, stats.active)]
        else:
            row += [_rate(stats.declarer, summary.deals), _rate(stats.declarer_wins, stats.declarer)]
        table.add_row(*row)
    console.print(table)
    if summary.deals:
        clustered = len(summary.sessions) >= MIN_SESSIONS_FOR_CLUSTERED_CI
        console.print(t("simulate.ci_clustered", n=len(summary.sessions)) if clustered else t("simulate.ci_per_deal"))
    if has_pot(rules):
        console.print(t("simulate.pot", pot=summary.pot))
    console.print(t("simulate.outcomes", items=", ".join(f"{k} {v}" for k, v in sorted(summary.outcomes.items()))))
    seats = summary.seats
    if tippen:
        console.print(t(
            "simulate.rates_tippen",
            taps=summary.taps, decisions=sum(s.declarations for s in seats),
            tap_rate=_rate(summary.taps, sum(s.declarations for s in seats)).split(" = ")[-1],
            betes=summary.betes, hands=sum(s.active for s in seats),
            bete_rate=_rate(summary.betes, sum(s.active for s in seats)).split(" = ")[-1]))
    else:
        items = ", ".join(f"{k} {v}" for k, v in summary.contracts.most_common()) or t("simulate.no_contracts")
        console.print(t("simulate.contracts", items=items))
        declared = sum(s.declarer for s in seats)
        console.print(t("simulate.rates_tapp", wins=summary.declarer_wins, declared=declared,
                        rate=_rate(summary.declarer_wins, declared).split(" = ")[-1]))
    if seed is not None and chunk_deals is not None:
        console.print(t("simulate.repeat", seed=seed, chunk=chunk_deals), style="dim")
