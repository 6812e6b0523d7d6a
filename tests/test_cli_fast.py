"""``stammtisch simulate`` and ``analyze`` without Typer (``stammtisch.cli.fast``): the options
they read are the Typer commands', they pass the values Typer would pass (or leave the
arguments to Typer), the commands print the same as through Typer, and they start without
Typer, pydantic, the other commands, the server or the optional heavy libraries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from stammtisch.cli import analyze_cmd, app, fast, simulate_cmd

ROOT = Path(__file__).resolve().parents[1]
#: a record analysed in a fraction of a second
RECORD = str(ROOT / "tests" / "records" / "rules-2.4-examples-1-2-dreiblatt-1859.json")
#: where each command's module looks up the function Typer's command calls
CALLED = {"simulate": (simulate_cmd, "simulate"), "analyze": (analyze_cmd, "analyze")}


def _params(command: str) -> list:
    import typer.main

    return typer.main.get_command(app).commands[command].params


def test_every_command_read_here_is_a_typer_command():
    assert set(fast.COMMANDS) == set(CALLED) == {"simulate", "analyze"}


@pytest.mark.parametrize("command", sorted(fast.COMMANDS))
def test_the_fast_options_are_the_typer_commands(command):
    plain = fast.COMMANDS[command]
    kinds = {}
    for p in _params(command):
        if p.name == plain.argument:
            assert p.param_type_name == "argument" and p.required
            assert {str: "str", Path: "path"}[p.type_descriptor.annotation] == plain.argument_kind
            continue
        d = p.type_descriptor
        least = getattr(d.parameter_info, "min", None)
        assert getattr(d.parameter_info, "max", None) is None
        if p.is_flag:
            kind = "flag"
        elif p.multiple:
            assert d.annotation == list[str]
            kind = "strs"
        else:
            kind = {int: "count" if least == 1 else "int", str: "str", Path: "path"}[d.annotation]
            assert least in (None, 1) and (least is None or kind == "count")
        for name in p.opts + p.secondary_opts:
            kinds[name] = (p.name, kind)
        assert plain.defaults[p.name] == p.default, p.name
    assert kinds == plain.options
    assert set(plain.defaults) == {p.name for p in _params(command)} - {plain.argument}


NOISE = st.sampled_from([
    "--help", "-h", "--", "-", "-k5", "--json=1", "--dealz", "-x", "--no-json", "--version", "x\x00y", "-3",
])
NUMBERS = st.one_of(st.integers(0, 10**7).map(str), st.sampled_from(["07", "-3", " 4", "4 ", "+4", "1e3", "1_000",
                                                                    "\u0663", "10000000000000000000000"]))
VALUES = {
    "int": NUMBERS, "count": NUMBERS,
    "str": st.sampled_from(["auto", "local", "", "a b", "-x", "127.0.0.1:6379"]),
    "path": st.sampled_from(["out", "a/b", "", "-o", "records dir", "~/x"]),
    "strs": st.sampled_from(["heuristic", "random", "club", "pot=true", "players=4", "", "nope"]),
}


#: the one argument of each command: plain ones, and some Typer has to read
ARGUMENTS = {"simulate": ["tippen/grupp-1975", "tapp/modern", "nope", ""],
             "analyze": [RECORD, "a record.json", "missing/x.json", "", "x\x00y"]}


@st.composite
def command_args(draw):
    """A command read here and its arguments: options in either spelling, mostly plain values,
    the one argument anywhere among them, now and then a token Typer has to read."""
    command = draw(st.sampled_from(sorted(fast.COMMANDS)))
    options = fast.COMMANDS[command].options
    parts = []
    for _ in range(draw(st.integers(0, 7))):
        name = draw(st.sampled_from(sorted(options)))
        kind = options[name][1]
        if kind == "flag":
            parts.append([name])
            continue
        value = draw(VALUES[kind])
        parts.append([f"{name}={value}"] if name.startswith("--") and draw(st.booleans()) else [name, value])
    parts.insert(draw(st.integers(0, len(parts))), [draw(st.sampled_from(ARGUMENTS[command]))])
    if draw(st.integers(0, 5)) == 0:
        parts.insert(draw(st.integers(0, len(parts))), [draw(NOISE)])
    return command, [token for part in parts for token in part]


@settings(max_examples=300, deadline=None)
@given(command_args())
def test_plain_arguments_give_the_values_typer_gives(command_and_args):
    """Whenever the fast reader takes the arguments, Typer takes them too and passes the very
    same values (of the same types); anything it does not take is left to Typer."""
    command, args = command_and_args
    values = fast.parse(command, args)
    if values is None:
        return
    passed = []
    module, function = CALLED[command]
    with mock.patch.object(module, function, lambda *a: passed.append(a) or 0):
        result = CliRunner().invoke(app, [command, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    names = [p.name for p in _params(command)]
    assert len(passed) == 1
    typers = dict(zip(names, passed[0], strict=True))
    assert typers == values
    assert {k: type(v) for k, v in typers.items()} == {k: type(v) for k, v in values.items()}


def test_what_is_not_plain_is_left_to_typer():
    for args in (["--help"], ["tippen/grupp-1975", "--deals", "0"], ["tippen/grupp-1975", "--dealz", "3"],
                 ["tippen/grupp-1975", "-k5"], [], ["a", "b"], ["tippen/grupp-1975", "--json", "--json"],
                 ["tippen/grupp-1975", "--seed", "1", "--seed", "2"], ["tippen/grupp-1975", "--workers"],
                 ["tippen/grupp-1975", "--", "--json"]):
        assert fast.parse("simulate", args) is None, args
    for args in (["--help"], [RECORD, "--deal", "0"], [RECORD, "--deal"], [RECORD, "--json", "--json"], [],
                 [RECORD, RECORD], [""], [RECORD, "--seed", "1"], [RECORD, "--german=1"], [RECORD, "-w", "-1"]):
        assert fast.parse("analyze", args) is None, args
    with mock.patch.dict(os.environ, {"_STAMMTISCH_COMPLETE": "bash_source"}):
        assert fast.run(["simulate", "tippen/grupp-1975"]) is False
        assert fast.run(["analyze", RECORD]) is False
    assert fast.run(["play", "tippen/grupp-1975"]) is False


def _main(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``stammtisch ARGS`` as installed (``main``), and the modules it imported, on stderr's last line."""
    script = ("import sys, json\nfrom stammtisch.cli import main\n"
              f"sys.argv = ['stammtisch', *{list(args)!r}]\n"
              "try:\n    main()\nfinally:\n    print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})


#: what no command read here imports
HEAVY = ("typer", "click", "pydantic", "pydantic_core", "numba", "ray", "matplotlib", "fastapi", "starlette",
         "uvicorn", "sqlalchemy", "open_spiel", "torch", "sklearn")
COMMAND_MODULES = {f"stammtisch.cli.{c}_cmd" for c in ("analyze", "play", "replay", "report", "rules", "serve",
                                                      "simulate", "tournament")}


def test_analyze_starts_without_typer_pydantic_the_other_commands_or_heavy_libraries():
    proc = _main("analyze", RECORD, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["deals"]
    modules = json.loads(proc.stderr.strip().splitlines()[-1])
    tops = {m.split(".")[0] for m in modules}
    assert not set(HEAVY) & tops
    ours = {m for m in modules if m.startswith("stammtisch.")}
    assert not {m for m in ours if m.startswith("stammtisch.server")}
    assert not ours & COMMAND_MODULES and "stammtisch.cli.analyze_run" in ours


def test_simulate_starts_without_typer_pydantic_the_other_commands_or_heavy_libraries():
    proc = _main("simulate", "tippen/grupp-1975", "--deals", "3", "--seed", "5", "--workers", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    modules = json.loads(proc.stderr.strip().splitlines()[-1])
    tops = {m.split(".")[0] for m in modules}
    assert not {*HEAVY, "numpy"} & tops
    ours = {m for m in modules if m.startswith("stammtisch.")}
    assert not {m for m in ours if m.startswith(("stammtisch.server", "stammtisch.solve", "stammtisch.analysis"))}
    assert not ours & COMMAND_MODULES
    assert "stammtisch.record" not in ours and "rich" not in tops  # no records, no bar, nothing to colour


def test_stderr_is_a_terminal_where_rich_says_so(monkeypatch):
    """The answer given without Rich is Rich's own, for every setting of its variables and
    stderr a tty or not (or without isatty)."""
    import io

    from rich.console import Console

    from stammtisch.cli.simulate_run import stderr_is_terminal

    class Tty(io.StringIO):
        def isatty(self):
            return True

    class Closed(io.StringIO):
        def isatty(self):
            raise ValueError("closed")

    for stream in (io.StringIO(), Tty(), Closed(), object()):
        for compatible in (None, "", "0", "1", "yes"):
            for force in (None, "", "1", "0"):
                for key, value in (("TTY_COMPATIBLE", compatible), ("FORCE_COLOR", force)):
                    if value is None:
                        monkeypatch.delenv(key, raising=False)
                    else:
                        monkeypatch.setenv(key, value)
                monkeypatch.setattr(sys, "stderr", stream)
                assert stderr_is_terminal() == Console(stderr=True).is_terminal, (stream, compatible, force)


def test_simulate_prints_what_typer_prints():
    args = ["simulate", "tapp/modern", "-k", "40", "--seed", "9", "-w", "1", "--chunk-deals", "15", "-b", "random",
            "-b", "heuristic", "--json"]
    through_typer = CliRunner().invoke(app, args, catch_exceptions=False)
    proc = _main(*args)
    assert proc.returncode == through_typer.exit_code == 0
    assert proc.stdout == through_typer.stdout
    assert json.loads(proc.stdout)["deals"] == 40


@pytest.mark.parametrize("options", [[], ["--json"], ["--german", "-w", "1"]])
def test_analyze_prints_what_typer_prints(options):
    args = ["analyze", RECORD, *options]
    through_typer = CliRunner().invoke(app, args, catch_exceptions=False)
    proc = _main(*args)
    assert proc.returncode == through_typer.exit_code == 0
    assert proc.stdout == through_typer.stdout and proc.stdout.strip()
    assert "typer" not in json.loads(proc.stderr.strip().splitlines()[-1])


def test_errors_and_help_stay_typers():
    proc = _main("simulate", "tippen/grupp-1975", "--deals", "0")
    assert proc.returncode == 2 and "--deals" in proc.stderr and "Usage: stammtisch simulate" in proc.stderr
    assert "typer" in json.loads(proc.stderr.strip().splitlines()[-1])  # read by Typer
    proc = _main("simulate", "--help")
    assert proc.returncode == 0 and "Simulate many deals between bots" in proc.stdout
    # a user error of the command itself is the same one line, read with or without Typer
    proc = _main("simulate", "tippen/nope", "--deals", "3")
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
    assert "typer" not in json.loads(proc.stderr.strip().splitlines()[-1])
    # and the same for analyze
    proc = _main("analyze", RECORD, "--deal", "0")
    assert proc.returncode == 2 and "--deal" in proc.stderr and "Usage: stammtisch analyze" in proc.stderr
    proc = _main("analyze", "--help")
    assert proc.returncode == 0 and "Analyse a game record" in proc.stdout
    proc = _main("analyze", "missing/x.json")
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
    assert "typer" not in json.loads(proc.stderr.strip().splitlines()[-1])
