"""One identity per model across price sources: the canonical model behind every price key (pure, vectorised).

A price key (``source``, ``provider``, ``model``, ``hugging_face_id``) names a model the way its seller does:
``claude-sonnet-4-5-20250929``, ``eu.anthropic.claude-sonnet-4-5-20250929-v1:0``, ``vertex_ai/claude-sonnet-4-5@
20250929``, ``anthropic/claude-sonnet-4.5``. The rules, in order:

1. **The normalised name** (:func:`model_name`): the last ``/`` segment, lower case, without a tag (``:free``,
   ``:0``, ``@20250929``), a Bedrock region or vendor prefix (``eu.anthropic.``), a seller prefix
   (``databricks-``, ``fw-``), a ``-maas`` / ``-v1`` suffix, a serving precision (``-fp8``, ``-bf16``: the same
   weights) or a trailing date (``-20250929``, ``-2024-08-06``,
   ``-251201``); ``_`` read as ``-``, Fireworks' ``3p1`` as ``3.1``, and a dash between two version digits as a
   dot (``claude-sonnet-4-5`` → ``claude-sonnet-4.5``). Names compare without their dashes
   (``qwen-3-14b`` = ``qwen3-14b``). Fine-tune keys (``ft:…``) have no name.
2. **Names that say who they are** become canonical models: an override's (``model_aliases``), an architecture's
   (``models``), a Hugging Face repo a price row names (``hugging_face_id``), a hand-kept first-party row, a row a
   maker sells itself (seller's organisation = the family's maker), an OpenRouter id (``vendor/model``, OpenRouter's
   own catalogue) and a reseller key that embeds a Hugging Face repo (``together_ai/deepseek-ai/DeepSeek-V3``).
   An alias that moves between versions is none: ``…-latest`` without a version (``mistral-large-latest``), and
   those the override file leaves blank (``deepseek-chat``); ``grok-4.3-latest`` is grok-4.3's newest snapshot.
3. **Every key maps** by the first rule that applies: its override, its ``hugging_face_id``, else its name when it
   equals a canonical model's; otherwise it stays unmapped (``match_rule = 'unmapped'``), never guessed.

A key is first-party when the organisation running its seller (``providers``) makes the model's family
(``model_families``, longest prefix of the name).
"""

from __future__ import annotations

import polars as pl

from econ.formula import formula

FREE_MAX_USD_PER_MTOK = 0.001
"""A price row whose input and output prices are both at most this (a thousandth of a dollar per million tokens,
ten times below the cheapest metered price in the shipped maps) is a free tier or a placeholder."""

NAMED_BY = ("override", "models", "hugging_face_id", "hand", "first_party", "openrouter", "hf_path")
"""Where a canonical model's name comes from, in order of precedence when spellings differ."""

_REGION = r"^(?:(?:us|eu|apac|ap|global|regional|jp|au|ca|us-gov|uk|in|sa|me|af)\.)+"
_VENDOR = (
    r"^(?:anthropic|meta|amazon|ai21|cohere|mistral|deepseek|qwen|openai|moonshot|moonshotai|minimax|writer|"
    r"twelvelabs|google|nvidia|zai|xai|stability|kimi)\."
)
_SELLER_PREFIX = r"^(?:databricks|anthropic|openai|cohere|zai|fw|xai|google|amazon|mistralai|nvidia|ai21)-([a-z])"
_PRECISION = r"-(?:bf16|fp16|fp8|fp4|nvfp4|mxfp4|int4|int8|awq|gguf)$"
_NOT_AN_ORG = r"^(?:models|accounts|eu|us|apac|global|global-standard|data-zone|[a-z]{2}(?:-gov)?-[a-z]+-\d+|@cf)$"
_MOVING = r"-latest$"


