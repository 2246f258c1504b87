"""Benchmark: checking and loading data/ (``econ.load.loader.load_all``), the first step of every build and refresh.

Prints one figure a line as `name: value unit`. Run from the repository root:

    python bench/load.py [--repeat N]

Every figure is the best of N fresh processes (the way a build meets it: nothing cached, no expression built yet):

- ``load_all_first_time``: the first ``load_all(data/)`` of a process, after importing econ.load.loader;
- ``load_all_again_time``: a second one in the same process (the table plans built, the files in the OS cache);
- ``input_tables_write_time``: writing the loaded frames and their comments into a new DuckDB file with
  ``econ.db.write_table``, as ``econ build`` does (the first write of a process: Arrow's import included).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A user's Python keeps the compiled modules between runs; a shell with PYTHONDONTWRITEBYTECODE set would have every
# process compile econ's ~240 modules again (~0.4 s), which no user pays after the first run.
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

CHILD = """
import sys, tempfile, time
from pathlib import Path
import duckdb
from econ.db import write_table
from econ.load.loader import column_comments, load_all, table_description
start = time.perf_counter()
frames = load_all(Path("data"))
first = time.perf_counter() - start
start = time.perf_counter()
load_all(Path("data"))
again = time.perf_counter() - start
with tempfile.TemporaryDirectory() as folder, duckdb.connect(str(Path(folder) / "load.duckdb")) as con:
    start = time.perf_counter()
    for name, frame in frames.items():
        write_table(con, name, frame, description=table_description(name), column_comments=column_comments(name))
    write = time.perf_counter() - start
print(first, again, write, len(frames))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes; the best of them is printed")
    args = parser.parse_args()
    runs = []
    for _ in range(args.repeat):
        out = subprocess.run(
            [sys.executable, "-c", CHILD], cwd=ROOT, check=True, capture_output=True, text=True, env=USER_ENV
        )
        runs.append([float(x) for x in out.stdout.split()])
    first, again, write = (min(run[i] for run in runs) for i in range(3))
    tables = int(runs[0][3])
    print(f"load_all_first_time: {first:.3f} s  # best of {args.repeat} fresh processes, {tables} tables")
    print(f"load_all_again_time: {again:.3f} s")
    print(f"input_tables_write_time: {write:.3f} s  # {tables} tables and their comments, the process's first write")


if __name__ == "__main__":
    main()
