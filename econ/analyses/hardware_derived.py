"""``hardware_derived``: what each chip implies in each number format — R, drain time, scale-up aggregates.

The one table every analysis reads a chip's peak in a format from (the mapping is
:mod:`econ.formats`; the rows are :func:`econ.physics.hardware.per_format`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ import formats
from econ.physics import hardware, memory, network, roofline
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "hardware_derived"
INPUTS = ("hardware",)

HARDWARE_DERIVED = ResultTable(
    name="hardware_derived",
    grain="chip x number format the chip has a dense peak in",
    key=("chip", "number_format"),
    description=(
        "Per chip and number format: the dense peak F, bytes per weight stored in that format, the critical batch "
        "ratio R (lecture b.1; scaling book B_crit = F/W for bf16), HBM drain time C/W (lecture a.6), scale-up "
        "vs scale-out bandwidth (lecture c.2) and the scale-up domain's W_eff = S*W (d.6)"
    ),
    columns=(
        C("chip", "str", "", "key", "Accelerator (hardware.chip)"),
        C("number_format", "str", "", "key", "Format of the math (bf16, fp8, int8, fp4); weights stored in it"),
        C("format_order", "int", "", "label", "Position of the format in econ.formats.FORMATS (for sorting)"),
        C(
            "weight_bytes_per_param",
            "float",
            "bytes/param",
            "derived",
            "Bytes per stored weight b_w in this format",
            formats.bytes_per_value,
        ),
        C("peak_flop_per_s", "float", "FLOP/s", "input", "Dense peak F in this format (hardware.peak_*)"),
        C("hbm_capacity_bytes", "float", "bytes", "input", "HBM capacity per chip C (hardware)"),
        C("hbm_bandwidth_bytes_per_s", "float", "bytes/s", "input", "HBM bandwidth per chip W (hardware)"),
        C(
            "flop_per_byte_ratio",
            "float",
            "FLOP/byte",
            "derived",
            "Peak FLOPs per byte of HBM bandwidth",
            hardware.flop_per_byte_ratio,
        ),
        C(
            "critical_batch_ratio",
            "float",
            "",
            "derived",
            "R, the hardware balance constant (the lecture's ~300)",
            roofline.critical_batch_ratio,
        ),
        C("hbm_drain_time_s", "float", "s", "derived", "Time to read all of HBM once", hardware.drain_time_s),
        C("scale_up_domain_chips", "int", "chips", "input", "Chips in one scale-up domain S (hardware)"),
        C(
            "scale_up_hbm_capacity_bytes",
            "float",
            "bytes",
            "derived",
            "HBM of one scale-up domain",
            hardware.scale_up_capacity_bytes,
        ),
        C(
            "scale_up_hbm_bandwidth_bytes_per_s",
            "float",
            "bytes/s",
            "derived",
            "HBM bandwidth of one scale-up domain (the weight-read bandwidth W_eff)",
            memory.effective_bandwidth_bytes_per_s,
        ),
        C(
            "scale_up_over_out_bandwidth_ratio",
            "float",
            "",
            "derived",
            "Scale-up over scale-out bandwidth per chip, one direction",
            network.scale_up_over_out_bandwidth_ratio,
        ),
    ),
)
TABLES = (HARDWARE_DERIVED,)


def derived(hardware_frame: pl.DataFrame) -> pl.DataFrame:
    """``hardware_derived`` from a ``hardware`` frame (one row per chip × format with a peak)."""
    rows = hardware.per_format(hardware_frame)

    def a(name):
        return rows[name].cast(pl.Float64).fill_null(np.nan).to_numpy()

    peak, bw, cap, domain = (
        a("peak_flop_per_s"),
        a("hbm_bandwidth_bytes_per_s"),
        a("hbm_capacity_bytes"),
        a("scale_up_domain_chips"),
    )

    def f(name, values):
        return pl.Series(name, values, dtype=pl.Float64, nan_to_null=True)

    return rows.select(
        "chip",
        "number_format",
        "format_order",
        "weight_bytes_per_param",
        "peak_flop_per_s",
        "hbm_capacity_bytes",
        "hbm_bandwidth_bytes_per_s",
        "scale_up_domain_chips",
    ).with_columns(
        f("flop_per_byte_ratio", hardware.flop_per_byte_ratio(peak, bw)),
        f("critical_batch_ratio", roofline.critical_batch_ratio(peak, bw, a("weight_bytes_per_param"))),
        f("hbm_drain_time_s", hardware.drain_time_s(cap, bw)),
        f("scale_up_hbm_capacity_bytes", hardware.scale_up_capacity_bytes(domain, cap)),
        f("scale_up_hbm_bandwidth_bytes_per_s", memory.effective_bandwidth_bytes_per_s(domain, bw)),
        f(
            "scale_up_over_out_bandwidth_ratio",
            network.scale_up_over_out_bandwidth_ratio(
                a("scale_up_bandwidth_bytes_per_s"), a("scale_out_bandwidth_bytes_per_s")
            ),
        ),
    )


def run(ctx) -> None:
    ctx.write(HARDWARE_DERIVED, derived(ctx.query("select * from hardware order by chip")))
