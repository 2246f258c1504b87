"""econ fleet's stated pool degrees: honoured as econ predict honours them, or refused with why."""

from __future__ import annotations

import polars as pl
import pytest

from econ.analyses.fleet_layouts import degree_keys, keep_degrees, stated_pools
from econ.analyses.predict_layouts import PoolSpec
from econ.errors import EconError

NO_LAYOUTS = pl.DataFrame(schema={"layout": pl.String, "pool": pl.String, "applies_to": pl.String})
DEEPSEEK = {"heads": 128, "layers": 61, "moe": True, "domain": 8, "max_chips": 512}


def test_no_degree_leaves_the_search_free_and_stated_ones_narrow_it():
    assert degree_keys(PoolSpec(chips=16), "decode", NO_LAYOUTS, shape=DEEPSEEK) is None
    keys = degree_keys(PoolSpec(chips=16, tensor_parallel=8), "decode", NO_LAYOUTS, shape=DEEPSEEK)
    assert keys == ["8|1|2", "8|2|1"]  # 16 chips at tp 8: dp 2, or two pipeline stages


def test_degrees_that_fix_the_replica_plan_exactly_that_size():
    pools = {"decode": (PoolSpec(tensor_parallel=1, data_parallel=144, pipeline_parallel=1), None, None)}
    keys, chips = stated_pools(pools, NO_LAYOUTS, shape=DEEPSEEK)
    assert keys == {"decode": ["1|144|1"]} and chips == (144,)
    with pytest.raises(EconError, match="leaves the pipeline stages open"):
        stated_pools(
            {"decode": (PoolSpec(tensor_parallel=1, data_parallel=144), None, None)}, NO_LAYOUTS, shape=DEEPSEEK
        )


def test_the_candidates_keep_only_the_stated_degrees():
    rows = pl.DataFrame(
        {
            "tensor_parallel": [8.0, 8.0, 4.0],
            "attention_data_parallel": [1.0, 2.0, 4.0],
            "pipeline_parallel": [2.0, 1.0, 1.0],
            "decode_degrees": ["8|1|2", "8|1|2", None],
        }
    )
    assert rows.select(keep_degrees(rows, "decode"))[:, 0].to_list() == [True, False, True]
