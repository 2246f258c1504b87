"""Specs of the hardware tables: accelerators (``hardware``) and their dated rental quotes (``rental_prices``).

Part of the contract between ``data/`` and the database (``econ.load.tables`` lists every table).
"""

from __future__ import annotations

from econ import units
from econ.load import ceilings
from econ.load.spec import Column, TableSpec

RENTAL_KINDS = ("on_demand", "spot", "capacity_block", "reserved_1y", "reserved_3y", "owner_tco", "market_index")


# ---------------------------------------------------------------------------- hardware


HARDWARE = TableSpec(
    name="hardware",
    grain="one row per accelerator (per chip, not per server)",
    description="Accelerator specs: dense peak FLOP/s by number format, HBM capacity and bandwidth, networks, power",
    key=("chip",),
    columns=(
        Column("chip", "str", "", "Short accelerator id used everywhere else (e.g. H100)", required=True),
        Column("chip_name", "str", "", "Full product name as the vendor writes it", required=True),
        Column("vendor", "str", "", "Vendor", required=True),
        Column(
            "architecture",
            "str",
            "",
            "Microarchitecture (Hopper, Blackwell, CDNA 3, …): the family the calibration fits efficiencies per",
            required=True,
        ),
        Column("release_date", "date", "", "First availability date"),
        Column(
            "peak_bf16_tflop_per_s",
            "float",
            "TFLOP/s",
            "Dense BF16 peak, 2 FLOP per multiply-add, no structured sparsity",
            required=True,
            positive=True,
            db_name="peak_bf16_flop_per_s",
            factor=units.TFLOP_PER_S,
            db_unit="FLOP/s",
            ceiling=ceilings.FLOP_PER_S,
            floor=ceilings.FLOP_PER_S_FLOOR,
        ),
        Column(
            "peak_fp8_tflop_per_s",
            "float",
            "TFLOP/s",
            "Dense FP8 peak (blank if not supported)",
            positive=True,
            db_name="peak_fp8_flop_per_s",
            factor=units.TFLOP_PER_S,
            db_unit="FLOP/s",
            ceiling=ceilings.FLOP_PER_S,
            floor=ceilings.FLOP_PER_S_FLOOR,
        ),
        Column(
            "peak_fp4_tflop_per_s",
            "float",
            "TFLOP/s",
            "Dense FP4 peak (blank if not supported)",
            positive=True,
            db_name="peak_fp4_flop_per_s",
            factor=units.TFLOP_PER_S,
            db_unit="FLOP/s",
            ceiling=ceilings.FLOP_PER_S,
            floor=ceilings.FLOP_PER_S_FLOOR,
        ),
        Column(
            "peak_int8_tera_op_per_s",
            "float",
            "TOP/s",
            "Dense INT8 peak (blank if not published)",
            optional=True,
            positive=True,
            db_name="peak_int8_op_per_s",
            factor=units.TERA,
            db_unit="OP/s",
            ceiling=ceilings.FLOP_PER_S,
            floor=ceilings.FLOP_PER_S_FLOOR,
        ),
        Column(
            "hbm_capacity_gb",
            "float",
            "GB",
            "HBM capacity per chip (decimal GB)",
            required=True,
            positive=True,
            db_name="hbm_capacity_bytes",
            factor=units.GB,
            db_unit="bytes",
            ceiling=ceilings.HBM_BYTES,
            floor=ceilings.HBM_BYTES_FLOOR,
        ),
        Column(
            "hbm_bandwidth_tb_per_s",
            "float",
            "TB/s",
            "HBM bandwidth per chip",
            required=True,
            positive=True,
            db_name="hbm_bandwidth_bytes_per_s",
            factor=units.TB_PER_S,
            db_unit="bytes/s",
            ceiling=ceilings.HBM_BANDWIDTH,
            floor=ceilings.HBM_BANDWIDTH_FLOOR,
        ),
        Column(
            "scale_up_domain_chips",
            "int",
            "chips",
            "Chips in one scale-up (NVLink/ICI/NeuronLink) domain",
            positive=True,
            ceiling=ceilings.CHIPS,
        ),
        Column(
            "scale_up_bandwidth_gb_per_s",
            "float",
            "GB/s",
            "Scale-up bandwidth per chip, one direction (half the bidirectional figure)",
            positive=True,
            db_name="scale_up_bandwidth_bytes_per_s",
            factor=units.GB_PER_S,
            db_unit="bytes/s",
            ceiling=ceilings.SCALE_UP_BANDWIDTH,
            floor=ceilings.LINK_BANDWIDTH_FLOOR,
        ),
        Column(
            "scale_out_bandwidth_gbit_per_s",
            "float",
            "Gbit/s",
            "Scale-out (NIC) bandwidth per chip, one direction",
            positive=True,
            db_name="scale_out_bandwidth_bytes_per_s",
            factor=units.GBIT_PER_S,
            db_unit="bytes/s",
            ceiling=ceilings.SCALE_OUT_BANDWIDTH,
            floor=ceilings.LINK_BANDWIDTH_FLOOR,
        ),
        Column(
            "chips_per_node",
            "int",
            "chips",
            "Chips per server/tray as sold (8 for HGX, 4 for a GB200 tray)",
            positive=True,
            ceiling=ceilings.CHIPS,
        ),
        Column(
            "chips_per_rack",
            "int",
            "chips",
            "Chips per rack in the vendor's reference rack",
            positive=True,
            ceiling=ceilings.CHIPS,
        ),
        Column(
            "tdp_w",
            "float",
            "W",
            "Thermal design power per chip",
            positive=True,
            ceiling=ceilings.CHIP_POWER_W,
        ),
        Column("source_url", "str", "", "Primary source of the row's figures", required=True),
        Column("notes", "str", "", "How figures were read; other sources"),
    ),
    min_rows=1,
)

# ---------------------------------------------------------------------------- rental prices

RENTAL_PRICES = TableSpec(
    name="rental_prices",
    grain="one row per chip x seller x price kind x quote date",
    description="Dated $/chip-hour quotes: on-demand, reserved, capacity blocks, market indices, owner TCO",
    key=("chip", "provider", "kind", "as_of"),
    columns=(
        Column("chip", "str", "", "Accelerator id", required=True, ref=("hardware", "chip")),
        Column("provider", "str", "", "Who quotes the price (cloud, neocloud, index)", required=True),
        Column("kind", "str", "", "Price kind", required=True, allowed=RENTAL_KINDS),
        Column(
            "usd_per_chip_hour",
            "float",
            "USD/chip-hour",
            "Price per chip per hour",
            required=True,
            positive=True,
            ceiling=ceilings.USD_PER_CHIP_HOUR,
        ),
        Column("as_of", "date", "", "Date the quote refers to", required=True),
        Column("source_url", "str", "", "Where the quote was read", required=True),
        Column("notes", "str", "", "Instance type, region, how the per-chip figure was derived"),
    ),
)
