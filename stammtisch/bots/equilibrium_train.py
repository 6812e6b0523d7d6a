"""Training the Tippen equilibrium (``stammtisch.bots.equilibrium``): the bank of deals, the
MCCFR run, the exploitability and the data file.

**The bank.** Deals dealt from a seeded shuffle with the dealer at the last seat and a bête
standing (so every seat declares). For each deal and every set of at least two tappers (and,
with the exchange, every profile of the two exchange options among them) the card play is
played out once by the heuristic bot (``TippenHeuristic``) for every active seat. Why the
heuristic and not the open-hand solver or the pimc bot: a deal needs up to 72 playouts (4
players with the exchange), the heuristic plays one in well under a millisecond, while pimc
takes about a second per decision; the solver's open-hand values would credit every seat with
seeing all cards, which overrates weak hands that win by perfect defence. The equilibrium is
therefore an equilibrium of the declarations *given heuristic card play*.

**Payoffs** are counted in a trick's share of the pot (``trick_value``): an active seat gains
its tricks, minus ``ratio`` (bête / trick value) if it took none; a lone tapper gains the pot
(the tricks of a hand); a passer 0. The dealer's ante is paid whatever anyone declares and is
left out.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..games.base import TableState
from ..games.tippen import DECLARE, EXCHANGE, TippenGame
from ..rules import ruleset
from ..rules.tippen import TippenRules
from ..solve.cfr import Bank, Strategy, Trainer, exploitability
from .equilibrium import hand_strength
from .tippen import TippenHeuristic, card_tables

#: buckets of hand strength (about equal frequency; ties at the same strength share one)
NUM_BUCKETS = 8
#: Grupp's pot levels in stakes (the pot in play): the bête is one stake there
GRUPP_POT_STAKES = (1, 2, 3, 4, 6)


def tippen(ruleset_id: str, players: int = 4) -> tuple[TippenRules, TippenGame]:
    """A Tippen rule set with its defaults and the player count, and its engine."""
    rules = ruleset(ruleset_id, {"players": players})
    if not isinstance(rules, TippenRules):
        raise ValueError(f"{ruleset_id} is not a Tippen rule set")
    return rules, TippenGame(rules)


def tricks_bank(ruleset_id: str, players: int, deals: int, seed: int,
                progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Strengths and playout tricks of ``deals`` deals: ``strength[d, p]`` and
    ``tricks[d, S, e, p]`` (-1 where ``p`` is not active or the leaf is not played)."""
    rules, game = tippen(ruleset_id, players)
    n = players
    exchange = bool(rules.exchange)
    E = 1 << n if exchange else 1
    rng = random.Random(seed)
    bot = TippenHeuristic(None)
    t = card_tables(game.pack)
    strength = np.zeros((deals, n))
    tricks = np.full((deals, 1 << n, E, n), -1, dtype=np.int8)
    for d in range(deals):
        deck = list(range(game.size))
        rng.shuffle(deck)
        root = game.new_deal(TableState(dealer=n - 1, pot=rules.stake, reserve=0), deck)
        assert root.phase == DECLARE, "a bête stands: every seat declares"
        for p in range(n):
            obs = root.observation(p)
            strength[d, p] = hand_strength(obs.hand, obs.trump, n, rules)
        for S in range(1 << n):
            if S.bit_count() < 2:
                continue
            s = root.clone()
            while s.phase == DECLARE:
                seat = s.current_player()
                s.apply(game.WORD_BASE + (0 if S >> seat & 1 else 1))
            profiles = [e for e in range(E) if e & ~S == 0]
            for e in profiles:
                x = s.clone()
                while not x.is_terminal():
                    seat = x.current_player()
                    if x.phase == EXCHANGE:
                        legal = x.legal_actions()
                        if e >> seat & 1:
                            x.apply(bot._exchange(x.observation(seat), t, legal))
                        else:
                            x.apply(game.EXCHANGE_BASE)
                    else:
                        x.apply(bot.act(x, seat))
                for p in range(n):
                    if S >> p & 1:
                        tricks[d, S, e, p] = x.tricks_won[p]
        if progress is not None:
            progress(1)
    return {"strength": strength, "tricks": tricks, "players": n, "tricks_per_hand": rules.tricks,
            "exchange": exchange}


