"""The one place vendor units become base units.

Base units: bytes, seconds, FLOP, dollars, tokens, parameters. Decimal SI throughout
(1 GB = 1e9 B, 1 TB/s = 1e12 B/s). Data files use the units vendors publish (TFLOP/s, GB,
TB/s, Gbit/s, $/MTok, billions of parameters); the loader multiplies by the factors below
exactly once, so every column in the database is in base units unless its name says
otherwise (prices stay in $/MTok, the unit every provider publishes, and say so).
"""

from __future__ import annotations

MEGA = 1e6
GIGA = 1e9
TERA = 1e12

# bytes
GB = GIGA
TB = TERA

# rates
TFLOP_PER_S = TERA  # FLOP/s
GB_PER_S = GIGA  # bytes/s
TB_PER_S = TERA  # bytes/s
GBIT_PER_S = GIGA / 8.0  # bytes/s

# counts
BILLION = GIGA  # parameters
TRILLION = TERA  # tokens
MTOK = MEGA  # tokens in a "million tokens" price unit

# time
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86_400.0
HOURS_PER_DAY = 24.0
SECONDS_PER_MONTH = 30.0 * SECONDS_PER_DAY  # the lecture's month (5e8 tok/s x 2 months = 2.6e15)


def usd_per_token_to_usd_per_mtok(x):
    """$/token (LiteLLM, OpenRouter) -> $/MTok."""
    return x * MTOK
