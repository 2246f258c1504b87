"""The serving engines the calibration fits an offset for, and the other names a user or a file gives them.

InferenceX names its frameworks by the keys of its launch configs (``trt``, ``dynamo-trt``, ``dynamo-sglang``,
``sglang-disagg``, ``dynamo-vllm``: ``data/inferencex_launches.csv``); published points name ``TensorRT-LLM``,
``SGLang``, ``vLLM``. Any other name (AMD's ``atom``, a fork such as ``Moreh vLLM``) is an engine of its own, which
the calibration did not measure: it takes the engines' average.
"""

from __future__ import annotations

ENGINES = ("trtllm", "sglang", "vllm")
"""The engines the calibration fits (``calibration_parameters`` group_kind ``engine``)."""

NAMES = {
    "trtllm": "trtllm",
    "tensorrt-llm": "trtllm",
    "tensorrt_llm": "trtllm",
    "trt-llm": "trtllm",
    "trt": "trtllm",
    "dynamo-trt": "trtllm",
    "sglang": "sglang",
    "dynamo-sglang": "sglang",
    "sglang-disagg": "sglang",
    "vllm": "vllm",
    "dynamo-vllm": "vllm",
}
"""An engine's name, lower case -> the engine of :data:`ENGINES` it is."""


def engine_name(name: str) -> str:
    """The engine a name means (``TensorRT-LLM`` -> ``trtllm``); a name of no known engine, trimmed and lower case."""
    key = name.strip().lower()
    return NAMES.get(key, key)
