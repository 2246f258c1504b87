"""fleet_plan on the fixture data: grain, a plan worked by hand, what it could not know, scenarios and
bad deployments; on the shipped data, every deployment planned and priced."""

from __future__ import annotations

import math

import polars as pl
import pytest

from econ.build import build
from econ.cli import main
from econ.notebook import load_chip, load_model
from econ.physics import decode_step
from tests.analyses.helpers import AS_OF, append, copy_data, plan_row, q


def test_plan_grain_is_deployment_by_price_kind(db):
    """Every quoted rental kind of the chip (newest date) plus the scenario's price; H100 has on_demand and
    market_index."""
    got = q(
        db,
        "select deployment, list(price_kind order by price_kind) as kinds from fleet_plan where scenario = 'base' "
        "group by 1 order by 1",
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
        "model's native context; planned as if served; prefill_mfu_frac/prefill_mbu_frac/decode_mfu_frac/"
        "decode_mbu_frac missing: the pure roofline (1.0) where absent"
    )
    assert row["beyond_native_context_frac"] == 0.25  # the 256k prompts; DeepSeek-V3's config allows 163,840 positions
    assert row["price_basis"] == "scenario base usd_per_chip_hour (the lecture's $2/chip-hour in base)"
    assert plan_row(db, "llama-70b-h100", "on_demand")["price_basis"] == "median of 1 quote(s) dated 2026-03-01: Lambda"


def test_dollars_per_day_and_margin_by_hand(db):
    """Llama-3.1-70B bf16 on 8 x H100 (TP8 for both pools) at Lambda's $2.99/chip-hour, sold at the fixture's Gemini
    3.1 Pro prices. The fixture scenario states no efficiencies (the pure roofline), no latency, no HBM reserve.

    Every step is written out here from the fixture's numbers and the rules of econ.analyses.fleet_pools, not from
    econ's functions."""
    # traffic: 5% of 5e8 tokens/s, 15 input tokens per output token
    traffic = 0.05 * 5e8
    inp, out = traffic * 15 / 16, traffic / 16
    mean_prompt = 0.75 * 4096 + 0.25 * 262_144  # 68,608 tokens
    n_out = mean_prompt / 15
    requests = inp / mean_prompt
    context = mean_prompt + n_out / 2
    # model and chip (fixture rows): 70.6B dense, bf16, KV 80 layers x 8 heads x 128 x 2 x 2 B; H100 80 GB, 3.35 TB/s
    n, kv, flops, bw, hbm, chips = 70.6e9, 327_680.0, 989.4e12, 3.35e12, 80e9, 8
    read = 2 * (n - 128_256 * 8192)  # every weight but the input embedding (only its rows are read; the head is)
    flop_params = n - 128_256 * 8192  # an embedding lookup does no FLOPs
    slope = 2 * 64 * (128 + 128) * 80  # attention FLOPs per new token per cached token: 2·n_q·(d_k + d_v)·layers
    balance = (flops / 2) * 2 / bw  # R = 295.3 = B*0 for a dense model
    batch = min(round(2 * balance), math.floor((chips * hbm - 2 * n) / (context * kv)))  # 591 wanted, 21 fit
    assert batch == 21
    compute = (2 * batch * flop_params + batch * slope * context) / (chips * flops)
    step = max(compute, (read + batch * context * kv) / (chips * bw))
    decode_replicas = math.ceil(out / (batch / step))

    # prefill: per bucket, the largest pass of 1, 2, 4 … 256 prompts within the 2 s TTFT target, else the largest
    # within 10% of one prompt's pass; half of each prompt cached
    def prefill_pass(b, prompt):
        new = cached = prompt / 2
        attention = b * slope * (new * cached + new * (new + 1) / 2)
        fits = 2 * n + b * prompt * kv <= chips * hbm
        compute = (2 * b * new * flop_params + attention) / (chips * flops)
        return max(compute, (read + b * prompt * kv) / (chips * bw)), fits

    seconds = 0.0
    for share, prompt in ((0.75, 4096), (0.25, 262_144)):
        passes = {b: prefill_pass(b, prompt) for b in (2**k for k in range(9))}
        ok = [b for b, (t, fits) in passes.items() if fits and t <= 2.0]
        best = max(ok) if ok else max(b for b, (t, fits) in passes.items() if fits and t <= 1.1 * passes[1][0])
        seconds += share * passes[best][0] / best
    prefill_replicas = math.ceil(requests * seconds)
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
    assert (row["decode_tensor_parallel"], row["prefill_tensor_parallel"]) == (8, 8)
    assert row["chips"] == total_chips
    assert row["usd_per_day"] == pytest.approx(usd_per_day, rel=1e-9)
    assert row["revenue_usd_per_day"] == pytest.approx(revenue_per_day, rel=1e-9)
    assert row["gross_margin_frac"] == pytest.approx(1 - usd_per_day / revenue_per_day, rel=1e-9)
    assert row["batch_status"] == "balance multiple, capped by memory"
    assert row["prefill_status"] == "TTFT target unreachable: passes within 10% of the fastest"  # 256k prompts
    # power: TDP 700 W x 1.82 x PUE 1.2 per chip; 8-chip nodes; the fixture's H100 rack holds 32
    assert row["facility_power_w"] == pytest.approx(total_chips * 700 * 1.82 * 1.2)
    assert (row["nodes"], row["racks"]) == (
        total_chips / 8,
        math.ceil(decode_replicas * 8 / 32) + math.ceil(prefill_replicas * 8 / 32),
    )


