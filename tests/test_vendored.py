"""Vendored third-party and reference files are the unmodified copies their READMEs list (sha256)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FOLDERS = (
    "tests/fixtures/external",
    "tests/fixtures/reference",
    "tests/fixtures/pricing_examples",
    "econ/report/vendor",
)


def listed(folder: Path) -> dict[str, str]:
    """{file: sha256} from the indented ``<sha256>  <file>`` lines of the folder's README."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    return {name: digest for digest, name in re.findall(r"^\s+([0-9a-f]{64})  (\S+)$", text, re.M)}


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_vendored_file_is_listed_with_its_sha256(folder):
    path = REPO / folder
    files = {p.name for p in path.iterdir() if p.name != "README.md"}
    assert set(listed(path)) == files


@pytest.mark.parametrize("folder", FOLDERS)
def test_vendored_files_are_unmodified(folder):
    path = REPO / folder
    for name, digest in listed(path).items():
        assert hashlib.sha256((path / name).read_bytes()).hexdigest() == digest, name


def test_vendored_data_files_are_unmodified():
    """data/ holds two files written elsewhere (InferenceX runs and launches): data/README.md lists their sha256."""
    data = Path(__file__).parents[1] / "data"
    files = listed(data)
    assert "inferencex_train.csv" in files
    for name, digest in files.items():
        assert hashlib.sha256((data / name).read_bytes()).hexdigest() == digest, name
