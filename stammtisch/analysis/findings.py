"""What an analysis of a deal finds, as data: every card judged (``PlayJudgement``), the
decisions before the play (``DecisionJudgement``) and the whole deal (``DealAnalysis``).

Kept apart from the search that fills them (``deals``, ``decisions``): a reader of the findings
(``lines``, ``seen``, the web server) needs neither the solver nor the simulator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class DecisionJudgement:
    """One decision before the play: what was done and what it pays with all cards open,
    against the best the seat could have done (in the table's unit).

    A Tippen exchange is judged over the talons the seat could have drawn (``draws`` of them,
    ``decisions.EXCHANGE_DRAWS``): its payments are averages, to a tenth, and ``hand`` holds
    the seat's cards before it (what each option keeps)."""

    seat: int
    kind: str  # "declare" (Tippen tap or pass), "exchange", "discard", "other"
    action: str
    money: float
    best: str
    best_money: float
    options: list[dict[str, Any]] = field(default_factory=list)  # {"action", "money"}
    searched: int = 0  # discards solved (0: not a discard)
    total: int = 0  # discards there were
    draws: int = 0  # talons averaged over (0: the deal as it came)
    hand: list[str] = field(default_factory=list)  # an exchange's hand before it ([]: not told)
    # a Tippen tap or pass: what the book would have done from the seat's view
    # (``decisions.book_choice``); None: not a tap or pass, or the book has no opinion
    book: str | None = None

    @property
    def loss(self) -> float:
        loss = max(0, self.best_money - self.money)
        return round(loss, 1) if self.draws else loss

    def to_json(self) -> dict[str, Any]:
        out = {"seat": self.seat, "kind": self.kind, "action": self.action, "money": self.money,
               "best": self.best, "best_money": self.best_money, "loss": self.loss,
               "options": self.options}
        if self.total:
            out.update(searched=self.searched, total=self.total)
        if self.draws:
            out.update(draws=self.draws, hand=self.hand)
        if self.book is not None:
            out.update(book=self.book)
        return out


@dataclass
class PlayJudgement:
    seat: int
    action: str
    before: int  # the best value the player could still reach
    after: int  # what the chosen card leaves
    loss: int
    trick: int = 0  # the trick it was played to, 1 = the first
    better: list[str] = field(default_factory=list)  # the cards that keep ``before`` (a mistake)
    side: str = "own"  # whose figure it is: "declarer", "defender" or the mover's "own"
    money_best: int | None = None  # the mover's payment after the best card (a mistake only)
    money_played: int | None = None  # … and after the card played
    # where everyone plays for himself (Ramsch, Tippen; measure own-*): per seat (as in
    # ``DealAnalysis.start_value``) the value the card leaves him, so that each seat's value
    # can be followed over the deal (``before``/``after`` are the mover's, a different seat's
    # from card to card); None where one value is the declarer's side's for every card
    values: dict[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "action": self.action, "before": self.before, "after": self.after,
                "loss": self.loss, "trick": self.trick, "better": self.better, "side": self.side,
                "money_best": self.money_best, "money_played": self.money_played, "values": self.values}


@dataclass
class DealAnalysis:
    deal: int  # 0-based index in the record
    measure: str  # what the values count: declarer-points, won, own-points, own-tricks
    start_value: Any  # an int, or per seat (Ramsch, Tippen)
    plays: list[PlayJudgement] = field(default_factory=list)
    game: str = "tapp"
    unit: str = "game points"  # the table's unit: counters, game points or cents
    declarer: int | None = None
    contract: str | None = None
    decisions: list[DecisionJudgement] = field(default_factory=list)
    # Tapp: per contract the declarer could name (decisions.par), and "master": what the Master
    # would have bid at his first decision (decisions.master_choice)
    par: dict[str, Any] | None = None
    decisions_pending: bool = False  # the cards judged, the decisions and the par not yet

    def mistakes(self) -> list[PlayJudgement]:
        """The plays that cost something, the largest first (ties in order of play)."""
        return sorted((p for p in self.plays if p.loss > 0), key=lambda p: -p.loss)

    def to_json(self) -> dict[str, Any]:
        return {"deal": self.deal + 1, "measure": self.measure, "start_value": self.start_value,
                "plays": [p.to_json() for p in self.plays],
                "mistakes": [p.to_json() for p in self.mistakes()],
                "game": self.game, "unit": self.unit, "declarer": self.declarer, "contract": self.contract,
                "decisions": [d.to_json() for d in self.decisions], "par": self.par}
