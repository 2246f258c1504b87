"""The fleet analysis on the fixture data: tables and grain, a plan worked by hand, the frontier, the training
fleet, scenario inheritance, errors people read, and the ``econ fleet`` command."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from datetime import date
from pathlib import Path

import duckdb
import polars as pl
import pytest

import econ.build
from econ.analyses import fleet, training
from econ.analyses.fleet_tables import PARETO_BATCH, token_ratios
from econ.analyses.scenario import load_scenarios
from econ.cli import main
from econ.physics import decode_step, load_chip, load_model

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"
AS_OF = date(2026, 11, 30)
TABLES = ("fleet_plan", "fleet_pareto", "training_fleet")


def build_db(data_dir: Path, db: Path) -> Path:
    """``econ build`` of ``data_dir`` running only the analyses the fleet needs (training writes token_balance)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(econ.build, "ANALYSES", [training, fleet])
        econ.build.build(data_dir=data_dir, db_path=db, cache_dir=None, reports_dir=None, as_of=AS_OF)
    return db


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    return build_db(FIXTURE_DATA, tmp_path_factory.mktemp("fleet") / "econ.duckdb")


def q(db_path: Path, sql: str, params=None) -> pl.DataFrame:
    with duckdb.connect(str(db_path), read_only=True) as con:
        return con.sql(sql, params=params).pl()


def plan_row(db_path, deployment, kind="scenario") -> dict:
    return q(db_path, "select * from fleet_plan where deployment = ? and price_kind = ?", [deployment, kind]).row(
        0, named=True
    )


# ---------------------------------------------------------------------------- tables and grain


def test_tables_are_written_with_comments(db):
    with duckdb.connect(str(db), read_only=True) as con:
        comments = dict(con.sql("select table_name, comment from duckdb_tables()").fetchall())
        for table in TABLES:
            assert comments[table] and "Grain:" in comments[table]
        missing = con.sql(
            "select table_name, column_name from duckdb_columns() where table_name in ('fleet_plan', "
            "'fleet_pareto', 'training_fleet') and (comment is null or comment = '')"
        ).fetchall()
    assert missing == []


def test_plan_grain_is_deployment_by_price_kind(db):
    """Every quoted rental kind of the chip (newest date) plus the scenario's price; H100 has on_demand and
    market_index."""
    got = q(
        db, "select deployment, list(price_kind order by price_kind) as kinds from fleet_plan group by 1 order by 1"
    ).rows()
    assert got == [
        ("deepseek-v3-b200", ["scenario"]),
        ("gpt-oss-120b-tpu-v5e", ["scenario"]),
        ("llama-70b-h100", ["market_index", "on_demand", "scenario"]),
    ]


def test_plan_says_what_it_could_not_know(db):
    row = plan_row(db, "deepseek-v3-b200")
    assert row["revenue_usd_per_day"] is None and row["racks"] is None
    assert row["notes"] == (
        "no list price found: no revenue or margin; no rental quote for this chip: only the scenario "
        "price; rack size not in hardware: no racks; 25.0% of requests (prompt + output) exceed the "
        "model's native context; planned as if served; prefill_mfu/decode_mbu missing: the pure "
        "roofline (1.0) where absent"
    )
    assert row["beyond_native_context_frac"] == 0.25  # the 256k prompts; DeepSeek-V3's config allows 163,840 positions
    assert row["price_basis"] == "scenario base gpu_usd_per_hour (the lecture's $2/chip-hour in base)"
    assert plan_row(db, "llama-70b-h100", "on_demand")["price_basis"] == "median of 1 quote(s) dated 2026-03-01: Lambda"


# ---------------------------------------------------------------------------- a plan worked by hand


