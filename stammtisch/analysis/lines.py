"""A deal's analysis as catalogue messages (``i18n.message``): what ``stammtisch analyze``
prints and the web table shows, each in its reader's language.

Seats are named, never numbered; every figure is said from the mover's own side (a defender's
card is judged by what the declarer gets from it) and, where it changes the money, in the
table's unit too.
"""

from __future__ import annotations

from typing import Any

from ..i18n import Message, message
from ..i18n.words import choice_message, contract_message, is_card, suit_symbol

_UNITS = {"counters": "analyze.unit.counters", "game points": "analyze.unit.game_points",
          "cents": "analyze.unit.cents"}


def card_label(card: str, suits: str = "french") -> Message | str:
    """``♥A`` / ``♥10`` as a message (the rank's short name is the language's); ``?``, a card
    the reader was never shown (``seen``), as "another card"."""
    if card == "?":
        return message("analyze.card_hidden")
    if not is_card(card):
        return card
    rank = card[1]
    if rank not in "AKQJT":
        return message("card.short", symbol=suit_symbol(card[0], suits), rank=rank)
    key = f"rank_short.german.{rank}" if suits == "german" and rank in "AKQJ" else f"rank_short.{rank}"
    return message("card.short", symbol=suit_symbol(card[0], suits), rank=message(key))


def _cards(actions: list[str], suits: str) -> Message | str:
    labels = [card_label(a.partition(":")[2] or a, suits) for a in actions]
    if len(labels) == 1:
        return labels[0]
    if len(labels) == 2:
        return message("analyze.cards_2", a=labels[0], b=labels[1])
    if len(labels) == 3:
        return message("analyze.cards_3", a=labels[0], b=labels[1], c=labels[2])
    return message("analyze.cards_more", a=labels[0], b=labels[1], c=labels[2], more=len(labels) - 3)


def _card_list(cards: list[str], suits: str) -> Message | str:
    """Cards joined by spaces (an exchange, a discard)."""
    if not cards:
        return message("analyze.no_cards")
    out: Message | str = card_label(cards[0], suits)
    for c in cards[1:]:
        out = message("analyze.then", a=out, b=card_label(c, suits))
    return out


def action_label(action: str, suits: str = "french") -> Message | str:
    """A decision in words: ``tap``, ``exchange ♥K ♠A``, ``discard …``, a contract; another
    seat's exchange or discard by its count (``exchange:3``: ``seen``)."""
    head, _, rest = action.partition(":")
    if head in ("exchange", "discard") and rest.isdigit():
        key = f"analyze.{head}_one" if rest == "1" else f"analyze.{head}_count"
        return message(key, count=int(rest))
    if head in ("exchange", "discard"):
        cards = [c for c in rest.split(",") if c and c != "-"]
        return message(f"analyze.{head}", cards=_card_list(cards, suits))
    return choice_message(action, suits)


def contract_label(contract: str | None, suits: str = "french") -> Message | str:
    if not contract or contract == "pass":
        return message("analyze.no_contract")
    name, plus, _ = contract.partition("+")
    base = contract_message(name, suits)
    return message("analyze.with_tout", contract=base) if plus else base


def _money(value: int) -> str:
    return f"+{value}" if value > 0 else (f"−{-value}" if value < 0 else "0")


def play_line(p: Any, a: Any, names: list[str], suits: str) -> Message:
    """A costly card in words: its trick, who played it, what it cost and what kept the value."""
    who = names[p.seat]
    card = card_label(p.action.partition(":")[2], suits)
    better = _cards(p.better, suits)
    common = {"trick": p.trick, "name": who, "card": card, "better": better, "loss": p.loss,
              "before": p.before, "after": p.after}
    if a.measure == "declarer-points":
        return message(f"analyze.mistake.points_{p.side}", **common)
    if a.measure == "won":
        return message(f"analyze.mistake.won_{p.side}", **common)
    if a.measure == "own-points":
        return message("analyze.mistake.ramsch", **common)
    return message("analyze.mistake.tricks_one" if p.loss == 1 else "analyze.mistake.tricks", **common)


