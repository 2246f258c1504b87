"""Where partitions run: local processes (the default, no extra dependency) or Ray tasks (``pip install econ[ray]``).

Both take the partition function and an iterator of tasks, keep at most a few tasks per worker in flight (the
tasks are made as they are needed, so the driver never holds the whole sweep) and yield each result as it
finishes, in whatever order. They run the same function on the same tasks; which of them ran a partition
changes nothing in its output.

- ``local``: a ``ProcessPoolExecutor`` of ``workers`` spawned processes (default and most: the machine's cores).
  Each worker dies with its driver (``PR_SET_PDEATHSIG`` where Linux has it, and a watchdog thread that exits
  the worker once its parent is gone), so ``kill -9`` of the driver leaves no worker computing on.
- ``ray``: one Ray task per partition (``num_cpus=1``) on the cluster ``ray.init`` connects to: ``address`` (or
  the ``RAY_ADDRESS`` variable) for a running cluster, else a local Ray instance of ``workers`` CPUs, which this
  run starts and stops. ``workers`` caps the tasks in flight (default: the cluster's CPUs).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import re
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from itertools import islice

from econ.errors import EconError
from econ.machine import cores

BACKENDS = ("local", "ray")
PR_SET_PDEATHSIG = 1  # linux/prctl.h
IN_FLIGHT_PER_WORKER = 2


def default_workers() -> int:
    return cores()


WATCH_S = 0.2
"""How often a worker checks that its driver is alive."""


def _die_with_parent(parent: int) -> None:
    """End this process when ``parent`` (its driver) is gone: the kernel's parent-death signal, and a watchdog."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # gone before the signal was asked for
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_S)
        os._exit(1)

    threading.Thread(target=watch, name="econ-sweep-watchdog", daemon=True).start()