def test_dollars_per_day_and_margin_by_hand(db):
    """Llama-3.1-70B bf16 on 8 x H100 at Lambda's $2.99/chip-hour, sold at the fixture's Gemini 3.1 Pro prices.

    Every step is written out here from the fixture's numbers, not from econ's functions."""
    # traffic: 5% of 5e8 tokens/s, 15 input tokens per output token
    traffic = 0.05 * 5e8
    inp, out = traffic * 15 / 16, traffic / 16
    mean_prompt = 0.75 * 4096 + 0.25 * 262_144  # 68,608 tokens
    n_out = mean_prompt / 15
    requests = inp / mean_prompt
    context = mean_prompt + n_out / 2
    # model and chip (fixture rows): 70.6B dense, bf16, KV 80 layers x 8 heads x 128 x 2 x 2 B; H100 80 GB, 3.35 TB/s
    n, kv, flops, bw, hbm, chips = 70.6e9, 327_680.0, 989.4e12, 3.35e12, 80e9, 8
    balance = (flops / 2) * 2 / bw  # R = 295.3 = B*0 for a dense model
    batch = min(round(2 * balance), math.floor((chips * hbm - 2 * n) / (context * kv)))  # 591 wanted, 21 fit
    assert batch == 21
    step = max(2 * batch * n / (chips * flops), (2 * n + batch * context * kv) / (chips * bw))
    decode_replicas = math.ceil(out / (batch / step))
    # prefill, one prompt per pass (591 target tokens < the 2,048 new tokens of the short bucket); half of each prompt
    # cached
    short = max(2 * 2048 * n / (chips * flops), (2 * n + 4096 * kv) / (chips * bw))
    long = max(2 * 131_072 * n / (chips * flops), (2 * n + 262_144 * kv) / (chips * bw))
    prefill_replicas = math.ceil(requests * (0.75 * short + 0.25 * long))
    total_chips = (decode_replicas + prefill_replicas) * chips
    usd_per_day = total_chips * 2.99 * 24
    # revenue: <= 200k prompts at $2 in / $0.20 cached / $12 out, the 256k prompts at the >200k tier $4 / $0.40 / $18
    per_request = (
        0.75 * (2048 * 2 + 2048 * 0.2 + n_out * 12) + 0.25 * (131_072 * 4 + 131_072 * 0.4 + n_out * 18)
    ) / 1e6
    revenue_per_day = requests * per_request * 86_400
    row = plan_row(db, "llama-70b-h100", "on_demand")
    assert (row["decode_batch_seqs"], row["decode_replicas"], row["prefill_replicas"]) == (
        21,
        decode_replicas,
        prefill_replicas,
    )
    assert row["chips"] == total_chips == 15_656
    assert row["usd_per_day"] == pytest.approx(usd_per_day, rel=1e-9)
    assert row["revenue_usd_per_day"] == pytest.approx(revenue_per_day, rel=1e-9)
    assert row["gross_margin_frac"] == pytest.approx(1 - usd_per_day / revenue_per_day, rel=1e-9)
    assert row["batch_status"] == "capped by memory at the decode context"
    # power: TDP 700 W x 1.82 x PUE 1.2 per chip; 8-chip nodes; the fixture's H100 rack holds 32
    assert row["facility_power_w"] == pytest.approx(total_chips * 700 * 1.82 * 1.2)
    assert (row["nodes"], row["racks"]) == (
        total_chips / 8,
        math.ceil(decode_replicas * 8 / 32) + math.ceil(prefill_replicas * 8 / 32),
    )


def test_plan_step_equals_the_notebook_api(db):
    """The plan's decode step is what ``econ.physics.decode_step`` gives for the same batch, context and replica."""
    row = plan_row(db, "deepseek-v3-b200")
    step = decode_step(
        load_model("DeepSeek-V3", db),
        load_chip("B200", db),
        batch=row["decode_batch_seqs"],
        context_tokens=row["decode_context_tokens"],
        number_format="fp8",
        chips=row["replica_chips"],
    )
    assert row["decode_step_time_s"] == pytest.approx(step.step_time_s, rel=1e-12)
    assert row["decode_tokens_per_s_per_replica"] == pytest.approx(step.tokens_per_s, rel=1e-12)


def test_speed_target_batch_meets_the_target_unless_memory_caps_it(db):
    row = plan_row(db, "gpt-oss-120b-tpu-v5e")
    assert row["batch_policy"] == "speed_target" and row["tokens_per_s_per_user"] >= 50
    assert row["decode_batch_seqs"] == min(row["batch_target_seqs"], row["memory_max_batch_seqs"])
    assert row["replica_chips"] == 256  # default replica: the KV of 2 x B*0 wants more than the 256-chip v5e domain


# ---------------------------------------------------------------------------- the frontier


