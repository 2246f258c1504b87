"""The README as executable documentation: every command block runs, and prints what the README shows.

Each ``sh`` block is split into commands (quotes and ``\\`` continuations kept, comments dropped, ``&&`` chains and an
``echo … |`` pipe into stdin read as the shell does). Every ``econ`` command parses; the read-only ones run against
``real_db`` (the shipped data built once) with warnings as errors, so a numerical warning anywhere is a failure, and
print nothing on stderr; ``econ sweep`` runs the shipped spec into a temporary folder and ``econ import`` into a copy
of data/. A ``text`` block right after an ``sh`` block is the output of its last command: every line, or, where the
block has lines that are exactly ``…``, its lines in order with any others between (a block that starts with
``Error:`` is what the command prints on stderr, exiting 1). The python block runs against
``real_db``. ``econ refresh`` (a rebuild) runs in the slow test below; ``econ build`` and ``econ report`` run in
tests/test_build.py and tests/report/; setup, test and benchmark commands are the CI's.
"""

from __future__ import annotations

import io
import re
import shlex
import shutil
from pathlib import Path

import pytest

from econ.cli import main, parser
from tests.conftest import REPO

README = REPO / "README.md"
WIDTH = "100"
"""The terminal width the README's outputs were printed at (COLUMNS)."""
READ_ONLY = {"sql", "tables", "describe", "diff", "cost", "fleet", "predict"}
RUN_ELSEWHERE = {
    "build": "tests/test_build.py runs econ build",
    "report": "tests/report/test_site.py writes the report",
    "refresh": "test_the_readme_refresh_prints_what_the_readme_shows (slow) runs it",
    "history": "needs a clone of the source's git repository: tests/load/test_replay.py replays a scratch one",
}
NOT_ECON = ("python3.11", "python", ".venv/bin/pip", ".venv/bin/pytest", "pip", "pytest", "duckdb")
"""Setup, test and benchmark commands: the CI runs them (the benchmarks in tests/test_bench.py)."""


def blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.S | re.M)


def commands(body: str) -> list[list[str]]:
    """The commands of an sh block as argument lists (``a && b`` is two; an ``echo X |`` prefix is kept as
    ``["|", X]`` before the command it feeds)."""
    out, pending = [], ""
    for line in body.splitlines():
        if line.endswith("\\"):  # continued on the next line
            pending += line[:-1] + " "
            continue
        pending += line + "\n"
        try:
            tokens = shlex.split(pending, comments=True)
        except ValueError:  # an open quote: the command goes on on the next line
            continue
        pending = ""
        command: list[str] = []
        for token in [*tokens, "&&"]:
            if token == "&&":
                if command:
                    out.append(command)
                command = []
            elif token == "|" and command[:1] == ["echo"]:
                command = ["|", " ".join(command[1:])]
            else:
                command.append(token)
    return out


def cases() -> list[tuple[list[str], str | None]]:
    """Every command of the README with the output shown under it (None where none is)."""
    found = blocks(README.read_text(encoding="utf-8"))
    out = []
    for i, (lang, body) in enumerate(found):
        if lang != "sh":
            continue
        shown = found[i + 1][1].rstrip("\n") if i + 1 < len(found) and found[i + 1][0] == "text" else None
        runs = commands(body)
        out += [(c, shown if j == len(runs) - 1 else None) for j, c in enumerate(runs)]
    return out


def matches(out: str, shown: str) -> bool:
    """``out`` is ``shown``, or (where ``shown`` has ``…`` lines) holds its other lines in order."""
    if "\n…\n" not in f"\n{shown}\n":
        return out == shown
    lines, at = out.splitlines(), 0
    for want in shown.splitlines():
        if want == "…":
            continue
        while at < len(lines) and lines[at] != want:
            at += 1
        if at == len(lines):
            return False
        at += 1
    return True


@pytest.fixture(scope="module")
def sweep_out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sweeps")


