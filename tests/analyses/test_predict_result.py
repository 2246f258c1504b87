"""What econ predict prints for a point: named quantities with units, and the notes a reader needs beside them."""

from __future__ import annotations

import json

from econ.analyses.predict_result import WEAK_COVERAGE
from econ.cli import main


def test_a_band_that_missed_its_promise_out_of_group_says_so_beside_the_number(real_db, capsys):
    """A new model at batch 1 on a stated engine: the calibration's held-out TPOT band for such points covered fewer
    than 80% of the runs it was checked on (calibration_bands), so the prediction says so instead of letting "p90"
    stand."""
    code = main(
        ["predict", "--db", str(real_db), "--model", "GLM-5", "--chip", "B200", "--input-tokens", "1000"]
        + ["--output-tokens", "1000", "--mode", "agg", "--batch", "1", "--decode-chips", "8", "--format", "json"]
        + ["--engine", "trtllm"]
    )
    r = json.loads(capsys.readouterr().out)
    assert code == 0 and "new model" in r["error_basis"]
    assert r["tpot_band_coverage_frac"] < WEAK_COVERAGE
    assert f"the TPOT p90 band covered only {r['tpot_band_coverage_frac']:.0%} of held-out runs" in r["notes"]
