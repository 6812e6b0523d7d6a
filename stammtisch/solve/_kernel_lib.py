"""The numba kernel's two entries (``exact``, ``probe``) as a shared library of native code.

Loading the kernel through numba costs most of a second of every process that solves: importing
numba, setting up its compiler's typing and target registries, and loading the cached code.
The search itself is often less. So the first process that needs the kernel on a machine has
numba compile the two entries as C callables (``numba.cfunc``, over the same jitted functions
of :mod:`stammtisch.solve._kernel`), writes their native code out as an object file, links it
into a shared library with the C compiler and keeps it beside numba's cache; every later
process loads that library with ``ctypes`` in milliseconds and never imports numba.

The library is named by a digest of everything its code depends on (the kernel's sources,
numba's and llvmlite's versions, the host CPU and its features), so an edit or an upgrade
builds a new one. Where it cannot be built (no C compiler, no writable cache directory, an
unexpected symbol) ``load`` returns None and the solver calls numba's dispatchers as before:
the same code, the same answers; a failed build leaves a ``.failed`` note beside where the
library would be, so that later processes do not try again (delete it to retry).

numba's object code names a few symbols of its runtime for raising exceptions (the C wrapper
that ``cfunc`` adds around each entry, reference counts of arrays that own memory). The entries
here are called past that wrapper (the shim below calls numba's own function and checks its
status), the arrays are views of memory the caller owns, and the kernel raises nothing; the
shim defines those symbols as stand-ins that only mark the call failed, and a failed call raises
in Python.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import _layout

#: what a failed call of the library returns (then ``Library.exact``/``probe`` raise)
FAILED = -(1 << 63)
#: numba runtime symbols the object code may name; the shim defines them as stand-ins
_RUNTIME_STUBS = {
    "NRT_Free": "void NRT_Free(void *p) { (void)p; failed = 1; }",
    "NRT_MemInfo_call_dtor": "void NRT_MemInfo_call_dtor(void *m) { (void)m; failed = 1; }",
    "numba_gil_ensure": "void numba_gil_ensure(void *s) { (void)s; failed = 1; }",
    "numba_gil_release": "void numba_gil_release(void *s) { (void)s; }",
    "numba_do_raise": "int numba_do_raise(void *e) { (void)e; failed = 1; return 0; }",
    "numba_unpickle": "void *numba_unpickle(const char *d, int n, const char *h) "
                      "{ (void)d; (void)n; (void)h; failed = 1; return 0; }",
    "numba_runtime_build_excinfo_struct": "void *numba_runtime_build_excinfo_struct(void *a, void *b) "
                                          "{ (void)a; (void)b; failed = 1; return 0; }",
}
#: the arguments after the work array, the table and the table's length
_EXACT_ARGS = ("turn", "k", "lead_suit", "win_card", "win_pl", "tval", "tmask", "rempts", "rem", "trick_no",
               "guess")
_PROBE_ARGS = _EXACT_ARGS[:-1] + ("alpha", "beta")
_ENV_OFF = "STAMMTISCH_KERNEL_LIB"  # "0": never build nor load the library (numba's dispatchers run)


class Library:
    """The loaded library: ``exact`` and ``probe`` with the arguments of the kernel's own."""

    def __init__(self, path: Path) -> None:
        lib = ctypes.CDLL(str(path))
        i64: Any = ctypes.c_int64
        ptr: Any = ctypes.c_void_p
        self._exact = lib.stammtisch_exact
        self._exact.argtypes = [ptr, ptr, i64] + [i64] * len(_EXACT_ARGS)
        self._exact.restype = i64
        self._probe = lib.stammtisch_probe
        self._probe.argtypes = [ptr, ptr, i64] + [i64] * len(_PROBE_ARGS)
        self._probe.restype = i64
        self.path = path

    def exact(self, work: Any, table: Any, *args: int) -> int:
        out = int(self._exact(_address(work), _address(table), len(table), *args))
        if out == FAILED:
            raise RuntimeError(f"the solver's kernel library {self.path} failed")
        return out

    def probe(self, work: Any, table: Any, *args: int) -> int:
        out = int(self._probe(_address(work), _address(table), len(table), *args))
        if out == FAILED:
            raise RuntimeError(f"the solver's kernel library {self.path} failed")
        return out


def _address(buffer: Any) -> int:
    """Where an int64 array's data is: an ``array.array`` or a writable ``memoryview`` (the
    solver's), or a numpy array."""
    if isinstance(buffer, array):
        return int(buffer.buffer_info()[0])
    if isinstance(buffer, memoryview):
        return ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    return int(buffer.ctypes.data)


