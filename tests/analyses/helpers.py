"""Small helpers the analysis tests share: query a built database, append a row to a copied data folder."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import duckdb
import polars as pl

from econ.build import build
from econ.cli import main

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"
AS_OF = date(2026, 11, 30)


def q(db: Path, sql: str, params: list | None = None) -> pl.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.sql(sql, params=params).pl()


def overall_error(db: Path, basis: str, target: str) -> dict:
    """The ``calibration_errors`` row of a basis and target over every run: median and p90 |log ratio| (``m``,
    ``p``), band coverage (``c``) and rows (``n``)."""
    return q(
        db,
        "select median_abs_log_ratio m, p90_abs_log_ratio p, band_coverage_frac c, n_points n from calibration_errors "
        "where basis = ? and target = ? and group_kind = 'overall'",
        [basis, target],
    ).row(0, named=True)


def build_with(tmp_path: Path, *lines: tuple[str, str]) -> Path:
    """Build the fixture data with extra CSV lines appended ((table, line) pairs); returns the database."""
    data = tmp_path / "data"
    shutil.copytree(FIXTURE_DATA, data)
    for table, line in lines:
        with open(data / f"{table}.csv", "a", encoding="utf-8") as f:
            f.write(line.rstrip("\n") + "\n")
    db = tmp_path / "econ.duckdb"
    build(data_dir=data, db_path=db, cache_dir=None, reports_dir=None, as_of=AS_OF)
    return db


def plan_row(db_path: Path, deployment: str, kind: str = "scenario", scenario: str = "base") -> dict:
    """The fleet_plan row of a deployment at a price kind under a scenario."""
    sql = "select * from fleet_plan where deployment = ? and price_kind = ? and scenario = ?"
    return q(db_path, sql, [deployment, kind, scenario]).row(0, named=True)


def copy_data(tmp_path: Path) -> Path:
    """A writable copy of the fixture data at tmp_path/data."""
    target = tmp_path / "data"
    shutil.copytree(FIXTURE_DATA, target)
    return target


def append(path: Path, line: str) -> None:
    """Append one CSV line to a data file."""
    path.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")


def run_cli(capsys, *args) -> tuple[int, str, str]:
    """`econ fleet ARGS`: (exit code, stdout, stderr stripped)."""
    code = main(["fleet", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


def deepseek_v3_h800_dep16(db: Path) -> tuple[dict, dict, dict]:
    """(model, chip, layout) arrays of DeepSeek-V3 on H800 in FP8, decoded attention data parallel 16 with experts
    over the 16 ranks (deployment_inputs' case rows of a built database): a step that reads dense, expert and cache
    bytes, computes experts' FLOPs and communicates."""
    from econ.analyses import deployment_inputs as inputs

    cases = q(db, inputs.CASES_SQL)
    one = cases.filter(
        (cases["model"] == "DeepSeek-V3") & (cases["chip"] == "H800") & (cases["number_format"] == "fp8")
    )
    layout = {
        "tensor_parallel": 1.0,
        "attention_data_parallel": 16.0,
        "pipeline_parallel": 1.0,
        "replicate_attention": True,
        "replicate_shared_experts": True,
        "replicate_dense": True,
        "replicate_embeddings": True,
        "redundant_expert_slots": 0.0,
    }
    return inputs.model_arrays(one), inputs.chip_arrays(one, "fp8"), layout


def predict(capsys, db, *args) -> tuple[int, str, str]:
    """`econ predict --db DB ARGS`: (exit code, stdout, stderr stripped)."""
    code = main(["predict", "--db", str(db), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


POINTS_COLUMNS = (
    "id,backend,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,tp_size,pp_size,"
    "attention_dp_size,moe_tp_size,moe_ep_size"
)
"""The columns of a file of runs the tests write for econ predict --points (inferencex_train.csv's, less the measured
ones)."""


def points_file(path, *rows: str, extra: str = ""):
    """``path`` written as a file of runs: :data:`POINTS_COLUMNS` (then ``extra``) and one line per row."""
    path.write_text("\n".join([POINTS_COLUMNS + extra, *rows]) + "\n", encoding="utf-8")
    return path


DEEPEST_LLAMA_70B_H200 = """
select engine_stated, arg_max(error_factor_p90, length(chip) + length(arch_model)) from calibration_bands
where target = 'ttft' and regime = 'agg' and distance = 'seen' and chip in ('', 'H200')
  and arch_model in ('', 'Llama-3.1-70B') and engine = (case when engine_stated then 'trtllm' else '' end)
group by engine_stated
"""
"""The TTFT band of an aggregated Llama-3.1-70B on H200 by TensorRT-LLM (engine_stated) or by the engines' average:
the most specific cell (its chip's, then its model's own runs) the bands have."""
