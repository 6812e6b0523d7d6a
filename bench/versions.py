"""Run one measuring function of a bench script under several builds, side by side in one run.

A build is where ``stammtisch`` comes from: ``this`` (this checkout as installed: compiled
where it was built so), ``python`` (this checkout's plain Python sources,
``STAMMTISCH_PURE_PYTHON=1``), or another checkout given by its root (``--other ../base``,
e.g. ``git worktree add ../base main``), which runs as plain Python. Every build but ``this``
runs in a subprocess that imports the bench script by its path and calls the function there,
so all builds run the very same measuring code; the function times itself (the start of the
subprocess is not in its figure) and returns a JSON-able result. Callers interleave the builds
in slices, so that a change of the machine's speed falls on all of them alike.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

_RUNNER = """
import importlib.util, json, sys
root, script, function, args = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
if root:
    sys.path.insert(0, root)
import stammtisch
assert not root or stammtisch.__file__.startswith(root), stammtisch.__file__
spec = importlib.util.spec_from_file_location("bench_under_test", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(getattr(module, function)(*args)))
"""


@dataclass(frozen=True)
class Build:
    name: str
    root: Path | None = None  # another checkout; None: this one
    pure: bool = False  # this checkout's Python sources
    separate: bool = False  # this build, but in a process of its own

    def call(self, script: Path, function: str, *args: Any) -> Any:
        """``script.function(*args)`` under this build (in this process for ``this``)."""
        if self.root is None and not self.pure and not self.separate:
            import importlib.util

            spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return getattr(module, function)(*args)
        env = dict(os.environ)
        if self.pure:
            env["STAMMTISCH_PURE_PYTHON"] = "1"
        done = subprocess.run(
            [sys.executable, "-c", _RUNNER, str(self.root or ""), str(script), function, json.dumps(args)],
            capture_output=True, text=True, env=env, cwd=self.root or ROOT, timeout=3600)
        if done.returncode != 0:
            raise SystemExit(f"{self.name}: {script.name} {function} failed:\n{done.stderr[-3000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def builds(other: Path | None, pure: bool = True) -> list[Build]:
    """This build, this checkout's plain Python (if ``pure``), and the other checkout (if given)."""
    out = [Build("this")]
    if pure:
        out.append(Build("python", pure=True))
    if other is not None:
        root = other.resolve()
        if not (root / "stammtisch" / "__init__.py").is_file():
            raise SystemExit(f"{root} is not a checkout of stammtisch")
        out.append(Build("other", root=root))
    return out


def native() -> bool:
    """Does ``this`` build run compiled (``stammtisch.NATIVE``; False for a tree without it)?"""
    import stammtisch

    return bool(getattr(stammtisch, "NATIVE", False))
