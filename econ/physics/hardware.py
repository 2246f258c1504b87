"""Accelerators and number formats: the ``Chip`` a notebook passes to :func:`econ.physics.decode_step`.

A ``Chip`` is one accelerator as stored in the ``hardware`` table (base units: FLOP/s,
bytes, bytes/s). The peak that applies to a calculation is the dense peak *of the number
format the math runs in*; the bytes per weight come from the format the weights are
*stored* in (:mod:`econ.formats`, the one home of the format mapping). By default weights are stored in the format
of the math (bf16 → 2 B, fp8/int8 → 1 B, fp4 → 0.5 B); the scaling book's "int8 weights,
bf16 math" case is ``number_format="bf16", weight_format="int8"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from econ.errors import EconError
from econ.formats import FORMATS, PEAK_COLUMN, bytes_per_value, peak_column
from econ.formula import formula
from econ.physics.rows import record_fields


@dataclass(frozen=True)
class Chip:
    """One accelerator, in base units (the ``hardware`` table's ``out_name`` columns).

    Build it from a ``hardware`` row with :meth:`Chip.from_row`, or by hand with a lecture's
    or the scaling book's numbers. Peaks are dense (no structured sparsity), 2 FLOP per
    multiply-add; ``None`` means the chip does not support (or nobody published) that format.
    """

    chip: str
    hbm_capacity_bytes: float
    hbm_bandwidth_bytes_per_s: float
    peak_bf16_flop_per_s: float | None = None
    peak_fp8_flop_per_s: float | None = None
    peak_fp4_flop_per_s: float | None = None
    peak_int8_op_per_s: float | None = None
    scale_up_domain_chips: int = 1
    scale_up_bandwidth_bytes_per_s: float | None = None
    scale_out_bandwidth_bytes_per_s: float | None = None

    @classmethod
    def from_row(cls, row: dict) -> Chip:
        """A ``Chip`` from a ``hardware`` row (extra keys ignored, NaN/None = blank)."""
        return cls(
            **record_fields(
                cls,
                row,
                ("chip", "hbm_capacity_bytes", "hbm_bandwidth_bytes_per_s"),
                table="hardware",
                hint="fill the column in data/hardware.csv",
            )
        )

    def peak_flop_per_s(self, number_format: str = "bf16") -> float:
        """Dense peak of the chip in ``number_format`` [FLOP/s]; raises if the chip has none."""
        peak = getattr(self, peak_column(number_format))
        if peak is None:
            supported = ", ".join(self.formats()) or "none"
            raise EconError(f"{self.chip} has no {number_format} peak", f"formats with a peak: {supported}")
        return float(peak)

    def formats(self) -> tuple[str, ...]:
        """Number formats with a published peak on this chip."""
        return tuple(f for f in FORMATS if getattr(self, PEAK_COLUMN[f]) is not None)

    @property
    def drain_time_s(self) -> float:
        """HBM capacity / bandwidth [s]: the time to read all of HBM once (lecture a.6)."""
        return drain_time_s(self.hbm_capacity_bytes, self.hbm_bandwidth_bytes_per_s)


@formula("t_drain = C / W", "lecture a.6, g.4")
def drain_time_s(capacity_bytes, bandwidth_bytes_per_s):
    """Drain time of a memory [s]: t = C / W (lecture a.6 for HBM, g.4 for every tier)."""
    return np.divide(capacity_bytes, bandwidth_bytes_per_s)


def per_format(hardware: pl.DataFrame) -> pl.DataFrame:
    """Every chip × number format it has a dense peak in: ``peak_flop_per_s`` and ``weight_bytes_per_param``.

    Weights are stored in the format of the math (bf16 2 B, fp8 1 B, int8 1 B, fp4 0.5 B per parameter);
    ``format_order`` keeps the order of :data:`econ.formats.FORMATS`. Grain: chip × format, sorted.
    """
    formats = pl.DataFrame(
        {
            "number_format": list(FORMATS),
            "weight_bytes_per_param": [bytes_per_value(f) for f in FORMATS],
            "format_order": list(range(len(FORMATS))),
        }
    )
    peak = pl.lit(None, dtype=pl.Float64)
    for fmt in FORMATS:
        peak = pl.when(pl.col("number_format") == fmt).then(pl.col(PEAK_COLUMN[fmt]).cast(pl.Float64)).otherwise(peak)
    return (
        hardware.join(formats, how="cross")
        .with_columns(peak.alias("peak_flop_per_s"))
        .filter(pl.col("peak_flop_per_s").is_not_null())
        .sort("chip", "format_order")
    )


@formula("F / W", "scaling book, roofline (critical arithmetic intensity)")
def flop_per_byte_ratio(peak_flop_per_s, hbm_bandwidth_bytes_per_s):
    """FLOPs the chip can do per byte it reads from HBM [FLOP/byte]; equals R for 2-byte weights."""
    return np.divide(peak_flop_per_s, hbm_bandwidth_bytes_per_s)


@formula("S·C", "lecture d.6")
def scale_up_capacity_bytes(scale_up_domain_chips, hbm_capacity_bytes):
    """HBM of one scale-up domain [bytes]: S chips of capacity C."""
    return np.multiply(scale_up_domain_chips, hbm_capacity_bytes)