@formula(
    "name = last '/' segment, lower case, without tag, region, vendor/seller prefix, -maas/-v1, precision and "
    "date; '_' → '-', 3p1 → 3.1, 4-5 → 4.5",
    "econ model-identity rules (econ.fits.model_identity)",
)
def model_name(key: pl.Expr) -> pl.Expr:
    """The normalised model name of a price key or Hugging Face repo (rule 1 of the module docstring)."""
    e = key.str.to_lowercase().str.split("/").list.last()
    e = pl.when(e.str.starts_with("ft:")).then(None).otherwise(e)
    e = e.str.replace(r"(?:-v1|-1)?:\d+$", "").str.replace(r":.*$", "").str.replace(r"@.*$", "")
    e = e.str.replace(_REGION, "")
    e = pl.when(e.str.contains(_VENDOR + r"v?\d")).then(e.str.replace(r"\.", "-")).otherwise(e.str.replace(_VENDOR, ""))
    e = e.str.replace(_SELLER_PREFIX, "${1}").str.replace(r"-maas$", "").str.replace(r"-v1$", "")
    e = e.str.replace(r"^meta-llama", "llama").str.replace(r"^llama-v(\d)", "llama-${1}")
    e = e.str.replace(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|\d{6})$", "").str.replace(_PRECISION, "")
    e = e.str.replace_all(r"(\d)p(\d)", "${1}.${2}").str.replace_all("_", "-")
    for _ in range(2):  # x-y-z versions need two passes (the matches overlap)
        e = e.str.replace_all(r"(\d)-(\d)($|-)", "${1}.${2}${3}")
    return pl.when(e.str.len_chars() > 0).then(e).otherwise(None)


_WORDS = r"(?:[a-z]+-)*[a-z]+"
_VERSION_BEFORE_WORDS = rf"^({_WORDS})-(v?\d+(?:\.\d+)*)-({_WORDS})($|-)"
"""A version between two runs of words (``claude-4.5-sonnet``, ``nemotron-3.5-content-safety``): sellers write the
same model with the version after the words (``claude-sonnet-4.5``)."""


@formula(
    "match key = name with a version between two runs of words moved after them (claude-4.5-sonnet → "
    "claude-sonnet-4.5), without dashes",
    "econ model-identity rules (econ.fits.model_identity)",
)
def match_key(name: pl.Expr) -> pl.Expr:
    """What two names must share to be one model: the normalised name with a version that sits between words moved
    after them (Replicate's ``claude-4.5-sonnet`` is Anthropic's ``claude-sonnet-4.5``; a size or a date is no
    version word, so ``qwen-3-14b`` and ``gemini-2.5-pro-preview-05-06`` keep their order), without its dashes."""
    return name.str.replace(_VERSION_BEFORE_WORDS, "${1}-${3}-${2}${4}").str.replace_all("-", "")


@formula("is_first_party = seller's organisation (providers) = the model's maker (model_families)", "econ rule")
def first_party(seller_organisation: pl.Expr, maker: pl.Expr) -> pl.Expr:
    """Whether the seller makes the model; false where either is unknown."""
    return (seller_organisation == maker).fill_null(False)


def _pinned(name: pl.Expr, prefix_chars: pl.Expr) -> pl.Expr:
    """The name without ``-latest`` where the rest carries a version (``grok-4.3-latest`` is the newest snapshot of
    grok-4.3, and a canonical model ignores snapshot dates); null otherwise (``mistral-large-latest`` moves between
    versions)."""
    stem = name.str.replace(_MOVING, "")
    return pl.when(name.str.contains(_MOVING) & version_of(stem, prefix_chars).is_not_null()).then(stem).otherwise(None)


def _embedded_repo(model: pl.Expr) -> pl.Expr:
    """The ``org/Repo`` a reseller key ends in (``together_ai/deepseek-ai/DeepSeek-V3``), else null."""
    parts = model.str.split("/")
    org = parts.list.get(-2, null_on_oob=True)
    return (
        pl.when((parts.list.len() >= 3) & org.is_not_null() & ~org.str.to_lowercase().str.contains(_NOT_AN_ORG))
        .then(parts.list.slice(-2, 2).list.join("/"))
        .otherwise(None)
    )


