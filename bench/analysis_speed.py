"""``stammtisch analyze RECORD`` per record, process start included, this checkout against another.

Every record of ``tests/records/`` (or those named with ``--only``) is analysed by a new
process of ``python -m stammtisch analyze RECORD`` (the default options: all cores), once by
this checkout and once by ``--other`` (another checkout's root, e.g. the main branch beside
this one: ``git worktree add ../base main``), alternately, ``--rounds`` times each. The other
checkout runs on this interpreter with its root first on the path (its compiled engines if it
has them, else its Python sources; ``STAMMTISCH_PURE_PYTHON=1`` in the environment runs both on
their Python sources). One analysis per checkout is run first and not counted: numba's loading
or compiling of the kernel's cache.

Prints one JSON object: per record the best wall seconds and the CPU seconds (user + system of
that run) of each checkout, their ratio (other / ours), whether the outputs were the same byte
for byte, and whether ours meets the bar (``--bar`` seconds, wall); then the totals and the
machine's load average. Without ``--other`` only this checkout is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "tests" / "records"
BAR_S = 1.5


def run(root: Path, record: Path) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds, stdout) of one ``analyze`` by the checkout at ``root``."""
    env = dict(os.environ, PYTHONPATH=str(root))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # the checkout's root is the working directory: ``-m`` puts it first on the path
    out = subprocess.run([sys.executable, "-m", "stammtisch", "analyze", str(record)], cwd=root, env=env,
                         capture_output=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--other", type=Path, help="the root of another checkout to compare with")
    parser.add_argument("--rounds", type=int, default=3, help="analyses per record and checkout (best counts)")
    parser.add_argument("--only", default="", help="comma-separated record names (without .json)")
    parser.add_argument("--bar", type=float, default=BAR_S, help="wall seconds per record at most")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    records = [RECORDS / f"{n}.json" for n in names] if names else sorted(RECORDS.glob("*.json"))
    roots = {"ours": ROOT}
    if args.other is not None:
        roots["other"] = args.other.resolve()
    warm = RECORDS / "rules-3-modern-herzsolo-72.json"
    for root in roots.values():
        run(root, warm)
    rows: dict[str, Any] = {}
    for record in records:
        best: dict[str, tuple[float, float]] = {}
        outputs: dict[str, bytes] = {}
        for _ in range(args.rounds):
            for name, root in roots.items():
                wall, cpu, out = run(root, record)
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, cpu)
                outputs[name] = out
        row: dict[str, Any] = {"ours_wall_s": round(best["ours"][0], 3), "ours_cpu_s": round(best["ours"][1], 3),
                               "bar_met": best["ours"][0] <= args.bar}
        if "other" in best:
            row.update(other_wall_s=round(best["other"][0], 3), other_cpu_s=round(best["other"][1], 3),
                       ratio=round(best["other"][0] / best["ours"][0], 2),
                       same_output=outputs["other"] == outputs["ours"])
        rows[record.stem] = row
        print(json.dumps({record.stem: row}), file=sys.stderr)
    summary: dict[str, Any] = {
        "records": len(rows),
        "ours_total_wall_s": round(sum(r["ours_wall_s"] for r in rows.values()), 2),
        "ours_max_wall_s": max(r["ours_wall_s"] for r in rows.values()),
        "bar_met": sum(r["bar_met"] for r in rows.values()),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    if "other" in roots:
        summary.update(other_total_wall_s=round(sum(r["other_wall_s"] for r in rows.values()), 2),
                       other_max_wall_s=max(r["other_wall_s"] for r in rows.values()),
                       all_same_output=all(r["same_output"] for r in rows.values()))
    print(json.dumps({"per_record": rows, "summary": summary}, indent=1))


if __name__ == "__main__":
    main()