def test_frontier_covers_every_case_with_more_than_a_thousand_batches(db):
    assert len(PARETO_BATCH) >= 1000 and PARETO_BATCH[0] == 1 and PARETO_BATCH[-1] == 65_536
    cases = q(
        db, "select count(distinct (model, chip, number_format)) as n, min(batch_seqs) as b from fleet_pareto"
    ).row(0)
    assert cases == (18, 1)  # 3 models x (H100 bf16/fp8, B200 bf16/fp8/fp4, v5e bf16)
    # the kept points are exactly the batches that fit in the replica's HBM at the context
    row = q(
        db,
        "select * from fleet_pareto where model = 'Llama-3.1-70B' and chip = 'H100' and number_format = 'bf16' "
        "order by batch_seqs",
    )
    g, context = row["replica_chips"][0], q(db, "select decode_context_tokens from fleet_plan limit 1")[0, 0]
    fits = math.floor((g * 80e9 - 2 * 70.6e9) / (context * 327_680))
    assert row["batch_seqs"].max() == max(b for b in PARETO_BATCH if b <= fits)


def test_frontier_starts_at_the_latency_floor(db):
    row = q(
        db,
        "select * from fleet_pareto where model = 'Llama-3.1-70B' and chip = 'H100' and number_format = 'bf16' "
        "and batch_seqs = 1",
    ).row(0, named=True)
    context = q(db, "select decode_context_tokens from fleet_plan limit 1")[0, 0]
    floor_s = (2 * 70.6e9 + context * 327_680) / (row["replica_chips"] * 3.35e12)  # weights + one sequence's KV
    assert row["tokens_per_s_per_user"] == pytest.approx(1 / floor_s, rel=1e-12)


def test_pareto_points_are_not_dominated(db):
    frame = q(db, "select * from fleet_pareto where model = 'DeepSeek-V3' and chip = 'B200'")
    optimal = frame.filter(pl.col("pareto_optimal"))
    dominated = frame.filter(~pl.col("pareto_optimal"))
    assert optimal.height and dominated.height
    pairs = optimal.join(optimal, how="cross", suffix="_o").filter(
        (pl.col("tokens_per_s_per_user_o") >= pl.col("tokens_per_s_per_user"))
        & (pl.col("tokens_per_s_per_chip_o") > pl.col("tokens_per_s_per_chip") * (1 + 1e-12))
    )
    assert pairs.height == 0


# ---------------------------------------------------------------------------- the training fleet


def test_training_tokens_follow_the_token_balance(db):
    """Base shares are 1/3 each, so D_pre = beta x D_inf with beta = (2/6)/0.33 = 1.0101 (lecture e.3); the closed
    form from the scenario gives the training analysis' token_balance ratio."""
    with duckdb.connect(str(db), read_only=True) as con:
        s = load_scenarios(con)["base"]
        balance = con.sql("select scenario, quantity, central_value from token_balance").pl()
    from_table, from_scenario = token_ratios(s, balance), token_ratios(s, None)
    assert from_table[0] == pytest.approx((2 / 6) / 0.33, rel=1e-3)
    assert from_table[:2] == pytest.approx(from_scenario[:2], rel=1e-9)
    rows = q(db, "select * from training_fleet where deployment = 'llama-70b-h100' order by phase")
    assert rows["phase"].to_list() == ["pretrain", "pretrain_reported", "rl"]
    pre = rows.row(0, named=True)
    inference = 0.05 * 5e8 * 2 * 30 * 86_400  # 2 months of 30 days, no discard
    assert pre["inference_tokens"] == pytest.approx(inference)
    assert pre["tokens"] == pytest.approx(from_table[0] * inference)
    assert pre["chip_hours"] == pytest.approx(6 * 70.6e9 * pre["tokens"] / (989.4e12 * 0.4) / 3600)
    reported = rows.row(1, named=True)
    assert reported["tokens"] == 15e12 and reported["tokens_source"] == "models.pretrain_tokens (reported)"
    assert reported["cost_low_usd"] == pytest.approx(reported["chip_hours"] * 2.35)  # market index, the cheaper kind
    assert reported["cost_high_usd"] == pytest.approx(reported["chip_hours"] * 2.99)


