"""Inference: how likely is a sampled world, given what the other seats did?

``state.resample(seat, rng)`` draws worlds uniformly among those consistent with the seat's
view: a world where a bidder who held nothing bid high counts as much as one where he held the
aces. Inference weighs each world by the likelihood of the other seats' actions in it (every
bid and pass, tap, exchange, contract, discard, card played) under a *policy model* of those
seats: the posterior over worlds given the actions, with the uniform sampler as the prior.

The likelihood of a world is computed by replaying it: the world's own deal (its deck,
rebuilt from the world's cards) is dealt afresh by the engine and the world's log applied
action by action; before each action of another seat, that seat's information is what the
replayed state shows it (``observation(actor)``) and the model gives the probability of the
action it took. Nothing but the world is read, and the world is drawn from the deciding
seat's view, so the weights never depend on cards the seat cannot see. Actions the seat
cannot see (another's discards) are in the world as sampled, and their probability weighs
the sampled hand and discards together, as the joint posterior wants.

Two models, both evaluated with numpy and the heuristic bot alone:

* ``HeuristicPolicy``: the seat plays what the levels' heuristic would play in its
  information, with probability ``1 - epsilon``, any other legal action sharing ``epsilon``;
* ``LearnedPolicy``: a conditional logit over the legal actions, ``P(a) ∝ exp(w · f(a))``,
  on a few features of each action (the heuristic's choice, and for a card of the play: highest
  or lowest of its suit, trump, following, heading the trick, its rank and points; for a word:
  pass, its place among the legal words, both also times the strength of the actor's hand).
  The weights ``w`` are learned from self-play records (``scripts/train_inference.py``, the
  ``train`` extra) and shipped as ``inference_weights.json`` beside this module, one set per
  game family, with the ``temper`` of each (see ``Policy``).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..cards import cards_in
from ..games.tricks import trick_winner_index

#: the heuristic policy's share for all the actions the heuristic would not choose
EPSILON = 0.15
#: the heuristic policy's ``temper`` (see ``Policy``)
HEURISTIC_TEMPER = 0.35
#: the shipped weights of ``LearnedPolicy``, per game family
WEIGHTS_FILE = Path(__file__).with_name("inference_weights.json")
#: the features of an action, in the order of the weights (``action_features``)
FEATURES = (
    "guide_play", "guide_word",
    "high_in_suit", "low_in_suit", "trump", "follows", "heads", "lead_rank", "rank", "points",
    "slough",
    "pass", "word_place", "pass_strength", "word_strength",
)
#: the seed of the heuristic that stands for each seat in the replay: its tie-breaks are
#: fixed, so a world's likelihood depends on nothing but the world
POLICY_SEED = 0x5EED


#: one decision of a replay: the state before it (advanced in place by the replay), the seat
#: on turn, its legal actions and the action it took
Step = tuple[Any, int, list[int], int]


class Policy(Protocol):
    """A model of how a seat acts, from that seat's information alone: ``log_probs``, the
    log-probability of each legal action (in the order of ``legal``) for the seat on turn in
    ``state``; ``log_likelihood``, the sum over a replay's steps of the action taken (each
    step read before the replay moves on). ``temper``: the power the likelihood is raised to
    when worlds are weighed (below 1: the model's actions are treated as less telling than
    independent draws would be; chosen on held-out deals, ``bench/inference.py``)."""

    temper: float

    def log_probs(self, state: Any, actor: int, legal: list[int]) -> list[float]: ...

    def log_likelihood(self, steps: Iterator[Step]) -> float: ...


class Guide:
    """The heuristic's choice for the seat on turn, its tie-breaks drawn afresh from
    ``POLICY_SEED`` at each call (so that a choice depends on the state alone, not on the
    calls before it)."""

    def __init__(self, family: str) -> None:
        self.rng = random.Random(POLICY_SEED)
        self.bot: Any
        if family == "tippen":
            from .tippen import TippenHeuristic

            self.bot = TippenHeuristic(self.rng)
        else:
            from .tapp import TappHeuristic

            self.bot = TappHeuristic(self.rng)

    def __call__(self, state: Any, actor: int) -> int:
        self.rng.seed(POLICY_SEED)
        choice: int = self.bot.act(state, actor)
        return choice


class HeuristicPolicy:
    """The heuristic's choice with probability ``1 - epsilon``, the rest spread evenly."""

    def __init__(self, family: str, epsilon: float = EPSILON, temper: float = HEURISTIC_TEMPER) -> None:
        if not 0.0 < epsilon < 1.0:
            raise ValueError("epsilon lies strictly between 0 and 1")
        self.family = family
        self.epsilon = epsilon
        self.temper = temper
        self.guide = Guide(family)

    def log_probs(self, state: Any, actor: int, legal: list[int]) -> list[float]:
        chosen = self.guide(state, actor)
        hit = math.log(1.0 - self.epsilon)
        miss = math.log(self.epsilon / (len(legal) - 1))
        return [hit if a == chosen else miss for a in legal]

    def log_likelihood(self, steps: Iterator[Step]) -> float:
        hit = math.log(1.0 - self.epsilon)
        total = 0.0
        for state, actor, legal, action in steps:
            total += hit if self.guide(state, actor) == action else math.log(self.epsilon / (len(legal) - 1))
        return total


