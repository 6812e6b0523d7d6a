"""``stammtisch play``: a game in the terminal against bots."""

from __future__ import annotations

import random
from pathlib import Path

import typer

from ..bots import BOT_NAMES, make_bot
from ..cards import display, suit_label
from ..games.base import IllegalAction
from ..record import save, table_to_record
from .common import CliError, _build_rules, _check_seat, _print_balances, _signed, app, console


@app.command("play")
def play_cmd(
    ruleset_id: str = typer.Argument(..., metavar="RULESET", help="e.g. tippen/grupp-1975 or tapp/modern"),
    players: int | None = typer.Option(None, "--players", "-n", help="Number of players."),
    option: list[str] = typer.Option([], "--option", "-o", help="Rule option key=value (repeatable)."),
    bots: str = typer.Option("heuristic", "--bots", "-b", help="The other seats' bot: random|heuristic."),
    name: str = typer.Option("You", "--name", help="Your name at the table."),
    seat: int = typer.Option(0, "--seat", help="Your seat (0 = first)."),
    deals: int = typer.Option(0, "--deals", help="Stop after this many deals (0: until you quit)."),
    seed: int | None = typer.Option(None, "--seed", help="Random seed for shuffles and bots."),
    german: bool = typer.Option(False, "--german", help="German suit names (Herz, Schellen, Eichel, Laub)."),
    record: Path | None = typer.Option(None, "--record", help="Save the game record here when you stop."),
    first_dealer: int | None = typer.Option(None, "--first-dealer",
                                               help="Seat of the first dealer (default: the first Ace dealt)."),
):
    """Play in the terminal: you in one seat, bots in the others.

    At your turn type an action (e.g. tap, pass, play:HA, exchange:C7,D8) or its number from
    the list. 'q' quits (the record is saved if --record was given), '?' shows help.
    """
    from ..table import Table, draw_first_dealer

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
        first_dealer = draw_first_dealer(rules, rng)
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
        rec = table_to_record(table)
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
