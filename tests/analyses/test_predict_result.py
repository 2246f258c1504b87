"""What econ predict prints for a point: named quantities with units, and the notes a reader needs beside them."""

from __future__ import annotations

import json
import shutil

import duckdb

from econ.analyses.predict_result import WEAK_COVERAGE
from econ.cli import main


def test_a_band_that_missed_its_promise_out_of_group_says_so_beside_the_number(real_db, tmp_path, capsys):
    """A new model at batch 1 on a stated engine, where the calibration's held-out TPOT band for such points covered
    fewer than 80% of the runs it was checked on (calibration_bands; the shipped band covers 91%, so a copy of the
    database says 70%, and that its TTFT band covered 90%): the prediction says so instead of letting "p90" stand,
    and only for the band that missed."""
    db = shutil.copy(real_db, tmp_path / "econ.duckdb")
    with duckdb.connect(str(db)) as con:
        for target, coverage in (("tpot", 0.7), ("ttft", 0.9)):
            con.execute(
                "update calibration_bands set coverage_p90_frac = ? "
                "where target = ? and regime = 'batch_1' and distance = 'new_model'",
                [coverage, target],
            )
    code = main(
        ["predict", "--db", str(db), "--model", "GLM-5", "--chip", "B200", "--input-tokens", "1000"]
        + ["--output-tokens", "1000", "--mode", "agg", "--batch", "1", "--decode-chips", "8", "--format", "json"]
        + ["--engine", "trtllm"]
    )
    r = json.loads(capsys.readouterr().out)
    assert code == 0 and "new model" in r["error_basis"]
    assert r["tpot_band_coverage_frac"] == 0.7 < WEAK_COVERAGE
    assert "the TPOT p90 band covered only 70% of held-out runs" in r["notes"]
    assert "TTFT p90 band covered only" not in r["notes"]  # its TTFT band kept its promise


def test_the_coverage_of_a_band_prints_as_a_percentage_as_econ_fleet_prints_it(real_db, capsys):
    """The share of held-out runs inside the p90 band read "0.9" beside error factors of 1.15 and 1.48 (a number of
    the same look, another kind); econ fleet printed the same share as "89.9 %"."""
    args = ["predict", "--db", str(real_db), "--model", "Llama-3.1-70B", "--chip", "H100", "--input-tokens", "1024"]
    code = main([*args, "--output-tokens", "1024", "--mode", "agg", "--concurrency", "64", "--engine", "vllm"])
    lines = [line for line in capsys.readouterr().out.splitlines() if "inside that p90 band" in line]
    assert code == 0 and len(lines) == 2
    assert all(line.rstrip().endswith(" %") for line in lines), lines
