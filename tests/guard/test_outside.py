"""The outside-read guard itself: it flags a read beside the checkout, in this process and in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.guard.outside import is_outside

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("path", "outside"),
    [
        ("/work/shared/reference/models.csv", True),
        ("/work/other", True),
        ("/work/main/data/models.csv", False),
        ("/work/main", False),
        ("/work/main-copy/x", True),
        ("/tmp/pytest-1/x.csv", False),
        ("/usr/lib/python3.11/os.py", False),
    ],
)
def test_is_outside(path, outside):
    assert is_outside(path, "/work/main") is outside


def test_a_subprocess_reading_beside_the_repository_is_recorded(tmp_path):
    log = tmp_path / "outside.log"
    env = os.environ | {"ECON_TEST_OUTSIDE_LOG": str(log)}
    sibling = REPO.parent / "no-such-sibling-folder" / "file.csv"
    code = f"try:\n    open({str(sibling)!r})\nexcept OSError:\n    pass\nopen({str(REPO / 'README.md')!r}).close()"
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    assert log.read_text(encoding="utf-8").split() == [str(sibling)]
