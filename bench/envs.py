"""Environment speed: random-agent steps per second through the PettingZoo env, against
OpenSpiel's own Skat through its RL environment, measured in the same run. Prints JSON lines.

Ours: ``stammtisch.envs.pettingzoo.env`` (with PettingZoo's order-enforcing wrapper) for
``tapp/modern`` and ``tippen/grupp-1975``; every step builds the acting seat's observation and
action mask (``env.last()``) and picks a uniformly random legal action from the mask. A new
episode (deal) starts when one ends.
Peer: ``open_spiel.python.rl_environment.Environment("skat")``; every step builds every
player's information-state tensor and legal actions (what the RL environment does), and the
acting player picks a uniformly random legal action.
Bar: ratio ours/peer ≥ 2.0 for tapp/modern. Rates are per second of this process's
CPU time, measured in interleaved slices, so that the load of other programs on a shared
machine does not tilt the ratio. With ``--other ROOT`` the same PettingZoo loop also runs on
another checkout (``bench/versions.py``), each slice in a fresh environment.

    python bench/envs.py [--seconds 5] [--other ../base]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from versions import Build  # noqa: E402

HERE = Path(__file__).resolve()

#: CPU time of this process: on a shared machine, other programs' load does not count
clock = time.process_time


class PettingZooRun:
    """Random agents through the PettingZoo env, run in slices (observation and mask every step)."""

    def __init__(self, ruleset: str, seed: int = 1) -> None:
        from stammtisch.envs.pettingzoo import env as make_env

        self.env = make_env(ruleset)
        self.rng = np.random.default_rng(seed)
        self.env.reset(seed=seed)
        self.iterator = iter(self.env.agent_iter())

    def run(self, seconds: float) -> tuple[int, float]:
        env, rng = self.env, self.rng
        steps = 0
        start = clock()
        deadline = start + seconds
        while True:
            for _ in self.iterator:
                obs, _, termination, truncation, _ = env.last()
                if termination or truncation:
                    env.step(None)
                    continue
                legal = obs["action_mask"].nonzero()[0]
                env.step(int(legal[rng.integers(legal.size)]))
                steps += 1
                if steps % 64 == 0 and clock() >= deadline:
                    return steps, clock() - start
            env.reset()
            self.iterator = iter(env.agent_iter())


def pettingzoo_steps_per_s(ruleset: str, seconds: float, seed: int) -> float:
    """One slice of ``PettingZooRun`` in a fresh environment (for another build)."""
    steps, took = PettingZooRun(ruleset, seed).run(seconds)
    return steps / took


class SkatRun:
    """Random agents through OpenSpiel's rl_environment on Skat (info-state tensors every step)."""

    def __init__(self, seed: int = 1) -> None:
        from open_spiel.python import rl_environment

        self.env = rl_environment.Environment("skat")
        self.env.seed(seed)
        self.rng = np.random.default_rng(seed)
        self.time_step = self.env.reset()

    def run(self, seconds: float) -> tuple[int, float]:
        env, rng = self.env, self.rng
        steps = 0
        start = clock()
        deadline = start + seconds
        time_step = self.time_step
        while True:
            if time_step.last():
                time_step = env.reset()
            player = time_step.observations["current_player"]
            legal = time_step.observations["legal_actions"][player]
            time_step = env.step([legal[rng.integers(len(legal))]])
            steps += 1
            if steps % 64 == 0 and clock() >= deadline:
                self.time_step = time_step
                return steps, clock() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=6.0, help="time per figure (default 6)")
    parser.add_argument("--rounds", type=int, default=12,
                        help="the time is cut into this many slices per figure, run in turn (default 12)")
    parser.add_argument("--other", type=Path, default=None, help="root of another checkout to compare with")
    args = parser.parse_args()
    other = Build("other", root=args.other.resolve()) if args.other else None
    if args.seconds <= 0 or args.rounds < 1:
        parser.error("--seconds must be positive and --rounds at least 1")
    # The figures are measured in interleaved slices, so that a change of load on a shared
    # machine falls on ours and the peer's alike.
    runs = {"skat": SkatRun(), "tapp/modern": PettingZooRun("tapp/modern"),
            "tippen/grupp-1975": PettingZooRun("tippen/grupp-1975")}
    totals = {name: [0, 0.0] for name in runs}
    others: dict[str, list[float]] = {"tapp/modern": [], "tippen/grupp-1975": []}
    for r in range(args.rounds):
        for name, run in runs.items():
            steps, took = run.run(args.seconds / args.rounds)
            totals[name][0] += steps
            totals[name][1] += took
            if other is not None and name in others:
                others[name].append(other.call(HERE, "pettingzoo_steps_per_s", name, args.seconds / args.rounds,
                                               r + 1))
    rate = {name: steps / took for name, (steps, took) in totals.items()}
    for ruleset in ("tapp/modern", "tippen/grupp-1975"):
        print(json.dumps({"figure": "random_agent_steps_per_cpu_s", "ruleset": ruleset, "ours": round(rate[ruleset]),
                          "peer": "open_spiel rl_environment skat", "peer_steps_per_s": round(rate["skat"]),
                          "ratio": round(rate[ruleset] / rate["skat"], 2),
                          **({"other": round(sum(others[ruleset]) / len(others[ruleset])),
                              "other_ratio": round(sum(others[ruleset]) / len(others[ruleset]) / rate["skat"], 2)}
                             if others[ruleset] else {}),
                          **({"bar": 2.0} if ruleset == "tapp/modern" else {})}), flush=True)


if __name__ == "__main__":
    main()
