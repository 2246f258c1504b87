"""Pure, vectorised physics of serving and training (the lecture's math, summarised in docs/formulas.md).

Notebook entry points: :class:`Model`, :class:`Chip`, :func:`decode_step`, :func:`prefill_step`,
:func:`balance`, :func:`replica`; :func:`load_model` / :func:`load_chip` read them from a built
database (the only I/O in this package, in ``catalog``). The formula modules (``roofline``, ``memory``,
``network``, ``attention``, ``fast_mode``, ``memory_tiers``, ``kv_cache``, ``sweep``, ``fleet``,
``fleet_training``, ``scaling_laws``, ``token_balance``) take and return arrays.
"""

from __future__ import annotations

from econ.physics.hardware import FORMATS, Chip, drain_time_s
from econ.physics.model import Model
from econ.physics.steps import Balance, Step, balance, decode_step, prefill_step, replica

__all__ = [
    "FORMATS",
    "Balance",
    "Chip",
    "Model",
    "Step",
    "balance",
    "decode_step",
    "drain_time_s",
    "load_chip",
    "load_model",
    "prefill_step",
    "replica",
]


def load_model(name: str, db=None) -> Model:
    """The ``models`` row ``name`` of a built database as a :class:`Model` (default: build/econ.duckdb)."""
    from econ.physics import catalog

    return catalog.load_model(name) if db is None else catalog.load_model(name, db)


def load_chip(name: str, db=None) -> Chip:
    """The ``hardware`` row ``name`` of a built database as a :class:`Chip` (default: build/econ.duckdb)."""
    from econ.physics import catalog

    return catalog.load_chip(name) if db is None else catalog.load_chip(name, db)
