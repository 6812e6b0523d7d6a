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


def test_masked_learner_example() -> None:
    out = _run("examples/masked_learner.py", "--episodes", "30", "--eval", "20")
    assert "learned policy" in out and "random policy" in out
    assert ("beats random" in out) or ("does not beat random" in out)


def test_openspiel_cfr_example_prints_nash_conv() -> None:
    out = _run("examples/openspiel_cfr.py", "--iterations", "1", "--algorithm", "mccfr")
    assert "python_tippen_drei_karten_1821(" in out
    value = float(out.split("NashConv ")[1].split()[0])
    assert value >= 0.0


def test_the_core_package_imports_no_rl_library() -> None:
    code = ("import sys, stammtisch, stammtisch.cli, stammtisch.bots, stammtisch.sim, stammtisch.envs; "
            "print(sorted(m for m in ('pyspiel', 'open_spiel', 'gymnasium', 'pettingzoo') if m in sys.modules))")
    assert _run("-c", code).strip() == "[]"
