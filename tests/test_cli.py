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


def subcommands():
    import argparse

    from econ.cli import parser

    (sub,) = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return sub.choices


@pytest.mark.parametrize("name", sorted(subcommands()))
def test_every_help_ends_with_two_examples_that_parse_and_name_shipped_files(name):
    import re
    import shlex

    from econ.cli import parser

    text = subcommands()[name].format_help().rstrip("\n").splitlines()
    assert text[-3] == "examples:", text[-4:]
    for line in text[-2:]:
        argv = shlex.split(line, comments=True)
        assert argv[:2] == ["econ", name], line
        parser().parse_args(argv[1:])  # exits 2 on a flag the command does not take
        assert all((REPO / f).is_file() for f in re.findall(r"\bexamples/[\w.\-]+", line)), line


def _stated(default) -> str:
    """How a help text writes a default: a path relative to the checkout (build/econ.duckdb, data), else its text."""
    from pathlib import Path

    from econ import paths

    return Path(default).relative_to(paths.ROOT).as_posix() if isinstance(default, Path) else str(default)


def test_every_stated_default_is_the_code_default():
    """Each option with a default names it in its help (the help texts were written apart from the code: --as-of
    said "today" where the code uses the build's date)."""
    import argparse

    wrong = [
        f"econ {name} {action.option_strings[0]}: {action.help!r} does not say {_stated(action.default)!r}"
        for name, sp in subcommands().items()
        for action in sp._actions
        if action.option_strings
        and action.default not in (None, False, argparse.SUPPRESS)
        and _stated(action.default) not in (action.help or "")
    ]
    assert wrong == []


def test_as_of_defaults_to_the_build_date_as_the_help_says(real_db, capsys):
    """sql, fleet and cost read prices at the date the database was built for (build_info.as_of), not today."""
    import json

    import duckdb

    from econ.cli.help import BUILD_DATE

    with duckdb.connect(str(real_db), read_only=True) as con:
        built_for = con.sql("select as_of from build_info").fetchall()[0][0].isoformat()
    for name in ("sql", "fleet", "cost"):
        (as_of,) = [a for a in subcommands()[name]._actions if "--as-of" in a.option_strings]
        assert as_of.default is None and f"(default: {BUILD_DATE})" in as_of.help
    db = ["--db", str(real_db)]
    assert main(["sql", *db, "select getvariable('as_of') as d", "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["d", built_for]
    fleet = ["--model", "gpt-oss-120b", "--chip", "h100", "--tokens-per-s", "1e6", "--format", "json"]
    assert main(["fleet", *db, *fleet]) == 0
    assert json.loads(capsys.readouterr().out)["prices_as_of"] == built_for
    assert main(["cost", *db, "--model", "gpt-oss-120b", "--input-tokens", "10", "--output-tokens", "1"]) == 0
    assert f"prices as of {built_for}:" in capsys.readouterr().out


def test_a_warning_reaches_the_user_as_one_notice_line(monkeypatch, capsys):
    """A numerical warning the library did not handle where it arose is one line, once, with no source path; the
    warning filters are the user's (python -W error still stops at it)."""
    import warnings

    def noisy(args):
        for _ in range(3):
            warnings.warn("divide by zero encountered in divide", RuntimeWarning, stacklevel=1)
        return 0

    monkeypatch.setattr("econ.cli.cmd_tables", noisy)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        assert main(["tables"]) == 0
    assert capsys.readouterr().err == "notice: divide by zero encountered in divide (RuntimeWarning)\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            main(["tables"])


def test_the_parser_names_the_importers_sources():
    """The command line spells the sources itself (it loads no data library to parse); they agree with the loader's."""
    from econ.cli.common import HISTORY_CHOICES, PRICE_SOURCES
    from econ.load.importers import SOURCES
    from econ.load.price_tables import HISTORY_SOURCES

    assert (PRICE_SOURCES, HISTORY_CHOICES) == (SOURCES, HISTORY_SOURCES)


def test_econ_runs_numpy_on_one_blas_thread_unless_the_user_chose():
    """A busy machine made OpenBLAS's spinning threads cost the calibration 4-8x (econ/__init__.py): importing econ
    sets one thread before NumPy loads, and a user's own setting stands."""
    import os
    import subprocess
    import sys

    probe = "import econ, os; print(os.environ['OPENBLAS_NUM_THREADS'], os.environ['MKL_NUM_THREADS'])"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["1", "1"]
    env["OPENBLAS_NUM_THREADS"] = "4"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["4", "1"]
