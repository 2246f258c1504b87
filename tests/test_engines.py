"""econ.engines: an engine's other names (InferenceX's framework keys, the published points' spellings) read as the
engine, any other name kept as an engine of its own."""

from __future__ import annotations

import csv

import pytest

from econ.engines import ENGINES, NAMES, engine_name
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("name", "engine"),
    [
        ("trtllm", "trtllm"),
        ("TRTLLM", "trtllm"),
        ("TensorRT-LLM", "trtllm"),
        ("dynamo-trt", "trtllm"),
        ("trt", "trtllm"),
        ("sglang-disagg", "sglang"),
        ("dynamo-sglang", "sglang"),
        (" SGLang ", "sglang"),
        ("dynamo-vllm", "vllm"),
        ("atom", "atom"),  # AMD's engine, which the calibration never measured: kept, not renamed
        ("Moreh vLLM", "moreh vllm"),  # a fork is not the engine it forked
    ],
)
def test_an_engine_spelled_another_way_names_the_engine(name, engine):
    assert engine_name(name) == engine


def test_every_framework_inferencex_launched_on_an_engine_econ_fits_is_read_as_that_engine():
    """Each framework suffix of InferenceX's launch-config keys (``dsr1-fp8-h200-dynamo-trt``) names the engine the
    launch file records for it, independently of this table: a framework added there without a name here fails."""
    seen = {}
    for name in ("inferencex_launches.csv", "inferencex_node_launches.csv"):
        with open(REPO / "data" / name, newline="") as f:
            for row in csv.DictReader(f):
                if row["engine"] in ENGINES:
                    framework = row["config_key"].split("-", 3)[-1].removesuffix("-mtp")
                    seen[framework] = row["engine"]
    assert seen, "no launches read"
    assert {k: engine_name(k) for k in seen} == seen
    assert set(NAMES.values()) == set(ENGINES)
