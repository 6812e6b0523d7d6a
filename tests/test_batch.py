"""Batch work: the same answer for any number of workers and any backend; no silent holes."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import multiprocessing
import os
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stammtisch.cli import app
from stammtisch.rules import ruleset
from stammtisch.sim.batch import Backend, BatchError, Chunk, derive_seed, plan_chunks, run_batch
from stammtisch.sim.simulate import SimulationJob, run_simulation

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def tippen_job(records: bool = True) -> SimulationJob:
    return SimulationJob(ruleset("tippen/grupp-1975"), ("P1", "P2", "P3", "P4"),
                         ("heuristic", "random", "heuristic", "heuristic"), keep_records=records)


def tapp_job() -> SimulationJob:
    return SimulationJob(ruleset("tapp/modern"), ("P1", "P2", "P3"), ("heuristic",) * 3, keep_records=True)


def run_job(job: SimulationJob, backend: Backend, deals: int = 150, chunk: int = 30):
    records: dict[int, dict] = {}
    run = run_simulation(job, deals, 11, backend, chunk, on_record=lambda c, r: records.__setitem__(c.index, r))
    assert run.outcome.complete and not run.outcome.failures
    return json.dumps(run.summary.to_json(job.rules.family), sort_keys=True), records


# --- chunks and seeds -------------------------------------------------------------------------


def test_chunks_cover_the_job_once_with_seeds_from_seed_and_number():
    chunks = plan_chunks(1050, 100, seed=5)
    assert [c.size for c in chunks] == [100] * 10 + [50]
    assert [c.start for c in chunks] == list(range(0, 1050, 100))
    assert chunks[3].seed == derive_seed(5, 3) == plan_chunks(400, 100, seed=5)[3].seed
    assert len({c.seed for c in chunks}) == len(chunks)
    assert derive_seed(5, 1) != derive_seed(6, 0) and derive_seed(5, 0) != derive_seed(6, 0)


# --- identical results ------------------------------------------------------------------------


@pytest.mark.parametrize("make_job", [tippen_job, tapp_job])
def test_same_summary_and_records_for_1_2_and_3_workers(make_job):
    job = make_job()
    one = run_job(job, Backend("inline", 1))
    assert run_job(job, Backend("processes", 2)) == one
    assert run_job(job, Backend("processes", 3)) == one
    summary, records = one
    assert sorted(records) == [0, 1, 2, 3, 4]
    assert json.loads(summary)["deals"] == 150 and json.loads(summary)["sessions"] == 5


def test_another_seed_or_chunk_size_gives_other_games():
    job = tippen_job(records=False)
    base = run_simulation(job, 120, 11, Backend("inline", 1), 30).summary
    assert run_simulation(job, 120, 12, Backend("inline", 1), 30).summary.balances != base.balances
    assert run_simulation(job, 120, 11, Backend("inline", 1), 40).summary.sessions != base.sessions


# --- failures are never a silent hole ---------------------------------------------------------


def square_units(chunk: Chunk) -> int:
    return sum(i * i for i in range(chunk.start, chunk.start + chunk.size))


def die_once_on_chunk_2(marker_dir: str, chunk: Chunk) -> int:
    """Kills its own worker process the first time it runs chunk 2."""
    marker = Path(marker_dir) / "died"
    if chunk.index == 2 and not marker.exists():
        marker.write_text("x")
        os.kill(os.getpid(), signal.SIGKILL)
    return square_units(chunk)


def always_die_on_chunk_2(chunk: Chunk) -> int:
    if chunk.index == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return square_units(chunk)


def fail_on_chunk_1(chunk: Chunk) -> int:
    if chunk.index == 1:
        raise ZeroDivisionError("chunk one is cursed")
    return square_units(chunk)


def test_a_killed_worker_process_is_retried(tmp_path):
    from functools import partial

    chunks = plan_chunks(60, 10, seed=1)
    outcome = run_batch(partial(die_once_on_chunk_2, str(tmp_path)), chunks, Backend("processes", 2))
    assert (tmp_path / "died").exists()  # it really died once
    assert outcome.complete and not outcome.failures
    assert [r for _, r in outcome.results] == [square_units(c) for c in chunks]


def test_a_worker_that_keeps_dying_is_reported_not_a_hole():
    chunks = plan_chunks(60, 10, seed=1)
    outcome = run_batch(always_die_on_chunk_2, chunks, Backend("processes", 2, retries=1))
    failed = {f.chunk.index for f in outcome.failures}
    done = {c.index for c, _ in outcome.results}
    assert 2 in failed and 2 not in done
    assert failed | done == {c.index for c in chunks} and not failed & done  # every chunk accounted for
    assert "worker process died" in outcome.problems()[0]
    assert all(r == square_units(c) for c, r in outcome.results)


@pytest.mark.parametrize("backend", [Backend("inline", 1), Backend("processes", 2)])
def test_a_chunk_that_raises_is_reported_with_its_error(backend):
    outcome = run_batch(fail_on_chunk_1, plan_chunks(40, 10, seed=1), backend)
    assert [f.chunk.index for f in outcome.failures] == [1]
    assert "ZeroDivisionError: chunk one is cursed" in outcome.failures[0].reason
    assert [c.index for c, _ in outcome.results] == [0, 2, 3]
    assert "1 of 4 chunks failed (10 deals missing)" in outcome.problems()[0]


def test_ray_missing_is_one_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    with pytest.raises(BatchError) as e:
        run_batch(square_units, plan_chunks(10, 10, seed=1), Backend("ray", 2, "auto"))
    assert e.value.rule == "no-ray" and "stammtisch[cluster]" in str(e.value)
    # and as the user sees it (Rich markup must not eat "[cluster]")
    script = ("import sys; sys.modules['ray'] = None; from stammtisch.cli import main; "
              "sys.argv = ['stammtisch', 'simulate', 'tippen/grupp-1975', '--deals', '5', '--ray', 'auto']; main()")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "error: the Ray backend needs Ray: pip install 'stammtisch[cluster]'" in proc.stderr


def test_an_unreachable_ray_head_is_one_clear_error():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(BatchError) as e:
        run_batch(square_units, plan_chunks(10, 10, seed=1), Backend("ray", 2, f"127.0.0.1:{port}"))
    assert e.value.rule == "ray-connect" and f"127.0.0.1:{port}" in str(e.value)


# --- Ctrl-C keeps what finished ---------------------------------------------------------------


@pytest.mark.parametrize("backend", [Backend("inline", 1), Backend("processes", 2)])
def test_ctrl_c_stops_the_workers_and_keeps_finished_chunks(backend):
    seen: list[int] = []

    def interrupt_after_two(chunk: Chunk, result: int) -> None:
        seen.append(chunk.index)
        if len(seen) == 2:
            raise KeyboardInterrupt

    chunks = plan_chunks(200, 10, seed=1)
    outcome = run_batch(square_units, chunks, backend, on_result=interrupt_after_two)
    assert outcome.interrupted and not outcome.complete
    assert [c.index for c, _ in outcome.results] == sorted(seen)
    assert all(r == square_units(c) for c, r in outcome.results)
    assert outcome.problems()[0].startswith("interrupted: 2 of 20 chunks finished (20 of 200 deals)")
    assert multiprocessing.active_children() == []  # the workers are gone


#: How long a test waits for something that comes within seconds unless the code hangs.
HANG = 300.0


def _wait_for_records(records: Path, count: int, proc: subprocess.Popen) -> None:
    """Blocks until ``records`` holds ``count`` records: inotify wakes the test as each file is
    written, the process's pidfd if it ends first."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    watch = libc.inotify_init1(os.O_CLOEXEC)
    assert watch >= 0, os.strerror(ctypes.get_errno())
    ended = os.pidfd_open(proc.pid)
    try:
        in_close_write, in_moved_to = 0x8, 0x80
        assert libc.inotify_add_watch(watch, str(records).encode(), in_close_write | in_moved_to) >= 0
        while len(list(records.glob("*.json"))) < count:
            ready, _, _ = select.select([watch, ended], [], [], HANG)
            assert ready, f"no chunk finished in {HANG:.0f} s"
            assert ended not in ready, f"simulate ended with fewer than {count} records"
            os.read(watch, 65536)
    finally:
        os.close(watch)
        os.close(ended)


