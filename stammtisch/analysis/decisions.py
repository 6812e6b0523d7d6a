"""What a deal pays with all cards open: play-outs, the decisions before the play, the par.

* ``playout_money``: the rest of a deal played with best play by all (the contract's two
  sides; Tippen and Ramsch: the judged seat against everyone else, as the analysis judges
  them), and what it pays the judged seat in the table's unit.
* ``judge_decision``: an action made before the play (Tippen's tap or pass, an exchange, a
  Tapp discard) against the others the seat could have made. After the alternative, the other
  seats act as they did in the record where that is still legal (else they pass where they
  may, else take their first legal action), the seat's own later choices are searched too, and
  the play is played out. A Tapp discard is judged by the declarer's open-hand card points
  (one solve per discard) and only the best one is played out for money.
* A Tippen exchange is judged as the seat could judge it: not over the talon that came but
  over ``EXCHANGE_DRAWS`` talons he could have drawn (``TippenState.redraw_unseen``: the
  cards he had not seen, the other seats' hands held as they were, and their later actions
  as in the record), the same talons for every option; an option pays its average.
* ``par``: per contract the declarer could have named, the best of its trumps and discards and
  what it pays; the par is the best (bridge players' "par" for the deal).
* ``master_choice``: the Tapp declarer's first bid as the seat could judge it: what the Master
  level would have done from that seat's view alone; ``book_choice``: a Tippen tap or pass as
  the book (the equilibrium's when-to-tap tables) has it for that seat's view.

A Frage discard has up to C(14, 3) = 364 choices at 30–40 ms a solve: ``DISCARD_LIMIT`` keeps
the ones without trumps that bank the most card points (the discard counts for the declarer),
and the one made; ``all_discards=True`` solves every one.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..solve.model import Goal, Kind, Position
from ..solve.position import position_from_state
from ..solve.solver import Solver, quick_backend
from .findings import DecisionJudgement

#: discards solved per Frage decision unless every one is asked for (see the module docstring)
DISCARD_LIMIT = 40
#: a seat's later choices with more options than this are not searched: the one of the record
#: (when legal) or the first legal one is taken
OPTION_LIMIT = 16

#: talons a Tippen exchange is averaged over, drawn from a fixed seed so that an analysis
#: always says the same: a tenth of a counter is about as fine as 32 draws tell options apart
EXCHANGE_DRAWS = 32
EXCHANGE_SEED = 1
#: the Master's draws for a judged bid come from a fixed seed: an analysis always says the same
MASTER_SEED = 1

#: one recorded action before the play: (seat, action text)
Recorded = tuple[int, str]


def phase(state: Any) -> str:
    return str(state.view(None, head=False)["phase"])


def seat_goal(solver: Solver, pos: Position, seat: int) -> tuple[Goal, bool]:
    """The goal a play-out follows when ``seat`` is judged, and whether it is a won/lost one
    (all tricks, no trick: decided by a threshold, not a count)."""
    if pos.kind == Kind.POINTS:
        return solver.points_goal(), False
    if pos.kind == Kind.ALL_TRICKS:
        return solver.tricks_goal(), True
    if pos.kind == Kind.NO_TRICK:
        return solver.bettel_goal(), True
    if pos.kind == Kind.RAMSCH:
        return solver.ramsch_goal(seat), False
    return solver.tippen_goal(seat), False


def solver_for(pos: Position, backend: str = "numba") -> Solver:
    """The process's solver for ``pos`` (``Solver.shared``) on the quicker backend for its size."""
    return Solver.shared(pos, quick_backend(pos, backend))


def playout(state: Any, solver: Solver, goal: Goal, binary: bool) -> Any:
    """A copy of ``state`` (play phase) played to its end with best play for ``goal``: the
    maximizers pick the card with the highest value, the others the lowest (ties: the lowest
    card)."""
    s = state.clone()
    while not s.is_terminal() and phase(s) == "play":
        s.apply(solver.best_card(goal, position_from_state(s), binary))
    return s


def playout_money(state: Any, seat: int, solver: Solver | None = None) -> int:
    """What the deal pays ``seat`` (his net change) when it is played out from ``state`` with
    best play (see ``playout``). ``solver``: one made on this deal's play, to share its table."""
    if state.is_terminal():
        return int(state.returns()[seat])
    pos = position_from_state(state)
    solver = solver or solver_for(pos)
    goal, binary = seat_goal(solver, pos, seat)
    return int(playout(state, solver, goal, binary).returns()[seat])


