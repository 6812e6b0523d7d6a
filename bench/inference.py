"""How well does inference place the hidden cards? Held-out deals, the true deal against uniform.

Deals of ``tapp/modern`` (3 players) and ``tippen/grupp-1975`` (4 players) are played by
``--bots`` (Expert by default: the Master level's opponents) from ``--seed``, a seed other
than the records the model was learned from (``scripts/train_inference.py``). At every
``--every``-th decision with at least one earlier decision of another seat, the seat on turn
draws ``--worlds`` worlds with ``state.resample`` (uniform among the worlds consistent with
its view) and weighs them under each policy model (``stammtisch.bots.inference``: the
heuristic's, the learned one). The same worlds serve every model, so the figures differ only
by the weights. Per game and model, one JSON line:

* ``card_loglik``: the mean log-probability (nats) the weighted worlds give each hidden card's
  true place (which seat's hand, or elsewhere: talon, tapp, discards, folded cards), counts
  smoothed by one per place (``uniform``: the unweighted worlds); higher is better;
* ``placed_right``: the share of hidden cards whose most likely place is the true one;
* ``true_world_gain``: the log-likelihood per hidden card of the true deal's actions under
  the model (raised to the model's ``temper``, as the bot weighs worlds), minus the log of its
  mean over the uniform worlds (an estimate of ``log P_model(true world) - log
  P_uniform(true world)`` per hidden card: positive when the model finds the true deal
  likelier than the sampler's average world);
* ``positions``, ``hidden_cards`` (per position, mean), ``seconds`` per position of the
  model's weighing (all the worlds' likelihoods).

    nice -n 10 python bench/inference.py [--deals 100] [--seed 7] [--worlds 64] [--every 3] [--temper T]
                                         [--game tapp/modern]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stammtisch.bots import make_bot  # noqa: E402
from stammtisch.bots.inference import log_likelihood, make_policy, others_decided  # noqa: E402
from stammtisch.cards import cards_in  # noqa: E402
from stammtisch.rules import ruleset  # noqa: E402
from stammtisch.sim.batch import derive_seed  # noqa: E402
from stammtisch.table import Table, draw_first_dealer  # noqa: E402

GAMES = (("tapp/modern", 3), ("tippen/grupp-1975", 4))
MODELS = ("uniform", "heuristic", "learned")
#: a card's place when it lies in no hand (talon, tapp, discards, folded cards)
ELSEWHERE = -1


def places(world: Any, cards: list[int]) -> list[int]:
    """Where each card lies in ``world``: the seat whose hand holds it, or ``ELSEWHERE``."""
    out = []
    for c in cards:
        bit = 1 << c
        out.append(next((x for x, h in enumerate(world.hands) if h & bit), ELSEWHERE))
    return out


def position_figures(state: Any, seat: int, worlds: list[Any], weights: np.ndarray[Any, Any],
                     true_gain: float) -> dict[str, float]:
    """The figures of one position under one set of weights (see the module's docstring)."""
    n = state.game.num_players
    hidden = cards_in(state.game.pack.full_mask & ~state.known_mask(seat))
    truth = places(state, hidden)
    where = np.array([places(w, hidden) for w in worlds])  # worlds x cards
    kinds = list(range(-1, n))
    m = len(worlds)
    loglik = right = 0.0
    for j in range(len(hidden)):
        mass = {k: float(weights[where[:, j] == k].sum()) for k in kinds}
        p = (m * mass[truth[j]] + 1.0) / (m + len(kinds))
        loglik += math.log(p)
        best = max(kinds, key=lambda k: (mass[k], -k))
        right += best == truth[j]
    k = max(1, len(hidden))
    return {"card_loglik": loglik / k, "placed_right": right / k, "true_world_gain": true_gain / k,
            "hidden_cards": len(hidden)}


def run(rid: str, players: int, args: argparse.Namespace) -> list[dict[str, object]]:
    rules = ruleset(rid, {"players": players})
    family = rules.family
    policies = {name: make_policy(family, name) for name in MODELS[1:]}
    for policy in policies.values():
        if args.temper is not None:
            policy.temper = args.temper
    sums: dict[str, dict[str, float]] = {m: {} for m in MODELS}
    seconds = {m: 0.0 for m in MODELS}
    count = 0
    rng = random.Random(args.seed)
    for deal in range(args.deals):
        table = Table(rules, [f"P{i + 1}" for i in range(players)], draw_first_dealer(rules, rng))
        bots = [make_bot(args.bots, family, random.Random(derive_seed(args.seed, deal * 8 + s)))
                for s in range(players)]
        state = table.start_deal(table.shuffled_deck(rng))
        step = 0
        while not state.is_terminal():
            seat = state.current_player()
            if others_decided(state, seat) and step % args.every == 0:
                draw = random.Random(derive_seed(args.seed, 1_000_000 + deal * 1000 + step))
                worlds = [state.resample(seat, draw) for _ in range(args.worlds)]
                for model in MODELS:
                    start = time.perf_counter()
                    if model == "uniform":
                        weights = np.full(len(worlds), 1.0 / len(worlds))
                        gain = 0.0
                    else:
                        policy = policies[model]
                        logs = np.array([log_likelihood(w, seat, policy) for w in worlds]) * policy.temper
                        top = logs.max()
                        weights = np.exp(logs - top)
                        mean = math.log(float(weights.mean())) + top
                        weights /= weights.sum()
                        gain = log_likelihood(state, seat, policy) * policy.temper - mean
                    seconds[model] += time.perf_counter() - start
                    for key, value in position_figures(state, seat, worlds, weights, gain).items():
                        sums[model][key] = sums[model].get(key, 0.0) + value
                count += 1
            step += 1
            table.apply_id(bots[seat].act(state, seat))
    lines: list[dict[str, object]] = []
    for model in MODELS:
        line: dict[str, object] = {"bench": "inference", "ruleset": rid, "players": players, "model": model,
                                   "bots": args.bots, "seed": args.seed, "deals": args.deals,
                                   "worlds": args.worlds, "positions": count}
        for key, total in sums[model].items():
            line[key] = round(total / max(1, count), 4)
        if model != "uniform":
            line["temper"] = policies[model].temper
        line["seconds"] = round(seconds[model] / max(1, count), 5)
        lines.append(line)
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--worlds", type=int, default=64, help="worlds drawn per position")
    parser.add_argument("--every", type=int, default=3, help="every n-th decision of a deal is a position")
    parser.add_argument("--bots", default="expert", help="who plays the deals (a level or bot name)")
    parser.add_argument("--temper", type=float, default=None,
                        help="weigh the worlds by the likelihood to this power (default: each model's own)")
    parser.add_argument("--game", choices=[g for g, _ in GAMES], action="append", help="only this game")
    args = parser.parse_args(argv)
    if args.deals < 1 or args.worlds < 1 or args.every < 1:
        parser.error("--deals, --worlds and --every must be at least 1")
    for rid, players in GAMES:
        if args.game and rid not in args.game:
            continue
        for line in run(rid, players, args):
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
