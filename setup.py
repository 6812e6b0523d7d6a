"""Builds stammtisch, with its engines and bots compiled by mypyc where a C compiler is at hand.

The modules listed in ``stammtisch/_native.py`` are compiled into C extensions beside their
sources; ``import stammtisch`` runs them only while they match the sources (see that module).
Without a C compiler, or without mypyc, nothing is compiled and the package runs as plain
Python. ``STAMMTISCH_PURE_PYTHON=1`` at build time builds nothing. docs/performance.md says why
mypyc.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("stammtisch_native", ROOT / "stammtisch" / "_native.py")
assert _spec is not None and _spec.loader is not None
native = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(native)

#: the compiled modules share one C library inside the package
GROUP = "stammtisch._native"


def native_extensions() -> list[Extension]:
    """mypyc's extensions for the modules of ``_native.COMPILED`` (its C sources written to
    build/), or none when mypyc is missing or the build is asked to be plain Python."""
    if os.environ.get(native.PURE_ENV, "") not in ("", "0"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print("mypyc is not installed: stammtisch runs as plain Python")
        return []
    cwd = os.getcwd()
    os.chdir(ROOT)  # mypyc reads the mypy options of pyproject.toml
    try:
        # the build environment holds setuptools and mypy only: the third-party packages some
        # modules import (numpy for the solver, …) are types unknown to it, which the compiled
        # modules do not need
        options = ["--ignore-missing-imports", "--no-warn-unused-ignores"]
        return list(mypycify([*options, *(f"stammtisch/{path}" for path in native.COMPILED)],
                             opt_level="3", group_name=GROUP))
    finally:
        os.chdir(cwd)


class BuildNative(build_ext):
    """Compiles the modules of ``_native.COMPILED`` with mypyc and writes the digest of their
    sources beside them once every one is built; when compiling fails (no C compiler), builds
    nothing, and the package runs as plain Python."""

    def run(self) -> None:
        package = Path(self.get_ext_fullpath(GROUP + "__mypyc")).parent
        digest = package / native.DIGEST_FILE
        digest.unlink(missing_ok=True)
        extensions = native_extensions()  # here, not when the build's metadata is asked for
        if not extensions:
            return
        # setuptools sets each extension up when the command is finalized: a fresh command,
        # finalized like this one, does that for mypyc's extensions
        self.distribution.ext_modules = extensions
        fresh = build_ext(self.distribution)
        fresh.inplace, fresh.editable_mode = self.inplace, getattr(self, "editable_mode", False)
        fresh.build_lib, fresh.build_temp = self.build_lib, self.build_temp
        fresh.ensure_finalized()
        self.extensions, self.ext_map = fresh.extensions, fresh.ext_map
        try:
            super().run()
        except Exception as error:  # no C compiler, or it failed: plain Python
            print(f"warning: the compiled engines could not be built, stammtisch runs as plain Python: {error}")
            return
        package.mkdir(parents=True, exist_ok=True)
        digest.write_text(native.source_digest(ROOT / "stammtisch") + "\n")


# A stand-in, so that setuptools runs build_ext (and tags a wheel for this platform);
# BuildNative puts mypyc's extensions in its place.
setup(ext_modules=[Extension(GROUP + "__mypyc", sources=[])], cmdclass={"build_ext": BuildNative})
