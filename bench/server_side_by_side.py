"""Two versions of the web table under load at the same moment: this checkout and another.

This machine's speed moves by a third and more from minute to minute, so two runs of
``bench/server_load.py`` one after the other cannot tell a change of a few per cent from the
noise. Here both run together: each checkout's own ``bench/server_load.py`` starts its own
server (its own code) and its own clients, with ``--tables`` tables each, and both see the
same moment of the machine. To see the noise floor, point ``--other`` at a copy of this very
checkout: the differences it prints are what "no change" looks like.

Prints one JSON line per pair (``this`` and ``other``: the steady server CPU per action, its
split, p99, actions per second, lost events, errors; ``diff_us``: this minus other), then a
summary line with every difference and their mean.

    python bench/server_side_by_side.py --other ../base [--pairs 3] [--tables 500]
                                        [--seconds 40]

``--other``: the root of another checkout (``git worktree add ../base HEAD~3``). Its
``bench/server_load.py`` must report ``server_us_per_action_steady``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
FIELDS = ("server_us_per_action_steady", "server_us_per_action_steady_split", "p99_ms",
          "actions_per_s", "lost_events", "errors")


def run_bench(root: Path, tables: int, seconds: float) -> dict[str, Any]:
    """One ``server_load.py`` run of the checkout at ``root``; its JSON line."""
    cmd = [sys.executable, str(root / "bench" / "server_load.py"), "--tables", str(tables),
           "--seconds", str(seconds)]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=root, timeout=seconds + 600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"bench/server_load.py of {root} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return {k: result.get(k) for k in FIELDS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--other", type=Path, required=True,
                    help="root of the other checkout (it runs its own bench/server_load.py)")
    ap.add_argument("--pairs", type=int, default=3, help="pairs of simultaneous runs")
    ap.add_argument("--tables", type=int, default=500, help="tables of each server")
    ap.add_argument("--seconds", type=float, default=40.0, help="length of each run")
    args = ap.parse_args()
    other = args.other.resolve()
    if not (other / "bench" / "server_load.py").is_file():
        ap.error(f"{other} holds no bench/server_load.py")
    diffs = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for pair in range(1, args.pairs + 1):
            this_run = pool.submit(run_bench, HERE, args.tables, args.seconds)
            other_run = pool.submit(run_bench, other, args.tables, args.seconds)
            this, that = this_run.result(), other_run.result()
            diff = this["server_us_per_action_steady"] - that["server_us_per_action_steady"]
            diffs.append(diff)
            print(json.dumps({"pair": pair, "this": this, "other": that, "diff_us": diff}),
                  flush=True)
    print(json.dumps({"pairs": len(diffs), "tables_each": args.tables, "diffs_us": diffs,
                      "mean_diff_us": round(sum(diffs) / len(diffs), 1)}))


if __name__ == "__main__":
    main()
