"""The key and the values a price row carries, each in one list: the loader groups snapshots into effective periods by
them (:mod:`econ.load.price_tables`) and the price-change fit compares them (:mod:`econ.fits.price_changes`)."""

from __future__ import annotations

PRICE_VALUE_COLUMNS = [
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "cache_write_12h_usd_per_mtok",
    "cache_storage_usd_per_mtok_hour",
    "max_input_tokens",
    "speed_ratio",
]
"""The values of a price row: consecutive snapshots with the same values are one effective period."""

PRICE_KEY = ["source", "provider", "model", "variant", "tier_min_prompt_tokens"]
"""What names a price row across snapshots: its source, seller, key, variant and context tier."""
