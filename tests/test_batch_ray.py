"""Batch work on Ray: same answer as in one process; a dead worker is retried.

In a file of their own: the Ray instance these tests share lives for the whole module, and
other tests must see Ray not running.
"""

from __future__ import annotations

from functools import partial

import pytest
from test_batch import ROOT, die_once_on_chunk_2, run_job, square_units, tippen_job

from stammtisch.sim.batch import Backend, plan_chunks, run_batch


@pytest.fixture(scope="module")
def ray_cluster():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": f"{ROOT}:{ROOT / 'tests'}"}})  # tasks defined here
    yield ray
    ray.shutdown()


def test_ray_gives_the_same_summary_and_records(ray_cluster):
    job = tippen_job()
    assert run_job(job, Backend("ray", 2, ray_address="local")) == run_job(job, Backend("inline", 1))


def test_ray_retries_a_dead_worker(ray_cluster, tmp_path):
    chunks = plan_chunks(40, 10, seed=1)
    outcome = run_batch(partial(die_once_on_chunk_2, str(tmp_path)), chunks, Backend("ray", 2, "local"))
    assert (tmp_path / "died").exists()
    assert outcome.complete and [r for _, r in outcome.results] == [square_units(c) for c in chunks]
