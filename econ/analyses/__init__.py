"""Analyses: one module per report page; each reads tables/views and writes result tables.

``ANALYSES`` is the build order (an analysis may read the result tables of earlier ones).
"""

from __future__ import annotations

from econ.analyses import changes, fleet, pricing, serving, training

ANALYSES: list = [serving, pricing, training, fleet, changes]