def open_value(state: Any) -> int:
    """The contract's open-hand value of a play-phase state: the declarer's card points, or
    1/0 for won/lost (all tricks, no trick); 0 when the deal is over."""
    return open_measure(state)[0]


def open_measure(state: Any) -> tuple[int, str]:
    """``open_value`` and what it counts: "declarer-points" or "won" (also Ramsch: "none")."""
    if state.is_terminal():
        return 0, "none"
    pos = position_from_state(state)
    solver = solver_for(pos)
    if pos.kind == Kind.POINTS:
        return solver.declarer_points(pos), "declarer-points"
    if pos.kind == Kind.ALL_TRICKS:
        return int(solver.all_tricks(pos)), "won"
    if pos.kind == Kind.NO_TRICK:
        return int(solver.no_trick(pos)), "won"
    return 0, "none"


def open_reaches(state: Any, target: int) -> bool:
    """Whether ``open_value(state) >= target``, by one zero-window search where it takes one."""
    if state.is_terminal():
        return target <= 0
    pos = position_from_state(state)
    solver = solver_for(pos)
    if pos.kind == Kind.POINTS:
        return solver.can_reach(target, pos)
    if pos.kind in (Kind.ALL_TRICKS, Kind.NO_TRICK):
        return int(solver.all_tricks(pos) if pos.kind == Kind.ALL_TRICKS else solver.no_trick(pos)) >= target
    return open_value(state) >= target


@dataclass
class Outcome:
    """Where a line of choices leads: the seat's payment, the contract and its open-hand
    value (Tapp), and the seat's own choices on the way."""

    money: int
    contract: str | None = None
    value: int | None = None
    choices: list[str] = field(default_factory=list)
    measure: str = "none"  # what ``value`` counts (``open_measure``)


@dataclass
class _Search:
    seat: int
    others: dict[int, list[str]]  # per other seat: his recorded actions still to come
    own: list[str]  # the seat's own recorded actions still to come
    all_discards: bool
    discards_searched: int = 0
    discards_total: int = 0
    # play-outs already made, per position: the talons an exchange is averaged over lead to
    # the same hands often (``judge_decision``); one deal's, so its stakes are the same
    paid: dict[Position, int] | None = None


def _apply_text(state: Any, text: str) -> bool:
    try:
        action = state.string_to_action(text)
    except Exception:  # noqa: BLE001 - a notation the engine refuses is not legal here
        return False
    if action not in state.legal_actions():
        return False
    state.apply(action)
    return True


def _other_acts(state: Any, search: _Search, seat: int) -> None:
    queue = search.others.get(seat, [])
    if queue and _apply_text(state, queue.pop(0)):
        return
    if _apply_text(state, "pass"):
        return
    state.apply(state.legal_actions()[0])


def _until_own(state: Any, search: _Search) -> None:
    while not state.is_terminal() and phase(state) != "play" and state.current_player() != search.seat:
        _other_acts(state, search, state.current_player())


def _copy(search: _Search) -> _Search:
    return _Search(search.seat, {s: list(q) for s, q in search.others.items()}, list(search.own),
                   search.all_discards, paid=search.paid)


def _leaf(state: Any, search: _Search) -> Outcome:
    contract = state.contract_string() if hasattr(state, "contract_string") else None
    if state.is_terminal():
        return Outcome(int(state.returns()[search.seat]), contract)
    if not contract:
        if search.paid is None:
            return Outcome(playout_money(state, search.seat), contract)
        pos = position_from_state(state)
        if pos not in search.paid:
            search.paid[pos] = playout_money(state, search.seat)
        return Outcome(search.paid[pos], contract)
    value, measure = open_measure(state)
    return Outcome(playout_money(state, search.seat), contract, value, measure=measure)


def _options(state: Any, search: _Search) -> list[int]:
    legal = list(state.legal_actions())
    if phase(state) == "discard" and len(legal) > OPTION_LIMIT:
        return [_best_discard(state, search, legal)]
    if len(legal) <= OPTION_LIMIT:
        return legal
    for text in search.own[:1]:
        try:
            action = state.string_to_action(text)
        except Exception:  # noqa: BLE001
            continue
        if action in legal:
            return [action]
    return legal[:1]


def _after_discard(state: Any, action: int, search: _Search) -> Any:
    """The state after the discard ``action``, the others acting as in the record until the play."""
    s = state.clone()
    s.apply(action)
    inner = _copy(search)
    while not s.is_terminal() and phase(s) != "play":  # e.g. the Tout announcement: not yet
        if s.current_player() != search.seat:
            _other_acts(s, inner, s.current_player())
        elif not _apply_text(s, "no-tout"):
            s.apply(s.legal_actions()[0])
    return s


