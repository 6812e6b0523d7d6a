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
          "cents": "analyze.unit.cents", "card points": "analyze.unit.card_points",
          "tricks": "analyze.unit.tricks"}


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


def action_label(action: str, suits: str = "french", hand: list[str] | None = None) -> Message | str:
    """A decision in words: ``tap``, ``exchange ♥K ♠A``, ``discard …``, a contract; another
    seat's exchange or discard by its count (``exchange:3``: ``seen``); an exchange from
    ``hand`` (the reader's own) by what it keeps: ``keeping ♣9 ♣Q and exchanging 1``."""
    head, _, rest = action.partition(":")
    if head in ("exchange", "discard") and rest.isdigit():
        key = f"analyze.{head}_one" if rest == "1" else f"analyze.{head}_count"
        return message(key, count=int(rest))
    if head in ("exchange", "discard"):
        cards = [c for c in rest.split(",") if c and c != "-"]
        if head == "exchange" and hand and set(cards) <= set(hand):
            kept = [c for c in hand if c not in cards]
            if not cards:
                return message("analyze.exchange_keep_all")
            if not kept:
                return message("analyze.exchange_all", count=len(cards))
            return message("analyze.exchange_keep", kept=_card_list(kept, suits), count=len(cards))
        return message(f"analyze.{head}", cards=_card_list(cards, suits))
    return choice_message(action, suits)


def contract_label(contract: str | None, suits: str = "french") -> Message | str:
    if not contract or contract == "pass":
        return message("analyze.no_contract")
    name, plus, _ = contract.partition("+")
    base = contract_message(name, suits)
    return message("analyze.with_tout", contract=base) if plus else base


def _money(value: float, signed: bool = True) -> Message | str:
    """A whole number as it is (``+3``, ``−1``, ``0``), an average to a tenth with the reader's
    decimal mark (``+0.4``, ``−1,5``)."""
    sign = ("+" if value > 0 else "−" if value < 0 else "") if signed else ("−" if value < 0 else "")
    tenths = round(abs(value) * 10)
    if tenths % 10 == 0:
        return f"{sign}{tenths // 10}" if tenths else "0"
    return message("analyze.decimal", whole=f"{sign}{tenths // 10}", tenth=tenths % 10)


def amount(value: float, unit: str, signed: bool = True) -> Message:
    """A count with its unit, singular for one: ``+1 counter``, ``−48 game points``, ``1 Auge``,
    ``+0.4 counters``; ``unit`` is the table's (counters, game points, cents) or
    ``card points``/``tricks``."""
    key = _UNITS.get(unit, "analyze.unit.game_points")
    return message(key + "_one" if round(abs(value) * 10) == 10 else key, n=_money(value, signed))


def _points(value: int) -> Message:
    return amount(value, "card points", signed=False)


def play_line(p: Any, a: Any, names: list[str], suits: str) -> Message:
    """A costly card in words: its trick, who played it, what it cost and what kept the value."""
    who = names[p.seat]
    card = card_label(p.action.partition(":")[2], suits)
    better = _cards(p.better, suits)
    common = {"trick": p.trick, "name": who, "card": card, "better": better, "before": p.before,
              "after": p.after}
    if a.measure == "declarer-points" and p.side == "defender":
        more = message("analyze.more_points_one" if p.loss == 1 else "analyze.more_points", n=p.loss)
        return message("analyze.mistake.points_defender", loss=more, **common)
    if a.measure == "declarer-points":
        return message(f"analyze.mistake.points_{p.side}", loss=_points(p.loss), **common)
    if a.measure == "won":
        return message(f"analyze.mistake.won_{p.side}", **common)
    if a.measure == "own-points":
        return message("analyze.mistake.ramsch", loss=_points(p.loss), **common)
    return message("analyze.mistake.tricks", loss=amount(p.loss, "tricks", signed=False), **common)