def load(build: bool = True) -> Library | None:
    """The kernel's library for this machine, built first if there is none and ``build`` (see
    the module docstring); None where it cannot be had."""
    if os.environ.get(_ENV_OFF, "1") == "0":
        return None
    try:
        name = f"kernel-{_digest()}.so"
    except (OSError, ImportError):
        return None
    for folder in _folders():
        path = folder / name
        if path.is_file():
            try:
                return Library(path)
            except OSError:
                continue
    if not build or any((folder / f"{name}.failed").is_file() for folder in _folders()):
        return None  # a build that failed here once fails again: not every process tries
    for folder in _folders():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=folder) as tmp:
                Path(tmp, "probe").write_bytes(b"")
        except OSError:
            continue  # not writable: the next folder
        with _building(folder / "build.lock"):
            if (folder / name).is_file():  # another process built it while this one waited
                with contextlib.suppress(OSError):
                    return Library(folder / name)
            if (folder / f"{name}.failed").is_file():
                return None
            try:
                return Library(_build(folder, name))
            except Exception as e:  # noqa: BLE001 - whatever stops the build, numba's dispatchers still run
                with contextlib.suppress(OSError):
                    (folder / f"{name}.failed").write_text(f"{type(e).__name__}: {e}\n")
                return None
    return None


@contextlib.contextmanager
def _building(lock_path: Path) -> Iterator[None]:
    """One build at a time per folder: processes that start together on a fresh machine (a
    server's workers, the test processes) wait for the first one's library rather than each
    spending seconds building the same one. Without ``fcntl`` (Windows) each builds its own."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _folders() -> list[Path]:
    """Where the library may be: numba's cache folder if set, else beside the kernel's own
    ``__pycache__``, else the user's cache."""
    here = Path(__file__).resolve().parent
    out = []
    if os.environ.get("NUMBA_CACHE_DIR"):
        out.append(Path(os.environ["NUMBA_CACHE_DIR"]) / "stammtisch")
    out.append(here / "__pycache__")
    out.append(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "stammtisch")
    return out


def _versions() -> bytes:
    """numba's and llvmlite's installed versions (their ``_version.py``), read without importing
    them (that is the cost saved) or scanning the installed distributions' metadata."""
    from importlib.util import find_spec

    out = b""
    for name in ("numba", "llvmlite"):
        spec = find_spec(name)
        if spec is None or spec.origin is None:
            raise ImportError(f"{name} is not installed")
        version = Path(spec.origin).parent / "_version.py"
        out += spec.origin.encode() + (version.read_bytes() if version.is_file() else b"")
    return out


def _host() -> str:
    """The CPU the code is compiled for: its model name and flags as the kernel reports them."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        import platform

        return platform.machine() + platform.processor()
    lines = [line for line in text.splitlines() if line.startswith(("model name", "flags", "Features"))]
    return "\n".join(dict.fromkeys(lines))


def _digest() -> str:
    here = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for part in ("_kernel.py", "_layout.py", "_kernel_lib.py"):
        h.update((here / part).read_bytes())
    h.update(_versions())
    h.update(_host().encode())
    h.update(sys.version.encode())
    return h.hexdigest()[:24]


def _shim(exact: str, probe: str, undefined: set[str]) -> str:
    """C source: the two entries around numba's own functions, and the runtime stand-ins."""
    unknown = undefined - set(_RUNTIME_STUBS) - {exact, probe}
    if any(not s.startswith(("Py", "_Py")) for s in unknown):
        # anything else would be a symbol this shim does not know to provide
        raise RuntimeError(f"the kernel's object code names unexpected symbols: {sorted(unknown)}")
    params = ", ".join(f"int64_t {a}" for a in _EXACT_ARGS)
    probe_params = ", ".join(f"int64_t {a}" for a in _PROBE_ARGS)
    out = ["#include <stdint.h>", "static int failed;",
           f"int32_t numba_exact(int64_t *ret, void **exc, int64_t *w, int64_t *tt, int64_t n, {params})"
           f' __asm__("{exact}");',
           f"int32_t numba_probe(int64_t *ret, void **exc, int64_t *w, int64_t *tt, int64_t n, {probe_params})"
           f' __asm__("{probe}");']
    out += [stub for name, stub in _RUNTIME_STUBS.items()]
    for entry, args in (("exact", _EXACT_ARGS), ("probe", _PROBE_ARGS)):
        names = ", ".join(args)
        sig = ", ".join(f"int64_t {a}" for a in args)
        out.append(f"int64_t stammtisch_{entry}(int64_t *w, int64_t *tt, int64_t n, {sig}) {{\n"
                   f"    int64_t ret = 0; void *exc = 0;\n    failed = 0;\n"
                   f"    if (numba_{entry}(&ret, &exc, w, tt, n, {names}) != 0 || failed) return {FAILED}LL;\n"
                   f"    return ret;\n}}")
    return "\n".join(out) + "\n"


