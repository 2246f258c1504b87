"""The backends' drivers: every task's result comes back, at most a few tasks per worker are in flight, a Ray run
stops only the Ray it started, and Ray's init-time tip does not escape (it is an error under ``-W error``).

The Ray driver runs here against a stand-in module with Ray's calls (``init``, ``remote``, ``wait``, ``get``…), so
its logic is tested where Ray is not installed; ``test_run.py`` runs the real Ray on the real partitions."""

from __future__ import annotations

import sys
import types
import warnings

import pytest

from econ.errors import EconError
from econ.sweep import backends


def square(x: int) -> int:
    return x * x


class FakeRay(types.ModuleType):
    """What ``run_ray`` calls of Ray, run in this process: a task runs when ``wait`` asks for it."""

    def __init__(self, *, initialized: bool = False):
        super().__init__("ray")
        self.initialized, self.inits, self.shutdowns = initialized, [], 0
        self.in_flight, self.most_in_flight = 0, 0

    def is_initialized(self):
        return self.initialized

    def init(self, **kwargs):
        warnings.warn(
            "Tip: In future versions of Ray, Ray will no longer override accelerator visible devices env var if "
            "num_gpus=0 or num_gpus=None (default).",
            FutureWarning,
            stacklevel=2,
        )
        self.initialized = True
        self.inits.append(kwargs)

    def cluster_resources(self):
        return {"CPU": 3.0}

    def remote(self, **options):
        assert options == {"num_cpus": 1, "max_retries": 2}

        def wrap(fn):
            ray = self

            class Remote:
                @staticmethod
                def remote(task):
                    ray.in_flight += 1
                    ray.most_in_flight = max(ray.most_in_flight, ray.in_flight)
                    return (fn, task)

            return Remote

        return wrap

    def wait(self, pending, num_returns):
        assert num_returns == 1
        return pending[-1:], pending[:-1]  # not in submission order: results may come back in any order

    def get(self, ref):
        self.in_flight -= 1
        fn, task = ref
        return fn(task)

    def shutdown(self):
        self.shutdowns += 1
        self.initialized = False


@pytest.mark.parametrize("workers", [1, 2])
def test_local_processes_return_every_result(workers):
    assert sorted(backends.run_local(square, range(7), workers=workers)) == [x * x for x in range(7)]


@pytest.mark.parametrize(("workers", "cap"), [(2, 4), (None, 6)])  # default: the cluster's 3 CPUs
def test_ray_returns_every_result_with_a_few_tasks_a_worker_in_flight(monkeypatch, workers, cap):
    ray = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", ray)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Ray's tip at init is swallowed, nothing else is
        results = list(backends.run_ray(square, range(20), workers=workers))
    assert sorted(results) == [x * x for x in range(20)]
    assert ray.most_in_flight == cap and ray.in_flight == 0
    assert len(ray.inits) == 1 and ray.inits[0]["include_dashboard"] is False and ray.shutdowns == 1
    assert ray.inits[0]["num_cpus"] == (workers or backends.default_workers()) and ray.inits[0]["address"] == "local"


def test_ray_connects_to_an_address_and_leaves_a_running_ray_alone(monkeypatch):
    ray = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", ray)
    assert list(backends.run_ray(square, [3], address="ray://head:10001")) == [9]
    assert ray.inits[0]["address"] == "ray://head:10001" and "num_cpus" not in ray.inits[0]
    running = FakeRay(initialized=True)
    monkeypatch.setitem(sys.modules, "ray", running)
    assert list(backends.run_ray(square, [2, 4], workers=1)) == [16, 4]
    assert running.inits == [] and running.shutdowns == 0 and running.initialized


def test_without_ray_the_ray_backend_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(EconError, match="the ray backend needs Ray, which is not installed") as e:
        list(backends.run_ray(square, [1]))
    assert "econ[ray]" in e.value.hint
