"""econ predict --points: a file of runs in the measured file's own schema, predicted row for row as the calibration
predicts its runs, each row with its status, reason, notes and the band it claims; a bad cell names its line and
column."""

from __future__ import annotations

import json
import shutil

import duckdb
import polars as pl
import pytest

from tests.analyses.helpers import DEEPEST_LLAMA_70B_H200, points_file, predict

POOLS = ("prefill", "decode")
GPUS = {p: pl.col(f"{p}_tp_size") * pl.col(f"{p}_pp_size") * pl.col(f"{p}_attention_dp_size") for p in POOLS}


def test_a_file_of_runs_is_predicted_row_for_row_as_the_calibration_did(real_db, capsys, tmp_path):
    """The vendored file through --points gives the calibration's own predictions (one predictor), in input order."""
    from tests.conftest import REPO

    sample = pl.read_csv(REPO / "data" / "inferencex_train.csv", infer_schema_length=10000).head(300)
    path = tmp_path / "runs.csv"
    sample.write_csv(path)
    code, out, err = predict(capsys, real_db, "--points", str(path), "--format", "json")
    assert code == 0 and "of 300 rows predicted" in err
    rows = pl.DataFrame(json.loads(out))
    assert rows["id"].to_list() == sample["id"].to_list()
    assert rows.columns[:10] == [
        "id",
        "status",
        "reason",
        "predicted_ttft_ms",
        "predicted_tpot_ms",
        "predicted_output_tokens_per_s_per_gpu",
        "ttft_error_factor_p50",
        "ttft_error_factor_p90",
        "tpot_error_factor_p50",
        "tpot_error_factor_p90",
    ]
    from tests.analyses.helpers import q

    # each p90 band comes with the share of held-out runs it covered, as calibration_bands measured it
    coverage = q(real_db, "select min(coverage_p90_frac) as low, max(coverage_p90_frac) as high from calibration_bands")
    for column in ("ttft_band_coverage_frac", "tpot_band_coverage_frac"):
        shown = rows.filter(pl.col("status") == "ok")[column]
        assert shown.null_count() == 0 and coverage["low"][0] <= shown.min() <= shown.max() <= coverage["high"][0]
    table = q(
        real_db,
        "select run_id as id, configuration_key, concurrency, predicted_tpot_s, predicted_ttft_s, "
        "ln(predicted_ttft_s / measured_ttft_s) as ttft_r, ln(predicted_tpot_s / measured_tpot_s) as tpot_r "
        "from calibration_runs where included",
    )
    both = rows.filter(pl.col("status") == "ok").join(table, on="id")
    assert both.height > 250
    # a row whose configuration was measured at no other concurrency reads the calibration's own prediction
    plain = both.filter(pl.col("distance") == "seen")
    assert plain.height > 20
    assert (plain["predicted_tpot_ms"] / 1e3 / plain["predicted_tpot_s"] - 1).abs().max() < 1e-3
    assert (plain["predicted_ttft_ms"] / 1e3 / plain["predicted_ttft_s"] - 1).abs().max() < 1e-3
    # the others move by an interpolation of their configuration's residuals at other concurrencies: within them
    others = table.rename({"concurrency": "c_other", "ttft_r": "ttft_o", "tpot_r": "tpot_o"}).select(
        "configuration_key", "c_other", "ttft_o", "tpot_o"
    )
    moved = both.filter(pl.col("distance") == "seen_configuration")
    assert moved.height > 200
    span = (
        moved.join(others, on="configuration_key")
        .filter(pl.col("c_other") != pl.col("concurrency"))
        .group_by("id")
        .agg(pl.col("ttft_o", "tpot_o").min().name.suffix("_lo"), pl.col("ttft_o", "tpot_o").max().name.suffix("_hi"))
    )
    assert moved["notes"].str.contains("corrected by this configuration's measured runs").all()
    assert not plain["notes"].fill_null("").str.contains("corrected by").any()
    moved = moved.join(span, on="id")
    assert moved.height == both.filter(pl.col("distance") == "seen_configuration").height
    for t in ("ttft", "tpot"):
        shift = -(moved[f"predicted_{t}_ms"] / 1e3 / moved[f"predicted_{t}_s"]).log()
        assert (shift >= moved[f"{t}_o_lo"] - 1e-6).all() and (shift <= moved[f"{t}_o_hi"] + 1e-6).all()
    bad = rows.filter(pl.col("status") != "ok")
    assert bad["reason"].null_count() == 0 and bad["predicted_tpot_ms"].null_count() == bad.height


