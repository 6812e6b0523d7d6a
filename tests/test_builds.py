"""The two builds of the engines and bots: compiled by mypyc where ``pip install`` found a C
compiler, and the plain Python sources (``stammtisch/_native.py``).

* The compiled build runs only while it matches the sources; after an edit, and with
  ``STAMMTISCH_PURE_PYTHON=1``, the sources run.
* Both builds play the same deals action for action, and the play's tables agree with the
  reference functions of ``games/tricks.py``: 10,000 random deals of every rule set, with
  random options (``bench/engine_agreement.py`` runs a million).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import stammtisch
from stammtisch import _native
from stammtisch.rules import PRESETS

ROOT = Path(__file__).resolve().parents[1]
DEALS = 10_000


def _loaded_as() -> dict[str, str]:
    """Per compiled module: ``compiled`` or ``python``, as this process imported it."""
    out = {}
    for path in _native.COMPILED:
        name = _native.module_name(path)
        module = importlib.import_module(name)
        loader = module.__spec__.loader if module.__spec__ else None
        out[name] = "compiled" if isinstance(loader, importlib.machinery.ExtensionFileLoader) else "python"
    return out


def _in_subprocess(code: str, env: dict[str, str], cwd: Path = ROOT, root: Path | None = None) -> dict:
    prefix = f"import sys; sys.path.insert(0, {str(root)!r})\n" if root else ""
    done = subprocess.run([sys.executable, "-c", prefix + code], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


REPORT = """
import json, importlib, importlib.machinery, stammtisch
from stammtisch import _native
kinds = {}
for path in _native.COMPILED:
    module = importlib.import_module(_native.module_name(path))
    kinds[module.__name__] = isinstance(module.__spec__.loader, importlib.machinery.ExtensionFileLoader)
print(json.dumps({"native": stammtisch.NATIVE, "file": stammtisch.__file__, "compiled": kinds}))
"""


def test_the_compiled_build_runs_exactly_while_it_matches_the_sources() -> None:
    pure = os.environ.get(_native.PURE_ENV, "") not in ("", "0")
    assert stammtisch.NATIVE == (not pure and _native.compiled_build_matches())
    assert set(_loaded_as().values()) == {"compiled" if stammtisch.NATIVE else "python"}
    env = {**os.environ, _native.PURE_ENV: "1"}
    report = _in_subprocess(REPORT, env)
    assert report["native"] is False and not any(report["compiled"].values())


def test_an_edited_source_runs_as_python_until_it_is_compiled_again(tmp_path: Path) -> None:
    copy = tmp_path / "stammtisch"
    shutil.copytree(ROOT / "stammtisch", copy, ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != _native.PURE_ENV}
    before = _in_subprocess(REPORT, env, tmp_path, tmp_path)
    assert before["file"].startswith(str(tmp_path))
    assert before["native"] == _native.compiled_build_matches()  # the copy has the build, if any
    with open(copy / "games" / "tricks.py", "a") as source:
        source.write("\n# an edit\n")
    after = _in_subprocess(REPORT, env, tmp_path, tmp_path)
    assert after["native"] is False and not any(after["compiled"].values())


def _agreement_module():
    spec = importlib.util.spec_from_file_location("engine_agreement", ROOT / "bench" / "engine_agreement.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_builds_play_every_rule_set_alike_and_as_the_reference_functions_say() -> None:
    """This process's build checks every follower's legal cards and every trick's winner
    against ``tricks.py``; the other build (a subprocess) plays the same deals; the digests of
    every legal-action list, every state after an action and every result agree."""
    agreement = _agreement_module()
    ids = list(PRESETS)
    other_env = dict(os.environ)
    if stammtisch.NATIVE:
        other_env[_native.PURE_ENV] = "1"
    else:
        other_env.pop(_native.PURE_ENV, None)
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); import json, engine_agreement; "
            f"print(json.dumps(engine_agreement.agreements({ids!r}, {DEALS}, 1, False)))")
    with ThreadPoolExecutor(1) as pool:
        theirs = pool.submit(subprocess.run, [sys.executable, "-c", code], capture_output=True, text=True,
                             env=other_env, cwd=ROOT, timeout=1200)
        ours = agreement.agreements(ids, DEALS, 1, True)
        done = theirs.result()
    assert done.returncode == 0, done.stderr
    other = json.loads(done.stdout.strip().splitlines()[-1])
    for mine, that in zip(ours, other, strict=True):
        assert mine["ruleset"] == that["ruleset"] and mine["deals"] == that["deals"] == DEALS
        assert mine["mismatches"] == 0, mine
        assert mine["follows"] > 10_000 and mine["tricks"] > 10_000, mine
        assert mine["digest"] == that["digest"], (mine["ruleset"], mine["compiled"], that["compiled"])
    assert {mine["compiled"] for mine in ours} == {stammtisch.NATIVE}
    assert {that["compiled"] for that in other} == {not stammtisch.NATIVE and _native.compiled_build_matches()}
