"""``stammtisch play``: a game in the terminal against bots.

Every text comes from the catalogue (``stammtisch.i18n``); names and actions are printed as
text, never as markup. The loop asks the state and the table; the prompt's reading of an
answer lives in ``prompting``.
"""

from __future__ import annotations

import random
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from rich.text import Text

from ..bots import PLAYER_NAMES, Bot, make_bot
from ..engine_facts import choice_message_for, display_suits
from ..explain import explain
from ..games.base import IllegalAction
from ..i18n import language, render, t
from ..i18n.words import (
    action_phrase,
    card_short,
    cards_short,
    contract_name,
    rule_text,
    ruleset_title,
    suit_name,
)
from ..record import save, table_to_record
from ..table import Table
from .common import (
    CliError,
    _build_rules,
    _check_seat,
    _print_balances,
    amounts_text,
    check_output_file,
    console,
    tx,
)
from .prompting import Answer, CardSetChoice, read_card_set_answer, read_menu_answer, yes_no
from .root import app

OTHER_NAMES = ["Anna", "Ben", "Cora", "Dirk", "Emil", "Frieda", "Gustav", "Hanna", "Ida", "Jakob"]


class QuitGame(Exception):
    """The player typed q (or stdin ended): stop as after Ctrl-C."""


@app.command("play")
def play_cmd(
    ruleset_id: str = typer.Argument(..., metavar="RULESET", help="e.g. tippen/grupp-1975 or tapp/modern"),
    players: int | None = typer.Option(None, "--players", "-n", help="Number of players."),
    option: list[str] = typer.Option([], "--option", "-o", help="Rule option key=value (repeatable)."),
    bots: str = typer.Option("club", "--bots", "--level", "-b",
                             help="The other seats' level: beginner, club, expert or master; or an algorithm: "
                                  "random, heuristic or pimc (samples worlds and solves them)."),
    name: str | None = typer.Option(None, "--name", help="Your name at the table (default: You / Du)."),
    seat: int = typer.Option(0, "--seat", help="Your seat (0 = first)."),
    deals: int = typer.Option(0, "--deals", min=0, help="Stop after this many deals (0: until you quit)."),
    seed: int | None = typer.Option(None, "--seed", help="Random seed for shuffles and bots."),
    german: bool = typer.Option(False, "--german", help="Everything in German: texts, card names (Herz-Daus, "
                                "Kreuz-Ober), contracts (Herz-Solo), actions in words (Anna passt)."),
    record: Path | None = typer.Option(None, "--record", help="Save the game record here when you stop "
                                       "(finished deals only)."),
    first_dealer: int | None = typer.Option(None, "--first-dealer",
                                               help="Seat of the first dealer (default: the first Ace dealt)."),
    hints: bool = typer.Option(False, "--hints", help="Practice: '?' at any prompt asks the search bot "
                               "(pimc) what it would do, with one line of why; '??' or 'help' shows the help."),
) -> None:
    """Play in the terminal: you in one seat, bots in the others.

    At your turn choose from the numbered list: type the number, the action (tap, pass, play:HA)
    or just the card (HA, ♥A, ♥10). To lay away or exchange several cards, name them all at
    once by number or name, e.g. `1 3 5` or `C7 D8`. When only one action is legal it is played
    for you. 'q' or Ctrl-C stops (the unfinished deal is not saved), '?' shows help.

    With --hints, '?' gives a hint instead: the search bot's choice from what you have seen
    (never from the hidden cards) and one line of why, e.g. how often a card takes the trick
    over the deals it sampled; '??' or 'help' shows the help.
    """
    from ..table import Table, draw_first_dealer

    lang = language(german)
    if record is not None:
        check_output_file("--record", record, lang)
    rules = _build_rules(ruleset_id, players, option)
    if bots not in PLAYER_NAMES:
        raise CliError(t("cli.unknown_bot", lang, bot=repr(bots), bots=", ".join(PLAYER_NAMES)))
    n = rules.players
    _check_seat("--seat", seat, n, lang)
    _check_seat("--first-dealer", first_dealer, n, lang)
    rng = random.Random(seed)
    own_name = name if name is not None else t("word.you", lang)
    names = [o for o in OTHER_NAMES if o != own_name][: n - 1]
    names.insert(seat, own_name)
    if first_dealer is None:
        first_dealer = draw_first_dealer(rules, rng)
    try:
        table = Table(rules, names, first_dealer)
    except ValueError as e:
        raise CliError(str(e)) from None
    seat_bots = {p: make_bot(bots, rules.family, random.Random(rng.random())) for p in range(n) if p != seat}
    session = Session(table, seat, seat_bots, rng, lang, display_suits(rules), hints=hints,
                      hint_seed=seed if seed is not None else random.SystemRandom().getrandbits(32))
    header = "play.header.you" if table.dealer == seat else "play.header"
    console.print(tx(header, lang, title=Text(ruleset_title(rules.id, lang), style="bold"),
                     names=", ".join(names), dealer=names[table.dealer]), highlight=False)
    console.print(Text(t("hint.intro" if hints else "play.hint", lang), style="dim"))
    played = 0
    try:
        while deals == 0 or played < deals:
            session.play_one_deal()
            played += 1
            _print_balances(table.balances(), table.ledger.pot + table.ledger.reserve, lang)
            if deals == 0 and not _ask_continue(lang):
                break
    except (KeyboardInterrupt, EOFError, QuitGame):
        console.print()
        console.print(Text(t("play.stopped", lang)))
        if table.in_deal and record is not None:
            console.print(Text(t("play.unfinished_not_recorded", lang)))
    if record is not None:
        _save_record(table, record, lang)