def test_a_correction_is_made_only_where_its_regime_has_a_band_of_corrected_rows(real_db, capsys, tmp_path):
    """A row whose TTFT or TPOT regime has no band of corrected rows of its own (users waiting for a decode slot, one
    user) reads the calibration's own prediction and the band of a seen model, however many runs its configuration
    has; a row of a regime that has one and runs of its configuration in that regime is corrected."""
    from tests.analyses.helpers import q
    from tests.conftest import REPO

    path = tmp_path / "runs.csv"
    pl.read_csv(REPO / "data" / "inferencex_train.csv", infer_schema_length=10000).write_csv(path)
    code, out, err = predict(capsys, real_db, "--points", str(path), "--format", "json")
    assert code == 0
    rows = pl.DataFrame(json.loads(out), infer_schema_length=None).filter(pl.col("status") == "ok")
    banded = q(  # the regimes either correction has a band of its own in
        real_db,
        "select target, regime from calibration_bands where distance in ('seen_configuration', 'seen_layout') "
        "and engine_stated and not pooled and engine = '' and chip = '' and arch_model = ''",
    )
    ttft_ok, tpot_ok = (set(banded.filter(pl.col("target") == t)["regime"]) for t in ("ttft", "tpot"))
    assert "agg" in ttft_ok and "agg" in tpot_ok and "batch_1" not in ttft_ok
    unbanded = rows.filter(~pl.col("regime_ttft").is_in(ttft_ok) | ~pl.col("regime_tpot").is_in(tpot_ok))
    assert unbanded.height > 30 and (unbanded["distance"] == "seen").all()
    runs = q(real_db, "select run_id as id, predicted_ttft_s from calibration_runs where included")
    same = unbanded.join(runs, on="id")
    assert (same["predicted_ttft_ms"] / 1e3 / same["predicted_ttft_s"] - 1).abs().max() < 1e-9
    assert {"seen_configuration", "seen_layout"} <= set(rows.filter(pl.col("regime_ttft") == "agg")["distance"])
    layout = rows.filter(pl.col("distance") == "seen_layout")
    assert layout.height > 50 and layout["notes"].str.contains("corrected by this layout's measured runs").all()


def test_a_run_whose_users_outnumber_its_cache_says_so_in_the_table_and_in_a_file_of_runs(real_db, capsys, tmp_path):
    """The measured Llama-3.1-70B FP8 run on one H200 at 128 users (TensorRT-LLM, 1k/8k): calibration_runs and
    econ predict --points both say how many sequences run at once and that the others wait."""
    from tests.analyses.helpers import q
    from tests.conftest import REPO

    run_id = "2026_04_06_llama_3_1_70b_h200_sxm_trtllm_fp8_agg_1024x8192_c128_tp1_ep1_417"
    row = q(real_db, "select decode_running_per_worker, notes from calibration_runs where run_id = ?", [run_id])
    assert 30 <= row["decode_running_per_worker"][0] <= 45 and "wait for a slot" in row["notes"][0]
    runs = pl.read_csv(REPO / "data" / "inferencex_train.csv", infer_schema_length=10000)
    path = tmp_path / "runs.csv"
    runs.filter(pl.col("id") == run_id).write_csv(path)
    code, out, err = predict(capsys, real_db, "--points", str(path), "--format", "json")
    (predicted,) = json.loads(out)
    assert code == 0 and predicted["decode_batch_per_worker"] == row["decode_running_per_worker"][0]
    assert "wait for a slot" in predicted["notes"]
    assert predicted["regime_ttft"] == predicted["regime_tpot"] == "agg_slot_wait"