@formula(
    "family, maker = the model_families row of the longest prefix of the name followed by a non-letter",
    "data/model_families.csv",
)
def family_of(names: pl.DataFrame, families: pl.DataFrame, *, name: str = "model_name") -> pl.DataFrame:
    """``names`` with ``family``, ``maker``, ``family_open_weights`` and ``prefix_chars`` of the longest
    ``model_families.prefix`` that starts the name and is followed by a non-letter (``qwen`` starts ``qwen3-max``,
    ``nova`` does not start ``novax``)."""
    fam = families.select(
        pl.col("prefix").str.to_lowercase().alias("_prefix"),
        "family",
        "maker",
        pl.col("open_weights").alias("family_open_weights"),
        pl.col("prefix").str.len_chars().cast(pl.Int64).alias("prefix_chars"),
    )
    distinct = names.select(pl.col(name).alias("_name")).drop_nulls().unique()
    hits = (
        distinct.join(fam, how="cross")
        .filter(
            pl.col("_name").str.starts_with(pl.col("_prefix"))
            & ~pl.col("_name").str.slice(pl.col("_prefix").str.len_chars(), 1).str.contains(r"^[a-z]")
        )
        .sort("_name", pl.col("_prefix").str.len_chars(), descending=[False, True])
        .group_by("_name", maintain_order=True)
        .first()
        .drop("_prefix")
    )
    return names.join(hits, left_on=name, right_on="_name", how="left")


@formula(
    "canonical = override, else name(hugging_face_id), else the canonical model whose name matches name(key), else "
    "unmapped",
    "econ model-identity rules (econ.fits.model_identity)",
)
def map_price_keys(
    keys: pl.DataFrame,
    *,
    models: pl.DataFrame,
    families: pl.DataFrame,
    providers: pl.DataFrame,
    aliases: pl.DataFrame,
) -> pl.DataFrame:
    """The canonical model, seller and maker of every price key (module docstring).

    ``keys``: distinct ``source``, ``provider``, ``model``, ``hugging_face_id`` of ``prices``. Returns one row per key
    with ``model_name``, ``canonical_model`` (null: unmapped), ``match_rule`` (override, hugging_face_id, hand,
    first_party, openrouter, hf_path, name, override_unmapped, moving_alias, unmapped), ``seller_organisation``,
    ``seller_kind``, ``maker`` and ``is_first_party``.
    """
    sellers = providers.select("provider", pl.col("organisation").alias("seller_organisation"), "seller_kind")
    k = (
        keys.with_columns(
            model_name(pl.col("model")).alias("model_name"),
            model_name(pl.col("hugging_face_id")).alias("_hf_name"),
            model_name(_embedded_repo(pl.col("model"))).alias("_repo_name"),
        )
        .join(sellers, on="provider", how="left")
        .pipe(family_of, families)
        .with_columns(
            first_party(pl.col("seller_organisation"), pl.col("maker")).alias("is_first_party"),
            _pinned(pl.col("model_name"), pl.col("prefix_chars")).alias("_pinned"),
        )
        .with_columns(
            pl.col("model_name").str.contains(_MOVING).fill_null(False).alias("_latest"),
            pl.coalesce("_pinned", "model_name").alias("model_name"),
        )
        .with_columns((pl.col("_latest") & pl.col("_pinned").is_null()).alias("_moving"))
    )
    k = _with_override(k, aliases)
    named = _authorities(k, models, aliases)
    display = (
        named.sort("_rank", pl.col("_name").str.len_chars(), "_name")
        .group_by("_match")
        .agg(pl.col("_name").first().alias("_canonical"), pl.col("_by").first().alias("_named_by"))
    )

    # the own name of a key that names its repo is an alias of the repo's model (OpenRouter's deepseek-chat-v3-0324
    # serves deepseek-ai/DeepSeek-V3-0324), where that name means one model and is no canonical model itself
    repo_alias = (
        k.filter(pl.col("_hf_name").is_not_null() & ~pl.col("_moving") & ~pl.col("_override"))
        .select(match_key(pl.col("model_name")).alias("_match"), match_key(pl.col("_hf_name")).alias("_target"))
        .unique()
        .filter(pl.len().over("_match") == 1)
        .join(display.select(pl.col("_match").alias("_target"), "_canonical", "_named_by"), on="_target")
        .drop("_target")
        .join(display, on="_match", how="anti")
        .join(
            aliases.filter(pl.col("canonical_model").is_null()).select(
                match_key(model_name(pl.col("alias"))).alias("_match")
            ),
            on="_match",
            how="anti",
        )
    )
    display = pl.concat([display, repo_alias], how="vertical_relaxed")

    def lookup(expr: pl.Expr, alias: str) -> pl.DataFrame:
        return (
            k.select(pl.col("_row"), match_key(expr).alias("_match"))
            .join(display, on="_match", how="inner")
            .select("_row", pl.col("_canonical").alias(alias))
        )

    k = k.with_row_index("_row")
    by_hf, by_name = lookup(pl.col("_hf_name"), "_via_hf"), lookup(pl.col("model_name"), "_via_name")
    k = k.join(by_hf, on="_row", how="left").join(by_name, on="_row", how="left")
    own = (
        pl.when(pl.col("source") == "hand")
        .then(pl.lit("hand"))
        .when(pl.col("source") == "openrouter")
        .then(pl.lit("openrouter"))
        .when(pl.col("is_first_party"))
        .then(pl.lit("first_party"))
        .when(pl.col("_repo_name").is_not_null() & pl.col("seller_kind").ne_missing("router"))
        .then(pl.lit("hf_path"))
        .otherwise(pl.lit("name"))
    )
    rule = (
        pl.when(pl.col("_override") & pl.col("_override_model").is_not_null())
        .then(pl.lit("override"))
        .when(pl.col("_override"))
        .then(pl.lit("override_unmapped"))
        .when(pl.col("_via_hf").is_not_null())
        .then(pl.lit("hugging_face_id"))
        .when(pl.col("_moving"))
        .then(pl.lit("moving_alias"))
        .when(pl.col("_via_name").is_not_null())
        .then(own)
        .otherwise(pl.lit("unmapped"))
    )
    canonical = (
        pl.when(pl.col("_override"))
        .then(pl.col("_override_model"))
        .when(pl.col("_via_hf").is_not_null())
        .then(pl.col("_via_hf"))
        .when(pl.col("_moving"))
        .then(None)
        .otherwise(pl.col("_via_name"))
    )
    out = k.with_columns(canonical.alias("canonical_model"), rule.alias("match_rule"))
    return out.select(
        "source",
        "provider",
        "model",
        "hugging_face_id",
        "model_name",
        "canonical_model",
        "match_rule",
        "seller_organisation",
        "seller_kind",
        "maker",
        "is_first_party",
    ).sort("source", "provider", "model", "hugging_face_id", nulls_last=True)