def _build(folder: Path, name: str) -> Path:
    """Compile the entries with numba, link them with the C compiler into ``folder/name``."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        raise RuntimeError("no C compiler")
    objects = _object_code()
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        obj = Path(tmp) / "kernel.o"
        obj.write_bytes(objects[0])
        undefined = _undefined(obj)
        shim = Path(tmp) / "shim.c"
        shim.write_text(_shim(objects[1], objects[2], undefined))
        out = Path(tmp) / name
        subprocess.run([compiler, "-shared", "-fPIC", "-O2", "-o", str(out), str(shim), str(obj)], check=True,
                       capture_output=True, timeout=300)
        final = folder / name
        os.replace(out, final)  # atomic: a process loading it meanwhile sees none or all of it
    if folder == Path(__file__).resolve().parent / "__pycache__":
        # this checkout's own: the others there were built from earlier sources (a cache folder
        # shared by several checkouts or interpreters keeps all of theirs)
        for old in folder.glob("kernel-*"):
            if old != final:
                old.unlink(missing_ok=True)
    return final


def _undefined(obj: Path) -> set[str]:
    """The symbols the object file names but does not define (``nm -u``; empty if no ``nm``)."""
    nm = shutil.which("nm")
    if not nm:
        return set()
    out = subprocess.run([nm, "-u", str(obj)], check=True, capture_output=True, text=True, timeout=60).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def _object_code() -> tuple[bytes, str, str]:
    """(position-independent object code of both entries, numba's symbol of ``exact``, of ``probe``)."""
    sys_modules_scipy = "scipy" not in sys.modules
    if sys_modules_scipy:
        sys.modules["scipy"] = None  # type: ignore[assignment]  # as in ``solver._kernel_module``
    try:
        # numba and llvmlite untyped for mypy
        ll: Any = importlib.import_module("llvmlite.binding")
        numba: Any = importlib.import_module("numba")

        from . import _kernel as K
    finally:
        if sys_modules_scipy:
            del sys.modules["scipy"]
    carray, cfunc, types = numba.carray, numba.cfunc, numba.types
    i64, ptr = types.int64, types.CPointer(types.int64)
    size = _layout.W_SIZE

    def exact(wp: Any, ttp: Any, n: int, turn: int, k: int, lead_suit: int, win_card: int, win_pl: int,
              tval: int, tmask: int, rempts: int, rem: int, trick_no: int, guess: int) -> int:
        return K.exact(carray(wp, (size,)), carray(ttp, (n,)), turn, k, lead_suit, win_card, win_pl, tval,
                       tmask, rempts, rem, trick_no, guess)

    def probe(wp: Any, ttp: Any, n: int, turn: int, k: int, lead_suit: int, win_card: int, win_pl: int,
              tval: int, tmask: int, rempts: int, rem: int, trick_no: int, alpha: int, beta: int) -> int:
        return K.probe(carray(wp, (size,)), carray(ttp, (n,)), turn, k, lead_suit, win_card, win_pl, tval,
                       tmask, rempts, rem, trick_no, alpha, beta)

    c_exact: Any = cfunc(i64(ptr, ptr, *([i64] * (1 + len(_EXACT_ARGS)))))(exact)
    c_probe: Any = cfunc(i64(ptr, ptr, *([i64] * (1 + len(_PROBE_ARGS)))))(probe)
    # one module holding both (and the kernel's functions once), compiled for this CPU as
    # position-independent code, as a shared library needs
    module = ll.parse_assembly(c_exact._library.get_llvm_str())
    module.link_in(ll.parse_assembly(c_probe._library.get_llvm_str()), preserve=False)
    machine = ll.Target.from_default_triple().create_target_machine(
        cpu=ll.get_host_cpu_name(), features=ll.get_host_cpu_features().flatten(), opt=3, reloc="pic",
        codemodel="default")
    return machine.emit_object(module), _inner(c_exact), _inner(c_probe)


def _inner(compiled: Any) -> str:
    """numba's own function under a ``cfunc``'s C wrapper (its status-returning convention)."""
    name = str(compiled.native_name)
    return name.removeprefix("cfunc.")
