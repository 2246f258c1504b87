"""A small sweep of the fixture database: 2 models × 2 chips × 1 format × 3 draw blocks = 12 partitions."""

from __future__ import annotations

from pathlib import Path

import pytest

SMALL = """
keep = ["frontier", "argmin"]

[select]
models = ["DeepSeek-V3", "Llama-3.1-70B"]
chips = ["H100", "B200"]
formats = ["fp8"]
layouts = "all"

[grid]
batch = { min = 1, max = 4096, points = 13 }
context_tokens = { min = 1024, max = 131072, points = 4 }

[draws]
count = 7
per_partition = 3
seed = 11
"""


def write_spec(folder: Path, text: str = SMALL, name: str = "small.toml") -> Path:
    path = Path(folder) / name
    path.write_text(text, encoding="utf-8")
    return path


def parquet_bytes(folder: Path) -> dict[str, bytes]:
    """Every Parquet file below ``folder`` by relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(Path(folder).rglob("*.parquet"))}


@pytest.fixture
def small_spec(tmp_path) -> Path:
    return write_spec(tmp_path)