def _most_points(state: Any, chosen: Sequence[int], search: _Search) -> int:
    """The first of the discards ``chosen`` with the most open-hand card points for the
    declarer: each later one is asked only whether it beats the best so far (a zero-window
    search), and solved exactly only when it does."""
    best, best_value = chosen[0], open_value(_after_discard(state, chosen[0], search))
    for action in chosen[1:]:
        s = _after_discard(state, action, search)
        if open_reaches(s, best_value + 1):
            best, best_value = action, open_value(s)
    return best


def _best_discard(state: Any, search: _Search, legal: list[int]) -> int:
    """The discard with the most open-hand card points for the declarer among those solved."""
    chosen = list(legal) if search.all_discards else discard_subset(state, legal, search.own[:1])
    search.discards_searched, search.discards_total = len(chosen), len(legal)
    return _most_points(state, chosen, search)


def discard_subset(state: Any, legal: Sequence[int], made: Sequence[str]) -> list[int]:
    """The bounded set of Frage discards solved: those without trumps banking the most card
    points (``DISCARD_LIMIT``), and the one made."""
    game = state.game
    base = game.A_DISCARD
    points = game.pack.points
    trumps = state.trump_mask

    def banked(action: int) -> int:
        mask = action - base
        return sum(points[c] for c in range(mask.bit_length()) if mask >> c & 1)

    plain = [a for a in legal if not (a - base) & trumps] or list(legal)
    chosen = sorted(plain, key=lambda a: -banked(a))[:DISCARD_LIMIT]
    for text in made:
        try:
            action = state.string_to_action(text)
        except Exception:  # noqa: BLE001
            continue
        if action in legal and action not in chosen:
            chosen.append(action)
    return chosen


def best_line(state: Any, search: _Search) -> Outcome:
    """The best the seat can reach from ``state`` (before the play) by his own choices."""
    s = state.clone()
    _until_own(s, search)
    if s.is_terminal() or phase(s) == "play":
        return _leaf(s, search)
    best: Outcome | None = None
    for action in _options(s, search):
        inner = _copy(search)
        if inner.own:
            inner.own.pop(0)
        branch = s.clone()
        text = branch.action_to_string(action)
        branch.apply(action)
        out = best_line(branch, inner)
        out.choices.insert(0, text)
        if best is None or out.money > best.money:
            best = out
        search.discards_searched = max(search.discards_searched, inner.discards_searched)
        search.discards_total = max(search.discards_total, inner.discards_total)
    assert best is not None
    return best


def _queues(seat: int, later: Sequence[Recorded]) -> tuple[dict[int, list[str]], list[str]]:
    others: dict[int, list[str]] = {}
    own: list[str] = []
    for s, text in later:
        (own if s == seat else others.setdefault(s, [])).append(text)
    return others, own


def judge_decision(state: Any, action: str, later: Sequence[Recorded], all_discards: bool = False,
                   kind: str = "other") -> DecisionJudgement:
    """The decision ``action`` of the seat on turn in ``state`` (before the play) against his
    other legal actions; ``later``: the record's actions after it, before the play."""
    seat = state.current_player()
    others, own = _queues(seat, later)
    legal = list(state.legal_actions())
    search = _Search(seat, others, own, all_discards)
    if phase(state) == "discard" and len(legal) > OPTION_LIMIT:
        candidates = discard_subset(state, legal, [action]) if not all_discards else legal
        search.discards_searched, search.discards_total = len(candidates), len(legal)
        best_action = _most_points(state, candidates, search)
        made = state.string_to_action(action)
        options = [best_action] if best_action == made else [best_action, made]
    else:
        options = legal if len(legal) <= OPTION_LIMIT else [state.string_to_action(action)]
    worlds = [state]
    if kind == "exchange" and hasattr(state, "redraw_unseen"):
        worlds = [state.redraw_unseen(seat, random.Random(EXCHANGE_SEED + i)) for i in range(EXCHANGE_DRAWS)]
        search.paid = {}
    results: list[dict[str, Any]] = []
    for a in options:
        text = state.action_to_string(a)
        total = 0
        for world in worlds:
            branch = world.clone()
            branch.apply(a)
            inner = _copy(search)
            total += (best_line(branch, inner) if text != action else _follow_record(branch, inner)).money
        money: float = total if len(worlds) == 1 and worlds[0] is state else round(total / len(worlds), 1)
        results.append({"action": text, "money": money})
    made_money = next(r["money"] for r in results if r["action"] == action)
    top = max(results, key=lambda r: r["money"])
    if top["money"] == made_money:
        top = next(r for r in results if r["action"] == action)
    judged = DecisionJudgement(seat, kind, action, made_money, top["action"], top["money"], results,
                               search.discards_searched, search.discards_total)
    if worlds[0] is not state:
        judged.draws = len(worlds)
        hand, names = state.hands[seat], state.game.pack.cards
        judged.hand = [names[c] for c in range(hand.bit_length()) if hand >> c & 1]
    return judged


