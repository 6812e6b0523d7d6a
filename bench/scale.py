"""Scaling of simulate: deals per second on 1 core, on all cores (processes), on a local Ray cluster.

The same job (``stammtisch.sim.run_simulation``: heuristic bots, chunks of ``--chunk-deals``
deals, one table session per chunk) runs three times, measured in the same run:

1. in this process (1 worker): the peer figure the others are compared with;
2. on ``--workers`` local processes (default: all cores), pool start-up included;
3. on a private local Ray cluster of the same size (``ray.init(num_cpus=workers)``); the
   cluster's start-up is reported apart (a cluster is started once and used for many jobs),
   the first tasks' worker start-up is included.

Speed-up = single time ÷ parallel time; efficiency = speed-up ÷ workers. The three summaries
must be identical (same seed, same chunks); ``identical_summaries`` says whether they were.
The load average before and after is printed because the machine may be shared; so is the
workers' CPU time (measured inside each chunk), its deals per CPU-second (the workers' own
speed) and ``cpu_share``: CPU time ÷ (wall time × workers), the share of the cores the run
actually got, and ``cores_used`` (CPU time ÷ wall time). On a busy machine a low speed-up with a
low cpu_share means the cores were taken by others, not lost to overhead. With Linux's
autogroup on (``sched_autogroup``) the CPU is shared between sessions: local worker processes
(one session) then get about what one process gets, while Ray's workers run in sessions of their
own; on a machine of one's own both scale with the cores.

    python bench/scale.py [--deals 100000] [--ruleset tippen/grupp-1975] [--workers N] [--no-ray]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stammtisch.rules import RuleError, ruleset  # noqa: E402
from stammtisch.sim.batch import Backend, available_cores  # noqa: E402
from stammtisch.sim.simulate import SimulationJob, default_names, run_simulation  # noqa: E402


def timed_run(job: SimulationJob, deals: int, seed: int, backend: Backend, chunk_deals: int,
              cpu: dict[str, float]) -> tuple[float, str]:
    start = time.perf_counter()
    run = run_simulation(job, deals, seed, backend, chunk_deals)
    seconds = time.perf_counter() - start
    cpu["seconds"] = run.worker_cpu_seconds
    if not run.outcome.complete:
        raise SystemExit(f"the {backend.describe()} run did not complete: {run.outcome.problems()}")
    return seconds, json.dumps(run.summary.to_json(job.rules.family), sort_keys=True)


def figure(seconds: float, deals: int, single_seconds: float | None, workers: int,
           cpu: dict[str, float] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"seconds": round(seconds, 2), "deals_per_s": round(deals / seconds, 1)}
    if cpu is not None:  # deals per CPU-second of the workers: their speed, whatever the machine's load
        out.update(worker_cpu_seconds=round(cpu["seconds"], 2), deals_per_worker_cpu_s=round(deals / cpu["seconds"], 1),
                   cores_used=round(cpu["seconds"] / seconds, 3),
                   cpu_share=round(cpu["seconds"] / (seconds * workers), 3))
    if single_seconds is not None:
        speedup = single_seconds / seconds
        out.update(speedup=round(speedup, 3), efficiency=round(speedup / workers, 3))
    return out


def _autogroup() -> bool | None:
    """Linux's autogroup shares the CPU fairly between sessions, not processes: on a busy machine
    worker processes of one session then get no more CPU together than one process alone."""
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1"
    except OSError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=100_000, help="deals per run (default 100000)")
    parser.add_argument("--ruleset", default="tippen/grupp-1975", help="rule set (default tippen/grupp-1975)")
    parser.add_argument("--workers", type=int, default=None, help="parallel workers (default: all cores)")
    parser.add_argument("--chunk-deals", type=int, default=100, help="deals per chunk/session (default 100)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray run")
    args = parser.parse_args()
    if args.deals < 1 or args.chunk_deals < 1 or (args.workers is not None and args.workers < 1):
        parser.error("--deals, --chunk-deals and --workers must be at least 1")
    try:
        rules = ruleset(args.ruleset)
    except RuleError as e:
        parser.error(str(e))
    workers = args.workers or available_cores()
    job = SimulationJob(rules, tuple(default_names(rules.players)), ("heuristic",) * rules.players)
    result: dict[str, Any] = {
        "figure": "simulate_scaling", "ruleset": args.ruleset, "players": rules.players, "bots": "heuristic",
        "deals": args.deals, "chunk_deals": args.chunk_deals, "seed": args.seed, "workers": workers,
        "cores": os.cpu_count(), "load_before": [round(x, 2) for x in os.getloadavg()],
        "sched_autogroup": _autogroup(),
    }
    cpu: dict[str, float] = {}
    single_s, single_summary = timed_run(job, args.deals, args.seed, Backend("inline", 1), args.chunk_deals, cpu)
    result["single"] = figure(single_s, args.deals, None, 1, cpu)
    summaries = [single_summary]
    proc_s, proc_summary = timed_run(job, args.deals, args.seed, Backend("processes", workers), args.chunk_deals,
                                     cpu)
    result["processes"] = figure(proc_s, args.deals, single_s, workers, cpu)
    summaries.append(proc_summary)
    if not args.no_ray:
        try:
            import ray
        except ImportError:
            result["ray"] = {"error": "Ray is not installed (pip install 'stammtisch[cluster]')"}
        else:
            start = time.perf_counter()
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False,
                     runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
            startup = time.perf_counter() - start
            try:
                ray_s, ray_summary = timed_run(job, args.deals, args.seed, Backend("ray", workers, "local"),
                                               args.chunk_deals, cpu)
            finally:
                ray.shutdown()
            result["ray"] = figure(ray_s, args.deals, single_s, workers, cpu)
            result["ray"]["cluster_startup_seconds"] = round(startup, 2)
            summaries.append(ray_summary)
    result["identical_summaries"] = len(set(summaries)) == 1
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
