"""Which price rows a fit reads: one source per model, and the open architecture behind a price row.

The ``prices`` table holds the same model several times: hand-kept first-party rows
(``google`` / ``gemini-3.1-pro-preview``), the LiteLLM map (``gemini`` /
``gemini/gemini-3.1-pro-preview``, plus every reseller's copy) and OpenRouter
(``google/gemini-3.1-pro-preview``). A fit of one model must read one schedule, chosen by
a stated rule, not a mixture:

* **name key** — the model's identity across sources: the last ``/`` segment of the price
  key, lower-cased, without a Vertex ``@version`` suffix or Bedrock ``region.vendor.``
  prefixes, with ``.`` and ``_`` read as ``-`` (``vertex_ai/claude-haiku-5-5@default`` →
  ``claude-haiku-5-5``, ``global.openai.gpt-6-astra`` → ``gpt-6-astra``,
  ``empiriolabs/glm-5-1`` and ``glm-5.1`` → ``glm-5-1``).
* **one source per name key**, among the rows a fit can use (a fit filters first: tiered
  schedules, cached prices, …) — ``hand`` first (sourced first-party tables), then
  ``litellm``, then ``openrouter``; inside a source a lab's own API
  (:data:`FIRST_PARTY_PROVIDERS`) before a reseller or cloud, then the shortest price key
  (``xai/grok-4.3`` over ``vertex_ai/xai/grok-4.3``), then alphabetical.
  The chosen rows keep their own key (``source``, ``provider``, ``model``), the names every price table uses.

The open architecture (``models``) behind a price row is found by, in this order,
``hugging_face_id`` = ``models.hf_repo`` (OpenRouter rows, hand rows), a LiteLLM key that
ends in the HF repo id (``together_ai/deepseek-ai/DeepSeek-V3``), or the documented name
rule: the name key equals the model's name or its HF repo name read the same way
(``glm-5-1`` → ``zai-org/GLM-5.1``, ``minimax-m3`` → ``MiniMaxAI/MiniMax-M3``). First-party aliases that move between
versions
(``deepseek-chat``) and commercial builds of open families (``qwen3-coder-plus``) are not
mapped: nobody publishes which weights serve them. ``arch_match`` says which rule matched.
"""

from __future__ import annotations

import polars as pl

from econ.fits.seller_precedence import SOURCE_AUTHORITY

SOURCE_ORDER = SOURCE_AUTHORITY
"""Preference among price sources when a model appears in several (the billing rule's authority order)."""

FIRST_PARTY_PROVIDERS = (
    "openai",
    "anthropic",
    "google",
    "gemini",
    "xai",
    "deepseek",
    "moonshot",
    "minimax",
    "zai",
    "bigmodel",
    "mistral",
    "alibaba",
    "alibaba_global",
    "alibaba_cn",
    "dashscope",
    "qwencloud",
    "qwen_ai_platform",
    "volcengine",
    "cohere",
    "cohere_chat",
    "ai21",
    "amazon_nova",
    "meta",
    "xiaomi_mimo",
    "stepfun",
    "inception",
    "codestral",
)
"""Provider names (hand and LiteLLM spellings) that are a lab's own API rather than a reseller or a cloud."""

LAB_PROVIDERS = {
    "DeepSeek": ("deepseek",),
    "Moonshot AI": ("moonshot",),
    "Alibaba Qwen": ("alibaba", "alibaba_global", "alibaba_cn", "dashscope", "qwencloud", "qwen_ai_platform"),
    "OpenAI": ("openai",),
    "Zhipu AI (Z.ai)": ("zai", "bigmodel"),
    "MiniMax": ("minimax",),
    "Meta": ("meta",),
    "Mistral AI": ("mistral",),
    "Google": ("google", "gemini"),
    "Xiaomi": ("xiaomi_mimo",),
    "StepFun": ("stepfun",),
}
"""The providers (hand and LiteLLM spellings) that are an open model's own lab's API (``models.lab``): a price
there is **first-party**; any other provider of the weights (a cloud, a reseller, an aggregator) is a **reseller**."""

ARCH_COLUMNS = (
    "lab",
    "params_total",
    "params_active",
    "kv_bytes_per_token",
    "kv_window_bytes_per_sequence",
    "sliding_window_tokens",
    "attention",
)


def name_key(column: str = "model") -> pl.Expr:
    """The model's identity across sources (see the module docstring)."""
    return _canon(
        pl.col(column)
        .str.to_lowercase()
        .str.split("/")
        .list.last()
        .str.replace(r"@.*$", "")
        .str.replace(r"^(?:[a-z]+\.)+", "")
    )


def _canon(expr: pl.Expr) -> pl.Expr:
    return expr.str.to_lowercase().str.replace_all(r"[._]", "-")


def choose_sources(prices: pl.DataFrame) -> pl.DataFrame:
    """The rows of one (source, provider, price key) per name key, all its variants and tiers.

    ``prices`` is ``price_current`` (or any frame with ``source``, ``provider``, ``model``).
    Adds ``name_key``; the chosen rows keep their ``source``, ``provider`` and ``model``.
    """
    rank = pl.col("source").replace_strict(
        {s: i for i, s in enumerate(SOURCE_ORDER)}, default=len(SOURCE_ORDER), return_dtype=pl.Int64
    )
    keyed = prices.with_columns(name_key().alias("name_key"))
    chosen = (
        keyed.select("name_key", "source", "provider", "model")
        .unique()
        .sort(
            [
                rank,
                ~pl.col("provider").is_in(FIRST_PARTY_PROVIDERS),
                pl.col("model").str.len_chars(),
                "provider",
                "model",
            ]
        )
        .group_by("name_key", maintain_order=True)
        .first()
    )
    return keyed.join(chosen, on=["name_key", "source", "provider", "model"], how="semi")


