"""The ``stammtisch`` command line: rules, play, simulate, replay, serve.

A thin shell: every rule question is asked of the engine through the table and its states.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table as RichTable

from . import __version__
from .bots import BOT_NAMES, make_bot
from .cards import PACKS as PACKS_BY_NAME
from .cards import display, suit_label
from .games.base import IllegalAction
from .record import RecordError, replay as replay_record, save
from .rules import PRESETS, RuleError, family_of, format_options, ruleset
from .rules import rules_class

app = typer.Typer(
    help=(
        "stammtisch: the old German card games Tippen and Tapp.\n\n"
        "Tippen (Dreiblatt, Drei Karten, Loup, Vierblatt) is a gambling game of three-card "
        "hands: tap ('ich spiele') to play for a share of the pot, or pass; an active player "
        "who takes no trick pays a bête. Tapp (Württemberg Tarock, Classic and Modern Tapp) is "
        "a point-trick game for three or four: one declarer against the rest, with the tapp "
        "(talon), Frage, Solo, Bettel, Rufer, Durch and Ramsch.\n\n"
        "Start with `stammtisch rules`, then `stammtisch play tippen/grupp-1975`."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _build_rules(ruleset_id: str, players: Optional[int], options: List[str]):
    overrides = list(options or [])
    if players is not None:
        overrides.append(f"players={players}")
    try:
        return ruleset(ruleset_id, overrides)
    except RuleError as e:
        raise CliError(str(e)) from None


def _check_seat(flag: str, seat: Optional[int], num_players: int) -> None:
    if seat is not None and not 0 <= seat < num_players:
        raise CliError(f"{flag} must be a seat from 0 to {num_players - 1}, not {seat}")


def _version(value: bool):
    if value:
        console.print(f"stammtisch {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")):
    pass


# ----------------------------------------------------------------------------- rules


@app.command("rules")
def rules_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print the rule sets as JSON."),
    ruleset_id: Optional[str] = typer.Argument(None, metavar="[RULESET]",
                                               help="Show only this rule set."),
):
    """List the rule sets with their options and defaults.

    Options are given to play/simulate as -o key=value, e.g. -o max_bete=9 -o robbing=true.
    """
    ids = [ruleset_id] if ruleset_id else list(PRESETS)
    out = []
    for rid in ids:
        try:
            cls = rules_class(rid)
            rules = ruleset(rid)
        except RuleError as e:
            raise CliError(str(e)) from None
        specs = cls.option_specs()
        defaults = format_options(rules)
        out.append({
            "id": rid, "game": family_of(rid), "title": rules.title,
            "options": {k: {"default": defaults[k], "values": s.describe_kind(), "help": s.help}
                        for k, s in specs.items()},
        })
    if as_json:
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return
    for entry in out:
        t = RichTable(title=f"[bold]{entry['id']}[/bold] — {entry['title']}", show_lines=False,
                      title_justify="left", expand=False)
        t.add_column("option", style="cyan", no_wrap=True)
        t.add_column("default", style="green", no_wrap=True)
        t.add_column("values", no_wrap=True)
        t.add_column("meaning")
        for name, o in entry["options"].items():
            t.add_row(name, str(o["default"]).lower() if isinstance(o["default"], bool)
                      else str(o["default"]), o["values"], o["help"])
        console.print(t)
        console.print()


# ----------------------------------------------------------------------------- replay


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


def _signed(v: int) -> str:
    return f"[green]+{v}[/green]" if v > 0 else (f"[red]{v}[/red]" if v < 0 else "0")


def _print_balances(balances: dict, pot: int) -> None:
    parts = "  ".join(f"{n} {_signed(v)}" for n, v in balances.items())
    console.print(f"Balances: {parts}   Pot: {pot}")


# ----------------------------------------------------------------------------- simulate


@app.command("simulate")
def simulate_cmd(
    ruleset_id: str = typer.Argument(..., metavar="RULESET", help="e.g. tippen/dreiblatt-1859 or tapp/modern"),
    players: Optional[int] = typer.Option(None, "--players", "-n", help="Number of players."),
    deals: int = typer.Option(1000, "--deals", "-k", min=1, help="How many deals to play."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Random seed (same seed, same games)."),
    bots: List[str] = typer.Option(["heuristic"], "--bots", "-b",
                                   help="Bot per seat (random|heuristic); repeat for several seats, "
                                        "the last one fills the rest."),
    option: List[str] = typer.Option([], "--option", "-o", help="Rule option key=value (repeatable)."),
    records: Optional[Path] = typer.Option(None, "--records", help="Write the game record into this folder."),
    first_dealer: Optional[int] = typer.Option(None, "--first-dealer",
                                               help="Seat of the first dealer (default: the first Ace dealt)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
):
    """Simulate many deals between bots and summarise balances, pot, taps and bêtes."""
    from .sim import simulate
    from .sim.simulate import bots_per_seat

    rules = _build_rules(ruleset_id, players, option)
    _check_seat("--first-dealer", first_dealer, rules.players)
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
        save(table.to_record(), path)
    data = summary.to_json(rules.family)
    data["ruleset"] = ruleset_id
    if as_json:
        print(json.dumps(data, ensure_ascii=False))
        return
    t = RichTable(title=f"{ruleset_id}: {deals} deals", title_justify="left")
    t.add_column("player")
    t.add_column("bot")
    t.add_column("balance", justify="right")
    for name, kind in zip(summary.players, bot_list):
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


# ----------------------------------------------------------------------------- play


@app.command("play")
def play_cmd(
    ruleset_id: str = typer.Argument(..., metavar="RULESET", help="e.g. tippen/grupp-1975 or tapp/modern"),
    players: Optional[int] = typer.Option(None, "--players", "-n", help="Number of players."),
    option: List[str] = typer.Option([], "--option", "-o", help="Rule option key=value (repeatable)."),
    bots: str = typer.Option("heuristic", "--bots", "-b", help="The other seats' bot: random|heuristic."),
    name: str = typer.Option("You", "--name", help="Your name at the table."),
    seat: int = typer.Option(0, "--seat", help="Your seat (0 = first)."),
    deals: int = typer.Option(0, "--deals", help="Stop after this many deals (0: until you quit)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Random seed for shuffles and bots."),
    german: bool = typer.Option(False, "--german", help="German suit names (Herz, Schellen, Eichel, Laub)."),
    record: Optional[Path] = typer.Option(None, "--record", help="Save the game record here when you stop."),
    first_dealer: Optional[int] = typer.Option(None, "--first-dealer",
                                               help="Seat of the first dealer (default: the first Ace dealt)."),
):
    """Play in the terminal: you in one seat, bots in the others.

    At your turn type an action (e.g. tap, pass, play:HA, exchange:C7,D8) or its number from
    the list. 'q' quits (the record is saved if --record was given), '?' shows help.
    """
    from .table import Table, draw_first_dealer

    rules = _build_rules(ruleset_id, players, option)
    if bots not in BOT_NAMES:
        raise CliError(f"unknown bot {bots!r}; bots are {', '.join(BOT_NAMES)}")
    n = rules.players
    _check_seat("--seat", seat, n)
    _check_seat("--first-dealer", first_dealer, n)
    rng = random.Random(seed)
    others = ["Anna", "Ben", "Cora", "Dirk", "Emil", "Frieda", "Gustav", "Hanna", "Ida", "Jakob"]
    names = [o for o in others if o != name][: n - 1]
    names.insert(seat, name)
    german = german or getattr(rules, "suits", "french") == "german"
    if first_dealer is None:
        first_dealer = draw_first_dealer(PACKS_BY_NAME[rules.pack], n, rng)
    table = Table(rules, names, first_dealer)
    seat_bots = {p: make_bot(bots, rules.family, random.Random(rng.random())) for p in range(n) if p != seat}
    console.print(f"[bold]{rules.title}[/bold] — {', '.join(names)}. "
                  f"{names[table.dealer]} deals first.")
    played = 0
    try:
        while deals == 0 or played < deals:
            _play_one_deal(table, seat, seat_bots, rng, german)
            played += 1
            summary = _deal_summary(table)
            _print_balances(summary["balances"], summary["pot"])
            if deals == 0 and not _ask_continue():
                break
    except (KeyboardInterrupt, EOFError):
        console.print("\nStopped.")
    if record is not None:
        rec = table.to_record()
        if table.in_deal:
            rec["deals"] = rec["deals"][:-1]  # an unfinished deal is not part of the record
        save(rec, record)
        console.print(f"Record saved to {record}")


def _deal_summary(table) -> dict:
    return {"balances": table.balances(), "pot": table.ledger.pot + table.ledger.reserve}


def _ask_continue() -> bool:
    answer = console.input("Next deal? [Y/n] ").strip().lower()
    return answer in ("", "y", "yes", "j", "ja")


def _fmt_cards(cards, german: bool) -> str:
    return " ".join(display(c, german) for c in cards) or "—"


def _fmt_action(text: str, german: bool) -> str:
    if ":" in text:
        head, _, tail = text.partition(":")
        parts = tail.split(",")
        if all(len(p) == 2 and p[0] in "HDCS" for p in parts):
            return f"{head} {' '.join(display(p, german) for p in parts)}"
    return text


def _play_one_deal(table, seat, seat_bots, rng, german) -> None:
    names = table.players
    state = table.start_deal(table.shuffled_deck(rng))
    console.rule(f"Deal {len(table.deals)} — dealer: {names[table.dealer]}")
    shown = 0
    last_trick = None
    while True:
        view = state.view(seat)
        log = view.get("log", [])
        for who, text in log[shown:]:
            label = names[who] if who is not None else "table"
            console.print(f"  {label}: {_fmt_action(text, german)}")
        shown = len(log)
        if view.get("last_trick") and view["last_trick"] != last_trick:
            last_trick = view["last_trick"]
            cards = " ".join(f"{names[s]} {display(c, german)}" for s, c in last_trick["cards"])
            console.print(f"  [dim]Trick:[/dim] {cards} → [bold]{names[last_trick['winner']]}[/bold]")
        if state.is_terminal():
            break
        player = state.current_player()
        if player != seat:
            table.apply_id(seat_bots[player].act(state, player))
            continue
        _show_table(view, names, german)
        legal = view["legal_actions"]
        for i, a in enumerate(legal, 1):
            console.print(f"  [cyan]{i:>2}[/cyan] {_fmt_action(a, german)}  [dim]({a})[/dim]")
        while True:
            raw = console.input("[bold]Your action:[/bold] ").strip()
            if raw in ("q", "quit", "exit"):
                raise KeyboardInterrupt
            if raw in ("?", "help"):
                console.print("Type the number of an action or the action itself, e.g. play:HA. "
                              "Cards: suit H D C S then rank A K Q J T 9 8 7 (6…2). 'q' quits.")
                continue
            text = legal[int(raw) - 1] if raw.isdigit() and 1 <= int(raw) <= len(legal) else raw
            try:
                table.apply(text, seat)
                break
            except IllegalAction as e:
                console.print(f"[red]Not allowed:[/red] {e.message} [dim]({e.rule})[/dim]")
    result = table.deals[-1].result
    net = result.net(table.num_players)
    outcome = result.summary.get("contract") or result.summary.get("outcome")
    console.print(f"[bold]Settlement[/bold] ({outcome}): " +
                  "  ".join(f"{names[p]} {_signed(v)}" for p, v in net.items()))


def _show_table(view: dict, names, german: bool) -> None:
    bits = [f"Pot {view.get('pot', 0)}"] if view.get("game") == "tippen" or view.get("pot") else []
    if view.get("reserve"):
        bits.append(f"reserve {view['reserve']}")
    if view.get("trump"):
        bits.append(f"trump {suit_label(view['trump'], german)}")
    if view.get("upcard"):
        bits.append(f"upcard {display(view['upcard'], german)}")
    if view.get("contract"):
        decl = view.get("declarer")
        bits.append(f"contract {view['contract']}" + (f" ({names[decl]})" if decl is not None else ""))
    if bits:
        console.print("[dim]" + " · ".join(bits) + "[/dim]")
    if view.get("open_hand"):
        console.print(f"Open hand: {_fmt_cards(view['open_hand'], german)}")
    if view.get("trick"):
        console.print("Trick: " + "  ".join(f"{names[s]} {display(c, german)}" for s, c in view["trick"]))
    console.print(f"Your hand: [bold]{_fmt_cards(view.get('hand', []), german)}[/bold]")


# ----------------------------------------------------------------------------- serve


@app.command("serve")
def serve_cmd(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    database_url: Optional[str] = typer.Option(
        None, "--database-url",
        help="sqlite:///path.sqlite or postgresql://user@host/db (default: SQLite in ./data)."),
):
    """Start the web table: open http://HOST:PORT/ in a browser, create a table, invite friends."""
    from .server.app import run

    if database_url and not database_url.startswith(("sqlite:", "postgresql", "postgres:")):
        raise CliError(f"--database-url {database_url!r}: use sqlite:///path or "
                       "postgresql://user@host/db")
    if database_url and database_url.startswith("postgres"):
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise CliError("PostgreSQL needs its driver: pip install -e '.[postgres]'") from None
    console.print(f"stammtisch web table on http://{host}:{port}/  (Ctrl-C stops)")
    run(host=host, port=port, database_url=database_url)


def main() -> None:
    try:
        app()
    except CliError as e:
        err_console.print(f"[red]error:[/red] {e}", highlight=False)
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    main()