def _wait_until_ended(pids: list[int]) -> None:
    """Blocks until each of ``pids`` has ended (a pidfd turns readable then)."""
    for pid in pids:
        try:
            ended = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            assert select.select([ended], [], [], HANG)[0], f"process {pid} did not end"
        finally:
            os.close(ended)


def _simulate_until_three_chunks(records: Path) -> subprocess.Popen:
    """A long ``simulate`` on 2 workers in a session of its own, once three chunks are done
    (each finished chunk writes its record; waiting for them rather than for a fixed time keeps
    the tests right on a loaded machine)."""
    records.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "stammtisch", "simulate", "tapp/modern", "--deals", "100000", "--seed", "2",
         "--chunk-deals", "20", "--workers", "2", "--json", "--records", str(records)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        # as from a terminal: Ctrl-C is not ignored (a test run started in the background
        # inherits an ignored SIGINT, and Python then never raises KeyboardInterrupt)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        _wait_for_records(records, 3, proc)
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return proc


def test_a_batch_worker_ignores_ctrl_c_from_its_start():
    # Without an initializer: a Ctrl-C that comes while a worker still starts (imports, its
    # initializer) must not end it with a traceback. A process of its own, so that its fork
    # server is the one the batch starts.
    code = ("import signal\n"
            "from concurrent.futures import ProcessPoolExecutor\n"
            "from stammtisch.sim.batch import _process_context\n"
            "with ProcessPoolExecutor(1, mp_context=_process_context()) as pool:\n"
            "    print(pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG)
    assert out.stdout.split() == ["True"], out.stderr


def test_ctrl_c_in_the_terminal_prints_the_finished_sessions(tmp_path):
    # a real SIGINT to the whole process group, as a terminal sends it
    proc = _simulate_until_three_chunks(tmp_path / "records")
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["complete"] is False and summary["deals"] < 100000
    assert summary["deals"] % 20 == 0 and summary["sessions"] == summary["deals"] // 20
    assert "interrupted:" in err and "the summary covers the finished chunks only" in err


def _session_processes(session: int) -> list[int]:
    """The live processes of a session (Linux /proc; zombies do not count)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def test_sigterm_stops_the_workers_and_prints_the_finished_sessions(tmp_path):
    # kill PID (or a service manager) signals the driver alone: its worker processes must end
    # with it, not run on as orphans
    proc = _simulate_until_three_chunks(tmp_path / "records")
    assert len(_session_processes(proc.pid)) >= 3  # the driver, the fork server, the workers
    proc.send_signal(signal.SIGTERM)
    try:
        # orphaned workers would hold the output pipes open: communicate would then time out
        out, err = proc.communicate(timeout=60)
        _wait_until_ended(_session_processes(proc.pid))
        assert _session_processes(proc.pid) == []
    finally:
        for pid in _session_processes(proc.pid):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["complete"] is False and summary["deals"] % 20 == 0


# --- the command line -------------------------------------------------------------------------


def cli(*args: str) -> tuple[int, str]:
    from stammtisch.cli import CliError

    try:
        result = runner.invoke(app, list(args), catch_exceptions=False)
    except CliError as e:
        return 2, str(e)
    return result.exit_code, result.output


def test_simulate_json_is_the_same_for_any_workers_and_records_merge_to_it(tmp_path):
    args = ["simulate", "tippen/dreiblatt-1859", "--deals", "90", "--seed", "4", "--chunk-deals", "20", "--json"]
    outputs = []
    for workers in ("1", "2", "3"):
        code, out = cli(*args, "--workers", workers, "--records", str(tmp_path / workers))
        assert code == 0, out
        outputs.append(json.loads(out.strip().splitlines()[-1]))
    assert outputs[0] == outputs[1] == outputs[2]
    summary = outputs[0]
    assert summary["seed"] == 4 and summary["chunk_deals"] == 20 and summary["complete"] is True
    files = sorted((tmp_path / "2").glob("*.json"))
    assert len(files) == 5 and files[0].name == "tippen_dreiblatt-1859-seed4-chunk000000.json"
    assert [f.read_text() for f in files] == [f.read_text() for f in sorted((tmp_path / "3").glob("*.json"))]
    code, out = cli("merge", str(tmp_path / "2"), "--json")
    assert code == 0, out
    merged = json.loads(out)
    for key in ("balances", "pot", "deals", "outcomes", "taps", "betes", "per_player", "rates", "sessions"):
        assert merged[key] == summary[key], key


def test_simulate_reports_means_with_intervals_rates_and_unit():
    code, out = cli("simulate", "tippen/grupp-1975", "--deals", "200", "--seed", "1", "--chunk-deals", "20",
                    "--workers", "1", "--json")
    data = json.loads(out.strip().splitlines()[-1])
    assert data["unit"] == "counters" and data["has_pot"] is True
    p1 = data["per_player"]["P1"]
    mean = p1["mean_per_deal"]
    assert mean["estimate"] == pytest.approx(data["balances"]["P1"] / 200)
    assert mean["ci"][0] < mean["estimate"] < mean["ci"][1] and mean["method"] == "clustered-t" and mean["n"] == 10
    taps = p1["tap_rate"]
    assert taps["of"] > 0 and taps["rate"] == pytest.approx(taps["count"] / taps["of"])
    assert sum(p["bete_rate"]["count"] for p in data["per_player"].values()) == data["betes"]
    assert data["rates"]["tap_rate"]["count"] == data["taps"]


def test_simulate_tapp_units_and_no_pot_line_without_a_pot():
    code, out = cli("simulate", "tapp/modern", "--deals", "40", "--seed", "1", "--workers", "1")
    assert code == 0, out
    assert "unit: cents" in out and "pot" not in out.lower()
    assert "Declarer won:" in out and "of" in out
    code, out = cli("simulate", "tapp/wuerttemberg-tarock", "--deals", "10", "--seed", "1", "-w", "1", "--json")
    data = json.loads(out.strip().splitlines()[-1])
    assert data["unit"] == "game points" and data["has_pot"] is False
    assert data["per_player"]["P1"]["declarer_rate"]["denominator"] == "deals"
    code, out = cli("simulate", "tapp/wuerttemberg-tarock", "--deals", "10", "--seed", "1", "-w", "1",
                    "-o", "pot=true")
    assert "Left in the pots" in out


def test_simulate_refuses_bad_input_in_one_line(tmp_path):
    code, out = cli("simulate", "tippen/grupp-1975", "--players", "3", "-o", "players=4")
    assert code == 2 and "--players 3 and -o players=4 disagree" in out
    code, out = cli("simulate", "tippen/grupp-1975", "--players", "4", "-o", "players=4", "--deals", "1", "-w", "1")
    assert code == 0
    a_file = tmp_path / "x.json"
    a_file.write_text("{}")
    code, out = cli("simulate", "tippen/grupp-1975", "--records", str(a_file))
    assert code == 2 and "is a file; give a folder" in out
    code, out = cli("simulate", "tippen/grupp-1975", "--workers", "0")
    assert code == 2 and "--workers" in out
    code, out = cli("merge", str(tmp_path / "nothing"))
    assert code == 2 and "no such file or folder" in out


def test_every_text_the_batch_commands_print_is_in_both_catalogues():
    """simulate, merge and report print English only (they have no --german): their texts come
    from the catalogue, where German has each of them too, with the placeholders the code fills."""
    import ast

    from stammtisch.cli import report_cmd, simulate_cmd, simulate_run
    from stammtisch.i18n import LANGUAGES, catalogue, placeholders
    from stammtisch.sim import batch, report_render

    asked: dict[str, list[tuple[str, set[str]]]] = {}  # key -> (module, parameters given) per call
    for module in (batch, simulate_cmd, simulate_run, report_cmd, report_render):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        assert not hasattr(module, "TEXTS") and not hasattr(module, "TEXTS_DE"), module.__name__
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("t", "refuse")):
                continue
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant):
                asked.setdefault(first.value, []).append((module.__name__, {k.arg for k in node.keywords}))
            else:  # only refuse() passes its caller's literal key on
                assert module is simulate_run and isinstance(first, ast.Name) and first.id == "key"
    assert len(asked) >= 40  # the scan finds the texts at all
    keys = set(asked) | set(simulate_run.CODES)  # a refusal's code is looked up by its key
    for lang in LANGUAGES:
        texts = catalogue(lang)
        assert sorted(keys - set(texts)) == [], lang
        for key, calls in asked.items():
            for module_name, given in calls:
                assert placeholders(texts[key]) == given, (lang, key, module_name)