class LearnedPolicy:
    """A conditional logit over the legal actions on ``action_features`` (weights ``w``)."""

    def __init__(self, family: str, weights: np.ndarray[Any, Any], temper: float = 1.0) -> None:
        if weights.shape != (len(FEATURES),):
            raise ValueError(f"{len(FEATURES)} weights expected, got shape {weights.shape}")
        self.family = family
        self.weights = weights
        self.temper = temper
        self.guide = Guide(family)

    def log_probs(self, state: Any, actor: int, legal: list[int]) -> list[float]:
        guide = self.guide(state, actor)
        x = action_features(state.observation(actor), legal, guide)
        z = x @ self.weights
        z -= z.max()
        out: list[float] = (z - math.log(float(np.exp(z).sum()))).tolist()
        return out

    def log_likelihood(self, steps: Iterator[Step]) -> float:
        """All the steps' features in one matrix: one product and one log-sum-exp per segment
        (numpy's calls cost more than the arithmetic of a dozen features)."""
        rows: list[np.ndarray[Any, Any]] = []
        starts: list[int] = []
        taken: list[int] = []
        at = 0
        for state, actor, legal, action in steps:
            rows.append(action_features(state.observation(actor), legal, self.guide(state, actor)))
            starts.append(at)
            taken.append(at + legal.index(action))
            at += len(legal)
        if not rows:
            return 0.0
        z = np.concatenate(rows) @ self.weights
        top = np.maximum.reduceat(z, starts)
        sizes = np.diff(np.append(starts, at))
        norm = np.log(np.add.reduceat(np.exp(z - np.repeat(top, sizes)), starts)) + top
        return float(z[taken].sum() - norm.sum())


@cache
def _shipped() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    if tuple(data["features"]) != FEATURES:
        raise ValueError(f"{WEIGHTS_FILE.name} was trained on other features")
    return data


def learned_policy(family: str) -> LearnedPolicy:
    """The shipped model of a game family (``WEIGHTS_FILE``) with its ``temper``."""
    data = _shipped()
    return LearnedPolicy(family, np.asarray(data["weights"][family], dtype=float),
                         float(data.get("temper", {}).get(family, 1.0)))


def make_policy(family: str, model: str = "learned") -> Policy:
    """A policy by name: ``learned`` (the shipped weights) or ``heuristic``."""
    if model == "learned":
        return learned_policy(family)
    if model == "heuristic":
        return HeuristicPolicy(family)
    raise ValueError(f"unknown policy model {model!r}; models are learned, heuristic")


# ---------------------------------------------------------------------- features
def action_features(obs: Any, legal: list[int], guide: int) -> np.ndarray[Any, Any]:
    """One row of ``FEATURES`` per legal action, from the actor's observation ``obs``."""
    game = obs.game
    pack = game.pack
    size = pack.size
    rows: list[list[float]] = []
    if legal[-1] < size:  # the play: every legal action is a card (the ids are sorted)
        rps = pack.ranks_per_suit
        trump_mask = pack.suit_masks[obs.trump] if obs.trump >= 0 else 0
        trick = [c for _, c in obs.trick]
        lead = trick[0] if trick else -1
        best = trick[trick_winner_index(trick, rps, trump_mask)] if trick else -1
        top: dict[int, int] = {}
        low: dict[int, int] = {}
        for c in legal:
            s = c // rps
            top[s] = max(top.get(s, c), c)
            low[s] = min(low.get(s, c), c)
        points = pack.points
        for c in legal:
            s = c // rps
            is_trump = (1 << c) & trump_mask != 0
            follows = lead >= 0 and s == lead // rps
            alone = top[s] == low[s]
            rank = (c % rps) / (rps - 1)
            rows.append([
                float(c == guide), 0.0,
                float(c == top[s] and not alone), float(c == low[s] and not alone), float(is_trump),
                float(follows), float(lead >= 0 and beats(c, best, rps, trump_mask)),
                rank if lead < 0 else 0.0, rank, points[c] / 11.0,
                float(lead >= 0 and not follows and not is_trump),
                0.0, 0.0, 0.0, 0.0,
            ])
        return np.array(rows)
    last = max(1, len(legal) - 1)
    strength = hand_strength(obs)
    for i, a in enumerate(legal):
        passes = float("pass" in game.action_to_string(a))
        rows.append([0.0, float(a == guide), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                     passes, i / last, passes * strength, i / last * strength])
    return np.array(rows)


