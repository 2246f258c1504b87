"""``econ sweep``: the same spec gives byte-identical Parquet with 1 or 2 local workers, on Ray (a local instance of
2 CPUs), after a partial run resumed and after a kill resumed; the folder, its manifest and ``econ sql --sweep``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from econ.cli import main
from econ.errors import EconError
from econ.sweep.run import sweep
from tests.sweep.conftest import SMALL, parquet_bytes, write_spec

PARTITIONS = 12  # 2 models x 2 chips x 1 format x 3 draw blocks


@pytest.fixture(scope="module")
def reference(fixture_db, tmp_path_factory):
    """The small sweep run once, in one go, by one local worker."""
    folder = tmp_path_factory.mktemp("reference")
    result = sweep(write_spec(folder), db_path=fixture_db, out_dir=folder / "out", workers=1)
    return result, parquet_bytes(folder / "out")


def test_one_run_writes_every_partition_and_a_manifest(reference):
    result, files = reference
    assert result.partitions == PARTITIONS and result.ran == PARTITIONS and result.skipped == 0
    assert sum(1 for f in files if f.startswith("serving_frontier/")) == PARTITIONS
    assert sum(1 for f in files if f.startswith("serving_layouts/")) == PARTITIONS
    assert "sweep_draws/draws.parquet" in files
    manifest = json.loads((result.folder / "manifest.json").read_text())
    assert manifest["status"] == "complete" and len(manifest["partitions"]) == PARTITIONS
    assert manifest["rows"] == result.rows and result.rows["serving_layouts"] == 2 * 2 * 7 * 4  # one per context x draw
    assert len(manifest["spec_sha256"]) == len(manifest["code_fingerprint"]) == 64
    assert (result.folder / ".econ-sweep").is_file()
    path = "serving_frontier/model=DeepSeek-V3/chip=H100/number_format=fp8/draw_block=2/part.parquet"
    assert path in files


def test_two_local_workers_give_the_same_bytes(reference, fixture_db, tmp_path):
    result = sweep(write_spec(tmp_path), db_path=fixture_db, out_dir=tmp_path / "out", workers=2)
    assert result.ran == PARTITIONS
    assert parquet_bytes(tmp_path / "out") == reference[1]


# Ray and its dependencies deprecate things at import and init; this test pins the sweep's bytes, not their API.
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
def test_ray_with_two_workers_gives_the_same_bytes(reference, fixture_db, tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'econ[ray]')")
    result = sweep(write_spec(tmp_path), db_path=fixture_db, out_dir=tmp_path / "out", backend="ray", workers=2)
    assert result.ran == PARTITIONS and result.backend == "ray"
    assert parquet_bytes(tmp_path / "out") == reference[1]


def test_a_partial_run_resumes_to_the_same_bytes(reference, fixture_db, tmp_path):
    spec = write_spec(tmp_path)
    first = sweep(spec, db_path=fixture_db, out_dir=tmp_path / "out", workers=1, max_partitions=5)
    assert first.ran == 5 and json.loads((tmp_path / "out" / "manifest.json").read_text())["status"] == "partial"
    second = sweep(spec, db_path=fixture_db, out_dir=tmp_path / "out", workers=2)
    assert (second.skipped, second.ran) == (5, PARTITIONS - 5)
    assert parquet_bytes(tmp_path / "out") == reference[1]
    third = sweep(spec, db_path=fixture_db, out_dir=tmp_path / "out", workers=2)
    assert (third.skipped, third.ran) == (PARTITIONS, 0)


@pytest.mark.slow
def test_a_killed_sweep_resumes_to_the_same_bytes(fixture_db, tmp_path):
    """SIGKILL the whole process group (driver and workers) once some partitions landed; the rerun finishes with
    the same bytes and no staging file left behind."""
    spec = write_spec(tmp_path, SMALL.replace("points = 4 }", "points = 96 }"))  # ~0.1 s a partition
    whole = sweep(spec, db_path=fixture_db, out_dir=tmp_path / "whole", workers=1)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "econ", "sweep", str(spec), "--db", str(fixture_db), "--out", str(out)]
    proc = subprocess.Popen(
        [*command, "--workers", "1", "--no-progress"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    log = out / "partitions.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and log.read_text().count("\n") >= 2:
            break
        time.sleep(0.01)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = log.read_text().count("\n")
    assert proc.returncode == -signal.SIGKILL and 2 <= done < PARTITIONS, (proc.returncode, done)
    again = subprocess.run([*command, "--no-progress"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"{done} finished before" in again.stdout
    assert parquet_bytes(out) == parquet_bytes(whole.folder)
    assert not [p for p in out.rglob("*") if ".stage-" in p.name]


def test_a_dead_runs_staging_file_is_removed(reference, fixture_db, tmp_path):
    out = tmp_path / "out"
    sweep(write_spec(tmp_path), db_path=fixture_db, out_dir=out, workers=1, max_partitions=1)
    folder = out / "serving_frontier" / "model=DeepSeek-V3" / "chip=B200" / "number_format=fp8" / "draw_block=1"
    folder.mkdir(parents=True, exist_ok=True)
    stale = folder / ".part.parquet.stage-999999999-0badcafe"
    stale.write_bytes(b"half a file")
    sweep(write_spec(tmp_path), db_path=fixture_db, out_dir=out, workers=1)
    assert not stale.exists() and parquet_bytes(out) == reference[1]


def test_another_spec_in_the_same_folder_is_refused(reference, fixture_db, tmp_path):
    out = tmp_path / "out"
    sweep(write_spec(tmp_path), db_path=fixture_db, out_dir=out, workers=1, max_partitions=1)
    other = write_spec(tmp_path, SMALL.replace("seed = 11", "seed = 12"), name="other.toml")
    with pytest.raises(EconError, match="holds a sweep made with another spec"):
        sweep(other, db_path=fixture_db, out_dir=out, workers=1)


def test_a_folder_of_other_files_is_refused_and_left_alone(fixture_db, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(EconError, match=r"holds files econ did not write \(notes.txt\)"):
        sweep(write_spec(tmp_path), db_path=fixture_db, out_dir=out, workers=1)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_the_cli_sweeps_and_sql_reads_the_folder_with_the_databases_sql(reference, fixture_db, tmp_path, capsys):
    out = reference[0].folder
    q = (
        "select model, chip, count(*) as n, min(tokens_per_s_per_user) > 0 as positive from serving_frontier "
        "group by all order by all"
    )
    assert main(["sql", "--db", str(fixture_db), "--sweep", str(out), q, "--format", "csv"]) == 0
    lines = capsys.readouterr().out.split()
    assert lines[0] == "model,chip,n,positive" and len(lines) == 5
    db_name = Path(fixture_db).stem
    same = f"select count(*) from {db_name}.main.serving_frontier"  # the database's own table, under the sweep's
    assert main(["sql", "--db", str(fixture_db), "--sweep", str(out), same, "--format", "csv"]) == 0
    assert int(capsys.readouterr().out.split()[1]) > 0
    q = "select count(*) from serving_layouts where cheapest_meeting_target"
    assert main(["sql", "--db", str(tmp_path / "none.duckdb"), "--sweep", str(out), q, "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["count_star()", str(reference[0].rows["serving_layouts"])]
    q = "select count(*) as n, count(distinct draw) as draws from sweep_draws"
    assert main(["sql", "--sweep", str(out), q, "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["n,draws", "7,7"]


@pytest.mark.parametrize(
    "query",
    ["copy (select 1) to '{out}/x.csv'", "select * from read_csv('/etc/hostname')", "attach '{out}/x.db' as x"],
)
def test_sql_with_a_sweep_writes_nothing_and_reads_only_the_sweep(reference, query, capsys):
    out = reference[0].folder
    assert main(["sql", "--sweep", str(out), query.format(out=out)]) == 1
    assert "file access is refused" in capsys.readouterr().err
    assert not (out / "x.csv").exists() and not (out / "x.db").exists()


def test_the_cli_prints_what_it_did(fixture_db, tmp_path, capsys):
    spec = write_spec(tmp_path)
    args = ["sweep", str(spec), "--db", str(fixture_db), "--out", str(tmp_path / "out"), "--workers", "1"]
    assert main([*args, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"swept {PARTITIONS} partitions of" in out and "serving_frontier" in out
    assert main(args) == 0  # the bar on stderr; nothing left to run
    captured = capsys.readouterr()
    assert f"({0} run now, {PARTITIONS} finished before): nothing left to run" in captured.out
    assert main(["sweep", str(spec), "--db", str(fixture_db), "--workers", "0"]) == 1
    assert "--workers 0 is not a number of workers" in capsys.readouterr().err


@pytest.mark.parametrize("tqdm", ["installed", "absent"])
def test_the_progress_bar_shows_partitions_points_per_s_and_an_eta(fixture_db, tmp_path, capsys, monkeypatch, tqdm):
    if tqdm == "installed":
        pytest.importorskip("tqdm", reason="tqdm is not installed (a dependency: pip install -e .)")
    else:
        monkeypatch.setitem(sys.modules, "tqdm", None)  # an environment older than the dependency: a plain line
    spec = write_spec(tmp_path, SMALL.replace("count = 7", "count = 1"))  # 4 partitions
    assert main(["sweep", str(spec), "--db", str(fixture_db), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "100%" in err and "4/4 partitions" in err and "points/s, ETA 0 s" in err, err


def test_the_sweeps_tables_have_the_databases_columns_and_a_draw(reference, fixture_db):
    import duckdb

    from econ.sql import sweep_views

    with duckdb.connect(str(fixture_db), read_only=True) as con:
        for name, select in sweep_views(reference[0].folder):
            if not name.startswith("serving_"):
                continue
            built = sorted(r[:2] for r in con.execute(f"describe {name}").fetchall())
            swept = sorted(r[:2] for r in con.execute(f"describe {select}").fetchall())
            assert [r for r in swept if r[0] not in ("draw", "draw_block")] == built, name
            assert ("draw", "BIGINT") in swept and ("draw_block", "BIGINT") in swept


def test_draw_0_at_the_builds_decode_context_gives_the_builds_frontier_and_argmin(fixture_db, tmp_path):
    """A second method: the build's serving_layouts finds its frontier and argmin over a polars frame of the whole
    grid (layout_search's flat functions); the sweep, with the same layouts and batches at the same context, by block
    reductions inside each partition. The same points, every case of the build; numbers within the whole-token
    rounding of the context."""
    import duckdb

    from econ.sql import sweep_views
    from econ.sweep.partition import LAYOUT_COLUMNS

    with duckdb.connect(str(fixture_db), read_only=True) as con:
        (context,), *more = con.sql(
            "select distinct context_tokens from serving_layouts where pool = 'decode'"
        ).fetchall()
    assert not more
    spec = write_spec(
        tmp_path,
        'scenario = "calibrated"\nkeep = ["frontier", "argmin"]\n[select]\nlayouts = "all"\n[grid]\n'
        "batch = { min = 1, max = 16384, points = 15 }\n"
        f"context_tokens = {{ min = {context!r}, max = {context!r}, points = 1 }}\n",
    )
    sweep(spec, db_path=fixture_db, out_dir=tmp_path / "out", workers=1)
    key = ["model", "chip", "number_format", "layout", *LAYOUT_COLUMNS, "batch_per_replica"]
    values = ["tokens_per_s_per_user", "tokens_per_s_per_chip", "usd_per_mtok"]
    with duckdb.connect(str(fixture_db), read_only=True) as con:
        for name, select in sweep_views(tmp_path / "out"):
            con.execute(f"create temp view swept_{name} as {select}")
        for table, where in [
            ("serving_frontier", "efficiency_basis = 'calibrated'"),
            ("serving_layouts", "pool = 'decode' and cheapest_meeting_target"),
        ]:
            built = con.sql(f"select {', '.join(key + values)} from {table} where {where}").pl().sort(key)
            swept = con.sql(f"select {', '.join(key + values)} from swept_{table} where draw = 0").pl().sort(key)
            assert built.height > 0 and built.select(key).equals(swept.select(key)), table
            for v in values:  # the sweep's context is whole tokens, the build's the traffic mix's mean
                assert ((swept[v] - built[v]).abs() / built[v]).max() < 1e-5, (table, v)
