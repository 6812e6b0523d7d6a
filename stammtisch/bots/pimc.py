"""The ``pimc`` bot: Perfect-Information Monte Carlo over sampled worlds.

Every decision of the seat on turn is made the same way: draw worlds with
``state.resample(seat, rng)`` (complete deals consistent with what the seat knows; the bot never
reads the real hidden cards), score every candidate action in every world, and take the action
with the best average. The worlds are shared by all candidates (common random numbers), so
that the comparison between actions is not drowned by the luck of the worlds.

* **Play, the ending** (Tapp from ``SOLVE_TRICKS`` tricks left, Tippen always): each world is
  solved with all cards open (``stammtisch.solve``), with the cheap query that decides the
  contract where there is one: Tapp point contracts under a fixed-value settlement ask "can
  the declarer still reach ``min_to_win`` after this card?" (one zero-window search per card);
  Durch/Rufer/Tout "all tricks?", Bettel "no trick?"; historic settlements, which pay per point
  over 60, ask the exact card points; Ramsch the mover's own points with everybody against him;
  Tippen the tricks the mover can guarantee against all others, turned into money (trick
  value, and the bête for no trick).
* **Play, the opening tricks of Tapp, and every decision before play** (bids, contract choice,
  Tout, exchanges, discards, Tippen's tap/pass, …): each option is applied in each world and
  the deal is played on by the heuristic bot for every seat; under a fixed-value settlement
  the solver takes over with ``LEAF_TRICKS`` tricks left and its verdict (won or lost, as many
  cents either way) scores the world, otherwise the play-out's returns do. Solving from the
  first trick costs far more per world than solving an ending (bench/solver.py times whole
  deals; seconds at the tail), too much for many worlds per move; the ending is where the
  open-hand solver pays. Options are the heuristic's choice and its neighbours (one card
  swapped, added or removed) where card sets give too many (discards, exchanges).

Ties (the common case late in a deal, when every card wins or every card loses in every world)
go to the heuristic's own choice, so the bot never plays worse than the heuristic where the
search sees no difference.

Budget: ``samples`` worlds per decision, cut short by ``time_per_move`` seconds if given (then
decisions depend on the machine's speed; with ``samples`` alone they repeat exactly for a seed).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from . import Bot, View, ViewBot

#: worlds per decision by default, per game family: as many as keep a median decision to a
#: fraction of a second; Tippen's short play solves fast, so it affords more (bench/strength.py
#: reports the time per decision)
DEFAULT_SAMPLES = {"tapp": 16, "tippen": 48}
#: the play is solved with all cards open from this many tricks left (Tapp; Tippen always)
SOLVE_TRICKS = 7
#: play-outs hand over to the solver at this many tricks left (Tapp, fixed-value settlements)
LEAF_TRICKS = 6
#: at most this many options are compared before play (the heuristic's choice among them)
MAX_OPTIONS = 8
#: options that are words (bids, contracts), not card sets, are all compared up to this many
MAX_WORDS = 16
#: averages closer than this count as equal (then the heuristic's choice wins)
TIE = 1e-9


def heuristic_for(family: str, rng: random.Random) -> Bot:
    """The heuristic bot of a game family (decides from the view alone)."""
    if family == "tippen":
        from .tippen import TippenHeuristic

        return ViewBot(TippenHeuristic(rng))
    from .tapp import TappHeuristic

    return ViewBot(TappHeuristic(rng))


def card_set(text: str) -> frozenset[str] | None:
    """The cards an action names (``discard:C7,D8``, ``exchange:-``), None for other actions."""
    kind, _, body = text.partition(":")
    if kind not in ("discard", "exchange") or not body:
        return None
    return frozenset() if body == "-" else frozenset(body.split(","))


class PimcBot:
    """``act(state, seat)``: the action with the best average over sampled worlds."""

    name = "pimc"

    def __init__(self, family: str, rng: random.Random | None = None, samples: int | None = None,
                 time_per_move: float | None = None, backend: str | None = None) -> None:
        samples = DEFAULT_SAMPLES[family] if samples is None else samples
        if samples < 1:
            raise ValueError("pimc needs at least one sample per move")
        if time_per_move is not None and time_per_move <= 0:
            raise ValueError("pimc's time per move must be positive")
        self.family = family
        self.rng = rng or random.Random()
        self.samples = samples
        self.time_per_move = time_per_move
        self.backend = backend or "numba"

    # ------------------------------------------------------------------ entry points
    def act(self, state: Any, seat: int) -> int:
        legal: list[int] = state.legal_actions()
        # one draw per decision, even a forced one: the bot's stream of decisions stays aligned
        rng = random.Random(self.rng.getrandbits(64))
        if len(legal) == 1:
            return legal[0]
        guide = heuristic_for(self.family, random.Random(rng.getrandbits(64))).act(state, seat)
        view = state.view(seat)
        if view["phase"] == "play" and (self.family == "tippen" or _tricks_left(view) <= SOLVE_TRICKS):
            return self._best(state, seat, legal, guide, rng, self._solve_scorer(seat, view))
        options = legal if view["phase"] == "play" else self._options(state, legal, guide, rng)
        return self._best(state, seat, options, guide, rng, self._rollout_scorer(seat, view, rng))

    def choose(self, view: View, legal: list[str]) -> str:
        raise NotImplementedError("pimc decides from the state (act), not from a view")

    # ------------------------------------------------------------------ the search
    def _best(self, state: Any, seat: int, options: list[int], guide: int, rng: random.Random,
              score: Callable[[Any, list[int]], list[float]]) -> int:
        """Average ``score(world, options)`` over the worlds; ties go to ``guide``."""
        deadline = None if self.time_per_move is None else time.perf_counter() + self.time_per_move
        totals = [0.0] * len(options)
        worlds = 0
        while worlds < self.samples:
            world = state.resample(seat, rng)
            for i, value in enumerate(score(world, options)):
                totals[i] += value
            worlds += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break
        top = max(totals)
        best = [a for a, t in zip(options, totals, strict=True) if t >= top - TIE * max(1.0, abs(top))]
        return guide if guide in best else best[0]

    def _options(self, state: Any, legal: list[int], guide: int, rng: random.Random) -> list[int]:
        """The options compared before play: all of them, or where card sets give too many
        (discards, exchanges) the heuristic's choice and some of its neighbours (one card
        swapped, added or removed)."""
        chosen = card_set(state.action_to_string(guide))
        if len(legal) <= MAX_OPTIONS or chosen is None and len(legal) <= MAX_WORDS:
            return legal
        near: list[int] = []
        if chosen is not None:
            for a in legal:
                cards = card_set(state.action_to_string(a))
                if a != guide and cards is not None and len(cards ^ chosen) <= 2:
                    near.append(a)
        pool = near or [a for a in legal if a != guide]
        return [guide, *sorted(rng.sample(pool, min(len(pool), MAX_OPTIONS - 1)))]

    # ------------------------------------------------------------------ solving the play
    def _solve_scorer(self, seat: int, view: View) -> Callable[[Any, list[int]], list[float]]:
        """Each card of the play scored in a world with all cards open."""
        from ..solve import Kind, Solver, position_from_state

        backend = self.backend
        if self.family == "tippen":
            value = int(view.get("trick_value") or 0) or 1
            bete = int(view.get("bete") or 0)

            def tippen(world: Any, options: list[int]) -> list[float]:
                pos = position_from_state(world)
                solver = Solver(pos, backend)
                goal = solver.tippen_goal(seat)
                out = []
                for a in options:
                    tricks = solver.value(goal, pos.play(a))
                    out.append(float(tricks * value - (bete if tricks == 0 else 0)))
                return out

            return tippen

        rules = _tapp_rules(view)
        fixed = rules.settlement == "modern"
        target = rules.min_to_win
        tout = bool(view.get("tout"))

        def tapp(world: Any, options: list[int]) -> list[float]:
            pos = position_from_state(world)
            solver = Solver(pos, backend)
            sign = 1.0 if pos.declarer == seat else -1.0
            out = []
            for a in options:
                after = pos.play(a)
                if pos.kind == Kind.RAMSCH:
                    out.append(-float(solver.value(solver.ramsch_goal(seat), after)))
                elif pos.kind == Kind.NO_TRICK:
                    out.append(sign * solver.no_trick(after))
                elif pos.kind == Kind.ALL_TRICKS or tout:
                    out.append(sign * solver.all_tricks(after))
                elif fixed:
                    out.append(sign * solver.can_reach(target, after))
                else:
                    out.append(sign * solver.declarer_points(after))
            return out

        return tapp

    # ------------------------------------------------------------------ play-outs
    def _rollout_scorer(self, seat: int, view: View, rng: random.Random) -> Callable[[Any, list[int]], list[float]]:
        """Each option applied in a world and played on by the heuristic for every seat; a Tapp
        deal under a fixed-value settlement is decided by the solver once ``LEAF_TRICKS`` are
        left (the open-hand verdict; it pays as many cents won or lost)."""
        fixed = self.family == "tapp" and _tapp_rules(view).settlement == "modern"
        helper = heuristic_for(self.family, random.Random(rng.getrandbits(64)))

        def score(world: Any, options: list[int]) -> list[float]:
            seed = rng.getrandbits(64)
            out = []
            for a in options:
                w = world.clone()
                w.apply(a)
                out.append(self._play_out(w, seat, fixed, helper, random.Random(seed)))
            return out

        return score

    def _play_out(self, world: Any, seat: int, fixed: bool, helper: Bot, rng: random.Random) -> float:
        """The seat's net at the end of ``world`` played on by ``helper`` (see _rollout_scorer)."""
        to_leaf = -1  # card plays until the solver takes over, once the play has started
        while not world.is_terminal():
            if fixed and to_leaf < 0:
                public = world.view(None)
                if public["phase"] == "play":
                    to_leaf = _plays_until(public, LEAF_TRICKS)
            if to_leaf == 0:
                verdict = _fixed_verdict(world, self.backend)
                if verdict is None:
                    fixed, to_leaf = False, -1
                    continue
                # play out at random (the amount does not depend on the play) and turn the
                # sign round where the play-out's verdict differs from the solver's
                while not world.is_terminal():
                    world.apply(rng.choice(world.legal_actions()))
                net = float(world.returns()[seat])
                return net if bool(world.result().summary.get("won")) == verdict else -net
            world.apply(helper.act(world, world.current_player()))
            if to_leaf > 0:
                to_leaf -= 1
        return float(world.returns()[seat])


