"""A small learner with action masking (numpy only) that beats a random player at Tippen.

    python examples/masked_learner.py --episodes 3000 --eval 2000

Seat 0 of ``tippen/grupp-1975`` (4 players) learns against three random bots through the
Gymnasium environment. The learner is Monte-Carlo control with a linear action value per
dense action, ``Q(s, a) = W[a] · x(s)`` on the observation vector: ε-greedy over the legal
actions only (the mask from ``info["action_mask"]``), and after each deal every chosen action's
value moves towards the deal's reward (in stakes: ``normalize_rewards=True``). Then the greedy
policy and a random policy play the same deals (the same seeds: the same cards and the same
bots' choices where play does not differ) and the mean reward of each is printed.
Needs ``pip install 'stammtisch[rl]'``; no torch.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from stammtisch.envs.gymnasium import StammtischEnv

RULESET = "tippen/grupp-1975"
Policy = Callable[[np.ndarray, np.ndarray], int]


def _features(observation: np.ndarray) -> np.ndarray:
    return np.append(observation, 1.0)  # a bias term


def train(episodes: int, seed: int, learning_rate: float = 0.1) -> np.ndarray:
    """The weights W (actions × features) after ``episodes`` deals of ε-greedy play."""
    env = StammtischEnv(RULESET, seat=0, opponents="random", normalize_rewards=True)
    rng = np.random.default_rng(seed)
    weights = np.zeros((env.action_space.n, env.observation_space.shape[0] + 1))
    for episode in range(episodes):
        epsilon = max(0.05, 1.0 - episode / (0.6 * max(episodes, 1)))
        observation, info = env.reset(seed=seed + episode)
        chosen: list[tuple[np.ndarray, int]] = []
        total, terminated = 0.0, False
        while not terminated:
            x = _features(observation)
            legal = np.flatnonzero(info["action_mask"])
            if rng.random() < epsilon:
                action = int(rng.choice(legal))
            else:
                action = int(legal[np.argmax(weights[legal] @ x)])
            chosen.append((x, action))
            observation, reward, terminated, _, info = env.step(action)
            total += reward
        for x, action in chosen:
            weights[action] += learning_rate * (total - weights[action] @ x) * x / (x @ x)  # normalised LMS
    return weights


def greedy(weights: np.ndarray) -> Policy:
    def policy(observation: np.ndarray, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[np.argmax(weights[legal] @ _features(observation))])

    return policy


def uniform(seed: int) -> Policy:
    rng = np.random.default_rng(seed)

    def policy(observation: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    return policy


def evaluate(policy: Policy, deals: int, seed: int) -> float:
    """Mean reward per deal (in stakes) of ``policy`` in seat 0 over ``deals`` seeded deals."""
    env = StammtischEnv(RULESET, seat=0, opponents="random", normalize_rewards=True)
    totals = []
    for deal in range(deals):
        observation, info = env.reset(seed=seed + deal)
        total, terminated = 0.0, False
        while not terminated:
            observation, reward, terminated, _, info = env.step(policy(observation, info["action_mask"]))
            total += reward
        totals.append(total)
    return float(np.mean(totals))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=3000, help="training deals (default 3000)")
    parser.add_argument("--eval", type=int, default=2000, help="evaluation deals for each policy (default 2000)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.episodes < 0 or args.eval < 1:
        parser.error("--episodes must be 0 or more and --eval at least 1")
    weights = train(args.episodes, args.seed)
    eval_seed = 10**6 + args.seed
    learned = evaluate(greedy(weights), args.eval, eval_seed)
    random_play = evaluate(uniform(args.seed), args.eval, eval_seed)
    print(f"trained {args.episodes} deals; mean reward per deal over {args.eval} deals, in stakes:")
    print(f"learned policy {learned:+.3f}")
    print(f"random policy  {random_play:+.3f}")
    print("the learned policy beats random" if learned > random_play else "the learned policy does not beat random")


if __name__ == "__main__":
    main()
