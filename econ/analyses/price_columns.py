"""Declarations of the ``prices`` columns that price result tables carry (one meaning per column name)."""

from __future__ import annotations

from econ.results import ResultColumn as C

PRICE_KEY_COLUMNS = (
    C(
        "source",
        "str",
        "",
        "key",
        "Where the row comes from: hand (data/prices.csv), litellm or openrouter (snapshots), genai_prices or "
        "llm_prices (replayed histories)",
    ),
    C("provider", "str", "", "key", "Seller of the tokens at this price (LiteLLM's litellm_provider for imports)"),
    C("model", "str", "", "key", "Model id as the seller names it"),
    C("variant", "str", "", "key", "Service variant: standard, batch, flex, priority or fast"),
    C(
        "tier_min_prompt_tokens",
        "int",
        "tokens",
        "key",
        "Long-context tier: the whole request is billed at this row once the prompt exceeds this many tokens (0 = "
        "base)",
    ),
)

PRICE_VALUE_COLUMNS = (
    C("from_date", "date", "", "key", "First day the price applies (inclusive)"),
    C("to_date", "date", "", "input", "First day the price no longer applies (exclusive; null = current)"),
    C("input_usd_per_mtok", "float", "USD/MTok", "input", "Uncached input (prompt) price"),
    C("output_usd_per_mtok", "float", "USD/MTok", "input", "Output (completion) price"),
    C("cache_read_usd_per_mtok", "float", "USD/MTok", "input", "Prompt-cache hit (read) price"),
    C("cache_write_5m_usd_per_mtok", "float", "USD/MTok", "input", "Prompt-cache write price, 5-minute retention"),
    C("cache_write_1h_usd_per_mtok", "float", "USD/MTok", "input", "Prompt-cache write price, 1-hour retention"),
    C("cache_write_12h_usd_per_mtok", "float", "USD/MTok", "input", "Prompt-cache write price, 12-hour retention"),
    C(
        "cache_storage_usd_per_mtok_hour",
        "float",
        "USD/MTok/hour",
        "input",
        "Explicit-cache storage price per million tokens per hour",
    ),
    C("max_input_tokens", "int", "tokens", "input", "Largest prompt the seller accepts"),
    C("speed_ratio", "float", "", "input", "Published output speed of this variant over standard (fast mode)"),
    C("hugging_face_id", "str", "", "input", "Hugging Face repo of the open weights served (joins models.hf_repo)"),
    C("source_url", "str", "", "input", "Page the price was read from"),
    C("notes", "str", "", "label", "Caveats (hand-kept rows)"),
    C("source_key", "str", "", "input", "Entry key in the imported price map (null for hand-kept rows)"),
    C("snapshot_date", "date", "", "input", "Newest snapshot that carried this price (null for hand-kept rows)"),
    C(
        "source_line",
        "int",
        "",
        "label",
        "Line of the row in its file (data/prices.csv for hand-kept rows, the newest snapshot that carried it for "
        "imports; null for the replayed histories)",
    ),
    C(
        "source_commit",
        "str",
        "",
        "input",
        "Commit of the source repository whose snapshot first showed this price (replayed histories)",
    ),
    C("last_commit", "str", "", "input", "Commit whose snapshot last showed this price (replayed histories)"),
    C(
        "declared",
        "bool",
        "",
        "input",
        "from_date is the source's own date (a hand-kept row or a dated price), not the first snapshot showing it",
    ),
)