def _money_line(p: Any, unit: str, names: list[str]) -> Message | None:
    if p.money_best is None or p.money_played is None or p.money_best == p.money_played:
        return None
    return message("analyze.money", name=names[p.seat], played=_money(p.money_played),
                   best=amount(p.money_best, unit), cost=amount(p.money_best - p.money_played, unit, signed=False))


def _costly(a: Any) -> list[Any]:
    """The cards that cost something, in the order they were played."""
    return [p for p in a.plays if p.loss > 0]


def _verdict(a: Any, names: list[str], suits: str) -> Message:
    """The first line: the deal, and in one sentence how well it was played with all cards open."""
    deal = a.deal + 1
    if a.measure in ("declarer-points", "won"):
        declarer = names[a.declarer] if a.declarer is not None else "?"
        head = message("analyze.deal.contract", deal=deal, name=declarer,
                       contract=contract_label(a.contract, suits))
    else:
        head = message("analyze.deal.ramsch" if a.measure == "own-points" else "analyze.deal.tippen", deal=deal)
    costly = _costly(a)
    if a.decisions_pending:  # the cards only: the choices before the play are still being judged
        if not costly:
            return message("analyze.verdict", head=head, summary=message("analyze.summary.pending_clean"))
        dearest = max(costly, key=lambda p: (p.loss, -a.plays.index(p)))
        return message("analyze.verdict", head=head, summary=message(
            "analyze.summary.pending_costly", trick=dearest.trick, name=names[dearest.seat],
            card=card_label(dearest.action.partition(":")[2], suits)))
    decisions = sum(1 for d in a.decisions if d.loss)
    par = a.par or {}
    played = next((c for c in par.get("contracts", []) if c["contract"] == a.contract), None)
    if par.get("best") and played is not None and played["money"] < par["best"]["money"]:
        decisions += 1
    if not costly and not decisions:
        return message("analyze.verdict", head=head, summary=message("analyze.summary.clean"))
    choices = message("analyze.choices_one" if len(costly) + decisions == 1 else "analyze.choices",
                      n=len(costly) + decisions)
    if not costly:
        return message("analyze.verdict", head=head, summary=message("analyze.summary.no_card", choices=choices))
    dearest = max(costly, key=lambda p: (p.loss, -a.plays.index(p)))
    return message("analyze.verdict", head=head, summary=message(
        "analyze.summary.costly", choices=choices, trick=dearest.trick, name=names[dearest.seat],
        card=card_label(dearest.action.partition(":")[2], suits)))


def _open_value(a: Any, names: list[str], suits: str) -> list[Message]:
    """What best play by all from the first card gives, beside what the deal gave as played."""
    final = a.plays[-1].after if a.plays else None
    if a.measure == "declarer-points":
        return [message("analyze.open.points", contract=contract_label(a.contract, suits),
                        value=_points(a.start_value), played=final)]
    if a.measure == "won":
        name = names[a.declarer] if a.declarer is not None else "?"
        key = "analyze.open.won" if a.start_value else "analyze.open.lost"
        return [message(key, name=name, contract=contract_label(a.contract, suits),
                        played=message("analyze.played.won" if final else "analyze.played.lost"))]
    unit = "card points" if a.measure == "own-points" else "tricks"
    out = [message("analyze.open.each_points" if a.measure == "own-points" else "analyze.open.each_tricks")]
    for seat, value in a.start_value.items():
        last = next((p for p in reversed(a.plays) if p.seat == int(seat)), None)
        line = {"name": names[int(seat)], "value": amount(value, unit, signed=False)}
        if last is None:
            out.append(message("analyze.start", **line))
        else:
            out.append(message("analyze.start.played", played=last.after, **line))
    return out