def test_fleet_split_uses_the_plan_and_the_peak(db):
    plan = plan_row(db, "llama-70b-h100")
    row = q(db, "select * from training_fleet where deployment = 'llama-70b-h100' and phase = 'pretrain'").row(
        0, named=True
    )
    assert row["serving_peak_chips"] == pytest.approx(1.5 * plan["serving_mean_chips"])
    hours = q(
        db,
        "select sum(chip_hours) from training_fleet where deployment = 'llama-70b-h100' and phase in "
        "('pretrain', 'rl')",
    )[0, 0]
    period_h = 2 * 30 * 24
    assert row["fleet_chips_separate"] == pytest.approx(row["serving_peak_chips"] + hours / period_h)
    assert row["fleet_chips_time_shared"] <= row["fleet_chips_separate"]


# ---------------------------------------------------------------------------- scenarios and errors


def copy_data(tmp_path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(FIXTURE_DATA, target)
    return target


def append(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")


def test_a_scenario_without_deployments_uses_base_s(tmp_path):
    data = copy_data(tmp_path)
    append(data / "scenarios.csv", "cool_site,pue_ratio,1.1,,ratio,,,,a better cooled site,https://example.org")
    built = build_db(data, tmp_path / "econ.duckdb")
    rows = q(
        built,
        "select scenario, deployment_scenario, facility_power_w from fleet_plan where deployment = "
        "'deepseek-v3-b200' order by scenario",
    )
    assert rows["scenario"].to_list() == ["base", "cool_site"] and rows["deployment_scenario"].to_list() == [
        "base",
        "base",
    ]
    assert rows["facility_power_w"][1] / rows["facility_power_w"][0] == pytest.approx(1.1 / 1.2)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "base,bad,Llama-3.1-70B,H100,fp4,8,balance_multiple,0.01,,,,x,https://example.org",
            "Error: deployment bad: H100 has no fp4 peak — pick a format the chip has a peak for (bf16, fp8) in "
            "data/deployments.csv",
        ),
        (
            "base,bad,Llama-3.1-70B,H100,bf16,8,balance_multiple,0.01,,google,,x,https://example.org",
            "Error: data/deployments.csv:5: column price_model: a price mapping needs both price_provider and "
            "price_model — fill both "
            "(as in prices.provider and prices.model), or leave both blank to match by hf_repo",
        ),
        (
            "base,bad,Llama-3.1-70B,H100,bf16,8,balance_multiple,0.9,,,,x,https://example.org",
            "Error: data/deployments.csv:5: column traffic_share_frac: traffic shares of scenario base add up to "
            "1.06 — each share "
            "is a fraction of the scenario's tokens_served_per_s; their sum must be <= 1",
        ),
        (
            "base,bad,Llama-3.1-70b,H100,bf16,8,balance_multiple,0.01,,,,x,https://example.org",
            'Error: data/deployments.csv:5: column model: unknown model "Llama-3.1-70b" (not in models) — did you '
            "mean Llama-3.1-70B?",
        ),
    ],
)
def test_bad_deployments_are_reported(tmp_path, monkeypatch, capsys, line, message):
    data = copy_data(tmp_path)
    append(data / "deployments.csv", line)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(econ.build, "ANALYSES", [fleet])
    code = main(["build", "--data", "data", "--db", "out.duckdb", "--no-report", "--cache", "cache"])
    assert (code, capsys.readouterr().err.strip()) == (1, message)


def test_context_shares_must_add_up_to_one(tmp_path, monkeypatch, capsys):
    data = copy_data(tmp_path)
    append(data / "scenarios.csv", "base,context_share_8192_tokens_frac,0.1,,fraction,,,,x,https://example.org")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(econ.build, "ANALYSES", [fleet])
    code = main(["build", "--data", "data", "--db", "out.duckdb", "--no-report", "--cache", "cache"])
    assert (code, capsys.readouterr().err.strip()) == (
        1,
        "Error: the context_share_*_tokens_frac assumptions of scenario 'base' add up to 1.1 — make the shares of the "
        "prompt-length mix add up to 1 in data/scenarios.csv",
    )