def run(argv: list[str], capsys, monkeypatch, stdin: str | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out.rstrip("\n"), captured.err


def test_every_readme_command_runs_and_prints_what_the_readme_shows(real_db, tmp_path, sweep_out, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", WIDTH)
    monkeypatch.chdir(REPO)  # the README's paths are relative to the checkout
    data = tmp_path / "data"
    shutil.copytree(REPO / "data", data)
    ran, skipped = [], {}
    for command, shown in cases():
        stdin = None
        if command[0] == "|":
            stdin, command = command[1], command[2:]
        if command[0] in NOT_ECON or command[0].startswith("bench/"):
            skipped[" ".join(command)] = "setup, tests or benchmarks: the CI's"
            continue
        if command[0] == ".venv/bin/econ":
            command = ["econ", *command[1:]]
        assert command[0] == "econ", command
        argv = command[1:]
        args = parser().parse_args(argv)  # every command parses (exits 2 on a bad flag)
        name = getattr(args, "command", None)
        if argv == ["--version"]:
            continue
        if name in RUN_ELSEWHERE or "--fetch" in argv or "ray" in argv:
            skipped[" ".join(command)] = RUN_ELSEWHERE.get(name, "needs the network or a Ray cluster")
            assert shown is None or name == "refresh", command
            continue
        if name in READ_ONLY:
            argv = [name, "--db", str(real_db), *argv[1:]]
            if "--sweep" in argv:
                at = argv.index("--sweep") + 1
                argv[at] = str(sweep_out / Path(argv[at]).name)
        elif name == "sweep":
            argv = [*argv, "--db", str(real_db), "--out", str(sweep_out / Path(args.spec).stem), "--no-progress"]
        elif name == "import":
            argv = [*argv, "--data", str(data)]
        code, out, err = run(argv, capsys, monkeypatch, stdin)
        if shown is not None and shown.startswith("Error: "):  # the README shows what a mistake prints
            assert code == 1 and matches(err.rstrip("\n"), shown), (command, err)
            ran.append(name)
            continue
        assert (code, err) == (0, ""), (command, err)
        if shown is not None:
            assert matches(out, shown), f"{' '.join(command)} printed:\n{out}\n\nthe README shows:\n{shown}"
        ran.append(name)
    assert {"sql", "describe", "cost", "diff", "fleet", "predict", "sweep", "import"} <= set(ran)
    assert len(skipped) < 20, skipped


def test_the_readme_python_runs(real_db, monkeypatch):
    """The notebook snippet (it raised ImportError: load_chip and load_model live in econ.notebook)."""
    import econ.notebook

    for loader in (econ.notebook.load_model, econ.notebook.load_chip):
        monkeypatch.setattr(loader, "__defaults__", (real_db,))
    (code,) = [body for lang, body in blocks(README.read_text(encoding="utf-8")) if lang == "python"]
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 (the project's own README)
    assert scope["step"].bound.shape == (2,)


def test_every_file_the_readme_names_ships():
    """The user files the README's commands read (a price map, a sweep spec, a workload, a query) are in examples/."""
    text = README.read_text(encoding="utf-8")
    named = set(re.findall(r"\bexamples/[\w.\-]+", text))
    assert named and all((REPO / n).is_file() for n in named), sorted(n for n in named if not (REPO / n).is_file())


@pytest.mark.slow
def test_the_readme_refresh_prints_what_the_readme_shows(real_db, tmp_path, capsys, monkeypatch):
    """The refresh example on a copy of data/ and of the built database, its report in a temporary folder."""
    monkeypatch.setenv("COLUMNS", WIDTH)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796083200")  # the rebuild's date: 2026-12-01, the snapshot's
    monkeypatch.chdir(REPO)
    shutil.copytree(REPO / "data", tmp_path / "data")
    shutil.copy(real_db, tmp_path / "econ.duckdb")
    (command, shown), *_ = [(c, s) for c, s in cases() if c[:2] == ["econ", "refresh"] and "--fetch" not in c]
    paths = ["--data", "data", "--db", "econ.duckdb", "--reports", "reports", "--cache", "cache"]
    monkeypatch.chdir(tmp_path)
    argv = [command[1], str(REPO / command[2]), *command[3:], *paths]
    code, out, err = run(argv, capsys, monkeypatch)
    assert (code, err) == (0, ""), err
    assert shown is not None and matches(out, shown), out
