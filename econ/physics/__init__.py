"""Pure, vectorised physics of serving and training (the lecture's math, summarised in docs/formulas.md).

Notebook entry points: :class:`Model`, :class:`Chip`, :func:`decode_step`, :func:`prefill_step`,
:func:`balance`, :func:`replica`; :func:`econ.notebook.load_model` / :func:`econ.notebook.load_chip`
read them from a built database (this package does no I/O). The formula modules (``roofline``, ``memory``,
``network``, ``attention``, ``fast_mode``, ``memory_tiers``, ``kv_cache``, ``weights``, ``sequence``,
``collectives``, ``sharding``, ``deployment``, ``layout_search``, ``fleet``,
``fleet_training``, ``scaling_laws``, ``token_balance``) take and return arrays.
"""

from __future__ import annotations

from econ.physics.hardware import Chip, drain_time_s
from econ.physics.model import Model
from econ.physics.steps import Balance, Step, balance, decode_step, prefill_step, replica

__all__ = [
    "Balance",
    "Chip",
    "Model",
    "Step",
    "balance",
    "decode_step",
    "drain_time_s",
    "prefill_step",
    "replica",
]
