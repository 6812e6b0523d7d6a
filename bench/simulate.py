"""``stammtisch simulate --workers 1`` with heuristic bots: deals per second, under every build side
by side (``bench/versions.py``): this checkout as installed (``ours``), its plain Python sources
(``ours_python``) and with ``--other ROOT`` another checkout, e.g. the main branch
(``git worktree add ../base main``), in interleaved slices. Each slice is the job the command
runs (``run_simulation`` in this process, chunks of 100 deals, the summary made as
``--json`` prints it), timed in CPU seconds of its process without the command's start-up;
``same_summary`` says whether every build printed the same summary, byte for byte. Beside,
``command_cpu_s``: the whole command (``python -m stammtisch simulate … --json``, its start-up
included) run by each build, in CPU seconds of its process.

    python bench/simulate.py [--deals 10000] [--rounds 2] [--other ../base] [--only tapp/modern]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from versions import builds, native  # noqa: E402

HERE = Path(__file__).resolve()
RULE_SETS = ("tippen/grupp-1975", "tapp/modern", "tapp/classic-1879")


def simulate_job(ruleset_id: str, deals: int, seed: int) -> dict[str, Any]:
    """The job of ``stammtisch simulate RULESET --deals DEALS --seed SEED --workers 1 --json``:
    its CPU seconds and the digest of the JSON line it prints."""
    from stammtisch.cli.simulate_cmd import summary_json
    from stammtisch.rules import ruleset
    from stammtisch.sim.batch import choose_backend
    from stammtisch.sim.simulate import SimulationJob, bots_per_seat, default_names, run_simulation

    rules = ruleset(ruleset_id)
    job = SimulationJob(rules, tuple(default_names(rules.players)), tuple(bots_per_seat(["heuristic"], rules.players)))
    start = time.process_time()
    run = run_simulation(job, deals, seed, choose_backend(1), 100)
    data = summary_json(run.summary, rules, ruleset_id)
    data.update(seed=seed, chunk_deals=100, complete=run.outcome.complete, problems=run.outcome.problems())
    line = json.dumps(data, ensure_ascii=False)
    seconds = time.process_time() - start
    return {"seconds": seconds, "summary": hashlib.sha256(line.encode()).hexdigest()}


def command_cpu_seconds(build: Any, ruleset_id: str, deals: int, seed: int) -> tuple[float, str]:
    """CPU seconds of ``python -m stammtisch simulate`` under a build, and its output's digest."""
    env = dict(os.environ)
    if build.pure:
        env["STAMMTISCH_PURE_PYTHON"] = "1"
    cwd = build.root or HERE.parents[1]
    if build.root is not None:
        env["PYTHONPATH"] = str(build.root)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "stammtisch", "simulate", ruleset_id, "--deals", str(deals),
                           "--seed", str(seed), "--workers", "1", "--json"], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=3600, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, hashlib.sha256(done.stdout.encode()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=10_000, help="deals per job (default 10000)")
    parser.add_argument("--rounds", type=int, default=2, help="jobs per build and rule set, interleaved")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--other", type=Path, default=None, help="root of another checkout to compare with")
    parser.add_argument("--only", action="append", help="one rule set id (repeatable)")
    args = parser.parse_args()
    runs = builds(args.other)
    for rid in args.only or RULE_SETS:
        seconds: dict[str, list[float]] = {b.name: [] for b in runs}
        summaries = set()
        for r in range(args.rounds):
            for build in runs:
                out = build.call(HERE, "simulate_job", rid, args.deals, args.seed + r)
                seconds[build.name].append(out["seconds"])
                summaries.add((r, out["summary"]))
        rate = {name: args.deals * len(v) / sum(v) for name, v in seconds.items()}
        command = {build.name: command_cpu_seconds(build, rid, args.deals, args.seed) for build in runs}
        line = {"figure": "simulate_deals_per_cpu_s", "ruleset": rid, "deals": args.deals, "bots": "heuristic",
                "ours": round(rate["this"]), "ours_compiled": native(), "ours_python": round(rate["python"]),
                "same_summary": len(summaries) == args.rounds,
                "command_cpu_s": {name: round(cpu, 2) for name, (cpu, _) in command.items()},
                "same_command_output": len({digest for _, digest in command.values()}) == 1}
        if "other" in rate:
            line.update(other=round(rate["other"]), ratio=round(rate["this"] / rate["other"], 2),
                        command_ratio=round(command["other"][0] / command["this"][0], 2))
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
