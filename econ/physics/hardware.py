"""Accelerators and number formats: the ``Chip`` a notebook passes to :func:`econ.physics.decode_step`.

A ``Chip`` is one accelerator as stored in the ``hardware`` table (base units: FLOP/s,
bytes, bytes/s). The peak that applies to a calculation is the dense peak *of the number
format the math runs in*; the bytes per weight come from the format the weights are
*stored* in (``econ.units.BYTES_PER_VALUE``). By default weights are stored in the format
of the math (bf16 → 2 B, fp8/int8 → 1 B, fp4 → 0.5 B); the scaling book's "int8 weights,
bf16 math" case is ``number_format="bf16", weight_format="int8"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from econ.errors import EconError
from econ.physics.rows import record_fields
from econ.units import BYTES_PER_VALUE

FORMATS = ("bf16", "fp8", "int8", "fp4")
"""Number formats the serving sweep considers, in the order of the ``hardware`` peak columns."""

PEAK_COLUMN = {
    "bf16": "peak_bf16_flop_per_s",
    "fp8": "peak_fp8_flop_per_s",
    "int8": "peak_int8_op_per_s",
    "fp4": "peak_fp4_flop_per_s",
}
"""``hardware`` column holding the dense peak of each format (int8 is integer OP/s, counted like FLOP/s)."""


def bytes_per_value(number_format: str) -> float:
    """Bytes per stored value of a number format (bf16 2, fp8 1, int8 1, fp4 0.5)."""
    try:
        return BYTES_PER_VALUE[number_format]
    except KeyError:
        raise EconError(
            f"unknown number format {number_format!r}", f"use one of {', '.join(sorted(BYTES_PER_VALUE))}"
        ) from None


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
        bytes_per_value(number_format)
        if number_format not in PEAK_COLUMN:
            raise EconError(f"no peak column for number format {number_format!r}", f"use one of {', '.join(FORMATS)}")
        peak = getattr(self, PEAK_COLUMN[number_format])
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


def drain_time_s(capacity_bytes, bandwidth_bytes_per_s):
    """Drain time of a memory [s]: t = C / W (lecture a.6 for HBM, g.4 for every tier)."""
    return np.divide(capacity_bytes, bandwidth_bytes_per_s)
