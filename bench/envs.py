"""Environment speed: random-agent steps per second through the PettingZoo env, against
OpenSpiel's own Skat through its RL environment, measured in the same run. Prints JSON lines.

Ours: ``stammtisch.envs.pettingzoo.env`` (with PettingZoo's order-enforcing wrapper) for
``tapp/modern`` and ``tippen/grupp-1975``; every step builds the acting seat's observation and
action mask (``env.last()``) and picks a uniformly random legal action from the mask. A new
episode (deal) starts when one ends.
Peer: ``open_spiel.python.rl_environment.Environment("skat")``; every step builds every
player's information-state tensor and legal actions (what the RL environment does), and the
acting player picks a uniformly random legal action.
Bar (issue 11): ratio ours/peer ≥ 1.0 for tapp/modern.

    python bench/envs.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def pettingzoo_steps_per_second(ruleset: str, seconds: float, seed: int = 1) -> float:
    from stammtisch.envs.pettingzoo import env as make_env

    env = make_env(ruleset)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for agent in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
            steps += 1
        if time.perf_counter() >= deadline:
            break
        env.reset()
    return steps / (time.perf_counter() - start)


def openspiel_skat_steps_per_second(seconds: float, seed: int = 1) -> float:
    from open_spiel.python import rl_environment

    env = rl_environment.Environment("skat")
    env.seed(seed)
    rng = np.random.default_rng(seed)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            legal = time_step.observations["legal_actions"][player]
            time_step = env.step([legal[rng.integers(len(legal))]])
            steps += 1
        if time.perf_counter() >= deadline:
            break
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="time per figure (default 5)")
    args = parser.parse_args()
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    peer = openspiel_skat_steps_per_second(args.seconds)
    for ruleset in ("tapp/modern", "tippen/grupp-1975"):
        ours = pettingzoo_steps_per_second(ruleset, args.seconds)
        print(json.dumps({"figure": "random_agent_steps_per_s", "ruleset": ruleset, "ours": round(ours),
                          "peer": "open_spiel rl_environment skat", "peer_steps_per_s": round(peer),
                          "ratio": round(ours / peer, 2), **({"bar": 1.0} if ruleset == "tapp/modern" else {})}),
              flush=True)


if __name__ == "__main__":
    main()
