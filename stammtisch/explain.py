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

from .i18n import has, t
from .i18n.words import card_short, contract_name

#: payment codes that are a bête (Tippen): the payer's reason is told
BETE_CODES = ("bete", "double-bete-sniff", "double-bete", "bete-one-trick")


def explain(summary: Mapping[str, Any], names: Sequence[str], lang: str = "en",
            suits: str = "french") -> list[str]:
    """The lines explaining one finished deal: what was played and the reason for every payment."""
    if "active" in summary:
        return _explain_tippen(summary, names, lang)
    return _explain_tapp(summary, names, lang, suits)


def explain_tricks(summary: Mapping[str, Any], names: Sequence[str], lang: str = "en") -> list[str]:
    """The deal trick by trick: the cards in the order played, and who took the trick."""
    lines = []
    for number, trick in enumerate(summary.get("tricks_log") or [], 1):
        cards = ", ".join(t("explain.trick_card", lang, player=_name(seat, names, lang),
                            card=card_short(card, lang)) for seat, card in trick["cards"])
        lines.append(t("explain.trick_line", lang, trick=number, cards=cards,
                       winner=_name(trick["winner"], names, lang)))
    return lines


# ---------------------------------------------------------------------------------- helpers
def _name(account: Any, names: Sequence[str], lang: str) -> str:
    """A seat's name, or the pot / the reserve in words."""
    if isinstance(account, int) or (isinstance(account, str) and account.isdigit()):
        return names[int(account)]
    return t(f"explain.account.{account}", lang)


def _contract(summary: Mapping[str, Any], lang: str, suits: str) -> str:
    """The contract by name; a Tout (``frage+tout``) is told on its own line."""
    contract = summary.get("contract") or ""
    return contract_name(contract.removesuffix("+tout"), lang, suits)


def _tricks_text(tricks: Mapping[Any, int], names: Sequence[str]) -> str:
    return ", ".join(f"{names[int(seat)]} {count}"
                     for seat, count in sorted(tricks.items(), key=lambda kv: int(kv[0])))


def _payment(entry: Mapping[str, Any], summary: Mapping[str, Any], names: Sequence[str],
             lang: str, contract: str) -> str:
    code = entry.get("code", "other")
    params: dict[str, object] = {
        "payer": _name(entry["from"], names, lang),
        "payee": _name(entry["to"], names, lang),
        "amount": entry["amount"],
        "reason": entry.get("reason", ""),
        "contract": contract,
    }
    if code == "trick":
        params["trick"] = entry.get("trick", "")
    if code in ("double-bete", "bete-one-trick"):
        taken = next((b.get("taken") for b in summary.get("betes", [])
                      if str(b.get("seat")) == str(entry["from"])), None) or "sniffed"
        params["taken"] = t(f"explain.taken.{taken}", lang)
    if code == "pot":
        code = "pot-out" if entry["from"] == "pot" else "pot-in"
    key = f"explain.pay.{code}"
    if code == "other" or not has(key, lang) and not has(key):
        key = "explain.pay.other"
    return t(key, lang, **params)


def _payments(summary: Mapping[str, Any], names: Sequence[str], lang: str,
              suits: str = "french") -> list[str]:
    payments = summary.get("payments") or []
    if not payments:
        return [t("explain.no_payments", lang)]
    contract = _contract(summary, lang, suits)  # the same in every line: named once
    return [_payment(p, summary, names, lang, contract) for p in payments]


# ---------------------------------------------------------------------------------- Tippen
def _explain_tippen(summary: Mapping[str, Any], names: Sequence[str], lang: str) -> list[str]:
    lines = []
    outcome = summary.get("outcome")
    if summary.get("pot_in_play") is not None:
        lines.append(t("explain.pot_before", lang, pot=summary.get("pot_before", 0),
                       in_play=summary["pot_in_play"], value=summary.get("trick_value", 0),
                       bete=summary.get("bete", 0)))
    elif "pot_before" in summary:  # Hupf und Sprung: no hand was dealt, nothing in play
        lines.append(t("explain.pot_before_only", lang, pot=summary["pot_before"]))
    if outcome == "all-pass":
        lines.append(t("explain.all_pass", lang))
    elif outcome == "jump":
        lines.append(t("explain.jump", lang))
    elif outcome == "played":
        lines.append(t("explain.tricks", lang, tricks=_tricks_text(summary["tricks"], names)))
    lines += _payments(summary, names, lang)
    if "pot_after" in summary:
        reserve = summary.get("reserve_after") or 0
        if reserve:
            lines.append(t("explain.pot_after_reserve", lang, pot=summary["pot_after"],
                           reserve=reserve))
        else:
            lines.append(t("explain.pot_after", lang, pot=summary["pot_after"]))
    return lines


# ---------------------------------------------------------------------------------- Tapp
def _explain_tapp(summary: Mapping[str, Any], names: Sequence[str], lang: str,
                  suits: str) -> list[str]:
    lines = []
    if summary.get("kind") == "ramsch":
        points = summary.get("card_points", {})
        lines.append(t("explain.ramsch_points", lang, points=_tricks_text(points, names)))
        lines.append(t("explain.tricks", lang, tricks=_tricks_text(summary["tricks"], names)))
        losers = " & ".join(names[s] for s in summary.get("losers", []))
        lines.append(t("explain.ramsch_losers", lang, losers=losers))
        if summary.get("jungfer"):
            lines.append(t("explain.ramsch_jungfer", lang,
                           players=", ".join(names[s] for s in summary["jungfer"])))
        return lines + _payments(summary, names, lang, suits)
    declarer = summary.get("declarer")
    if declarer is None:
        lines.append(t("explain.all_pass", lang))
        return lines + _payments(summary, names, lang, suits)
    who = names[int(declarer)]
    contract = _contract(summary, lang, suits)
    key = "explain.contract_tout" if summary.get("tout") else "explain.contract"
    lines.append(t(key, lang, declarer=who, contract=contract))
    if "declarer_points" in summary:
        lines.append(t("explain.points", lang, declarer=who,
                       declarer_points=summary["declarer_points"],
                       defender_points=summary.get("defender_points", 0)))
    lines.append(t("explain.tricks", lang, tricks=_tricks_text(summary["tricks"], names)))
    won = summary.get("won")
    kind = summary.get("kind")
    if "needed" in summary and not summary.get("tout"):
        verdict = "draw" if won is None else "won" if won else "lost"
        lines.append(t(f"explain.points_{verdict}", lang, points=summary["declarer_points"],
                       needed=summary["needed"]))
    elif kind == "bettel":
        lines.append(t("explain.bettel_won" if won else "explain.bettel_lost", lang, declarer=who))
    elif kind == "all" or summary.get("tout"):
        lines.append(t("explain.all_won" if won else "explain.all_lost", lang, declarer=who))
    early = summary.get("ended_early_reason")
    if early:
        lines.append(t(f"explain.early.{early['rule']}", lang, trick=early["trick"],
                       winner=names[int(early["winner"])]))
    return lines + _payments(summary, names, lang, suits)
