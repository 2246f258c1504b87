"""The layer rules are import-linter contracts (pyproject.toml): they hold, and a back-edge breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
]


def lint(cwd: Path) -> subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": str(cwd)}
    return subprocess.run(LINT, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_contracts_hold():
    result = lint(REPO)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("econ/physics/back_edge.py", "import econ.db", "physics and fits are pure"),
        ("econ/fits/back_edge.py", "import duckdb", "physics and fits are pure"),
        ("econ/report/back_edge.py", "from econ.physics import roofline", "the report knows no physics"),
        ("econ/load/back_edge.py", "import econ.physics.kv_cache", "loading knows no physics"),
        ("econ/db/objects.py", "import econ.analyses.runner  # noqa: E402", "the database layer imports no analyses"),
        ("econ/cli/serving.py", "import econ.physics.roofline  # noqa: E402", "the CLI parses and prints"),
        (
            "econ/sweep/partition.py",
            "import econ.sweep.backends  # noqa: E402",
            "the partition function knows no backend",
        ),
    ],
)
def test_an_added_back_edge_breaks_a_contract(tmp_path, module, line, contract):
    shutil.copytree(REPO / "econ", tmp_path / "econ", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    path = tmp_path / module
    path.write_text((path.read_text(encoding="utf-8") if path.exists() else "") + f"\n{line}\n", encoding="utf-8")
    result = lint(tmp_path)
    assert result.returncode == 1
    assert contract in result.stdout and "BROKEN" in result.stdout