def _with_override(k: pl.DataFrame, aliases: pl.DataFrame) -> pl.DataFrame:
    """``_override`` (an alias row applies: same key or normalised name, same seller or any) and its model. A key
    whose row names the Hugging Face repo it serves needs no override: the repo decides."""
    a = aliases.select(
        pl.col("alias").alias("_alias"),
        pl.col("provider").alias("_alias_provider"),
        pl.col("canonical_model").alias("_override_model"),
    )
    k = k.with_row_index("_o")
    hits = pl.concat(
        [
            k.join(a, left_on=column, right_on="_alias", how="inner")
            .filter(pl.col("_alias_provider").is_null() | (pl.col("_alias_provider") == pl.col("provider")))
            .select(
                "_o", "_override_model", (pl.col("_alias_provider").is_not_null().cast(pl.Int8) * 2 + rank).alias("_p")
            )
            for column, rank in (("model", 1), ("model_name", 0))
        ]
    )
    best = hits.sort("_o", "_p", descending=[False, True]).group_by("_o", maintain_order=True).first().drop("_p")
    return (
        k.join(best.with_columns(pl.lit(True).alias("_override")), on="_o", how="left")
        .with_columns((pl.col("_override").fill_null(False) & pl.col("_hf_name").is_null()).alias("_override"))
        .drop("_o")
    )


