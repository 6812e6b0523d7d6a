"""Which build of the engines and bots runs: compiled by mypyc, or these Python sources.

``setup.py`` compiles the modules in ``COMPILED`` with mypyc where a C compiler is at hand (the
engines' hot paths at compiled speed; docs/performance.md says why mypyc) and writes the digest
of their sources beside them (``DIGEST_FILE``). ``import stammtisch`` runs the compiled modules
only while that digest is the digest of the sources as they are now: after an edit the sources
run, until the next ``pip install -e .`` compiles them again. Without a compiler nothing is
compiled and the sources run. ``STAMMTISCH_PURE_PYTHON=1`` runs the sources in any case (the
tests run both builds).

This module is read by ``setup.py`` too, so it imports nothing of ``stammtisch``.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

#: the modules compiled, as paths in the package (the engines, their observations and
#: samplers, the heuristic bots, the RL observation's blocks)
COMPILED = (
    "games/tricks.py", "games/engine.py", "games/sampling.py",
    "games/tippen/phases.py", "games/tippen/observation.py", "games/tippen/core.py",
    "games/tippen/words.py", "games/tippen/scoring.py", "games/tippen/sampling.py",
    "games/tippen/state.py", "games/tippen/game.py",
    "games/tapp/contracts.py", "games/tapp/phases.py", "games/tapp/observation.py",
    "games/tapp/scoring.py", "games/tapp/sampling.py", "games/tapp/state.py",
    "games/tapp/auction.py", "games/tapp/rounds.py", "games/tapp/game.py",
    "bots/tippen.py", "bots/tapp.py", "games/agreement.py", "envs/_encode.py", "envs/actions.py",
    "envs/core.py",
)
#: the file, beside the compiled modules, holding the digest of the sources they were built from
DIGEST_FILE = "_native_digest.txt"
#: the environment variable that makes the sources run although a compiled build is there
PURE_ENV = "STAMMTISCH_PURE_PYTHON"
PACKAGE = Path(__file__).resolve().parent


def module_name(path: str) -> str:
    return "stammtisch." + path.removesuffix(".py").replace("/", ".")


def source_digest(package: Path = PACKAGE) -> str:
    """SHA-256 over the compiled modules' sources, in ``COMPILED`` order."""
    h = hashlib.sha256()
    for path in COMPILED:
        h.update(path.encode() + b"\0")
        h.update((package / path).read_bytes())
    return h.hexdigest()


def compiled_build_matches(package: Path = PACKAGE) -> bool:
    """Is there a compiled build, made from the sources as they are now?"""
    try:
        built = (package / DIGEST_FILE).read_text().strip()
    except OSError:
        return False
    return built == source_digest(package)


class _Sources(importlib.abc.MetaPathFinder):
    """Finds the Python source of every compiled module, ahead of the compiled one."""

    def __init__(self, package: Path, names: Sequence[str]) -> None:
        self.files = {module_name(path): package / path for path in names}

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            return None
        return importlib.util.spec_from_file_location(fullname, file)


def choose() -> bool:
    """Decide which build runs (before any compiled module is imported): True for the compiled
    one. Otherwise the sources are put ahead of any compiled module left over from a build."""
    if os.environ.get(PURE_ENV, "") not in ("", "0") or not compiled_build_matches():
        sys.meta_path.insert(0, _Sources(PACKAGE, COMPILED))
        return False
    return True