def _plays_until(view: View, tricks: int) -> int:
    """Card plays from now until a trick starts with at most ``tricks`` tricks left."""
    seats = len(view["hand_sizes"])
    played = len(view["trick"])
    left = _tricks_left(view)
    if left > tricks:
        return (left - tricks) * seats - played
    return (seats - played) % seats


def _tricks_left(view: View) -> int:
    """Tricks still to finish in the play phase (the trick in progress included)."""
    sizes = view["hand_sizes"]
    if view["trick"]:
        return int(sizes[view["trick"][0][0]]) + 1
    return int(sizes[view["current_player"]])


def _fixed_verdict(world: Any, backend: str) -> bool | None:
    """Does the declarer win with best play by all (None: Ramsch, nothing to decide)?"""
    from ..solve import Kind, Solver, position_from_state

    pos = position_from_state(world)
    if pos.kind == Kind.RAMSCH or pos.declarer < 0:
        return None
    solver = Solver(pos, backend)
    if pos.kind == Kind.NO_TRICK:
        return solver.no_trick()
    if pos.kind == Kind.ALL_TRICKS or world.view(None).get("tout"):
        return solver.all_tricks()
    return solver.can_reach(_tapp_rules(world.view(None)).min_to_win)


def _tapp_rules(view: View) -> Any:
    from .tapp import _rules_of

    return _rules_of(view)