def test_plan_step_equals_the_notebook_api(db):
    """The plan's decode step is what ``econ.physics.decode_step`` gives for the same batch, context and layout."""
    row = plan_row(db, "deepseek-v3-b200")
    dp = row["decode_attention_data_parallel"]
    layout = {
        "tensor_parallel": row["decode_tensor_parallel"],
        "attention_data_parallel": dp,
        "pipeline_parallel": row["decode_pipeline_parallel"],
        **dict.fromkeys(
            ("replicate_attention", "replicate_shared_experts", "replicate_dense", "replicate_embeddings"), dp > 1
        ),
        "redundant_expert_slots": 0.0,
    }
    step = decode_step(
        load_model("DeepSeek-V3", db),
        load_chip("B200", db),
        batch=row["decode_batch_seqs"],
        context_tokens=row["decode_context_tokens"],
        number_format="fp8",
        layout=layout,
    )
    assert row["decode_step_time_s"] == pytest.approx(step.step_time_s, rel=1e-12)
    assert row["decode_tokens_per_s_per_replica"] == pytest.approx(step.tokens_per_s, rel=1e-12)


def test_speed_target_picks_the_cheapest_layout_meeting_the_target(db):
    row = plan_row(db, "gpt-oss-120b-tpu-v5e")
    assert row["batch_policy"] == "speed_target" and row["batch_status"] == "speed target"
    assert row["tokens_per_s_per_user"] >= 50
    assert row["decode_batch_seqs"] <= row["memory_max_batch_seqs"]


def test_a_scenario_without_deployments_uses_base_s(tmp_path):
    data = copy_data(tmp_path)
    append(data / "scenarios.csv", "cool_site,pue_ratio,1.1,,ratio,,,,a better cooled site,https://example.org")
    built = tmp_path / "econ.duckdb"
    build(data_dir=data, db_path=built, cache_dir=None, reports_dir=None, as_of=AS_OF)
    rows = q(
        built,
        "select scenario, deployment_scenario, facility_power_w from fleet_plan where deployment = "
        "'deepseek-v3-b200' and scenario in ('base', 'cool_site') order by scenario",
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
            "base,bad,Llama-3.1-70B,H100,fp4,,8,,8,balance_multiple,0.01,,,,x,https://example.org",
            "Error: deployment bad: H100 has no fp4 peak — pick a format the chip has a peak for (bf16, fp8) in "
            "data/deployments.csv",
        ),
        (
            "base,bad,Llama-3.1-70B,H100,bf16,,8,,8,balance_multiple,0.01,,google,,x,https://example.org",
            "Error: data/deployments.csv:5: column price_model: a price mapping needs both price_provider and "
            "price_model — fill both "
            "(as in prices.provider and prices.model), or leave both blank to match by hf_repo",
        ),
        (
            "base,bad,Llama-3.1-70B,H100,bf16,,8,,8,balance_multiple,0.9,,,,x,https://example.org",
            "Error: data/deployments.csv:5: column traffic_share_frac: traffic shares of scenario base add up to "
            "1.06 — each share "
            "is a fraction of the scenario's tokens_served_per_s; their sum must be <= 1",
        ),
        (
            "base,bad,Llama-3.1-70b,H100,bf16,,8,,8,balance_multiple,0.01,,,,x,https://example.org",
            'Error: data/deployments.csv:5: column model: unknown model "Llama-3.1-70b" (not in models) — did you '
            "mean Llama-3.1-70B?",
        ),
    ],
)
def test_bad_deployments_are_reported(tmp_path, monkeypatch, capsys, line, message):
    data = copy_data(tmp_path)
    append(data / "deployments.csv", line)
    monkeypatch.chdir(tmp_path)
    code = main(["build", "--data", "data", "--db", "out.duckdb", "--no-report", "--cache", "cache"])
    assert (code, capsys.readouterr().err.strip()) == (1, message)