# ---------------------------------------------------------------------------- econ fleet


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = main(["fleet", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


def test_econ_fleet_prints_a_plan_and_leaves_the_database_alone(db, capsys):
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    code, out, err = run_cli(
        capsys,
        "--db",
        str(db),
        "--model",
        "Llama-3.1-70B",
        "--chip",
        "H100",
        "--tokens-per-s",
        "2.5e7",
        "--replica-chips",
        "8",
        "--number-format",
        "bf16",
        "--format",
        "json",
        "--as-of",
        "2026-11-30",
    )
    assert (code, err) == (0, "")
    rows = {r["quantity"]: r["value"] for r in json.loads(out)}
    same = plan_row(db, "llama-70b-h100", "on_demand")
    assert rows["chips"] == same["chips"] and rows["cost (on_demand)"] == pytest.approx(same["usd_per_day"])
    assert rows["decode step (lower bound)"] == pytest.approx(same["decode_step_time_s"] * 1e3)
    assert rows["sold by"] is None  # the CLI matches prices by hf_repo only; the fixture's prices carry none
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("k", [10.0, 1000.0])
def test_econ_fleet_scales_with_traffic(db, capsys, k):
    def chips(tokens):
        code, out, _ = run_cli(
            capsys,
            "--db",
            str(db),
            "--model",
            "gpt-oss-120b",
            "--chip",
            "B200",
            "--tokens-per-s",
            str(tokens),
            "--format",
            "json",
            "--as-of",
            "2026-11-30",
        )
        rows = {r["quantity"]: r["value"] for r in json.loads(out)}
        return rows["chips"], rows["facility power"], rows["cost (scenario)"], rows["chips per replica"]

    c1, p1, usd1, g = chips(1e8)
    ck, pk, usdk, _ = chips(k * 1e8)
    assert k * c1 - 2 * k * g <= ck <= k * c1  # each pool rounds up by less than one replica
    assert pk / p1 == pytest.approx(ck / c1) and usdk / usd1 == pytest.approx(ck / c1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--model", "Llama-3.1-70b", "--chip", "H100"],
            "Error: unknown model 'Llama-3.1-70b' (not in models) — did you mean Llama-3.1-70B?",
        ),
        (
            ["--model", "DeepSeek-V3", "--chip", "B20"],
            "Error: unknown chip 'B20' (not in hardware) — did you mean B200?",
        ),
        (
            ["--model", "DeepSeek-V3", "--chip", "B200", "--scenario", "nope"],
            "Error: no scenario 'nope' — known scenarios: base",
        ),
        (
            ["--model", "gpt-oss-120b", "--chip", "TPU-v5e", "--number-format", "fp8"],
            "Error: TPU-v5e has no fp8 peak — pass --number-format bf16",
        ),
        (
            ["--model", "gpt-oss-120b", "--chip", "B200", "--replica-chips", "0"],
            "Error: --replica-chips must be between 1 and 1e+07 (got 0) — give the chips per replica, or leave it "
            "out to size the replica for the batch (10 million chips is ~50x the largest clusters announced)",
        ),
        (
            ["--model", "gpt-oss-120b", "--chip", "B200", "--tokens-per-s", "inf"],
            "Error: --tokens-per-s must be a positive number (got inf) — give the traffic in tokens per second",
        ),
    ],
)
def test_econ_fleet_errors(db, capsys, args, message):
    code, out, err = run_cli(capsys, "--db", str(db), "--tokens-per-s", "1e6", *args)
    assert (code, out, err) == (1, "", message)


# ---------------------------------------------------------------------------- the real data/


@pytest.fixture(scope="module")
def real_db(tmp_path_factory) -> Path:
    """data/ built with the fleet analysis alone: no token_balance table, so the training fleet uses the closed form."""
    db = tmp_path_factory.mktemp("fleet_real") / "econ.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(econ.build, "ANALYSES", [fleet])
        econ.build.build(
            data_dir=FIXTURE_DATA.parents[2] / "data", db_path=db, cache_dir=None, reports_dir=None, as_of=AS_OF
        )
    return db


@pytest.mark.slow
def test_every_deployment_in_the_data_is_planned_and_priced(real_db):
    rows = q(
        real_db,
        "select deployment, decode_batch_seqs, revenue_usd_per_day, price_match from fleet_plan "
        "where scenario = 'base' and price_kind = 'scenario' order by deployment",
    )
    assert rows.height == 7
    assert rows.filter(pl.col("decode_batch_seqs").is_null() | pl.col("revenue_usd_per_day").is_null()).height == 0
    assert set(rows["price_match"]) == {"as mapped in deployments"}
    sources = q(real_db, "select distinct tokens_source from training_fleet where phase = 'pretrain'")["tokens_source"]
    assert sources.to_list() == ["scenario (lecture e.3 closed form; no token_balance table)"]


