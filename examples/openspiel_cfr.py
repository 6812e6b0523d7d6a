"""OpenSpiel's CFR (or external-sampling MCCFR) on the smallest Tippen game, with its NashConv.

    python examples/openspiel_cfr.py --iterations 30 [--algorithm mccfr]

The game: Drei Karten (1821) for 3 players with one card each (``tricks=1``), no Tipp-Zwang,
the cards dealt only from six (``deal_from``: the Ace, King and Queen of hearts and diamonds)
so that the whole game tree has a few thousand nodes. The trump is the suit of the dealer's
own card. After the iterations it prints NashConv of the average policy (the sum over the
players of what each would gain by a best response; for two-player zero-sum games half of it
is the exploitability) with OpenSpiel's ``exploitability.nash_conv``.
Needs ``pip install 'stammtisch[openspiel]'``. Python games are slow in OpenSpiel: each CFR
iteration takes a few seconds here.
"""

from __future__ import annotations

import argparse
import time

from open_spiel.python.algorithms import cfr, exploitability, external_sampling_mccfr

from stammtisch.envs.openspiel import load

GAME = dict(players=3, tricks=1, stake=1, tipp_zwang=False, deal_from="HAHKHQDADKDQ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=30, help="CFR iterations (default 30)")
    parser.add_argument("--algorithm", choices=("cfr", "mccfr"), default="cfr",
                        help="cfr: vanilla CFR; mccfr: external-sampling Monte-Carlo CFR")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.iterations < 0:
        parser.error("--iterations must be 0 or more")
    game = load("tippen/drei-karten-1821", **GAME)
    print(f"game: {game}")
    start = time.perf_counter()
    if args.algorithm == "cfr":
        solver = cfr.CFRSolver(game)
        for _ in range(args.iterations):
            solver.evaluate_and_update_policy()
        policy = solver.average_policy()
    else:
        import numpy as np

        np.random.seed(args.seed)
        mccfr = external_sampling_mccfr.ExternalSamplingSolver(
            game, external_sampling_mccfr.AverageType.SIMPLE)
        for _ in range(args.iterations):
            mccfr.iteration()
        policy = mccfr.average_policy()
    trained = time.perf_counter() - start
    nash_conv = exploitability.nash_conv(game, policy)
    print(f"{args.algorithm}: {args.iterations} iterations in {trained:.1f} s; NashConv {nash_conv:.4f} "
          f"(counters; 0 is a Nash equilibrium)")


if __name__ == "__main__":
    main()