def test_users_routed_blind_to_load_wait_for_a_slot_as_the_measured_runs_did(real_db, capsys, tmp_path):
    """InferenceX's DeepSeek-R1 FP4 run on GB200 (TensorRT-LLM, 1k/8k): 7 users over seven decode workers of one
    slot each (launch recipe batch1) measured a TTFT of 25 s, a slot wait of ~0.58 request lifetimes that an even
    spread would not have (0.86 for exponential lifetimes, 0.60 for the benchmark's narrow ones). econ predict
    --points says so, predicts it within 1.5x and times it as a slot-wait run."""
    from tests.conftest import REPO

    run_id = "2026_03_25_deepseek_r1_gb200_trtllm_fp4_disagg_1024x8192_c7_tp4_0_ep4_0_424"
    runs = pl.read_csv(REPO / "data" / "inferencex_train.csv", infer_schema_length=10000)
    path = tmp_path / "runs.csv"
    runs.filter(pl.col("id") == run_id).write_csv(path)
    code, out, err = predict(capsys, real_db, "--points", str(path), "--format", "json")
    (predicted,) = json.loads(out)
    assert code == 0 and "over 7 decode workers running at most 1 each wait 0.6 request lifetimes" in predicted["notes"]
    assert 25_000 / 1.5 <= predicted["predicted_ttft_ms"] <= 25_000 * 1.5
    assert predicted["regime_ttft"] == "disagg_prefill_slot_wait"


def stated_gb200(runs: pl.DataFrame, chips: pl.Expr) -> int:
    """The most of ``chips`` any GB200 run that states both pools' workers used, read from the file's own columns as
    its README reads them (a pool's GPUs: workers x tp x pp x attention dp)."""
    stated = (pl.col("system") == "gb200") & (pl.col("prefill_num_workers") > 0) & (pl.col("decode_num_workers") > 0)
    return runs.filter(stated).select(chips.max()).item()


def predict_row(real_db, capsys, tmp_path, runs: pl.DataFrame, run_id: str, *, no_launch: bool = False) -> dict:
    """``econ predict --points`` of one row of the measured file, which states no worker counts (``no_launch``: as
    if measured before any InferenceX config held a launch it could match, so that its workers are assumed)."""
    row = runs.filter(pl.col("id") == run_id)
    if no_launch:
        date = pl.col("silicon_data_source").str.replace(r"measured=[0-9-]+T", "measured=2025-01-01T")
        row = row.with_columns(date.alias("silicon_data_source"))
    assert row["prefill_num_workers"].is_null().all() or (row["prefill_num_workers"] <= 0).all()
    path = tmp_path / "runs.csv"
    row.write_csv(path)
    code, out, err = predict(capsys, real_db, "--points", str(path), "--format", "json")
    assert code == 0, err
    (predicted,) = json.loads(out)
    return predicted


def test_a_run_without_worker_counts_is_no_larger_than_any_stated_system_of_its_chip(real_db, capsys, tmp_path):
    """InferenceX's DeepSeek-R1 FP4 run on GB200 at 4,301 users (TensorRT-LLM, 1k/1k) states neither pool's workers
    (its launches do: read here as if none matched). 64 sequences per decode rank alone assumed 68 decode and 27
    prefill workers (652 GB200s) and predicted a TTFT of 0.78 s and a TPOT of 13.9 ms against the 4.91 s and 42.6 ms
    measured. No run that states its workers used more than 72 GB200s; bounded by that, the prediction is within 1.5x
    of both."""
    from tests.conftest import REPO

    runs = pl.read_csv(REPO / "data" / "inferencex_train.csv", infer_schema_length=10000)
    largest = stated_gb200(runs, sum(pl.col(f"{p}_num_workers") * GPUS[p] for p in POOLS))
    assert largest == 72
    run_id = "2026_04_06_deepseek_r1_gb200_trtllm_fp4_disagg_1024x1024_c4301_tp4_ep4_1615"
    predicted = predict_row(real_db, capsys, tmp_path, runs, run_id, no_launch=True)
    assert predicted["system_chips"] <= largest
    assert 4_910 / 1.5 <= predicted["predicted_ttft_ms"] <= 4_910 * 1.5
    assert 42.6 / 1.5 <= predicted["predicted_tpot_ms"] <= 42.6 * 1.5
    assert "within the largest system a stated run used on the chip" in predicted["notes"]