def provider_kind() -> pl.Expr:
    """``first_party`` where the provider is the open model's lab (:data:`LAB_PROVIDERS`), ``reseller`` for any
    other provider of open weights, null for a closed model (needs ``lab``, ``provider`` and ``arch_model``)."""
    own = pl.lit(False)
    for lab, providers in LAB_PROVIDERS.items():
        own = own | ((pl.col("lab") == lab) & pl.col("provider").is_in(providers))
    return (
        pl.when(pl.col("arch_model").is_null())
        .then(pl.lit(None, pl.String))
        .when(own)
        .then(pl.lit("first_party"))
        .otherwise(pl.lit("reseller"))
        .alias("provider_kind")
    )


def choose_schedules(frame: pl.DataFrame) -> pl.DataFrame:
    """One schedule per closed model (:func:`choose_sources`) and one per open model × provider.

    ``frame``: price rows with the architecture attached (:func:`attach_architecture`). An open model keeps every
    seller's schedule apart (first-party and resellers are validated apart, ``provider_kind``), each from one
    source (hand, else litellm, else openrouter; then the shortest key). Adds what :func:`choose_sources` adds and
    ``provider_kind``.
    """
    closed = choose_sources(frame.filter(pl.col("arch_model").is_null()).drop("name_key"))
    rank = pl.col("source").replace_strict(
        {s: i for i, s in enumerate(SOURCE_ORDER)}, default=len(SOURCE_ORDER), return_dtype=pl.Int64
    )
    open_rows = frame.filter(pl.col("arch_model").is_not_null())
    chosen = (
        open_rows.select("arch_model", "source", "provider", "model")
        .unique()
        .sort([rank, pl.col("model").str.len_chars(), "model"])
        .group_by("arch_model", "provider", maintain_order=True)
        .first()
    )
    picked = open_rows.join(chosen, on=["arch_model", "source", "provider", "model"], how="semi")
    return pl.concat([closed.select(picked.columns), picked], how="vertical_relaxed").with_columns(provider_kind())


def attach_architecture(frame: pl.DataFrame, models: pl.DataFrame) -> pl.DataFrame:
    """Left-join the ``models`` row behind each price row (rules in the module docstring).

    Adds ``arch_model``, ``arch_match`` (``hugging_face_id`` | ``litellm_key`` | ``name`` | null) and the
    architecture columns ``params_total``, ``params_active``, ``kv_bytes_per_token`` (BF16 cache),
    ``kv_window_bytes_per_sequence``, ``sliding_window_tokens``, ``attention`` (null where no model matched).
    """
    if "name_key" not in frame.columns:
        frame = frame.with_columns(name_key().alias("name_key"))
    arch = models.select(
        pl.col("model").alias("arch_model"),
        pl.col("hf_repo").str.to_lowercase().alias("_hf"),
        _canon(pl.col("hf_repo").str.split("/").list.last()).alias("_hf_tail"),
        _canon(pl.col("model")).alias("_model_canon"),
        *(pl.col(c) for c in ARCH_COLUMNS if c in models.columns),
    )
    keys = frame.with_row_index("_row").select(
        "_row",
        pl.col("hugging_face_id").str.to_lowercase().alias("_by_hf")
        if "hugging_face_id" in frame.columns
        else pl.lit(None, dtype=pl.Utf8).alias("_by_hf"),
        pl.col("model").str.to_lowercase().str.split("/").list.slice(-2, 2).list.join("/").alias("_by_key"),
        pl.col("name_key").alias("_by_name"),
    )
    by_hf = keys.join(arch.select("arch_model", "_hf"), left_on="_by_hf", right_on="_hf", how="inner")
    by_key = keys.join(arch.select("arch_model", "_hf"), left_on="_by_key", right_on="_hf", how="inner")
    by_tail = keys.join(arch.select("arch_model", "_hf_tail"), left_on="_by_name", right_on="_hf_tail", how="inner")
    by_model = keys.join(
        arch.select("arch_model", "_model_canon"), left_on="_by_name", right_on="_model_canon", how="inner"
    )
    matches = (
        pl.concat(
            [
                by_hf.select(
                    "_row", "arch_model", pl.lit("hugging_face_id").alias("arch_match"), pl.lit(0).alias("_p")
                ),
                by_key.select("_row", "arch_model", pl.lit("litellm_key").alias("arch_match"), pl.lit(1).alias("_p")),
                by_tail.select("_row", "arch_model", pl.lit("name").alias("arch_match"), pl.lit(2).alias("_p")),
                by_model.select("_row", "arch_model", pl.lit("name").alias("arch_match"), pl.lit(2).alias("_p")),
            ]
        )
        .sort("_row", "_p", "arch_model")
        .group_by("_row", maintain_order=True)
        .first()
        .drop("_p")
    )
    out = (
        frame.with_row_index("_row")
        .join(matches, on="_row", how="left")
        .join(arch.drop("_hf", "_hf_tail", "_model_canon"), on="arch_model", how="left")
    )
    return out.drop("_row")
