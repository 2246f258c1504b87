"""Physical ceilings (and floors) of the inputs: the largest (smallest) value a table or an imported price map may hold.

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

# Floors: the smallest value of a quantity the serving model divides by (a peak, a bandwidth, a capacity). Far below
# anything real too, so that a lost minus sign in an exponent (1e-320 TB/s) is refused instead of giving times and
# ratios that overflow to infinity or become null.
FLOP_PER_S_FLOOR = Ceiling(1e9, "FLOP/s", "1 GFLOP/s is ~10,000x below the slowest accelerator tracked (~1e13)")
HBM_BYTES_FLOOR = Ceiling(1e6, "bytes", "1 MB of HBM is ~16,000x below the smallest accelerator memory (16 GB)")
HBM_BANDWIDTH_FLOOR = Ceiling(1e9, "bytes/s", "1 GB/s of memory bandwidth is ~800x below a TPU v5e's 819 GB/s")
LINK_BANDWIDTH_FLOOR = Ceiling(1e6, "bytes/s", "1 MB/s per chip is ~10,000x below a 100 Gbit/s NIC")
TIER_BYTES_FLOOR = Ceiling(1e3, "bytes", "a kilobyte is far below any memory device sold")
TIER_BANDWIDTH_FLOOR = Ceiling(1e3, "bytes/s", "1 kB/s is ~100,000x below a hard disk")
TINY = 1e-30
"""The smallest magnitude of any other non-zero number in an input (a subnormal such as 1e-320 is a typo)."""

# Scenario quantities of other units (multipliers and counts): far above every stated value, so that an overflowing
# multiplier (a PUE of 1e308) is refused instead of turning power and cost into infinity.
RATIO = Ceiling(1e4, "ratio", "a ratio of 10,000 is 250x the largest a scenario states (input/output tokens, ~40)")
FLOP_PER_PARAM_TOKEN = Ceiling(1e3, "FLOP/(param*token)", "1,000 FLOP per parameter and token is ~150x training's 6")
MODELS = Ceiling(1e6, "models", "a million models per family is beyond any lab's release history")
MONTHS = Ceiling(1200, "months", "a century")
SECONDS = Ceiling(1e6, "s", "11 days for one step or first token is beyond any serving target")
TOKENS_PER_PARAM = Ceiling(1e6, "tokens/param", "a million tokens per parameter is ~50,000x Chinchilla's 20")
ANY_SCENARIO_VALUE = Ceiling(1e30, "", "a quantity beyond 1e30 is not a stated assumption")