def master_choice(state: Any) -> str | None:
    """What the Master level (``stammtisch.bots.LEVELS``) would have bid on turn in a Tapp
    ``state``, from that seat's view alone: the cards it held and saw, what the others did (its
    inference). Beside the judgement with all cards open, it says what a strong player who
    could not see the other hands would have bid: one search of the Master's (a tenth to a
    third of a second). None in Tippen, where the Master searches every tap too: a record has
    dozens of them, and an analysis is wanted within a second or two (``book_choice`` there)."""
    from ..bots import make_bot

    family = str(state.game.rules.family)
    if family != "tapp":
        return None
    bot = make_bot("master", family, random.Random(MASTER_SEED))
    return str(state.action_to_string(bot.act(state, state.current_player())))


def book_choice(state: Any) -> str | None:
    """A Tippen tap or pass as the book has it for the seat on turn in ``state``: the
    equilibrium's more likely choice (``stammtisch.bots.equilibrium``, the when-to-tap tables
    of ``stammtisch report``), which reads only that seat's view. None where the equilibrium
    has no opinion (a variant or player count it was not trained for) and off a tap or pass."""
    from ..bots.equilibrium import decision_probability, option_action
    from ..games.tippen import DECLARE

    if str(state.game.rules.family) != "tippen":
        return None
    obs = state.observation(state.current_player())
    p = decision_probability(obs) if obs.phase == DECLARE else None
    action = None if p is None else option_action(obs, state.legal_actions(), p >= 0.5)
    return None if action is None else str(state.action_to_string(action))


def _follow_record(state: Any, search: _Search) -> Outcome:
    """Where the record's own later choices lead (the seat's as well as the others')."""
    s = state.clone()
    while not s.is_terminal() and phase(s) != "play":
        cur = s.current_player()
        if cur != search.seat:
            _other_acts(s, search, cur)
        elif not (search.own and _apply_text(s, search.own.pop(0))):
            s.apply(s.legal_actions()[0])
    return _leaf(s, search)


def par(state: Any, later: Sequence[Recorded], all_discards: bool = False) -> dict[str, Any]:
    """Tapp: per contract the declarer could have named from ``state`` (his first decision of
    the deal), the best line to it and what it pays him; the best is the par.

    The contract is whatever the declarer's own first action leads to (a bid, ``play``/``weg``),
    refined by his later choices (trump, discard, Tout, the Modern contract)."""
    seat = state.current_player()
    others, own = _queues(seat, later)
    search = _Search(seat, others, own[1:], all_discards)
    contracts: dict[str, dict[str, Any]] = {}

    def walk(s: Any, inner: _Search, choices: list[str]) -> None:
        s = s.clone()
        _until_own(s, inner)
        mine = s.declarer == seat
        decided = s.is_terminal() or phase(s) == "play"
        if not decided and mine and phase(s) not in ("auction", "contract", "declare", "trump", "tout"):
            decided = True  # the contract is named: the rest is the best line to it
        if decided:
            out = _leaf(s, inner) if s.is_terminal() or phase(s) == "play" else best_line(s, inner)
            name = (out.contract or s.contract_string() or "pass") if mine else "pass"
            entry = {"contract": name, "money": out.money, "value": out.value if mine else None,
                     "measure": out.measure if mine else "none", "choices": choices + out.choices}
            if name not in contracts or out.money > contracts[name]["money"]:
                contracts[name] = entry
            return
        for action in _options(s, inner):
            branch = s.clone()
            text = branch.action_to_string(action)
            branch.apply(action)
            walk(branch, _copy(inner), choices + [text])

    walk(state, search, [])
    ranked = sorted(contracts.values(), key=lambda e: -e["money"])
    return {"seat": seat, "contracts": ranked, "best": ranked[0] if ranked else None,
            "searched": search.discards_searched, "total": search.discards_total}
