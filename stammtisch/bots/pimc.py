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

Inference (``inference=True``, the Master level): ``candidates`` times as many worlds are drawn,
each weighed by how likely the other seats' actions are in it (``stammtisch.bots.inference``),
and the ``samples`` worlds searched are drawn from them in proportion to the weights (a world
drawn twice is searched once and counts twice). The candidates' weighing runs before the
search, whatever ``time_per_move`` says.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..engine_facts import display_suits
from ..i18n import Message, message
from ..i18n.words import card_message, choice_message, contract_message, is_card
from . import Bot

#: worlds per decision by default, per game family: as many as keep a median decision to a
#: fraction of a second; Tippen's short play solves fast, so it affords more (bench/strength.py
#: reports the time per decision)
DEFAULT_SAMPLES = {"tapp": 16, "tippen": 48}
#: with inference: candidate worlds drawn per world searched (``PimcBot.candidates``)
CANDIDATES = 4
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
    """The heuristic bot of a game family (decides from the seat's observation alone)."""
    if family == "tippen":
        from .tippen import TippenHeuristic

        return TippenHeuristic(rng)
    from .tapp import TappHeuristic

    return TappHeuristic(rng)


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
                 time_per_move: float | None = None, backend: str | None = None, inference: bool = False,
                 candidates: int = CANDIDATES, equilibrium: bool = False) -> None:
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
        # inference (``stammtisch.bots.inference``): ``candidates`` worlds per world searched are
        # drawn, weighed by how likely the other seats' actions are in each, and the searched
        # worlds drawn from them in proportion; off, the worlds are the sampler's own (uniform)
        if candidates < 1:
            raise ValueError("pimc's inference needs at least one candidate per world")
        self.inference = inference
        self.candidates = candidates
        self._policy: Any = None
        # Tippen's tap or pass and exchange by the equilibrium (``stammtisch.bots.equilibrium``)
        # where it has an opinion; searched otherwise, and always for a hint (its figures)
        self.equilibrium = equilibrium and family == "tippen"

    # ------------------------------------------------------------------ entry points
    def act(self, state: Any, seat: int) -> int:
        return self._decide(state, seat, None)

    def advise(self, state: Any, seat: int) -> Advice:
        """What ``act`` would choose for ``seat`` (the same choice and the same draws from the
        bot's stream) and the figures behind it, for a hint (``Advice.why``)."""
        tally = _Tally(seat, self.family)
        chosen = self._decide(state, seat, tally)
        rules = state.game.rules
        unit = "counters" if self.family == "tippen" else str(getattr(rules, "unit", "cents"))
        figures = tuple(
            OptionFigures(state.action_to_string(a), tally.totals[i] / tally.worlds if tally.worlds else 0.0,
                          tally.worlds, tally.good[i], tally.takes[i] if tally.cards else None)
            for i, a in enumerate(tally.options))
        return Advice(state.action_to_string(chosen), chosen, figures, tally.measure, tally.declarer, unit,
                      display_suits(rules))

    def _decide(self, state: Any, seat: int, tally: _Tally | None) -> int:
        legal: list[int] = state.legal_actions()
        # one draw per decision, even a forced one: the bot's stream of decisions stays aligned
        rng = random.Random(self.rng.getrandbits(64))
        if len(legal) == 1:
            return legal[0]
        guide = heuristic_for(self.family, random.Random(rng.getrandbits(64))).act(state, seat)
        obs = state.observation(seat)
        play = _in_play(obs)
        if self.equilibrium and tally is None and not play:
            from .equilibrium import equilibrium_action

            chosen = equilibrium_action(state, seat, rng)
            if chosen is not None:
                return chosen
        if tally is not None:
            tally.cards = play
        if play and (self.family == "tippen" or _tricks_left(obs) <= SOLVE_TRICKS):
            if tally is not None and self.family == "tapp":
                tally.tapp_query = _tapp_query_for(obs)
            return self._best(state, seat, legal, guide, rng, self._solve_scorer(seat, obs), tally)
        options = legal if play else self._options(state, legal, guide, rng)
        return self._best(state, seat, options, guide, rng, self._rollout_scorer(seat, obs, rng), tally)

    def _worlds(self, state: Any, seat: int, rng: random.Random) -> Iterator[tuple[Any, int]]:
        """The worlds to search, each with how many times it counts: ``samples`` worlds of the
        sampler, or with inference ``samples`` draws (repeats merged) among ``candidates``
        times as many, in proportion to the likelihood of the other seats' actions in each."""
        if not self.inference:
            while True:
                yield state.resample(seat, rng), 1
        from .inference import make_policy, systematic_picks, weighted_worlds

        if self._policy is None:
            self._policy = make_policy(self.family)
        worlds, weights = weighted_worlds(state, seat, rng, self.samples * self.candidates, self._policy)
        picks = systematic_picks(weights, self.samples, rng)
        counts: dict[int, int] = {}
        for p in picks:
            counts[p] = counts.get(p, 0) + 1
        for p, k in counts.items():
            yield worlds[p], k

    # ------------------------------------------------------------------ the search
    def _best(self, state: Any, seat: int, options: list[int], guide: int, rng: random.Random,
              score: Callable[[Any, list[int]], list[float]], tally: _Tally | None = None) -> int:
        """Average ``score(world, options)`` over the worlds; ties go to ``guide``. ``tally``
        (a hint's) keeps the figures per option; it draws nothing from ``rng``."""
        deadline = None if self.time_per_move is None else time.perf_counter() + self.time_per_move
        totals = [0.0] * len(options)
        worlds = 0
        if tally is not None:
            tally.start(options)
        for world, count in self._worlds(state, seat, rng):
            values = score(world, options)
            for i, value in enumerate(values):
                totals[i] += count * value
            if tally is not None:
                for _ in range(count):
                    tally.add(world, options, values)
            worlds += count
            if worlds >= self.samples or deadline is not None and time.perf_counter() >= deadline:
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
    def _solve_scorer(self, seat: int, obs: Any) -> Callable[[Any, list[int]], list[float]]:
        """Each card of the play scored in a world with all cards open."""
        from ..solve import Solver, position_from_state

        backend = self.backend
        if self.family == "tippen":
            value = int(obs.trick_value or 0) or 1
            bete = int(obs.bete or 0)

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

        target = obs.rules.min_to_win
        query = _tapp_query_for(obs)

        def tapp(world: Any, options: list[int]) -> list[float]:
            pos = position_from_state(world)
            solver = Solver(pos, backend)
            sign = 1.0 if _with_declarer(pos, seat) else -1.0
            kind = _tapp_query(pos.kind, query)
            out = []
            for a in options:
                after = pos.play(a)
                if kind == "ramsch":
                    out.append(-float(solver.value(solver.ramsch_goal(seat), after)))
                elif kind == "no_trick":
                    out.append(sign * solver.no_trick(after))
                elif kind == "all_tricks":
                    out.append(sign * solver.all_tricks(after))
                elif kind == "reach":
                    out.append(sign * solver.can_reach(target, after))
                else:
                    out.append(sign * solver.declarer_points(after))
            return out

        return tapp

    # ------------------------------------------------------------------ play-outs
    def _rollout_scorer(self, seat: int, obs: Any, rng: random.Random) -> Callable[[Any, list[int]], list[float]]:
        """Each option applied in a world and played on by the heuristic for every seat; a Tapp
        deal under a fixed-value settlement is decided by the solver once ``LEAF_TRICKS`` are
        left (the open-hand verdict; it pays as many cents won or lost)."""
        fixed = self.family == "tapp" and obs.rules.settlement == "modern"
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
                public = world.observation(None)
                if _in_play(public):
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
                return net if bool(world.won()) == verdict else -net
            world.apply(helper.act(world, world.current_player()))
            if to_leaf > 0:
                to_leaf -= 1
        return float(world.returns()[seat])


