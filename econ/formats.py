"""Number formats: the one place a format becomes bytes per value and names the hardware peak it runs at.

The dense peak that applies to a calculation is the chip's peak *in the format the math runs in*
(``hardware.peak_<format>_flop_per_s``); the bytes per weight come from the format the weights are
*stored* in; KV bytes of the ``models`` convention (a BF16 cache) scale by :func:`kv_scale`.
"""

from __future__ import annotations

from econ.errors import EconError
from econ.formula import formula

BYTES_PER_VALUE = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "fp4": 0.5, "int4": 0.5}
"""Bytes per stored value of each storage format."""

PEAK_COLUMN = {
    "bf16": "peak_bf16_flop_per_s",
    "fp8": "peak_fp8_flop_per_s",
    "int8": "peak_int8_op_per_s",
    "fp4": "peak_fp4_flop_per_s",
}
"""``hardware`` column holding the dense peak of each math format (int8 is integer OP/s, counted like FLOP/s)."""

FORMATS = tuple(PEAK_COLUMN)
"""Formats the math can run in (a ``hardware`` peak column each), in the order of those columns."""

KV_REFERENCE_FORMAT = "bf16"
"""``model_derived.kv_bytes_per_token`` is stored for a cache in this format (2 bytes per value)."""


@formula("b = 2 (bf16, fp16), 1 (fp8, int8), 0.5 (fp4, int4), 4 (fp32) bytes per value", "number formats")
def bytes_per_value(number_format: str) -> float:
    """Bytes per stored value of a number format (bf16 2, fp8 1, int8 1, fp4 0.5)."""
    try:
        return BYTES_PER_VALUE[number_format]
    except KeyError:
        raise EconError(
            f"unknown number format {number_format!r}", f"use one of {', '.join(sorted(BYTES_PER_VALUE))}"
        ) from None


def kv_scale(kv_format: str) -> float:
    """KV bytes in ``kv_format`` over KV bytes at the reference format (bf16): fp8 0.5, bf16 1."""
    return bytes_per_value(kv_format) / BYTES_PER_VALUE[KV_REFERENCE_FORMAT]


def peak_column(number_format: str) -> str:
    """The ``hardware`` column of the dense peak in ``number_format``."""
    bytes_per_value(number_format)
    try:
        return PEAK_COLUMN[number_format]
    except KeyError:
        raise EconError(
            f"no peak column for number format {number_format!r}", f"use one of {', '.join(FORMATS)}"
        ) from None
