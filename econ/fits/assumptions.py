"""The serving assumptions every price inference states, and their Monte Carlo interval.

Reading prices backwards needs a hardware and a cost model: the chip and number format the
provider is assumed to serve on, its $/chip-hour, the gross margin (cost = price × (1 −
margin)), the achieved bandwidth and FLOP fractions, a typical context, a frontier model's
active parameters and the decode batch relative to the balance batch. ``Assumptions``
carries their central values (scenario ``base``) and their ranges:

* numeric assumptions: the scenario's low/high (drawn by :func:`econ.fits.propagate.draw`);
* categorical ones — the serving chip, the weight/math format and the KV-cache format —
  are drawn uniformly from the scenario's alternatives (chip × format combinations without
  a published peak are left out).

An assumption missing from the scenario takes the scenario's documented default
(:mod:`econ.analyses.scenario`) and is listed in ``defaulted`` so the result tables can say so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from econ.errors import EconError
from econ.fits.propagate import Propagated, propagate
from econ.formats import BYTES_PER_VALUE, FORMATS, kv_scale

NUMERIC = (
    "usd_per_chip_hour",
    "gross_margin_frac",
    "decode_mbu_frac",
    "prefill_mfu_frac",
    "context_tokens",
    "frontier_active_params",
    "batch_multiple_over_balance_ratio",
    "tier_context_density_exponent_ratio",
)
"""The scenario fields a price inference reads (their defaults are the scenario's, econ.analyses.scenario)."""

N_DRAWS = 1000
"""Monte Carlo draws per propagated quantity (the 5–95 % quantiles move by ~1 % between seeds at 1,000)."""


@dataclass(frozen=True)
class Assumptions:
    """Central values, ranges and hardware alternatives of the serving assumptions (see module docstring)."""

    chip: str
    number_format: str
    kv_cache_format: str
    central: dict[str, float]
    ranges: dict[str, tuple[float, float]]
    hardware: pl.DataFrame  # one row per chip x format alternative: chip, number_format, weight_bytes_per_param, ...
    kv_formats: tuple[str, ...]
    defaulted: tuple[str, ...] = ()
    level: float = 0.9
    n_draws: int = N_DRAWS
    _hw: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        arrays = {
            c: self.hardware[c].to_numpy().astype(float)
            for c in (
                "weight_bytes_per_param",
                "peak_flop_per_s",
                "hbm_bandwidth_bytes_per_s",
                "hbm_capacity_bytes",
                "critical_batch_ratio",
            )
        }
        arrays["kv_scale"] = np.array([kv_scale(f) for f in self.kv_formats])
        self._hw.update(arrays)

    @property
    def central_hardware(self) -> dict[str, float]:
        """The scenario chip in the scenario format: F, W, C, b_w, R."""
        row = self.hardware.filter((pl.col("chip") == self.chip) & (pl.col("number_format") == self.number_format))
        return {
            k: float(row[k][0])
            for k in (
                "weight_bytes_per_param",
                "peak_flop_per_s",
                "hbm_bandwidth_bytes_per_s",
                "hbm_capacity_bytes",
                "critical_batch_ratio",
            )
        }

    @property
    def kv_scale(self) -> float:
        """KV bytes at the scenario's cache format over KV bytes at BF16 (``model_derived.kv_bytes_per_token``)."""
        return kv_scale(self.kv_cache_format)

    def _central_u(self, index: int, count: int) -> float:
        return (index + 0.5) / count

    def _hardware_at(self, hw_u, kv_u) -> dict:
        n_hw, n_kv = self.hardware.height, len(self.kv_formats)
        i = np.minimum(np.floor(np.asarray(hw_u) * n_hw).astype(int), n_hw - 1)
        j = np.minimum(np.floor(np.asarray(kv_u) * n_kv).astype(int), n_kv - 1)
        out = {k: v[i] for k, v in self._hw.items() if k != "kv_scale"}
        out["kv_scale"] = self._hw["kv_scale"][j]
        return out

    def propagate(
        self, fn: Callable[..., np.ndarray], names: tuple[str, ...], *, hardware: bool = True, seed: int = 0
    ) -> Propagated:
        """Central value and Monte Carlo interval of ``fn(hw=..., **{name: value})``.

        ``fn`` receives the numeric assumptions in ``names`` (scalars at the centre, ``(n, 1)`` arrays in the
        draws) and ``hw``, a dict of the hardware quantities (``peak_flop_per_s``, ``hbm_bandwidth_bytes_per_s``,
        ``hbm_capacity_bytes``, ``weight_bytes_per_param``, ``critical_batch_ratio``, ``kv_scale``) at the
        drawn chip × format and KV format (held at the scenario's when ``hardware`` is False). It must return
        one value per row on its last axis.
        """
        hw_rows = self.hardware.with_row_index("_i").filter(
            (pl.col("chip") == self.chip) & (pl.col("number_format") == self.number_format)
        )
        central = {k: self.central[k] for k in names}
        central["hw_u"] = self._central_u(int(hw_rows["_i"][0]), self.hardware.height)
        central["kv_u"] = self._central_u(self.kv_formats.index(self.kv_cache_format), len(self.kv_formats))
        ranges = {k: self.ranges[k] for k in names if self.ranges[k][0] < self.ranges[k][1]}
        if hardware and self.hardware.height > 1:
            ranges["hw_u"] = (0.0, 1.0)
        if hardware and len(self.kv_formats) > 1:
            ranges["kv_u"] = (0.0, 1.0)
        central["draw_u"], ranges["draw_u"] = 0.5, (0.0, 1.0)  # a draw axis even when nothing varies

        def call(hw_u, kv_u, draw_u, **kw):
            out = np.asarray(fn(hw=self._hardware_at(hw_u, kv_u), **kw), dtype=float)
            return np.broadcast_to(out, np.broadcast_shapes(out.shape, np.shape(draw_u))) if np.ndim(draw_u) else out

        with np.errstate(invalid="ignore", divide="ignore"):  # rows without data (NaN in every draw): NaN bounds
            return propagate(call, central, ranges, n=self.n_draws, level=self.level, seed=seed)

    def propagate_rows(
        self,
        fn: Callable[..., np.ndarray],
        names: tuple[str, ...],
        columns: dict[str, np.ndarray],
        *,
        hardware: bool = True,
        seed: int = 0,
    ) -> Propagated:
        """:meth:`propagate` for a per-row quantity that depends on the row only through ``columns``.

        ``fn(hw=..., cols=..., **assumptions)`` gets ``cols``: the columns restricted to their distinct
        combinations; it is evaluated once per combination and the result is spread back to every row (many
        price rows share a ratio, a slope or an architecture).
        """
        arrays = {k: np.asarray(v, dtype=float) for k, v in columns.items()}
        stacked = np.column_stack([np.where(np.isnan(v), -np.inf, v) for v in arrays.values()])
        _, first, inverse = np.unique(stacked, axis=0, return_index=True, return_inverse=True)
        sub = {k: v[first] for k, v in arrays.items()}
        res = self.propagate(lambda hw, **kw: fn(hw=hw, cols=sub, **kw), names, hardware=hardware, seed=seed)
        inverse = inverse.ravel()
        return Propagated(
            np.asarray(res.central, dtype=float)[inverse], res.low[inverse], res.high[inverse], res.level, res.n_draws
        )

    def describe(self, names: tuple[str, ...], *, hardware: bool = True) -> str:
        """One line naming what a scenario interval varies (for table comments and columns)."""
        parts = [
            f"{k} {self.ranges[k][0]:g}-{self.ranges[k][1]:g}" for k in names if self.ranges[k][0] < self.ranges[k][1]
        ]
        if hardware:
            combos = ", ".join(f"{c}/{f}" for c, f in self.hardware.select("chip", "number_format").iter_rows())
            parts.append(f"chip/format in {{{combos}}}")
            parts.append(f"KV cache in {{{', '.join(self.kv_formats)}}}")
        return (
            (f"Monte Carlo {self.level:.0%} interval over {self.n_draws} draws: " + "; ".join(parts))
            if parts
            else "no assumption with a range"
        )


HARDWARE_COLUMNS = (
    "weight_bytes_per_param",
    "peak_flop_per_s",
    "hbm_bandwidth_bytes_per_s",
    "hbm_capacity_bytes",
    "critical_batch_ratio",
)


def hardware_alternatives(
    hardware_derived: pl.DataFrame, chips: tuple[str, ...], formats: tuple[str, ...]
) -> pl.DataFrame:
    """The chip × format rows of ``hardware_derived`` (F, W, C, b_w, R per format) among the scenario's alternatives.

    A chip not in the table is an error; chip × format pairs without a published peak are absent from the table.
    """
    known = set(hardware_derived["chip"].to_list())
    for chip in chips:
        if chip not in known:
            raise EconError(
                f"scenario chip {chip!r} (serving_chip or its alternatives) is not in the hardware table",
                "add it to data/hardware.csv or fix the name in data/scenarios.csv",
            )
    wanted = pl.DataFrame(
        [(c, f, i) for i, (c, f) in enumerate((c, f) for c in chips for f in formats)],
        schema=["chip", "number_format", "_order"],
        orient="row",
    )
    rows = hardware_derived.join(wanted, on=["chip", "number_format"], how="inner")
    return rows.sort("_order").select("chip", "number_format", *(pl.col(c).cast(pl.Float64) for c in HARDWARE_COLUMNS))


def from_scenario(
    scenario, hardware_derived: pl.DataFrame, *, level: float = 0.9, n_draws: int = N_DRAWS
) -> Assumptions:
    """The assumptions of a :class:`econ.analyses.scenario.Scenario` (pure: reads its fields only)."""
    central = {name: float(getattr(scenario, name)) for name in NUMERIC}
    ranges = {name: tuple(float(v) for v in scenario.range(name)) for name in NUMERIC}
    defaulted = [n for n in (*NUMERIC, "weight_format", "kv_cache_format") if n in scenario.defaulted]

    def choices(name: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
        values = scenario.alternatives(name)
        bad = [v for v in values if v not in allowed]
        if bad:  # a typo among the alternatives must not be skipped silently
            raise EconError(
                f"scenario {scenario.name!r} lists {bad[0]!r} in {name}, not a number format econ can use here",
                f"use one of {', '.join(allowed)} in data/scenarios.csv (value or alternatives)",
            )
        return values

    chips = scenario.alternatives("serving_chip")
    formats = choices("weight_format", FORMATS)
    kv_formats = choices("kv_cache_format", tuple(BYTES_PER_VALUE))
    alternatives = hardware_alternatives(hardware_derived, chips, formats)
    chip, fmt = scenario.serving_chip, scenario.weight_format
    if alternatives.filter((pl.col("chip") == chip) & (pl.col("number_format") == fmt)).height == 0:
        raise EconError(f"the scenario chip {chip} has no {fmt} peak", "pick another weight_format or serving_chip")
    return Assumptions(
        chip, fmt, scenario.kv_cache_format, central, ranges, alternatives, kv_formats, tuple(defaulted), level, n_draws
    )