def test_a_stored_prefill_worker_larger_than_any_stated_one_is_cut_to_the_largest(real_db, capsys, tmp_path):
    """The same engine's run at 512 users stores its prefill pool as its decode pool (36 GB200s) and no worker
    counts (its launches state them: read here as if none matched); no run that states its workers ran a prefill
    worker of more than 8 GB200s. Read at 36 chips its TTFT was 0.41 s against 1.20 s measured (2.9x); at the largest
    stated worker it is within 2x, and calibration_runs shows the prefill workers the steps used for the runs whose
    workers it assumed."""
    from tests.analyses.helpers import q
    from tests.conftest import REPO

    runs = pl.read_csv(REPO / "data" / "inferencex_train.csv", infer_schema_length=10000)
    largest = stated_gb200(runs, GPUS["prefill"])
    assert largest == 8
    run_id = "2026_04_06_deepseek_r1_gb200_trtllm_fp4_disagg_1024x1024_c512_tp36_ep1_1076"
    stored = runs.filter(pl.col("id") == run_id).row(0, named=True)
    pools = [[stored[f"{p}_{k}"] for k in ("tp_size", "pp_size", "attention_dp_size")] for p in POOLS]
    assert pools == [[36, 1, 1], [36, 1, 1]] and stored["silicon_ttft_ms"] == pytest.approx(1202, abs=1)
    predicted = predict_row(real_db, capsys, tmp_path, runs, run_id, no_launch=True)
    assert 1_202 / 2 <= predicted["predicted_ttft_ms"] <= 1_202 * 2
    assert "a prefill worker larger than any stated on the chip" in predicted["notes"]
    assumed = "where included and workers_assumed and chip = 'GB200' and mode = 'disagg'"
    table = q(real_db, f"select count(*) n, max(prefill_worker_chips) most from calibration_runs {assumed}")
    assert table["n"].item() > 0 and table["most"].item() == largest


def test_a_file_of_runs_in_other_systems_and_re_releases(real_db, capsys, tmp_path):
    path = points_file(
        tmp_path / "other.csv",
        "a,vllm,zai-org/GLM-5-FP8,b300_sxm,fp8,agg,1024,1024,fp8,fp8,32,8,1,1,1,8,123",
        "b,sglang,nvidia/DeepSeek-R1-NVFP4,gb300,fp4,agg,8192,1024,nvfp4,nvfp4,64,4,1,1,1,4,",
        "c,trtllm,openai/gpt-oss-120b,mi355x,fp4,agg,1024,1024,nvfp4,nvfp4,16,1,1,1,1,1,",
        "d,trtllm,acme/Unknown-7B,h100_sxm,fp8,agg,1024,1024,fp8,fp8,16,1,1,1,1,1,",
        extra=",silicon_ttft_ms",
    )
    code, out, err = predict(capsys, real_db, "--points", str(path), "--format", "csv")
    assert code == 0
    rows = pl.read_csv(out.encode())
    assert rows["status"].to_list() == ["ok", "ok", "ok", "unknown_model"]
    assert (rows["distance"].to_list()[:3]) == ["new_model_and_chip", "new_chip", "new_chip"]
    assert "3 of 4 rows predicted (1 unknown model)" in err
    # a new chip of a measured maker (B300, GB300) takes the new-chip band, checked on NVIDIA's chips and
    # architectures held out; the MI355X's says that band was never measured on AMD's chips and engines
    amd = "the calibration measured no run on AMD's chips: the error band is that of NVIDIA chips held out, not AMD's"
    assert [amd in (n or "") for n in rows["notes"].to_list()] == [False, False, True, False]


