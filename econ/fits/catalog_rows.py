"""The catalog row of each canonical model (pure, vectorised): its family, version, maker, whether its weights are
open, and the architecture row (``models``) it is served as, from the price keys mapped to it
(:func:`econ.fits.model_identity.map_price_keys`)."""

from __future__ import annotations

import polars as pl

from econ.fits.model_identity import family_of, match_key, model_name, version_of
from econ.formula import formula


@formula(
    "open weights = a Hugging Face repo is known for the model, else the family's yes/no, else unknown",
    "econ model-identity rules (econ.fits.model_identity)",
)
def open_weights(hf_repo: pl.Expr, family_open_weights: pl.Expr) -> pl.Expr:
    """True where a repo of the weights is known, else the family's ``yes``/``no``, else null (unknown)."""
    return (
        pl.when(hf_repo.is_not_null())
        .then(True)
        .otherwise(
            family_open_weights.replace_strict({"yes": True, "no": False}, default=None, return_dtype=pl.Boolean)
        )
    )


@formula(
    "arch_model = the models row whose name matches the canonical model's (also without -instruct/-it/-chat), or "
    "whose hf_repo a price row of the model names",
    "econ model-identity rules (econ.fits.model_identity)",
)
def model_catalog(mapping: pl.DataFrame, *, models: pl.DataFrame, families: pl.DataFrame) -> pl.DataFrame:
    """One row per canonical model: family, version, maker, open weights, the ``models`` row, the price keys.

    ``mapping`` is :func:`map_price_keys`. The architecture (``arch_model``) is the ``models`` row whose model or repo
    name matches the canonical model's, also without a trailing ``-instruct``/``-it``/``-chat`` (the same weights
    tuned to follow instructions), or whose ``hf_repo`` a price row of the model names.
    """
    mapped = mapping.filter(pl.col("canonical_model").is_not_null())
    per = mapped.group_by("canonical_model").agg(
        pl.col("hugging_face_id").drop_nulls().min().alias("_hf_seen"),
        pl.len().alias("price_key_count"),
        pl.struct("source", "provider").n_unique().alias("seller_count"),
        pl.struct("source", "provider").filter(pl.col("is_first_party")).n_unique().alias("first_party_seller_count"),
    )
    arch = models.select(
        pl.col("model").alias("arch_model"),
        "hf_repo",
        "release_date",
        match_key(model_name(pl.col("model"))).alias("_m1"),
        match_key(model_name(pl.col("hf_repo"))).alias("_m2"),
    )
    names = pl.concat(
        [per.select("canonical_model"), arch.select(model_name(pl.col("arch_model")).alias("canonical_model"))]
    ).unique()
    base = match_key(pl.col("canonical_model").str.replace(r"-(?:instruct|it|chat)$", ""))
    frame = names.join(per, on="canonical_model", how="left").with_columns(
        match_key(pl.col("canonical_model")).alias("_m"), base.alias("_mb")
    )
    candidates = pl.concat(
        [
            frame.join(arch, left_on=left, right_on=right, how="inner").select(
                "canonical_model", "arch_model", pl.lit(p).alias("_p")
            )
            for p, (left, right) in enumerate(
                [("_hf_seen", "hf_repo"), ("_m", "_m1"), ("_m", "_m2"), ("_mb", "_m1"), ("_mb", "_m2")]
            )
        ]
    )
    chosen = (
        candidates.sort("canonical_model", "_p", "arch_model").group_by("canonical_model", maintain_order=True).first()
    )
    frame = (
        frame.join(chosen.drop("_p"), on="canonical_model", how="left")
        .join(
            arch.select("arch_model", pl.col("hf_repo").alias("_arch_repo"), "release_date"),
            on="arch_model",
            how="left",
        )
        .with_columns(pl.coalesce("_hf_seen", "_arch_repo").alias("hf_repo"))
        .pipe(family_of, families, name="canonical_model")
    )
    return frame.select(
        "canonical_model",
        "family",
        version_of(pl.col("canonical_model"), pl.col("prefix_chars")).alias("version"),
        "maker",
        open_weights(pl.col("hf_repo"), pl.col("family_open_weights")).alias("open_weights"),
        "hf_repo",
        "arch_model",
        "release_date",
        pl.col("price_key_count").fill_null(0).cast(pl.Int64),
        pl.col("seller_count").fill_null(0).cast(pl.Int64),
        pl.col("first_party_seller_count").fill_null(0).cast(pl.Int64),
    ).sort("canonical_model")