def _money_line(p: Any, unit: str, names: list[str]) -> Message | None:
    if p.money_best is None or p.money_played is None or p.money_best == p.money_played:
        return None
    cost = p.money_best - p.money_played
    key = _UNITS.get(unit, "analyze.unit.game_points")
    return message("analyze.money", name=names[p.seat], played=_money(p.money_played),
                   best=_money(p.money_best), cost=cost, unit=message(key),
                   cost_unit=message(key + "_one" if cost == 1 else key))


def _heading(a: Any, names: list[str], suits: str) -> list[Message]:
    deal = a.deal + 1
    if a.measure in ("declarer-points", "won"):
        declarer = names[a.declarer] if a.declarer is not None else "?"
        contract = contract_label(a.contract, suits)
        if a.measure == "declarer-points":
            return [message("analyze.deal.points", deal=deal, name=declarer, contract=contract,
                            value=a.start_value)]
        key = "analyze.deal.won" if a.start_value else "analyze.deal.lost"
        return [message(key, deal=deal, name=declarer, contract=contract)]
    key = "analyze.deal.ramsch" if a.measure == "own-points" else "analyze.deal.tippen"
    out = [message(key, deal=deal)]
    each = "analyze.start.own_points" if a.measure == "own-points" else "analyze.start.tricks"
    for seat, value in a.start_value.items():
        one = value == 1 and each == "analyze.start.tricks"
        out.append(message(each + "_one" if one else each, name=names[int(seat)], value=value))
    return out


def _decision_lines(a: Any, names: list[str], suits: str) -> list[Message]:
    out: list[Message] = []
    unit = message(_UNITS.get(a.unit, "analyze.unit.game_points"))
    for d in a.decisions:
        kind = d.kind if d.kind in ("declare", "exchange", "discard") else "other"
        params = {"name": names[d.seat], "made": action_label(d.action, suits), "money": _money(d.money),
                  "unit": unit, "what": message(f"analyze.what.{kind}")}
        if d.loss:
            out.append(message("analyze.decision.worse", best=action_label(d.best, suits),
                               best_money=_money(d.best_money), **params))
        else:
            out.append(message("analyze.decision.best", **params))
        if d.total:
            key = "analyze.discards.all" if d.searched >= d.total else "analyze.discards.some"
            out.append(message(key, searched=d.searched, total=d.total))
    if a.par and a.par.get("best"):
        best = a.par["best"]
        seat = a.par["seat"]
        played = next((c for c in a.par["contracts"] if c["contract"] == a.contract), None)
        out.append(message("analyze.par", name=names[seat], contract=contract_label(best["contract"], suits),
                           money=_money(best["money"]), unit=unit))
        for c in a.par["contracts"]:
            value = c.get("value")
            if value is None:
                out.append(message("analyze.par.pass", contract=contract_label(c["contract"], suits),
                                   money=_money(c["money"]), unit=unit))
            elif c.get("measure") == "declarer-points":
                out.append(message("analyze.par.points", contract=contract_label(c["contract"], suits),
                                   value=value, money=_money(c["money"]), unit=unit))
            else:
                out.append(message("analyze.par.won" if value else "analyze.par.lost",
                                   contract=contract_label(c["contract"], suits),
                                   money=_money(c["money"]), unit=unit))
        if played is not None and played is not best and played["money"] < best["money"]:
            out.append(message("analyze.par.cost", name=names[seat], cost=best["money"] - played["money"],
                               unit=unit))
        if a.par.get("total"):
            key = "analyze.discards.all" if a.par["searched"] >= a.par["total"] else "analyze.discards.some"
            out.append(message(key, searched=a.par["searched"], total=a.par["total"]))
    return out


def analysis_lines(a: Any, names: list[str], suits: str = "french") -> list[Message]:
    """A deal's analysis (``analysis.DealAnalysis``) as catalogue messages, one per line:
    the heading, the decisions before the play and the par, then the mistakes of the play,
    the largest first, each with its cost in money where the money changes."""
    out = _heading(a, names, suits)
    out.extend(_decision_lines(a, names, suits))
    mistakes = a.mistakes()
    if not mistakes:
        out.append(message("analyze.clean"))
    for p in mistakes:
        out.append(play_line(p, a, names, suits))
        money = _money_line(p, a.unit, names)
        if money is not None:
            out.append(money)
    return out