def test_a_file_row_of_a_model_econ_has_but_cannot_time_says_so(real_db, capsys, tmp_path):
    """A model of data/models.csv whose attention has no modelled KV cache (DeepSeek-V4-Pro's written as 'other', as
    it was before compressed attention was modelled): a run of it (or of a re-release) is not predicted, and says
    why, rather than calling a model econ lists unknown."""
    db = shutil.copy(real_db, tmp_path / "econ.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("update models set attention = 'other' where model = 'DeepSeek-V4-Pro'")
        con.execute("update model_derived set kv_bytes_per_token = null where model = 'DeepSeek-V4-Pro'")
    row = "gb200,fp4,agg,1024,1024,nvfp4,nvfp4,16,4,1,1,1,4"
    path = points_file(
        tmp_path / "v4.csv", f"v4,trtllm,nvidia/DeepSeek-V4-Pro-NVFP4,{row}", f"typo,trtllm,acme/DeepSeek-V9,{row}"
    )
    code, out, err = predict(capsys, db, "--points", str(path), "--format", "csv")
    rows = pl.read_csv(out.encode())
    assert code == 0 and rows["status"].to_list() == ["untimed_model", "unknown_model"]
    assert rows["reason"][0] == (
        "model 'nvidia/DeepSeek-V4-Pro-NVFP4' is DeepSeek-V4-Pro of data/models.csv, which econ cannot time: its "
        "attention ('other') has no modelled KV cache"
    )
    assert "0 of 2 rows predicted" in err and "1 untimed model" in err


def test_a_file_row_of_deepseek_v4_is_predicted(real_db, capsys, tmp_path):
    """DeepSeek-V4-Pro's compressed attention is modelled: a run of its NVFP4 re-release on GB200 is predicted, and
    as a model the calibration never measured it claims the new-model band (on 4 GB200s its 800 GB of FP4 weights
    do not fit; on 8 they do)."""
    row = "gb200,fp4,agg,1024,1024,nvfp4,nvfp4,16,8,1,1,1,8"
    path = points_file(tmp_path / "v4.csv", f"v4,trtllm,nvidia/DeepSeek-V4-Pro-NVFP4,{row}")
    code, out, err = predict(capsys, real_db, "--points", str(path), "--format", "json")
    (v4,) = json.loads(out)
    assert code == 0 and v4["status"] == "ok" and "1 of 1 rows predicted" in err
    assert 0 < v4["predicted_tpot_ms"] < 1000 and 0 < v4["predicted_ttft_ms"] < 60_000
    assert v4["tpot_error_factor_p90"] > v4["tpot_error_factor_p50"] > 1


def test_a_file_row_of_an_engine_the_calibration_never_measured_is_averaged_and_says_so(real_db, capsys, tmp_path):
    """Two rows alike but for the engine: TensorRT-LLM, which the calibration measured, and Dynamo, which it did not.
    The second is predicted with the engines' average, claims the average's band (calibration_bands.engine_stated
    false, of its chip and model) and says so in its notes, instead of passing for a calibrated engine, whose claim is
    its engine's band of that chip and model."""
    from tests.analyses.helpers import q

    row = "meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1024,1024,fp8,fp8,64,2,1,1,2,1"
    path = points_file(tmp_path / "engines.csv", f"known,trtllm,{row}", f"unknown,dynamo,{row}")
    code, out, err = predict(capsys, real_db, "--points", str(path), "--format", "json")
    known, unknown = json.loads(out)
    assert code == 0 and known["status"] == unknown["status"] == "ok"
    # TensorRT-LLM ran this configuration at other concurrencies: the known row is corrected by those runs and
    # claims the band of such rows; Dynamo's row matches no measured configuration
    assert (known["distance"], unknown["distance"]) == ("seen_configuration", "seen")
    distance = "(case when engine_stated then 'seen_configuration' else 'seen' end)"
    bands = dict(q(real_db, DEEPEST_LLAMA_70B_H200.replace("'seen'", distance)).iter_rows())
    assert known["ttft_error_factor_p90"] == pytest.approx(bands[True], rel=1e-12)
    assert unknown["ttft_error_factor_p90"] == pytest.approx(bands[False], rel=1e-12)
    assert known["ttft_band_of"] == "Llama-3.1-70B's runs with trtllm on H200"  # whose runs the band is from
    assert unknown["ttft_band_of"] == "Llama-3.1-70B's runs on H200"
    assert "not one the calibration measured" not in (known["notes"] or "")
    assert "engine dynamo is not one the calibration measured" in unknown["notes"]


def test_a_file_row_naming_its_engine_as_inferencex_does_is_that_engines_prediction(real_db, capsys, tmp_path):
    """InferenceX names TensorRT-LLM behind Dynamo ``dynamo-trt`` (its launch configs' keys): such a row is
    TensorRT-LLM's, the same prediction and band as the row that says ``trtllm``, not the engines' average."""
    row = "meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1024,1024,fp8,fp8,64,2,1,1,2,1"
    path = points_file(tmp_path / "engines.csv", f"plain,trtllm,{row}", f"dynamo,Dynamo-TRT,{row}")
    code, out, err = predict(capsys, real_db, "--points", str(path), "--format", "json")
    plain, dynamo = json.loads(out)
    assert code == 0 and plain["status"] == dynamo["status"] == "ok"
    assert {k: v for k, v in dynamo.items() if k != "id"} == {k: v for k, v in plain.items() if k != "id"}
    assert dynamo["ttft_band_of"] == "Llama-3.1-70B's runs with trtllm on H200"


def test_a_bad_cell_in_the_file_names_its_line_and_column(real_db, capsys, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(
        "id,backend,model_path,system,mode,isl,osl\nx,vllm,openai/gpt-oss-120b,h100_sxm,agg,lots,10\n",
        encoding="utf-8",
    )
    code, out, err = predict(capsys, real_db, "--points", str(path))
    assert code == 1 and out == ""
    assert "bad.csv:2" in err and "isl" in err and "is not a whole number" in err


def test_a_single_points_flag_beside_points_is_an_error_not_ignored(real_db, capsys, tmp_path):
    """--points reads every setting from its file: --model, --concurrency and --engine beside it were ignored."""
    path = tmp_path / "runs.csv"
    path.write_text("id\n", encoding="utf-8")
    code, out, err = predict(capsys, real_db, "--points", str(path), "--model", "X", "--concurrency", "3")
    assert (code, out) == (1, "") and err.startswith(
        "Error: econ predict --points reads every setting from its file; --concurrency, --model would be ignored"
    ), err


def test_the_fewest_columns_the_readme_names_predict_a_row_given_its_concurrency(tmp_path, real_db, capsys):
    """The README: id, backend, model_path, system, mode, isl and osl are required, and each row needs its concurrency
    (silicon_concurrency in silicon_data_source, or batch_size). A row with neither is kept, with the reason."""
    path = tmp_path / "few.csv"
    row = "vllm,meta-llama/Llama-3.1-8B-Instruct,h100_sxm,agg,1000,100"
    lines = ["id,backend,model_path,system,mode,isl,osl,batch_size,silicon_data_source", f"batch,{row},16,"]
    lines += [f"stated,{row},,silicon_concurrency=16", f"neither,{row},,"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = predict(capsys, real_db, "--points", str(path), "--format", "json")
    rows = {r["id"]: r for r in json.loads(out)}
    assert code == 0 and [rows[k]["status"] for k in ("batch", "stated", "neither")] == ["ok", "ok", "bad_input"]
    assert rows["batch"]["predicted_tpot_ms"] == pytest.approx(rows["stated"]["predicted_tpot_ms"], rel=1e-9)
    assert "no concurrency" in rows["neither"]["reason"] and "2 of 3 rows predicted" in err