@pytest.mark.slow
def test_a_memory_capped_step_reads_all_of_hbm(real_db):
    """Lecture a.6: a step that fills HBM takes about capacity / bandwidth ('20 milliseconds on many generations');
    with the scenario's 80% bandwidth utilisation, drain / 0.8. Checked for every plan whose batch memory capped."""
    rows = q(
        real_db,
        "select p.deployment, p.decode_step_time_s, p.decode_batch_seqs, p.memory_max_batch_seqs, "
        "h.hbm_capacity_bytes / h.hbm_bandwidth_bytes_per_s as drain_s from fleet_plan as p join hardware as h "
        "using (chip) where p.scenario = 'base' and p.price_kind = 'scenario' and p.batch_status like 'capped%'",
    )
    assert rows.height >= 2
    for r in rows.iter_rows(named=True):
        assert r["decode_step_time_s"] == pytest.approx(r["drain_s"] / 0.8, rel=0.05), r["deployment"]


@pytest.mark.slow
def test_a_deepseek_rack_is_near_the_lecture_s_128k_tokens_per_s(real_db):
    """Lecture a.7 with its own setup: DeepSeek-V3 on 64 of an NVL72's GPUs, batch 2,000, at the scenario's typical
    32k context: 2,000 x ~60 steps/s ≈ 128,000 tokens/s. Our roofline (fp8, 80% of HBM bandwidth) is within 2x."""
    from econ.physics import fleet as physics

    m, c = load_model("DeepSeek-V3", real_db), load_chip("GB200", real_db)
    pool = physics.decode_pool(
        output_tokens_per_s=1.0,
        batch=2000,
        context_tokens=32_000,
        params_total=m.params_total,
        params_active=m.params_active,
        weight_bytes_per_param=1.0,
        kv_bytes_per_token=m.kv_bytes_per_token,
        chips=64,
        peak_flop_per_s=c.peak_flop_per_s("fp8"),
        hbm_bandwidth_bytes_per_s=c.hbm_bandwidth_bytes_per_s,
        mfu=0.6,
        mbu=0.8,
    )
    assert 0.5 < pool["tokens_per_s_per_replica"] / 128_000 < 2.0


@pytest.mark.slow
def test_the_frontier_covers_every_model_chip_and_format_of_the_data(real_db):
    """Every model with KV bytes x every chip x every format with a peak (the hardware_derived view lists those), each
    with at least one feasible batch and a Pareto front."""
    counts = q(
        real_db,
        "select count(distinct (model, chip, number_format)) as cases, count(distinct (model, chip)) as pairs, "
        "count(distinct (model, chip)) filter (where pareto_optimal) as fronts from fleet_pareto",
    ).row(0)
    with duckdb.connect(str(real_db), read_only=True) as con:
        models = con.sql("select count(*) from models where kv_bytes_per_token is not null").fetchall()[0][0]
        chip_formats, chips = con.sql("select count(*), count(distinct chip) from hardware_derived").fetchall()[0]
    assert counts == (models * chip_formats, models * chips, models * chips)
    assert (models, chips) == (31, 16)


@pytest.mark.slow
def test_econ_fleet_on_the_data_matches_the_price_by_hf_repo(real_db, capsys):
    code, out, err = run_cli(
        capsys,
        "--db",
        str(real_db),
        "--model",
        "DeepSeek-V3",
        "--chip",
        "H200",
        "--tokens-per-s",
        "1e7",
        "--format",
        "json",
        "--as-of",
        "2026-11-30",
    )
    assert (code, err) == (0, "")
    rows = {r["quantity"]: r["value"] for r in json.loads(out)}
    assert (rows["sold by"], rows["sold as"]) == ("openrouter", "deepseek/deepseek-chat")
    kinds = {q.split("(")[1].rstrip(")") for q in rows if q.startswith("cost (")}
    assert kinds == {"capacity_block", "on_demand", "scenario"}


def test_econ_fleet_refuses_a_database_built_by_other_code(tmp_path, capsys):
    bare = tmp_path / "bare.duckdb"
    duckdb.connect(str(bare)).close()
    assert main(["fleet", "--db", str(bare), "--model", "DeepSeek-V3", "--chip", "B200", "--tokens-per-s", "1e6"]) == 1
    assert capsys.readouterr().err == (
        f"Error: {bare} was built by another version of econ — run econ build to rebuild it with this one\n"
    )