def _authorities(k: pl.DataFrame, models: pl.DataFrame, aliases: pl.DataFrame) -> pl.DataFrame:
    """Every name that says which model it is (rule 2), with its precedence rank and match key."""
    rank = {by: i for i, by in enumerate(NAMED_BY)}
    not_moving = ~pl.col("_moving")
    overridden = k.filter(pl.col("_override") & pl.col("_override_model").is_null()).select("model_name")
    k = k.filter(~pl.col("_override"))  # an overridden key names nothing: its override decides
    own = pl.col("_hf_name").is_null() & not_moving  # a key with a repo names the repo's model, not its own
    parts = [
        aliases.filter(pl.col("canonical_model").is_not_null()).select(
            pl.col("canonical_model").alias("_name"), pl.lit("override").alias("_by")
        ),
        models.select(model_name(pl.col("model")).alias("_name"), pl.lit("models").alias("_by")),
        models.select(model_name(pl.col("hf_repo")).alias("_name"), pl.lit("models").alias("_by")),
        k.select(pl.col("_hf_name").alias("_name"), pl.lit("hugging_face_id").alias("_by")),
        k.filter((pl.col("source") == "hand") & own).select(
            pl.col("model_name").alias("_name"), pl.lit("hand").alias("_by")
        ),
        k.filter((pl.col("source") != "hand") & pl.col("is_first_party") & own).select(
            pl.col("model_name").alias("_name"), pl.lit("first_party").alias("_by")
        ),
        k.filter((pl.col("source") == "openrouter") & own & ~pl.col("model").str.starts_with("openrouter/")).select(
            pl.col("model_name").alias("_name"), pl.lit("openrouter").alias("_by")
        ),
        k.filter((pl.col("source") == "litellm") & pl.col("seller_kind").ne_missing("router")).select(
            pl.col("_repo_name").alias("_name"), pl.lit("hf_path").alias("_by")
        ),
    ]
    named = pl.concat(parts).drop_nulls("_name").unique()
    named = named.join(overridden, left_on="_name", right_on="model_name", how="anti")
    return named.with_columns(
        pl.col("_by").replace_strict(rank, return_dtype=pl.Int64).alias("_rank"),
        match_key(pl.col("_name")).alias("_match"),
    )


@formula(
    "version = first number of the name after the family prefix (v3.1, 4.5, k2.5), null for sizes (120b)",
    "econ model-identity rules (econ.fits.model_identity)",
)
def version_of(name: pl.Expr, prefix_chars: pl.Expr) -> pl.Expr:
    """The version part of a canonical name after its family prefix (``claude-sonnet-4.5`` → ``4.5``,
    ``deepseek-v3.1`` → ``v3.1``, ``kimi-k2.5`` → ``k2.5``); null where none or only a size follows."""
    rest = name.str.slice(prefix_chars.fill_null(0))
    version = rest.str.extract(r"^-?([a-z]?\d+(?:\.\d+)*(?:[a-z](?:$|-))?)", 1).str.strip_chars("-")
    size = version.str.contains(r"^\d+[bmk]$") | rest.str.contains(r"^-?\d+x\d")  # 120b, 8x22b: sizes
    return pl.when(size).then(None).otherwise(version)


@formula(
    f"is_free = max(input, output) ≤ {FREE_MAX_USD_PER_MTOK:g} USD/MTok (blank counts as 0; a row with neither is not)",
    "econ rule (free tiers and placeholders of the price maps)",
)
def is_free(input_usd_per_mtok: pl.Expr, output_usd_per_mtok: pl.Expr) -> pl.Expr:
    """Whether a price row is a free tier or a placeholder: both prices at most :data:`FREE_MAX_USD_PER_MTOK`."""
    both_blank = input_usd_per_mtok.is_null() & output_usd_per_mtok.is_null()
    top = pl.max_horizontal(input_usd_per_mtok.fill_null(0.0), output_usd_per_mtok.fill_null(0.0))
    return (~both_blank & (top <= FREE_MAX_USD_PER_MTOK)).alias("is_free")
