"""What each reader of a deal's analysis may see: the one place that decides it.

A deal is analysed once with every card open (``deals``); each seat, the spectators and the
table's admin then read it. While the table plays on, each reads it as the table showed him
the deal:

- a card is named only where the reader knows its place at the deal's end (``known_cards``:
  the engine's ``known_mask``, its one visibility predicate — every card played, his own
  cards, what he folded, exchanged or discarded, the tapp he picked up, what the rules show
  face up). A better card he never saw is "another card" (``play:?``);
- another seat's decisions (the exchange, the discard, the declarer's par lines) are told by
  kind, count and money only (``exchange:3``, as the table's log told them), never by their
  cards, not even by cards the reader saw later; his own decisions keep his own cards (an
  exchange also the hand it was made from, to say what each option keeps);
- the figures (values, payments, losses) are the same for every reader.

The spectators read it as a spectator, and so does the admin while the table plays. Once the
table has ended (closed, or archived), a seat and the admin read it whole, as they may then
download the whole record (``server/routes/records.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..i18n.words import is_card
from ..record import Record, replay
from ..table import Table
from .findings import DealAnalysis, DecisionJudgement, PlayJudgement
from .lines import analysis_lines, play_line

#: the reader who sits at no seat: a spectator (the admin reads as one while the table plays)
SPECTATOR = None


@dataclass(frozen=True)
class DealFindings:
    """A deal's analysis as it is kept (computed once, read by everyone): what was found, and
    per reader (seat, ``SPECTATOR``) the cards whose place he knew at the deal's end."""

    deal: int  # 1-based
    analysis: DealAnalysis | None  # None: the deal never reached the play (everyone passed, …)
    known: dict[int | None, frozenset[str]] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    suits: str = "french"

    def read_by(self, seat: int | None, whole: bool = False) -> dict[str, Any]:
        """The answer for ``seat`` (``SPECTATOR``: a spectator), as JSON data: the findings
        as he may see them and their ``lines`` (catalogue messages the page renders in its
        reader's language); ``whole``: everything (the table has ended)."""
        if self.analysis is None:
            return {"deal": self.deal, "played": False, "plays": [], "mistakes": [], "lines": []}
        seen = self.analysis if whole else as_seen(self.analysis, seat, self.known.get(seat, frozenset()))
        out: dict[str, Any] = {"played": True, **seen.to_json(), "lines": analysis_lines(seen, self.names, self.suits)}
        # each costly card with its own line (the replay marks it where it was played)
        for judged, shown in zip(seen.plays, out["plays"], strict=True):
            if judged.loss > 0:
                shown["line"] = play_line(judged, seen, self.names, self.suits)
        return out


def known_cards(record: Record, deal: int) -> dict[int | None, frozenset[str]]:
    """Per reader (each seat, ``SPECTATOR``) the cards whose place he knows at the end of deal
    ``deal`` (1-based) of a full record: the engine's ``known_mask`` there."""
    found: dict[int | None, frozenset[str]] = {}

    class _Done(Exception):
        """Raised to stop replaying once the deal is over."""

    def on_deal(table: Table) -> None:
        if len(table.deals) == deal:
            state = table.current_state()
            cards = table.pack.cards
            for reader in (SPECTATOR, *range(table.num_players)):
                mask = state.known_mask(reader)
                found[reader] = frozenset(cards[c] for c in range(len(cards)) if mask >> c & 1)
            raise _Done

    try:
        replay(record, on_deal=on_deal)
    except _Done:
        pass
    return found


def as_seen(analysis: DealAnalysis, seat: int | None, known: frozenset[str]) -> DealAnalysis:
    """A copy of ``analysis`` as ``seat`` (``SPECTATOR``: a spectator) may read it while the
    table plays, ``known``: the cards whose place he knew at the deal's end (see the module's
    docstring)."""
    return replace(
        analysis,
        plays=[_play(p, known) for p in analysis.plays],
        decisions=[_decision(d, d.seat == seat, known) for d in analysis.decisions],
        par=None if analysis.par is None else _par(analysis.par, analysis.par.get("seat") == seat, known),
    )


def _card(action: str) -> str:
    return action.partition(":")[2]


def _play(p: PlayJudgement, known: frozenset[str]) -> PlayJudgement:
    """A card played was shown to everyone; a better card is named where the reader knows its
    place (the mover held it: he played it later, or it was his own), else "another card"."""
    better = [b for b in p.better if _card(b) in known]
    if len(better) < len(p.better):
        better.append("play:?")
    action = p.action if _card(p.action) in known else "play:?"
    return replace(p, action=action, better=better)


def _cards_named(action: str) -> list[str]:
    return [c for c in action.partition(":")[2].split(",") if is_card(c)]


def public_action(action: str) -> str:
    """An action as a reader who is not its actor may read it: its kind and how many cards
    (``exchange:3``, ``discard:2``), or ``give:?``/``call:?`` for a one-card kind; an action
    that names no card as it is (``tap``, ``bid:frage``, ``contract:solo:C``)."""
    cards = _cards_named(action)
    if not cards:
        return action
    head = action.partition(":")[0]
    return f"{head}:{len(cards)}" if head in ("exchange", "discard") else f"{head}:?"


def _own_action(action: str, known: frozenset[str]) -> str:
    """The reader's own action: with its cards, unless one of them is a card whose place he
    never knew (a par line through a tapp he did not pick up)."""
    return action if all(c in known for c in _cards_named(action)) else public_action(action)


def _told(action: str, own: bool, known: frozenset[str]) -> str:
    """An action as the reader may read it: his own (``own``) with his cards, another's by kind."""
    return _own_action(action, known) if own else public_action(action)


def _decision(d: DecisionJudgement, own: bool, known: frozenset[str]) -> DecisionJudgement:
    options: dict[str, dict[str, Any]] = {}  # per action as told: the best it pays
    for o in d.options:
        text = _told(o["action"], own, known)
        if text not in options or o["money"] > options[text]["money"]:
            options[text] = {**o, "action": text}
    # the hand an exchange was made from (what each option keeps): his own, never another's
    hand = d.hand if own and all(c in known for c in d.hand) else []
    return replace(d, action=_told(d.action, own, known), best=_told(d.best, own, known),
                   options=list(options.values()), hand=hand,
                   book=None if d.book is None else _told(d.book, own, known))


def _par(par: dict[str, Any], own: bool, known: frozenset[str]) -> dict[str, Any]:
    """The declarer's par: its contracts and what each pays stay; the choices on the way and
    his first bid (with the Master's) are told as his decisions are."""
    def told(entry: dict[str, Any]) -> dict[str, Any]:
        return {**entry, "choices": [_told(c, own, known) for c in entry["choices"]]}

    contracts = {id(c): told(c) for c in par["contracts"]}  # the best is one of them
    best = par.get("best")
    bids: dict[str, str] = {k: _told(par[k], own, known) for k in ("master", "bid") if k in par}
    return {**par, **bids, "contracts": list(contracts.values()),
            "best": None if best is None else contracts.get(id(best)) or told(best)}