def _save_record(table: Table, record: Path, lang: str) -> None:
    rec = table_to_record(table)
    if table.in_deal:
        rec["deals"] = rec["deals"][:-1]  # an unfinished deal is not part of the record
    try:
        save(rec, record)
    except OSError as e:
        raise CliError(t("cli.not_writable", lang, flag="--record", path=record, reason=e.strerror or e)) from None
    console.print(Text(t("play.record_saved", lang, path=record)))


def _ask_continue(lang: str) -> bool:
    """Next deal? Enter or y/j continues, n stops; anything else asks again."""
    while True:
        answer = yes_no(console.input(Text(t("play.next_deal", lang))))
        if answer is not None:
            return answer
        console.print(Text(t("play.answer_yes_no", lang)))


def readable_refusal(error: IllegalAction, names: list[str], seat: int, lang: str) -> str:
    """A refusal for the player at ``seat``: names instead of seat numbers, "you" for him;
    in German the rule in words (the engines' messages are English)."""
    if lang != "en":
        words = rule_text(error.rule, lang)
        if words is not None:
            return words

    def name_of(match: re.Match[str], own: str) -> str:
        s = int(match.group(1))
        if s == seat:
            return own
        return f"{names[s]}'s" if match.group(0).endswith("'s") else names[s]

    message = re.sub(r"not seat (\d+)'s", lambda m: "not yours" if int(m.group(1)) == seat
                     else f"not {names[int(m.group(1))]}'s", error.message)
    message = re.sub(r"seat (\d+)'s", lambda m: name_of(m, "your"), message)
    message = re.sub(r"seat (\d+)", lambda m: name_of(m, "you"), message)
    return t("refusal.rule", lang, message=message, rule=error.rule)