# ---------------------------------------------------------------------- hints
@dataclass(frozen=True)
class OptionFigures:
    """One compared option of a hint: its average value over ``worlds`` sampled worlds (in the
    measure of its ``Advice``), in how many of them it came out well for the seat (``good``:
    ahead, the contract won or beaten as the seat wants), and for a card of the play in how
    many it is sure to take the trick in progress whatever the later seats play (``takes``)."""

    action: str
    mean: float
    worlds: int
    good: int
    takes: int | None = None


@dataclass(frozen=True)
class Advice:
    """The search bot's choice for a seat (``action``, ``action_id``) and its figures.

    ``measure`` says what the values are: ``money`` (the seat's net in ``unit``), ``wins``
    (the contract won (1) or lost with best play by all; ``declarer``: whether the seat plays
    on the declarer's side, else the values are 0 when the contract is beaten and -1 when it is made),
    ``points`` (the declarer's card points, negative for a defender), ``ramsch`` (the seat's
    own card points, negative) or ``forced`` (one legal action, nothing compared).
    """

    action: str
    action_id: int
    options: tuple[OptionFigures, ...]
    measure: str
    declarer: bool
    unit: str
    suits: str

    @property
    def chosen(self) -> OptionFigures | None:
        return next((o for o in self.options if o.action == self.action), None)

    def why(self) -> Message:
        """One line of why, as a catalogue message (``hint.*``): one sentence first (the choice
        and what the next best would cost), then the figures behind it."""
        name = action_message(self.action, self.suits)
        own = self.chosen
        if self.measure == "forced" or own is None:
            return message("hint.only", action=name)
        seen = message("hint.seen", worlds=own.worlds)
        others = sorted((o for o in self.options if o is not own), key=lambda o: -o.mean)
        head = self._head(name, own, others[0] if others else None)
        if own.takes is not None:
            figures = message("hint.card", action=name, takes=own.takes, worlds=own.worlds, seen=seen,
                              result=self._result(own))
        elif not others:
            figures = message("hint.choice", action=name, result=self._result(own), seen=seen)
        else:
            figures = message("hint.choice_versus", action=name, result=self._result(own), seen=seen,
                              other=action_message(others[0].action, self.suits),
                              other_result=self._result(others[0]))
        return message("hint.why", head=head, figures=figures)

    def _head(self, name: Message | str, own: OptionFigures, other: OptionFigures | None) -> Message:
        """The sentence a hint starts with: the choice, and what the next best choice costs."""
        if other is None:
            return message("hint.head.alone", action=name)
        other_name = action_message(other.action, self.suits)
        if self.measure == "wins":
            key = "hint.head.won" if self.declarer else "hint.head.beaten"
            return message(key, action=name, other=other_name, good=own.good, worlds=own.worlds,
                           other_good=other.good)
        gap = own.mean - other.mean
        if round(gap * 10) == 0:
            return message("hint.head.even", action=name, other=other_name)
        unit = "card_points" if self.measure in ("points", "ramsch") else self.unit.replace(" ", "_")
        return message("hint.head.better", action=name, other=other_name,
                       loss=message(f"hint.amount.{unit}", n=number_message(gap, signed=False)))

    def _result(self, option: OptionFigures) -> Message:
        if self.measure == "wins":
            key = "hint.result.won" if self.declarer else "hint.result.beaten"
            return message(key, good=option.good, worlds=option.worlds)
        if self.measure == "points":
            return message("hint.result.points", points=number_message(abs(option.mean), signed=False))
        if self.measure == "ramsch":
            return message("hint.result.ramsch", points=number_message(-option.mean, signed=False))
        return message("hint.result.money", value=number_message(option.mean),
                       unit=message(f"hint.unit.{self.unit.replace(' ', '_')}"), good=option.good,
                       worlds=option.worlds)