def hand_strength(obs: Any) -> float:
    """How strong the actor's own hand is, for its words: the mean over its cards of the rank
    in the suit (0 lowest, 1 highest), plus one for a trump; 0 for no hand seen (a dealer
    deciding blind)."""
    pack = obs.game.pack
    rps = pack.ranks_per_suit
    trump_mask = pack.suit_masks[obs.trump] if obs.trump >= 0 else 0
    cards = cards_in(obs.hand)
    if not cards:
        return 0.0
    total = 0.0
    for c in cards:
        total += (c % rps) / (rps - 1) + ((1 << c) & trump_mask != 0)
    return total / len(cards)


def beats(card: int, best: int, rps: int, trump_mask: int) -> bool:
    """Does ``card`` beat ``best``, the card winning the trick so far?"""
    if (1 << card) & trump_mask:
        return not (1 << best) & trump_mask or card > best
    if (1 << best) & trump_mask:
        return False
    return card // rps == best // rps and card > best


# ---------------------------------------------------------------------- replay
def world_deck(world: Any) -> list[int]:
    """A deck (top first) from which the engine deals ``world``'s deal: the Tippen engine
    keeps it (the sampler rebuilds it for a world); a Tapp deck is rebuilt from where the
    world's cards lie (``games.tapp.dealt``)."""
    if hasattr(world, "deck"):
        return list(world.deck)
    from ..games.tapp.dealt import dealt_deck

    return dealt_deck(world)


def replay(world: Any) -> Iterator[tuple[Any, int, int]]:
    """``(state, actor, action)`` before each action of ``world``'s log, the state dealt afresh
    from ``world_deck(world)`` and replayed by the engine (the same state object, advanced)."""
    state = world.game.new_deal(world.table, world_deck(world))
    for actor, action in world.log:
        yield state, actor, action
        state.apply(action)


def decisions(world: Any, seat: int) -> Iterator[Step]:
    """The replay's steps of the seats other than ``seat`` with more than one legal action."""
    for state, actor, action in replay(world):
        if actor != seat:
            legal = state.legal_actions()
            if len(legal) > 1:
                yield state, actor, legal, action


def log_likelihood(world: Any, seat: int, policy: Policy) -> float:
    """The log-probability under ``policy`` of every action in ``world``'s log of the seats
    other than ``seat`` (forced actions count 1; not tempered)."""
    return policy.log_likelihood(decisions(world, seat))


def others_decided(state: Any, seat: int) -> bool:
    """Has any other seat made a decision yet (a log entry that is not ``seat``'s)?"""
    return any(actor != seat for actor, _ in state.log)


def weighted_worlds(state: Any, seat: int, rng: random.Random, candidates: int,
                    policy: Policy) -> tuple[list[Any], np.ndarray[Any, Any]]:
    """``candidates`` worlds drawn by ``state.resample(seat, rng)`` and their normalised
    posterior weights (the likelihood of the others' actions in each; the prior is uniform)."""
    worlds = [state.resample(seat, rng) for _ in range(candidates)]
    if not others_decided(state, seat):
        return worlds, np.full(len(worlds), 1.0 / len(worlds))
    logs = np.array([log_likelihood(w, seat, policy) for w in worlds]) * policy.temper
    w = np.exp(logs - logs.max())
    return worlds, w / w.sum()


def systematic_picks(weights: np.ndarray[Any, Any], count: int, rng: random.Random) -> list[int]:
    """``count`` indices drawn in proportion to ``weights`` by systematic resampling (one
    uniform draw; each index appears within one of its expected count ``count * weight``)."""
    edges = np.cumsum(weights)
    edges[-1] = 1.0
    start = rng.random() / count
    points = start + np.arange(count) / count
    picks: list[int] = np.searchsorted(edges, points, side="right").tolist()
    return [min(p, len(weights) - 1) for p in picks]
