"""``layouts``: named parallel layouts of a serving pool (the degrees and what each rank replicates)."""

from __future__ import annotations

import polars as pl

from econ.errors import Problem
from econ.load.spec import FILE, LINE, Column, TableSpec

POOLS = ("prefill", "decode")
APPLIES_TO = ("any", "moe", "dense")


def _flag(name: str, what: str) -> Column:
    return Column(
        name, "int", "", f"1 when every data-parallel rank holds the {what}, 0 when they are split", min=0, max=1
    )


def _check_layouts(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    problems = []
    bad = frame.filter(
        pl.col("replica_chips").is_not_null()
        & ((pl.col("replica_chips") % (pl.col("tensor_parallel") * pl.col("pipeline_parallel"))) != 0)
    )
    for row in bad.iter_rows(named=True):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "replica_chips",
                "replica_chips is not a multiple of tensor_parallel x pipeline_parallel",
                "the attention data-parallel degree is replica_chips / (tensor_parallel x pipeline_parallel)",
            )
        )
    return problems


LAYOUTS = TableSpec(
    name="layouts",
    grain="one row per named layout",
    description="Named parallel layouts of a prefill or decode pool: chips per replica, tensor and pipeline "
    "degrees (the attention data-parallel degree is the rest), which weights every data-parallel rank "
    "replicates, redundant expert slots; the layout search generates the others",
    key=("layout",),
    columns=(
        Column("layout", "str", "", "Short name", required=True),
        Column("pool", "str", "", "Pool it describes", required=True, allowed=POOLS),
        Column("applies_to", "str", "", "Models it applies to", required=True, allowed=APPLIES_TO),
        Column("replica_chips", "int", "chips", "Chips per replica (blank: one scale-up domain)", positive=True),
        Column(
            "tensor_parallel",
            "int",
            "chips",
            "Tensor-parallel degree of an attention rank",
            required=True,
            positive=True,
        ),
        Column("pipeline_parallel", "int", "stages", "Pipeline stages", required=True, positive=True),
        _flag("replicate_attention", "attention weights"),
        _flag("replicate_shared_experts", "shared experts"),
        _flag("replicate_dense", "dense FFN layers"),
        _flag("replicate_embeddings", "embedding and output head"),
        Column(
            "redundant_expert_slots",
            "int",
            "experts",
            "Extra routed-expert copies per MoE layer (a balancer places them: the layout is timed with its experts "
            "balanced, uniform routing's busiest rank)",
            min=0,
        ),
        Column(
            "idealised",
            "int",
            "",
            "1 for a layout no system can run as counted (kept to compare): never chosen, not on the frontier",
            min=0,
            max=1,
        ),
        Column(
            "overlap_comm",
            "int",
            "",
            "1 when the layout overlaps expert-parallel communication with another micro-batch's compute "
            "(DeepSeek's dual-batch overlap), 0 when communication runs between kernels",
            min=0,
            max=1,
            optional=True,
        ),
        Column("source_url", "str", "", "Where the layout is described", required=True),
        Column("notes", "str", "", "The quoted description and what was assumed"),
    ),
    checks=(_check_layouts,),
)