def number_message(value: float, signed: bool = True) -> Message:
    """A number to one decimal, written as the reader's language writes it (6.2 / 6,2)."""
    tenths = round(value * 10)
    sign = "+" if signed and tenths > 0 else "-" if tenths < 0 else ""
    return message("hint.number", sign=sign, whole=abs(tenths) // 10, tenth=abs(tenths) % 10)


def action_message(action: str, suits: str = "french") -> Message | str:
    """An action named briefly for a hint: a card, a contract, several cards, or its menu entry."""
    head, _, rest = action.partition(":")
    if head in ("play", "call", "give") and is_card(rest):
        return card_message(rest, suits)
    if head in ("contract", "bid") and rest and rest != "pass":
        return contract_message(rest, suits)
    if head in ("discard", "exchange") and rest:
        cards = [c for c in rest.split(",") if is_card(c)]
        named: Message | str = message("hint.no_card")
        if cards:
            named = card_message(cards[-1], suits)
            for card in reversed(cards[:-1]):
                named = message("hint.cards", first=card_message(card, suits), rest=named)
        return message(f"hint.{head}", cards=named)
    return choice_message(action, suits)


def advise(state: Any, seat: int, seed: int, samples: int | None = None, backend: str | None = None) -> Advice:
    """A hint for ``seat``: what the Master level would play (``LEVELS["master"]``: its worlds
    and its inference; ``samples`` another number of worlds), with the figures behind it
    (``PimcBot.advise``), the same for the same ``seed`` and the same view of the seat. A hint
    waits for the player, so it affords the Master's budget while its median stays well under a
    second (bench/hint.py)."""
    from . import LEVELS

    master = LEVELS["master"]
    family = str(state.game.rules.family)
    worlds = samples if samples is not None else (master.samples or {}).get(family)
    bot = PimcBot(family, random.Random(seed), worlds, backend=backend, inference=master.inference)
    return bot.advise(state, seat)


class _Tally:
    """The figures ``_best`` leaves for a hint (see ``Advice``); it never draws at random."""

    def __init__(self, seat: int, family: str) -> None:
        self.seat = seat
        self.family = family
        self.cards = False  # the options are cards of the play
        self.tapp_query: str | None = None  # set when Tapp's play is solved (see _tapp_query)
        self.measure = "forced"
        self.declarer = False
        self.options: list[int] = []
        self.totals: list[float] = []
        self.good: list[int] = []
        self.takes: list[int] = []
        self.worlds = 0

    def start(self, options: list[int]) -> None:
        self.options = list(options)
        self.totals = [0.0] * len(options)
        self.good = [0] * len(options)
        self.takes = [0] * len(options)
        self.measure = "money"

    def add(self, world: Any, options: list[int], values: list[float]) -> None:
        pos = None
        if self.cards:
            from ..solve import position_from_state

            pos = position_from_state(world)
            for i, a in enumerate(options):
                self.takes[i] += _takes_trick(pos, a)
        if self.tapp_query is not None:
            if pos is None:
                from ..solve import position_from_state

                pos = position_from_state(world)
            kind = _tapp_query(pos.kind, self.tapp_query)
            self.measure = {"ramsch": "ramsch", "points": "points"}.get(kind, "wins")
            self.declarer = _with_declarer(pos, self.seat)
        for i, value in enumerate(values):
            self.totals[i] += value
            if self.measure == "wins":
                self.good[i] += value > 0.5 if self.declarer else value > -0.5
            else:
                self.good[i] += value > 0
        self.worlds += 1


def _with_declarer(pos: Any, seat: int) -> bool:
    """Does ``seat`` play on the declarer's side in this world? The side is the solver
    position's (``Position.side``, the seats the contract's winning condition counts), the one
    place that says who plays with whom; in a Rufer it is the declarer alone (the called card's
    holder is a defender, docs/rules-reference.md §3.4)."""
    return bool((pos.side >> seat) & 1)


def _takes_trick(pos: Any, card: int) -> bool:
    """Is the seat on turn sure to take the trick in progress with ``card``, whatever the later
    seats play? A later card that does not beat it leaves the lead suit and the winning card as
    they were, so each later seat's legal cards are the same for all such continuations: one
    continuation is followed, and any legal card that beats the trick's best answers "no"."""
    from ..games.tricks import trick_winner_index

    me = pos.turn
    cur = pos.play(card)
    if not cur.trick:  # the card ended the trick
        return bool(cur.leader == me)
    if cur.winner_so_far()[1] != me:
        return False
    while len(cur.trick) < len(cur.seats):
        legal = cur.legal_cards()
        index = len(cur.trick)
        if any(trick_winner_index([*cur.trick, c], cur.ranks_per_suit, cur.trump) == index for c in legal):
            return False
        if index + 1 == len(cur.seats):
            return True
        cur = cur.play(legal[0])
    return True


def _tapp_query_for(obs: Any) -> str:
    """What a Tapp deal's solved play asks when the contract does not decide it (``_tapp_query``):
    every trick with Tout, reaching ``min_to_win`` under a fixed-value settlement, else the
    exact card points."""
    if obs.tout:
        return "all_tricks"
    return "reach" if obs.rules.settlement == "modern" else "points"


def _tapp_query(kind: Any, default: str) -> str:
    """The solver query of a Tapp world: Ramsch, Bettel (no trick), Durch/Rufer (all tricks),
    otherwise ``default`` (``_tapp_query_for``)."""
    from ..solve import Kind

    if kind == Kind.RAMSCH:
        return "ramsch"
    if kind == Kind.NO_TRICK:
        return "no_trick"
    if kind == Kind.ALL_TRICKS:
        return "all_tricks"
    return default


def _in_play(obs: Any) -> bool:
    """Is the deal of this observation (either game's) in its play phase?"""
    from ..games.tapp import Phase as TappPhase
    from ..games.tapp.observation import TappObservation
    from ..games.tippen import PLAY

    return bool(obs.phase == (TappPhase.PLAY if isinstance(obs, TappObservation) else PLAY))


def _plays_until(obs: Any, tricks: int) -> int:
    """Card plays from now until a trick starts with at most ``tricks`` tricks left."""
    seats = len(obs.hand_sizes)
    played = len(obs.trick)
    left = _tricks_left(obs)
    if left > tricks:
        return (left - tricks) * seats - played
    return (seats - played) % seats


def _tricks_left(obs: Any) -> int:
    """Tricks still to finish in the play phase (the trick in progress included)."""
    sizes = obs.hand_sizes
    if obs.trick:
        return int(sizes[obs.trick[0][0]]) + 1
    return int(sizes[obs.turn])


def _fixed_verdict(world: Any, backend: str) -> bool | None:
    """Does the declarer win with best play by all (None: Ramsch, nothing to decide)?"""
    from ..solve import Kind, Solver, position_from_state

    pos = position_from_state(world)
    if pos.kind == Kind.RAMSCH or pos.declarer < 0:
        return None
    solver = Solver(pos, backend)
    if pos.kind == Kind.NO_TRICK:
        return solver.no_trick()
    public = world.observation(None)
    if pos.kind == Kind.ALL_TRICKS or public.tout:
        return solver.all_tricks()
    return solver.can_reach(public.rules.min_to_win)
