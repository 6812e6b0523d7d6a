"""The examples run as written (with small step counts), and the core package never imports
the optional RL libraries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("ruleset", ["tippen/grupp-1975", "tapp/modern"])
def test_random_agent_example(ruleset: str) -> None:
    out = _run("examples/random_agent.py", "--ruleset", ruleset, "--deals", "2")
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["PettingZoo deal 1", "PettingZoo deal 2"]
    assert "seat_0" in lines[0] and lines[2].startswith("Gymnasium deal")


def _learner(episodes: int) -> tuple[float, float, str]:
    """The example's learned and random mean rewards, and its verdict line."""
    out = _run("examples/masked_learner.py", "--episodes", str(episodes), "--eval", "1000", "--seed", "1")
    lines = out.splitlines()
    learned = float(next(line for line in lines if line.startswith("learned policy")).split()[-1])
    random_play = float(next(line for line in lines if line.startswith("random policy")).split()[-1])
    return learned, random_play, lines[-1]


def test_masked_learner_example_learns() -> None:
    # Without training the greedy policy always takes the first legal action, which already
    # beats random play; the trained one must do better still, on the same 1,000 seeded deals
    # (paired: the margin, about 0.05 stakes a deal, is several times its noise).
    untrained, random_before, verdict_before = _learner(0)
    trained, random_play, verdict = _learner(2000)
    assert random_play == random_before  # the evaluation deals are the same deals
    assert trained > untrained > random_play
    assert verdict == "the learned policy beats random"
    assert verdict_before == verdict


#: The example's game, as its text describes it: Drei Karten for 3 with one card each from six.
CFR_GAME = dict(players=3, tricks=1, stake=1, tipp_zwang=False, deal_from="HAHKHQDADKDQ")


def _printed_nash_conv(*args: str) -> float:
    out = _run("examples/openspiel_cfr.py", *args)
    assert "python_tippen_drei_karten_1821(" in out
    return float(out.split("NashConv ")[1].split()[0])


def test_openspiel_cfr_example_prints_the_nash_conv_of_its_policy() -> None:
    from open_spiel.python import policy as policy_lib
    from open_spiel.python.algorithms import cfr, exploitability

    from stammtisch.envs.openspiel import load

    game = load("tippen/drei-karten-1821", **CFR_GAME)
    uniform = exploitability.nash_conv(game, policy_lib.UniformRandomPolicy(game))
    solver = cfr.CFRSolver(game)
    for _ in range(2):
        solver.evaluate_and_update_policy()
    after_two = exploitability.nash_conv(game, solver.average_policy())
    assert 0 < after_two < uniform  # CFR moves towards an equilibrium
    # CFR is deterministic: the example's figure is the one computed here (to its 4 decimals)
    assert _printed_nash_conv("--iterations", "2") == pytest.approx(after_two, abs=6e-5)
    # one iteration of external-sampling MCCFR averages only the uniform policy it started from
    assert _printed_nash_conv("--iterations", "1", "--algorithm", "mccfr") == pytest.approx(uniform, abs=6e-5)


def test_the_core_package_imports_no_rl_library() -> None:
    code = ("import sys, stammtisch, stammtisch.cli, stammtisch.bots, stammtisch.sim, stammtisch.envs; "
            "print(sorted(m for m in ('pyspiel', 'open_spiel', 'gymnasium', 'pettingzoo') if m in sys.modules))")
    assert _run("-c", code).strip() == "[]"