def _par_lines(a: Any, names: list[str], suits: str) -> list[Message]:
    """The declarer's par: the best contract, then only the contracts that matter — the one
    played, the best, and those that would have paid; the others are counted."""
    par = a.par
    if not par or not par.get("best"):
        return []
    best = par["best"]
    seat = par["seat"]
    played = next((c for c in par["contracts"] if c["contract"] == a.contract), None)
    out = [message("analyze.par", name=names[seat], contract=contract_label(best["contract"], suits),
                   money=amount(best["money"], a.unit))]
    left_out = 0
    for c in par["contracts"]:
        if not (c is best or c is played or c["money"] > 0):
            left_out += 1
            continue
        contract = contract_label(c["contract"], suits)
        money = amount(c["money"], a.unit)
        value = c.get("value")
        if value is None:
            out.append(message("analyze.par.pass", contract=contract, money=money))
        elif c.get("measure") == "declarer-points":
            out.append(message("analyze.par.points", contract=contract, value=_points(value), money=money))
        else:
            out.append(message("analyze.par.won" if value else "analyze.par.lost", contract=contract, money=money))
    if left_out:
        out.append(message("analyze.par.others_one" if left_out == 1 else "analyze.par.others", n=left_out))
    if played is not None and played is not best and played["money"] < best["money"]:
        out.append(message("analyze.par.cost", cost=amount(best["money"] - played["money"], a.unit, signed=False)))
    if par.get("total"):
        key = "analyze.discards.all" if par["searched"] >= par["total"] else "analyze.discards.some"
        out.append(message(key, searched=par["searched"], total=par["total"]))
    if par.get("master") is not None and par.get("bid") is not None:
        out.append(message("analyze.par.bid", name=names[seat], bid=action_label(par["bid"], suits)))
        out.append(_judge_line("master", par["master"], par["bid"], names[seat], suits))
    return out


def _judge_line(judge: str, choice: str, made: str, name: str, suits: str) -> Message:
    """A bid as the seat could judge it: what ``judge`` (the Master, the book) would have done,
    seeing what he saw."""
    if choice == made:
        return message(f"analyze.decision.{judge}_same", name=name)
    return message(f"analyze.decision.{judge}", name=name, choice=action_label(choice, suits))


def _decision_lines(a: Any, names: list[str], suits: str) -> list[Message]:
    out: list[Message] = []
    for d in a.decisions:
        kind = d.kind if d.kind in ("declare", "exchange", "discard") else "other"
        hand = d.hand
        params = {"name": names[d.seat], "made": action_label(d.action, suits, hand),
                  "money": amount(d.money, a.unit), "what": message(f"analyze.what.{kind}")}
        # an exchange averaged over the talons its player could have drawn (``decisions``)
        average = "_average" if d.draws else ""
        if d.loss:
            out.append(message(f"analyze.decision.worse{average}", best=action_label(d.best, suits, hand),
                               best_money=amount(d.best_money, a.unit), **params))
        else:
            out.append(message(f"analyze.decision.best{average}", **params))
        if average:
            out.append(message("analyze.decision.draws", draws=d.draws, name=names[d.seat]))
        if d.book is not None:
            out.append(_judge_line("book", d.book, d.action, names[d.seat], suits))
        if d.total:
            key = "analyze.discards.all" if d.searched >= d.total else "analyze.discards.some"
            out.append(message(key, searched=d.searched, total=d.total))
    return out


def analysis_lines(a: Any, names: list[str], suits: str = "french") -> list[Message]:
    """A deal's analysis (``analysis.DealAnalysis``) as catalogue messages, one per line:
    a one-line verdict, what best play by all from the first card gives beside what was
    played (only these while its decisions are still being judged), the decisions before
    the play and the par, then the costly cards in the order
    they were played, each with its cost in money where the money changes."""
    out = [_verdict(a, names, suits)]
    out.extend(_open_value(a, names, suits))
    if a.decisions_pending:  # the first part of a deal's analysis: the rest follows
        return out
    out.extend(_decision_lines(a, names, suits))
    out.extend(_par_lines(a, names, suits))
    costly = _costly(a)
    if not costly:
        out.append(message("analyze.clean"))
    for p in costly:
        out.append(play_line(p, a, names, suits))
        money = _money_line(p, a.unit, names)
        if money is not None:
            out.append(money)
    return out