def hand_signature(hand: int, trump: int, pack: Any) -> str:
    """A hand as people sort it: its trumps by rank and its side Aces and Kings, e.g.
    ``"AQ|A"`` (trump Ace and Queen, one side Ace) or ``"|K"``; other side cards are left
    out. ``equilibrium.describe_signature`` puts it in words."""
    names = pack.cards
    trumps = sorted((c for c in range(pack.size) if hand >> c & 1 and c // pack.ranks_per_suit == trump),
                    key=lambda c: -c)
    side = sorted(names[c][1] for c in range(pack.size) if hand >> c & 1
                  and c // pack.ranks_per_suit != trump and names[c][1] in "AK")
    return "".join(names[c][1] for c in trumps) + "|" + "".join(side)


def bucket_examples(ruleset_id: str, players: int, edges: list[float], seed: int,
                    deals: int = 4000, per_bucket: int = 3) -> list[list[tuple[str, float]]]:
    """For people: the commonest hands (``hand_signature``) of each bucket with their share of
    the bucket, from ``deals`` fresh deals (no play needed)."""
    rules, game = tippen(ruleset_id, players)
    rng = random.Random(seed + 1)
    counts: list[dict[str, int]] = [{} for _ in range(len(edges) + 1)]
    for _ in range(deals):
        deck = list(range(game.size))
        rng.shuffle(deck)
        root = game.new_deal(TableState(dealer=players - 1, pot=rules.stake, reserve=0), deck)
        for p in range(players):
            obs = root.observation(p)
            b = int(np.searchsorted(np.asarray(edges), hand_strength(obs.hand, obs.trump, players, rules),
                                    side="right"))
            sig = hand_signature(obs.hand, obs.trump, game.pack)
            counts[b][sig] = counts[b].get(sig, 0) + 1
    out = []
    for c in counts:
        total = sum(c.values()) or 1
        top = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:per_bucket]
        out.append([(sig, round(k / total, 3)) for sig, k in top])
    return out


def bucket_edges(strength: np.ndarray[Any, Any], buckets: int = NUM_BUCKETS) -> list[float]:
    """Edges between buckets at the strength quantiles, ties merged."""
    qs = np.quantile(strength.ravel(), [k / buckets for k in range(1, buckets)])
    edges: list[float] = []
    for q in qs:
        q = round(float(q), 4)
        if q > 0 and (not edges or q > edges[-1]):
            edges.append(q)
    return edges


def make_bank(raw: dict[str, Any], edges: list[float], ratio: float) -> Bank:
    """The abstract game of a raw bank at one money level (``ratio`` = bête / trick value)."""
    n = raw["players"]
    T = raw["tricks_per_hand"]
    strength = raw["strength"]
    tricks = raw["tricks"].astype(np.float64)
    buckets = np.searchsorted(np.asarray(edges), strength, side="right").astype(np.int64)
    pay = np.where(tricks < 0, 0.0, np.where(tricks == 0, -ratio, tricks))
    for S in range(1 << n):
        if S.bit_count() == 1:
            p = S.bit_length() - 1
            pay[:, S, :, p] = T  # the lone tapper takes the pot unplayed
    return Bank(n, len(edges) + 1, buckets, pay)


def ratios(ruleset_id: str) -> list[tuple[float, int | None]]:
    """The money levels trained: (bête / trick value, pot in stakes or None where one level
    serves every pot)."""
    rules, _ = tippen(ruleset_id)
    if rules.bete == "stake":
        return [(rules.tricks / k, k) for k in GRUPP_POT_STAKES]
    return [(float(rules.tricks), None)]


def reach_table(bank: Bank, strat: Strategy) -> list[list[list[float]]]:
    """For people: per position and number of earlier taps, per bucket, the probability of a
    tap averaged over the histories with that many taps, weighted by how often the others'
    play reaches them in the bank."""
    n, B = bank.players, bank.num_buckets
    out = []
    b = bank.buckets
    for p in range(n):
        rows = []
        for k in range(p + 1):
            num = np.zeros(B)
            den = np.zeros(B)
            for h in range(1 << p):
                if h.bit_count() != k:
                    continue
                reach = np.ones(bank.deals)
                for q in range(p):
                    pt = strat.tap[q, h & ((1 << q) - 1), b[:, q]]
                    reach *= pt if h >> q & 1 else 1 - pt
                w = np.bincount(b[:, p], weights=reach, minlength=B)
                num += w * strat.tap[p, h]
                den += w
            rows.append([round(float(x), 3) if d > 0 else -1.0
                         for x, d in zip(num / np.where(den > 0, den, 1), den, strict=True)])
        out.append(rows)
    return out


def _rounded(a: np.ndarray[Any, Any]) -> Any:
    return np.round(a, 3).tolist()


def reached(bank: Bank, strat: Strategy) -> np.ndarray[Any, Any]:
    """Per declaring information set ``[p, h, b]``: whether the bank reaches it with the
    others playing ``strat`` (a position holding that bucket in some deal where the earlier
    positions declare ``h`` with positive probability)."""
    n, B = bank.players, bank.num_buckets
    out = np.zeros((n, 1 << n, B), dtype=bool)
    b = bank.buckets
    for p in range(n):
        for h in range(1 << p):
            reach = np.ones(bank.deals)
            for q in range(p):
                pt = strat.tap[q, h & ((1 << q) - 1), b[:, q]]
                reach *= pt if h >> q & 1 else 1 - pt
            out[p, h] = np.bincount(b[:, p], weights=reach, minlength=B) > 0
    return out


def _tap_probabilities(bank: Bank, strat: Strategy) -> Any:
    """The tap probabilities for the data file, None where the bank never reaches the
    information set: the strategy there is untrained, and the runtime then has no opinion."""
    seen = reached(bank, strat)
    rounded = np.round(strat.tap, 3)
    return [[[float(rounded[p, h, b]) if seen[p, h, b] else None for b in range(bank.num_buckets)]
             for h in range(1 << bank.players)] for p in range(bank.players)]


def train_ruleset(ruleset_id: str, players: int, deals: int, iterations: int, seed: int,
                  checkpoints: tuple[int, ...] = (),
                  progress: Callable[[str, int, int], None] | None = None,
                  batch: int = 256) -> dict[str, Any]:
    """Bank, train at every money level, measure; the data-file entry of one rule set."""
    start = time.perf_counter()
    step = (lambda k: progress("bank", k, deals)) if progress else None
    raw = tricks_bank(ruleset_id, players, deals, seed, step)
    bank_seconds = time.perf_counter() - start
    edges = bucket_edges(raw["strength"])
    rules, _ = tippen(ruleset_id, players)
    levels = []
    for ratio, pot_stakes in ratios(ruleset_id):
        bank = make_bank(raw, edges, ratio)
        trainer = Trainer(bank, seed=seed, batch=batch)
        curve: list[dict[str, Any]] = []
        # counters per deal: a trick's share at this level's pot (a bête standing: the pot in
        # play is 2 stakes where one level serves every pot)
        pot = rules.stake * (pot_stakes or 2)
        tv = pot // rules.tricks

        def measure(it: int, strat: Strategy, bank: Bank = bank, curve: list[dict[str, Any]] = curve,
                    tv: int = tv) -> None:
            ex = exploitability(bank, strat)
            curve.append({"iterations": it, "gain": [round(g * tv, 4) for g in ex["gain"]]})

        tick = (lambda k: progress("cfr", k, iterations)) if progress else None
        strat = trainer.run(iterations, checkpoints, measure, tick)
        ex = exploitability(bank, strat)
        levels.append({
            "ratio": ratio, "pot_stakes": pot_stakes, "pot": pot, "trick_value": tv,
            "tap": _tap_probabilities(bank, strat), "swap": _rounded(strat.swap) if raw["exchange"] else [],
            "table": reach_table(bank, strat),
            "value": [round(v * tv, 4) for v in ex["value"]],
            "gain": [round(g * tv, 4) for g in ex["gain"]],
            "curve": curve,
        })
    buckets = np.searchsorted(np.asarray(edges), raw["strength"], side="right")
    share = np.bincount(buckets.ravel(), minlength=len(edges) + 1) / buckets.size
    return {
        "edges": edges, "exchange": raw["exchange"],
        "examples": bucket_examples(ruleset_id, players, edges, seed),
        "bucket_share": [round(float(x), 4) for x in share],
        "levels": levels,
        "training": {"deals": deals, "iterations": iterations, "seed": seed, "batch": batch,
                     "bank_seconds": round(bank_seconds, 1),
                     "seconds": round(time.perf_counter() - start, 1)},
    }
