"""econ.cli: what the command line itself answers (the subcommands are tested beside the modules they call)."""

from __future__ import annotations

import tomllib

import pytest

from econ.cli import main
from tests.conftest import REPO


def test_version_is_the_package_version(capsys):
    """econ --version prints the version pyproject.toml declares (and exits 0, reading no database)."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out == f"econ {declared}\n"


def test_the_parser_names_the_importers_sources():
    """The command line spells the sources itself (it loads no data library to parse); they agree with the loader's."""
    from econ.cli.common import HISTORY_CHOICES, PRICE_SOURCES
    from econ.load.importers import SOURCES
    from econ.load.price_tables import HISTORY_SOURCES

    assert (PRICE_SOURCES, HISTORY_CHOICES) == (SOURCES, HISTORY_SOURCES)
