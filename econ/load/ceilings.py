"""Physical ceilings of the inputs: the largest value a table (or an imported price map) may hold.

Each ceiling is far above anything sold or published today (the factor is stated), so a real
value never meets it, while a typo in the exponent, a unit slip (TB/s written as GB/s the other
way round) or an overflowing import (1e302 USD per token becoming ``inf``) does. Values are in
base units (``econ.units``); the table specs convert them to the units of each CSV column.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ceiling:
    """The largest allowed value (base units) and why it is beyond anything real."""

    value: float
    unit: str
    why: str


FLOP_PER_S = Ceiling(1e19, "FLOP/s", "a chip peak of 1e19 FLOP/s is ~600x the dense FP4 peak of a B300 (1.5e16)")
HBM_BYTES = Ceiling(1e15, "bytes", "1 PB of HBM on one chip is ~3,500x a B300's 288 GB")
HBM_BANDWIDTH = Ceiling(1e15, "bytes/s", "1 PB/s of memory bandwidth is ~125x a B300's 8 TB/s")
SCALE_UP_BANDWIDTH = Ceiling(1e14, "bytes/s", "100 TB/s per chip is ~100x NVLink 5's 0.9 TB/s per direction")
SCALE_OUT_BANDWIDTH = Ceiling(1e13, "bytes/s", "10 TB/s (80 Tbit/s) per chip is 100x an 800 Gbit/s NIC")
CHIPS = Ceiling(1e7, "chips", "10 million chips is ~50x the largest clusters announced")
CHIP_POWER_W = Ceiling(1e5, "W", "100 kW is ~4x a whole wafer-scale engine (~25 kW)")
USD_PER_CHIP_HOUR = Ceiling(1e4, "USD/chip-hour", "10,000 USD per chip-hour is ~1,000x an H100 on demand")
USD_PER_MTOK = Ceiling(1e5, "USD/MTok", "100,000 USD per million tokens is ~150x the dearest list price (~600)")
TOKENS = Ceiling(1e10, "tokens", "a 10-billion-token prompt is 1,000x the longest context offered (10M)")
PARAMS = Ceiling(1e15, "params", "a quadrillion parameters is ~500x the largest published model (~2e12)")
TRAINING_TOKENS = Ceiling(1e16, "tokens", "1e16 training tokens is ~250x the largest reported run (~4e13)")
TRAINING_FLOP = Ceiling(1e30, "FLOP", "1e30 FLOP is ~2,000x the largest training runs (~5e26)")
LAYERS = Ceiling(1e5, "layers", "100,000 layers is ~700x the deepest published models (~140)")
HEADS = Ceiling(1e5, "heads", "100,000 heads per layer is ~700x the most published (~128)")
WIDTH = Ceiling(1e7, "", "a width of 10 million is ~300x the widest published models (~3e4)")
EXPERTS = Ceiling(1e6, "experts", "a million experts per layer is ~2,000x the most published (~512)")
LOSS_NATS = Ceiling(
    100.0, "nats/token", "100 nats per token is ~10x the loss of an untrained model on a 50k vocabulary"
)
TIER_BYTES = Ceiling(1e18, "bytes", "an exabyte in one memory device is ~1,000x the largest drive sold")
TIER_USD_PER_HOUR = Ceiling(1e5, "USD/hour", "100,000 USD per hour for one memory device is beyond any price list")
SPEED_RATIO = Ceiling(1e3, "ratio", "a variant 1,000x faster than standard is ~400x the fastest fast mode (~2.5x)")
TOKENS_PER_S = Ceiling(1e15, "tokens/s", "1e15 tokens/s is ~1e5x all the world's inference traffic estimated today")