def _worker_init(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the driver alone (its pool stops the workers)
    _die_with_parent(parent)


def run_local(fn: Callable, tasks: Iterable, *, workers: int | None = None) -> Iterator:
    """Results of ``fn(task)`` for every task, computed in ``workers`` spawned processes, as they finish."""
    workers = workers or default_workers()
    tasks = iter(tasks)
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no database handle or lock inherited
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_worker_init, initargs=(os.getpid(),)
    ) as pool:  # Ctrl-C reaches the driver alone: it stops submitting
        pending = {pool.submit(fn, t) for t in islice(tasks, workers * IN_FLIGHT_PER_WORKER)}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
                    for t in islice(tasks, 1):
                        pending.add(pool.submit(fn, t))
        except BaseException:  # Ctrl-C, SIGTERM or a failed partition: stop now, not after the running partitions
            _stop_workers(pool)
            raise


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """End the pool's worker processes now (their partitions are lost: nothing of them was written yet).

    The pool's manager thread sees its workers gone and fails their futures itself (cancelling or shutting the pool
    down at the same time races with it: a traceback from its thread, 1 stop in 60). A worker killed while it sent
    a result leaves half a message in the result pipe, and that thread would wait for the rest forever (so would the
    interpreter's exit, which joins it): once the workers are gone the driver closes its own end of that pipe (it
    never writes there), and the wait ends at end-of-file.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(OSError, AttributeError, ValueError):
            process.kill()
    for process in processes:
        with contextlib.suppress(OSError, AttributeError, ValueError, AssertionError):
            process.join(timeout=5)
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    if writer is not None:
        with contextlib.suppress(OSError):
            writer.close()


def _use_token_if_the_cluster_has_one() -> None:
    """Token authentication for a cluster named by address, as Ray itself does for ``address="auto"``.

    Ray >= 2.59 starts clusters (``ray start --head``) with token authentication, but a client connecting to an
    explicit ``HOST:PORT`` sends the token only under ``RAY_AUTH_MODE=token``; without it every call is refused
    (``InvalidAuthToken``) and Ray retries for ~20 s. When the mode is unset and a token is at hand
    (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``), token mode is switched on; a mode the
    user set is respected (https://docs.ray.io/en/latest/ray-security/token-auth.html).
    """
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # Ray before token authentication (< 2.52): nothing to switch on
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def _connect(ray, address: str | None) -> None:
    """``ray.init`` of a running cluster; a refusal is an :class:`EconError` saying what Ray said and what to do."""
    _use_token_if_the_cluster_has_one()
    try:
        ray.init(address=address, logging_level="warning", log_to_driver=False)
    except (ConnectionError, RuntimeError) as e:  # Ray's ConnectionError is an OSError: not a file problem
        said = "; ".join(dict.fromkeys(_what_ray_said(x) for x in (e, e.__cause__) if x and str(x).strip()))
        where = address or os.environ.get("RAY_ADDRESS")
        raise EconError(
            f"cannot connect to the Ray cluster at {where}: {said}",
            "check the address (ray status on the head node prints it); a cluster with token authentication (the "
            "default since Ray 2.59) needs its token: RAY_AUTH_TOKEN=<ray get-auth-token on the head node>, or the "
            "token in ~/.ray/auth_token; RAY_AUTH_MODE=disabled for a cluster without one",
        ) from None


def _what_ray_said(error: BaseException) -> str:
    """The sentence that says why: the last ``…Error: text`` line of a message that carries a traceback (Ray puts
    the GCS client's, ending in ``AuthenticationError: RPC error: InvalidAuthToken: …``), else its first line; cut at
    the first full stop."""
    lines = [x.strip() for x in str(error).strip().splitlines() if x.strip()]
    errors = [m.group(1) for x in lines if (m := re.match(r"^[\w.]*(?:Error|Exception): (.+)$", x))]
    text = errors[-1] if errors else lines[0]
    return text.split(". ")[0].rstrip(".")


def run_ray(fn: Callable, tasks: Iterable, *, workers: int | None = None, address: str | None = None) -> Iterator:
    """Results of ``fn(task)`` for every task, each a Ray task, as they finish (see the module docstring)."""
    try:
        import ray
    except ImportError:
        raise EconError("the ray backend needs Ray, which is not installed", "pip install 'econ[ray]'") from None
    started = False
    if not ray.is_initialized():
        with warnings.catch_warnings():
            # Ray >= 2.49 warns at every init that it will stop overriding CUDA_VISIBLE_DEVICES for tasks asking no
            # GPU; a sweep's tasks ask none and use none, so the tip is noise here (and an error under pytest -W error).
            warnings.filterwarnings("ignore", message="Tip: In future versions of Ray", category=FutureWarning)
            if address or os.environ.get("RAY_ADDRESS"):
                _connect(ray, address)
            else:  # "local": a new instance even where `ray start` left a cluster (or its stale address file)
                ray.init(
                    address="local",
                    num_cpus=workers or default_workers(),
                    include_dashboard=False,
                    logging_level="warning",
                    log_to_driver=False,
                )
        started = True
    try:
        limit = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        remote = ray.remote(num_cpus=1, max_retries=2)(fn)
        tasks = iter(tasks)
        pending = [remote.remote(t) for t in islice(tasks, limit * IN_FLIGHT_PER_WORKER)]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
            pending += [remote.remote(t) for t in islice(tasks, 1)]
    finally:
        if started:
            ray.shutdown()


def runner(backend: str, *, workers: int | None = None, address: str | None = None) -> Callable:
    """``(fn, tasks) -> results`` for a backend name."""
    if workers is not None and workers < 1:
        raise EconError(f"--workers {workers} is not a number of workers", "give 1 or more")
    cores = default_workers()
    if (
        workers is not None
        and workers > cores
        and not (backend == "ray" and (address or os.environ.get("RAY_ADDRESS")))
    ):
        raise EconError(
            f"--workers {workers} is more than the {cores} cores of this machine (more processes only share them)",
            f"give at most {cores}",
        )
    if backend == "local":
        if address:
            raise EconError("--ray-address is for the ray backend", "add --backend ray, or drop --ray-address")
        return lambda fn, tasks: run_local(fn, tasks, workers=workers)
    if backend == "ray":
        return lambda fn, tasks: run_ray(fn, tasks, workers=workers, address=address)
    raise EconError(f"unknown backend {backend!r}", f"use one of {', '.join(BACKENDS)}")