def test_a_plan_beyond_the_chip_ceiling_is_an_error_naming_its_inputs(tmp_path, monkeypatch, capsys):
    """Traffic of 1e15 tokens/s is within the input's own ceiling, but no fleet serves it: the build stops, naming the
    deployment and what to lower, instead of tabulating ~1e11 chips."""
    data = copy_data(tmp_path)
    append(data / "scenarios.csv", "huge,tokens_served_per_s,1e15,,tokens/s,,,,x,https://example.org")
    monkeypatch.chdir(tmp_path)
    code = main(["build", "--data", "data", "--db", "out.duckdb", "--no-report", "--cache", "cache"])
    err = capsys.readouterr().err.strip()
    assert code == 1 and err.startswith("Error: deployment "), err
    assert " of scenario huge needs " in err and err.endswith(
        "chips, above the ceiling of 10,000,000 (10 million chips is ~50x the largest clusters announced) — lower the "
        "scenario's tokens_served_per_s (data/scenarios.csv) or the deployment's traffic_share_frac "
        "(data/deployments.csv)"
    )
    assert not (tmp_path / "out.duckdb").exists()


def test_context_shares_must_add_up_to_one(tmp_path, monkeypatch, capsys):
    data = copy_data(tmp_path)
    append(data / "scenarios.csv", "base,context_share_8192_tokens_frac,0.1,,fraction,,,,x,https://example.org")
    monkeypatch.chdir(tmp_path)
    code = main(["build", "--data", "data", "--db", "out.duckdb", "--no-report", "--cache", "cache"])
    assert (code, capsys.readouterr().err.strip()) == (
        1,
        "Error: the context_share_*_tokens_frac assumptions of scenario 'base' add up to 1.1 — make the shares of the "
        "prompt-length mix add up to 1 in data/scenarios.csv",
    )


@pytest.mark.slow
def test_every_deployment_in_the_data_is_planned_and_priced(real_db):
    rows = q(
        real_db,
        "select deployment, decode_batch_seqs, revenue_usd_per_day, price_match from fleet_plan "
        "where scenario = 'base' and price_kind = 'scenario' order by deployment",
    )
    assert rows.height == 8
    assert rows.filter(pl.col("decode_batch_seqs").is_null() | pl.col("revenue_usd_per_day").is_null()).height == 0
    assert set(rows["price_match"]) == {"as mapped in deployments"}
    sources = q(real_db, "select distinct tokens_source from training_fleet where phase = 'pretrain'")["tokens_source"]
    assert sources.to_list() == ["token balance of this deployment's traffic (lecture e.3)"]


@pytest.mark.slow
def test_a_memory_capped_step_reads_all_of_hbm(real_db):
    """Lecture a.6: a step that fills HBM takes about capacity / bandwidth ('20 milliseconds on many generations');
    with the scenario's 10% HBM reserve at the bound's full bandwidth (scenario base), drain x 0.9. Checked for every
    plan
    whose batch memory capped, except sparse-attention models (they hold every token's cache but read the top-k)."""
    rows = q(
        real_db,
        "select p.deployment, p.decode_step_time_s, p.decode_batch_seqs, p.memory_max_batch_seqs, "
        "h.hbm_capacity_bytes / h.hbm_bandwidth_bytes_per_s as drain_s from fleet_plan as p join hardware as h "
        "using (chip) join model_derived as d using (model) where p.scenario = 'base' and p.price_kind = 'scenario' "
        "and p.batch_status like '%capped by memory' and d.sparse_topk_tokens is null",
    )
    assert rows.height >= 2
    for r in rows.iter_rows(named=True):
        assert r["decode_step_time_s"] == pytest.approx(r["drain_s"] * 0.9, rel=0.05), r["deployment"]


@pytest.mark.slow
def test_a_deepseek_rack_is_near_the_lecture_s_128k_tokens_per_s(real_db):
    """Lecture a.7 with its own setup: DeepSeek-V3 on 64 of an NVL72's GPUs, batch 2,000, at the scenario's typical
    32k context: 2,000 x ~60 steps/s ≈ 128,000 tokens/s. Our bound (fp8, data-parallel attention and experts over
    the 64 chips, mfu 0.6, mbu 0.8) is within 2x."""
    m, c = load_model("DeepSeek-V3", real_db), load_chip("GB200", real_db)
    layout = {
        "tensor_parallel": 1.0,
        "attention_data_parallel": 64.0,
        "pipeline_parallel": 1.0,
        **dict.fromkeys(
            ("replicate_attention", "replicate_shared_experts", "replicate_dense", "replicate_embeddings"), True
        ),
        "redundant_expert_slots": 0.0,
    }
    step = decode_step(m, c, batch=2000, context_tokens=32_000, number_format="fp8", layout=layout, mfu=0.6, mbu=0.8)
    assert 0.5 < step.tokens_per_s / 128_000 < 2.0
