"""A random agent through the PettingZoo environment (and the same through Gymnasium).

    python examples/random_agent.py --ruleset tippen/grupp-1975 --deals 3

Every seat picks a uniformly random legal action from its action mask; the rewards are each
seat's net change of the deal. Needs ``pip install 'stammtisch[rl]'``.
"""

from __future__ import annotations

import argparse

import numpy as np

from stammtisch.envs.gymnasium import StammtischEnv
from stammtisch.envs.pettingzoo import env as make_env


def pettingzoo_deals(ruleset: str, deals: int, seed: int) -> list[dict[str, float]]:
    """Play ``deals`` deals with random agents; the rewards of each deal per agent."""
    env = make_env(ruleset, render_mode="ansi")
    rng = np.random.default_rng(seed)
    results = []
    for deal in range(deals):
        env.reset(seed=seed + deal)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            totals[agent] += reward
            if termination or truncation:
                action = None
            else:
                legal = np.flatnonzero(observation["action_mask"])
                action = int(rng.choice(legal))
            env.step(action)
        results.append(totals)
    return results


def gymnasium_deal(ruleset: str, seed: int) -> float:
    """One deal for seat 0 with random actions against the heuristic bots; its reward."""
    env = StammtischEnv(ruleset, seat=0, opponents="heuristic")
    observation, info = env.reset(seed=seed)
    total, terminated = 0.0, False
    while not terminated:
        action = env.action_space.sample(info["action_mask"])
        observation, reward, terminated, truncated, info = env.step(action)
        total += reward
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ruleset", default="tippen/grupp-1975", help="rule set id (stammtisch rules lists them)")
    parser.add_argument("--deals", type=int, default=3, help="deals to play (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for number, totals in enumerate(pettingzoo_deals(args.ruleset, args.deals, args.seed), 1):
        print(f"PettingZoo deal {number}: " + ", ".join(f"{a} {r:+g}" for a, r in totals.items()))
    print(f"Gymnasium deal, seat_0 random against heuristic bots: {gymnasium_deal(args.ruleset, args.seed):+g}")


if __name__ == "__main__":
    main()
