"""Each benchmark imports against the current code (they print their figures only when run, see bench/)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize("path", sorted(BENCH.glob("[!_]*.py")), ids=lambda p: p.stem)
def test_benchmark_imports_and_has_a_main(path):
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.main)