@dataclass
class Session:
    """One player at the terminal: his seat, the bots, the language."""

    table: Table
    seat: int
    bots: dict[int, Bot]
    rng: random.Random
    lang: str
    suits: str
    shown: int = 0
    last_trick: dict[str, Any] | None = None  # the view's last_trick, shown once
    hand: list[str] = field(default_factory=list)  # the hand as it was at the last news
    forced_at: set[int] = field(default_factory=set)
    hints: bool = False  # "?" asks the search bot for a hint
    hint_seed: int = 0  # with the deal and the position, the seed of a hint (asked twice: the same)
    state: Any = None  # the deal in progress

    @property
    def names(self) -> list[str]:
        return list(self.table.players)

    def say(self, text: Text | str) -> None:
        console.print(text if isinstance(text, Text) else Text(text), highlight=False)

    def play_one_deal(self) -> None:
        table, lang = self.table, self.lang
        state = self.state = table.start_deal(table.shuffled_deck(self.rng))
        console.rule(Text(t("play.deal", lang, number=len(table.deals), dealer=self.names[table.dealer])))
        self.shown, self.last_trick, self.forced_at, self.hand = 0, None, set(), []
        while True:
            view = state.view(self.seat)
            self._print_news(view)
            if state.is_terminal():
                break
            player = state.current_player()
            if player != self.seat:
                table.apply_id(self.bots[player].act(state, player))
                continue
            legal = view["legal_actions"]
            if len(legal) == 1:
                self.forced_at.add(len(view.get("log", [])))
                table.apply(legal[0], self.seat)
                continue
            self._show_table(view)
            self._ask(view, legal)
        self._print_settlement()

    # ------------------------------------------------------------------ output
    def _who(self, seat: int | None) -> str | None:
        return None if seat == self.seat else self.names[seat] if seat is not None else t("word.table", self.lang)

    def _print_news(self, view: dict[str, Any]) -> None:
        lang = self.lang
        log = view.get("log", [])
        for index in range(self.shown, len(log)):
            who, text = log[index]
            line = action_phrase(text, lang, self._who(who), self.suits)
            if index in self.forced_at:
                line = t("play.forced", lang, action=line)
            self.say("  " + line)
            if text.startswith("call:") and view.get("rufer_holder") == self.seat and who != self.seat:
                self.say("  " + t("play.rufer_holder", lang, called=card_short(text[5:], lang, self.suits),
                                  declarer=self.names[who]))
            if who == self.seat and text.startswith("exchange:"):
                # news come after every single action, so the hand before it is the one kept
                drawn = [card for card in view.get("hand", []) if card not in self.hand]
                if drawn:
                    self.say("  " + t("play.drew", lang, cards=cards_short(drawn, lang, self.suits)))
        self.shown = len(log)
        self.hand = list(view.get("hand", []))
        last = view.get("last_trick")
        if last and last != self.last_trick:
            self.last_trick = last
            cards = "  ".join(f"{self.names[s]} {card_short(c, lang, self.suits)}" for s, c in last["cards"])
            self.say(Text("  ").append_text(tx("play.trick_taken", lang, style="dim", cards=cards,
                                               winner=Text(self.names[last["winner"]], style="bold"))))

    def _show_table(self, view: dict[str, Any]) -> None:
        lang, names = self.lang, self.names
        bits = []
        if view.get("game") == "tippen" or view.get("pot"):
            bits.append(t("play.pot", lang, pot=view.get("pot", 0)))
        if view.get("reserve"):
            bits.append(t("play.reserve", lang, reserve=view["reserve"]))
        if view.get("trump"):
            bits.append(t("play.trump", lang, suit=suit_name(view["trump"], lang, self.suits)))
        if view.get("upcard"):
            bits.append(t("play.upcard", lang, card=card_short(view["upcard"], lang, self.suits)))
        if view.get("contract"):
            decl = view.get("declarer")
            bits.append(t("play.contract", lang, contract=contract_name(view["contract"], lang, self.suits),
                          declarer=names[decl] if isinstance(decl, int) else "—"))
        if bits:
            self.say(Text(" · ".join(bits), style="dim"))
        if view.get("open_hand"):
            self.say(t("play.open_hand", lang, cards=cards_short(view["open_hand"], lang, self.suits)))
        if view.get("trick"):
            self.say(t("play.trick", lang, cards="  ".join(f"{names[s]} {card_short(c, lang, self.suits)}"
                                                            for s, c in view["trick"])))
        hand = cards_short(view.get("hand", []), lang, self.suits)
        self.say(tx("play.your_hand", lang, cards=Text(hand, style="bold")))

    def _print_settlement(self) -> None:
        table, lang = self.table, self.lang
        result = table.deals[-1].result
        if result is None:
            raise RuntimeError("the settlement is printed only when the deal is over")
        net = result.net(table.num_players)
        contract = result.summary.get("contract")
        if contract:
            outcome = contract_name(contract, lang, self.suits)
        else:
            code = result.summary.get("outcome") or ""
            outcome = t(f"outcome.{code}", lang) if code else ""
        amounts = amounts_text({self.names[p]: v for p, v in net.items()})
        for line in explain(result.summary, self.names, lang, self.suits):
            self.say("  " + line)
        self.say(tx("play.settlement", lang, outcome=outcome, amounts=amounts))

    # ------------------------------------------------------------------ input
    def _ask(self, view: dict[str, Any], legal: list[str]) -> None:
        lang = self.lang
        choice = CardSetChoice.from_legal(legal)
        hand = list(view.get("hand", []))
        if choice is not None:
            if view.get("tapp"):
                self.say(t("play.tapp_picked_up", lang, cards=cards_short(view["tapp"], lang, self.suits)))
            self._show_card_choice(choice, hand)
        else:
            self._show_menu(view, legal)
        while True:
            raw = console.input(Text(t("play.your_cards" if choice else "play.your_action", lang), style="bold"))
            answer: Answer
            if choice is not None:
                answer = read_card_set_answer(raw, hand, choice, lang, self.suits, self.hints)
            else:
                answer = read_menu_answer(raw, legal, lang, self.suits, self.hints)
            if answer.quit:
                raise QuitGame
            if answer.help:
                self.say(t("play.help", lang))
                if self.hints:
                    self.say(t("hint.help", lang))
                continue
            if answer.hint:
                self.say(Text(self._hint(view), style="green"))
                continue
            if answer.message is not None:
                self.say(Text(answer.message, style="yellow"))
                continue
            assert answer.action is not None
            try:
                self.table.apply(answer.action, self.seat)
                return
            except IllegalAction as e:
                message = readable_refusal(e, self.names, self.seat, lang)
                self.say(Text.assemble((t("play.not_allowed", lang, message=""), "red"), message))

    def _hint(self, view: dict[str, Any]) -> str:
        """The search bot's advice for the player's seat, in a line (``bots.pimc.advise``)."""
        from ..bots.pimc import advise

        seed = zlib.crc32(f"{self.hint_seed}/{len(self.table.deals)}/{len(view.get('log', []))}".encode())
        return t("hint.line", self.lang, why=render(advise(self.state, self.seat, seed).why(), self.lang))

    def _show_card_choice(self, choice: CardSetChoice, hand: list[str]) -> None:
        lang = self.lang
        example = " ".join(str(i) for i in range(1, min(max(choice.sizes), 3) + 1)) or "1"
        if len(choice.sizes) == 1:
            count = next(iter(choice.sizes))
            key = "play.choose_one_card" if count == 1 else "play.choose_discard"
            self.say(t(key, lang, count=count, example=example))
        else:
            self.say(t("play.choose_exchange", lang, most=max(choice.sizes), example=example))
        self.say(self._numbered_cards(hand))

    def _numbered_cards(self, cards: list[str]) -> Text:
        """Cards on one line, numbered from 1 as the prompt reads them: ``1:♥A  2:♠10``."""
        line = Text("  ")
        for i, card in enumerate(cards, 1):
            line.append(f"{i}:", style="cyan")
            line.append(f"{card_short(card, self.lang, self.suits)}  ")
        return line

    def _show_menu(self, view: dict[str, Any], legal: list[str]) -> None:
        lang, names = self.lang, self.names
        gives = [a for a in legal if a.startswith("give:")]
        if gives and view.get("called"):
            holder = view.get("rufer_holder")
            called = card_short(view["called"], lang, self.suits)
            if isinstance(holder, int):
                self.say(t("play.rufer_give", lang, holder=names[holder], called=called))
            else:
                self.say(t("play.rufer_give_tapp", lang, called=called))
        if all(a.startswith("call:") for a in legal):
            # up to 25 cards: a compact grid, chosen by number or name like any menu
            self.say(t("play.rufer_call", lang))
            self.say(self._numbered_cards([action[5:] for action in legal]))
            return
        rules = self.table.rules
        for i, action in enumerate(legal, 1):
            line = Text(f"  {i:>2} ", style="cyan")
            line.append(render(choice_message_for(rules, action), lang))
            line.append(f"  ({action})", style="dim")
            self.say(line)
