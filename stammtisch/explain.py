"""Why a deal ended as it did, in plain text lines (English or German).

One renderer for every front end (terminal play, ``stammtisch replay``): it reads only the
engine's ``DealResult.summary`` (the one source), so what the player is told and what the
engine settled cannot disagree. Every text comes from the catalogue ``stammtisch.i18n``.

A summary may come straight from the engine (seat keys are ints) or through JSON (seat keys
are strings); both are read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .i18n import Message, has, message, render, t
from .i18n.words import card_short, contract_message

#: payment codes that are a bête (Tippen): the payer's reason is told
BETE_CODES = ("bete", "double-bete-sniff", "double-bete", "bete-one-trick")


def explain(summary: Mapping[str, Any], names: Sequence[str], lang: str = "en",
            suits: str = "french") -> list[str]:
    """The lines explaining one finished deal: what was played and the reason for every payment."""
    return [render(line, lang) for line in explain_messages(summary, names, suits)]


def explain_messages(summary: Mapping[str, Any], names: Sequence[str],
                     suits: str = "french") -> list[Message]:
    """``explain`` before it is put into a language: one catalogue message per line (see
    ``stammtisch.i18n.Message``). The web table sends these and the page renders them in its
    reader's language: one pass a deal instead of one per language."""
    if "active" in summary:
        return _explain_tippen(summary, names)
    return _explain_tapp(summary, names, suits)


def explain_tricks(summary: Mapping[str, Any], names: Sequence[str], lang: str = "en",
                   suits: str = "french") -> list[str]:
    """The deal trick by trick: the cards in the order played, and who took the trick."""
    lines = []
    for number, trick in enumerate(summary.get("tricks_log") or [], 1):
        cards = ", ".join(t("explain.trick_card", lang, player=render(_name(seat, names), lang),
                            card=card_short(card, lang, suits)) for seat, card in trick["cards"])
        lines.append(t("explain.trick_line", lang, trick=number, cards=cards,
                       winner=render(_name(trick["winner"], names), lang)))
    return lines


# ---------------------------------------------------------------------------------- helpers
def _name(account: Any, names: Sequence[str]) -> Message | str:
    """A seat's name, or the pot / the reserve in words."""
    if isinstance(account, int) or (isinstance(account, str) and account.isdigit()):
        return names[int(account)]
    return message(f"explain.account.{account}")


def _contract(summary: Mapping[str, Any], suits: str) -> Message | str:
    """The contract by name; a Tout (``frage+tout``) is told on its own line."""
    contract = summary.get("contract") or ""
    return contract_message(contract.removesuffix("+tout"), suits)


def _tricks_text(tricks: Mapping[Any, int], names: Sequence[str]) -> str:
    return ", ".join(f"{names[int(seat)]} {count}"
                     for seat, count in sorted(tricks.items(), key=lambda kv: int(kv[0])))


def _payment(entry: Mapping[str, Any], summary: Mapping[str, Any], names: Sequence[str],
             contract: Message | str) -> Message:
    code = entry.get("code", "other")
    params: dict[str, object] = {
        "payer": _name(entry["from"], names),
        "payee": _name(entry["to"], names),
        "amount": entry["amount"],
        "reason": entry.get("reason", ""),
        "contract": contract,
    }
    if code == "trick":
        params["trick"] = entry.get("trick", "")
    if code in ("double-bete", "bete-one-trick"):
        taken = next((b.get("taken") for b in summary.get("betes", [])
                      if str(b.get("seat")) == str(entry["from"])), None) or "sniffed"
        params["taken"] = message(f"explain.taken.{taken}")
    if code == "pot":
        code = "pot-out" if entry["from"] == "pot" else "pot-in"
    key = f"explain.pay.{code}"
    if code == "other" or not has(key):  # every language has the keys English has
        key = "explain.pay.other"
    return message(key, **params)


def _payments(summary: Mapping[str, Any], names: Sequence[str],
              suits: str = "french") -> list[Message]:
    payments = summary.get("payments") or []
    if not payments:
        return [message("explain.no_payments")]
    contract = _contract(summary, suits)  # the same in every line: named once
    return [_payment(p, summary, names, contract) for p in payments]


# ---------------------------------------------------------------------------------- Tippen
def _explain_tippen(summary: Mapping[str, Any], names: Sequence[str]) -> list[Message]:
    lines = []
    outcome = summary.get("outcome")
    if summary.get("pot_in_play") is not None:
        lines.append(message("explain.pot_before", pot=summary.get("pot_before", 0),
                             in_play=summary["pot_in_play"], value=summary.get("trick_value", 0),
                             bete=summary.get("bete", 0)))
    elif "pot_before" in summary:  # Hupf und Sprung: no hand was dealt, nothing in play
        lines.append(message("explain.pot_before_only", pot=summary["pot_before"]))
    if outcome == "all-pass":
        lines.append(message("explain.all_pass"))
    elif outcome == "jump":
        lines.append(message("explain.jump"))
    elif outcome == "played":
        lines.append(message("explain.tricks", tricks=_tricks_text(summary["tricks"], names)))
    lines += _payments(summary, names)
    if "pot_after" in summary:
        reserve = summary.get("reserve_after") or 0
        if reserve:
            lines.append(message("explain.pot_after_reserve", pot=summary["pot_after"],
                                 reserve=reserve))
        else:
            lines.append(message("explain.pot_after", pot=summary["pot_after"]))
    return lines


# ---------------------------------------------------------------------------------- Tapp
def _explain_tapp(summary: Mapping[str, Any], names: Sequence[str],
                  suits: str) -> list[Message]:
    lines = []
    if summary.get("kind") == "ramsch":
        points = summary.get("card_points", {})
        lines.append(message("explain.ramsch_points", points=_tricks_text(points, names)))
        lines.append(message("explain.tricks", tricks=_tricks_text(summary["tricks"], names)))
        losers = " & ".join(names[s] for s in summary.get("losers", []))
        lines.append(message("explain.ramsch_losers", losers=losers))
        if summary.get("jungfer"):
            lines.append(message("explain.ramsch_jungfer",
                                 players=", ".join(names[s] for s in summary["jungfer"])))
        return lines + _payments(summary, names, suits)
    declarer = summary.get("declarer")
    if declarer is None:
        lines.append(message("explain.all_pass"))
        return lines + _payments(summary, names, suits)
    who = names[int(declarer)]
    contract = _contract(summary, suits)
    key = "explain.contract_tout" if summary.get("tout") else "explain.contract"
    lines.append(message(key, declarer=who, contract=contract))
    if "declarer_points" in summary:
        lines.append(message("explain.points", declarer=who,
                             declarer_points=summary["declarer_points"],
                             defender_points=summary.get("defender_points", 0)))
    lines.append(message("explain.tricks", tricks=_tricks_text(summary["tricks"], names)))
    won = summary.get("won")
    kind = summary.get("kind")
    if "needed" in summary and not summary.get("tout"):
        verdict = "draw" if won is None else "won" if won else "lost"
        lines.append(message(f"explain.points_{verdict}", points=summary["declarer_points"],
                             needed=summary["needed"]))
    elif kind == "bettel":
        lines.append(message("explain.bettel_won" if won else "explain.bettel_lost", declarer=who))
    elif kind == "all" or summary.get("tout"):
        lines.append(message("explain.all_won" if won else "explain.all_lost", declarer=who))
    early = summary.get("ended_early_reason")
    if early:
        lines.append(message(f"explain.early.{early['rule']}", trick=early["trick"],
                             winner=names[int(early["winner"])]))
    return lines + _payments(summary, names, suits)
