"""econ fleet: the plan of one model on one chip, read-only, the same numbers as the build's fleet_plan."""

from __future__ import annotations

import hashlib
import json

import duckdb
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from econ.cli import main
from tests.analyses.helpers import plan_row, run_cli


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
        "--decode-chips",
        "8",
        "--prefill-chips",
        "8",
        "--number-format",
        "bf16",
        "--format",
        "json",
        "--as-of",
        "2026-11-30",
    )
    assert (code, err) == (0, "")
    plan = json.loads(out)  # one object of named numbers, in the units their names say
    same = plan_row(db, "llama-70b-h100", "on_demand", scenario="calibrated")  # econ fleet's default
    assert plan["chips"] == same["chips"]
    assert plan["by_price_kind"]["on_demand"]["usd_per_day"] == pytest.approx(same["usd_per_day"])
    assert plan["decode_step_time_s"] == pytest.approx(same["decode_step_time_s"])
    assert plan["price_provider"] is None  # no fixture price names its repo or sells a Llama-3.1-70B canonical model
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
        plan = json.loads(out)
        replica = max(plan["decode_replica_chips"], plan["prefill_replica_chips"])
        return plan["chips"], plan["facility_power_w"], plan["by_price_kind"]["scenario"]["usd_per_day"], replica

    c1, p1, usd1, g = chips(1e8)
    ck, pk, usdk, _ = chips(k * 1e8)
    assert k * c1 - 2 * k * g <= ck <= k * c1  # each pool rounds up by less than one replica
    assert pk / p1 == pytest.approx(ck / c1) and usdk / usd1 == pytest.approx(ck / c1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--model", "Llama-3.1-7", "--chip", "H100"],
            "Error: unknown model 'Llama-3.1-7' (no models.model, canonical model or price key of that name with an "
            "architecture) — did you mean Llama-3.1-70B?",
        ),
        (
            ["--model", "DeepSeek-V3", "--chip", "B20"],
            "Error: unknown chip 'B20' (not in hardware) — did you mean B200?",
        ),
        (
            ["--model", "DeepSeek-V3", "--chip", "B200", "--scenario", "nope"],
            "Error: no scenario 'nope' — known scenarios: base, calibrated",
        ),
        (
            ["--model", "gpt-oss-120b", "--chip", "TPU-v5e", "--number-format", "fp8"],
            "Error: TPU-v5e has no fp8 peak — pass --number-format bf16",
        ),
        (
            ["--model", "gpt-oss-120b", "--chip", "B200", "--decode-chips", "0"],
            "Error: --decode-chips must be between 1 and 1e+07 (got 0) — give the chips per replica, or leave it "
            "out to let the layout search choose (10 million chips is ~50x the largest clusters announced)",
        ),
        (
            ["--model", "gpt-oss-120b", "--chip", "B200", "--tokens-per-s", "inf"],
            "Error: --tokens-per-s must be a positive number up to 1e+15 (got inf) — give the traffic in tokens per "
            "second (1e15 tokens/s is ~1e5x all the world's inference traffic estimated today)",
        ),
    ],
)
def test_econ_fleet_errors(db, capsys, args, message):
    code, out, err = run_cli(capsys, "--db", str(db), "--tokens-per-s", "1e6", *args)
    assert (code, out, err) == (1, "", message)


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
    plan = json.loads(out)
    assert (plan["price_provider"], plan["price_model"]) == ("openrouter", "deepseek/deepseek-chat")
    assert set(plan["by_price_kind"]) == {"capacity_block", "on_demand", "scenario"}


@pytest.mark.slow
def test_a_model_whose_repo_no_price_names_is_priced_as_econ_cost_bills_it(real_db, capsys):
    """Meta's models.hf_repo is the base repo (meta-llama/Meta-Llama-3.1-70B), which no price row names: the plan had
    no list price while `econ cost --model Llama-3.1-70B` billed three sellers. The plan now sells at one of the
    sellers the cost command lists (its own resolution of the name), and says how it found it."""
    args = ("--db", str(real_db), "--model", "Llama-3.1-70B", "--as-of", "2026-11-30")
    code, out, err = run_cli(capsys, *args, "--chip", "H100", "--tokens-per-s", "1e6", "--format", "json")
    assert (code, err) == (0, "")
    plan = json.loads(out)
    assert main(["cost", *args, "--input-tokens", "1000", "--output-tokens", "1000", "--format", "json"]) == 0
    sellers = {(r["provider"], r["model"]) for r in json.loads(capsys.readouterr().out) if r["status"] == "billed"}
    assert len(sellers) >= 2 and (plan["price_provider"], plan["price_model"]) in sellers
    assert plan["price_match"] == "matched models.model to the architecture of canonical model llama-3.1-70b"
    assert plan["revenue_usd_per_day"] > 0 and "no list price" not in plan["notes"]


def test_econ_fleet_refuses_a_database_built_by_other_code(tmp_path, capsys):
    bare = tmp_path / "bare.duckdb"
    duckdb.connect(str(bare)).close()
    assert main(["fleet", "--db", str(bare), "--model", "DeepSeek-V3", "--chip", "B200", "--tokens-per-s", "1e6"]) == 1
    assert capsys.readouterr().err == (
        f"Error: {bare} was built by another version of econ — run econ build to rebuild it with this one\n"
    )


def test_econ_fleet_takes_service_targets_and_pool_sizes(db, capsys):
    """--tokens-per-s-per-user picks the cheapest layout meeting it (a faster target costs no less);
    --decode-chips fixes the decode replica; --ttft-s tightens the prefill passes."""

    def plan(*extra):
        base = ["--db", str(db), "--model", "gpt-oss-120b", "--chip", "B200", "--tokens-per-s", "1e8"]
        code, out, err = run_cli(capsys, *base, "--format", "json", *extra)
        assert (code, err) == (0, "")
        return json.loads(out)

    slow, fast = plan("--tokens-per-s-per-user", "20"), plan("--tokens-per-s-per-user", "200")
    assert slow["tokens_per_s_per_user"] >= 20 and fast["tokens_per_s_per_user"] >= 200
    cost = "output_usd_per_mtok"
    assert fast["by_price_kind"]["scenario"][cost] >= slow["by_price_kind"]["scenario"][cost]
    assert plan("--decode-chips", "4")["decode_replica_chips"] == 4
    loose, tight = plan("--ttft-s", "10"), plan("--ttft-s", "0.1")
    assert tight["prefill_ttft_max_s"] <= max(loose["prefill_ttft_max_s"], 0.1 * 1.1)


def test_econ_fleet_table_reads_in_human_units(db, capsys):
    """Issue 16: econ fleet printed 1.32022e+06 USD/day. The table gives each value with its unit and an SI prefix;
    csv keeps the numbers whole, in the same units."""
    args = ["--db", str(db), "--model", "gpt-oss-120b", "--chip", "B200", "--tokens-per-s", "1e8"]
    code, out, _ = run_cli(capsys, *args, "--as-of", "2026-11-30")
    table = dict(line.split("  ", 1) for line in out.splitlines()[2:] if "  " in line)
    table = {k.strip(): v.strip() for k, v in table.items()}
    code, out, _ = run_cli(capsys, *args, "--as-of", "2026-11-30", "--format", "csv")
    import csv
    import io

    raw = {
        r["quantity"]: (float(r["value"]), r["unit"])
        for r in csv.DictReader(io.StringIO(out))
        if r["unit"] not in ("", "date") and r["value"]
    }
    cost, unit = raw["cost (scenario)"]
    assert unit == "USD/day" and cost > 1e3
    number, prefix, shown_unit = table["cost (scenario)"].split(" ")
    scale = {"k": 1e3, "M": 1e6, "G": 1e9}[prefix]
    assert shown_unit == "USD/day" and float(number) * scale == pytest.approx(cost, rel=5e-3)
    assert table["traffic"] == "100 M tokens/s"
    assert "e+" not in "".join(table.values())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--decode-chips", "3"], "Error: cannot plan DeepSeek-V3 on B200: not planned: nothing fits"),
        (["--decode-chips", "10000000"], "Error: the plan needs"),  # 10 M decode chips and a prefill pool
        (["--tokens-per-s", "1e16"], "Error: --tokens-per-s must be a positive number up to 1e+15 (got 1e+16)"),
        (["--tokens-per-s", "1e300"], "Error: --tokens-per-s must be a positive number up to 1e+15 (got 1e+300)"),
        (["--prefill-chips", "1"], "Error: cannot plan DeepSeek-V3 on B200: not planned: no prefill layout fits"),
        (["--decode-layout", "deepseek_prefill_ep32"], "Error: --decode-layout deepseek_prefill_ep32 is a prefill"),
        (["--cached-input-frac", "1"], "Error: --cached-input-frac must be in [0, 1) (got 1)"),
        (["--output-tokens", "100"], "Error: --output-tokens needs --input-tokens"),
    ],
)
def test_issue_27s_fleet_inputs_end_in_a_message(real_db, capsys, args, message):
    """Issue 27: --decode-chips 3 and 10000000 were tracebacks, --tokens-per-s 1e16 was planned, --prefill-chips 1 for a
    model whose weights do not fit one chip was accepted."""
    base = ["--db", str(real_db), "--model", "DeepSeek-V3", "--chip", "B200", "--number-format", "fp8"]
    tokens = [] if any(a == "--tokens-per-s" for a in args) else ["--tokens-per-s", "1e7"]
    code, out, err = run_cli(capsys, *base, *tokens, *args)
    assert code == 1 and out == "" and err.startswith(message), err


def test_a_moe_layout_for_a_dense_model_is_a_message(real_db, capsys):
    """--decode-layout deepseek_decode_ep144 (applies_to moe) for Llama-3.1-70B was an IndexError traceback."""
    for flag, layout in (("--decode-layout", "deepseek_decode_ep144"), ("--prefill-layout", "deepseek_prefill_ep32")):
        code, out, err = run_cli(
            capsys, "--db", str(real_db), "--model", "Llama-3.1-70B", "--chip", "H100", "--tokens-per-s", "1e6",
            flag, layout,
        )  # fmt: skip
        assert (code, out) == (1, "") and err.startswith(
            f"Error: {flag} {layout} is for MoE models and Llama-3.1-70B is dense — pick a layout"
        ), err


def test_any_replica_size_is_planned(real_db, capsys):
    base = [
        "--db",
        str(real_db),
        "--model",
        "DeepSeek-V3",
        "--chip",
        "H800",
        "--number-format",
        "fp8",
        "--tokens-per-s",
        "1e7",
        "--format",
        "json",
    ]
    code, out, err = run_cli(capsys, *base, "--decode-chips", "144")
    assert (code, err) == (0, "")
    assert json.loads(out)["decode_replica_chips"] == 144


DEEPSEEK = [
    "--model",
    "DeepSeek-V3",
    "--chip",
    "H800",
    "--number-format",
    "fp8",
    "--tokens-per-s",
    "8.98e6",  # (608 B input + 168 B output tokens) / 86,400 s
    "--input-tokens",
    "4384",
    "--output-tokens",
    "1211",  # 608:168 input:output; 4,384 + 1,211/2 = 4,989 of context
    "--cached-input-frac",
    "0.563",  # 56.3% of input tokens hit the on-disk KV cache
    "--decode-layout",
    "deepseek_decode_ep144",
    "--prefill-layout",
    "deepseek_prefill_ep32",
    "--speculative-tokens",
    "1",
    "--acceptance",
    "0.85",  # one MTP module, 85-90% accepted (V3 report §5.4.3)
    "--tokens-per-s-per-user",
    "20",  # "average output speed 20-22 tps"
    "--usd-per-chip-hour",
    "2",  # the post's own price
]


def test_deepseeks_production_system_is_one_command_within_1_3x(real_db, capsys):
    """DeepSeek's Day-6 post (2025-03-01): 226.75 nodes of 8 H800 on average over a day, $87,072/day at $2/GPU-hour.

    The serving issue asks 1.3x. The plan is 1.06x (1,920 GPUs: 24 prefill units of 32, 8 decode units of 144):
    its decode units hold 32 redundant experts, so the step takes uniform routing's busiest expert rank (EPLB)
    instead of the router's skew the calibration fits to unbalanced engines. Its decode runs 92 sequences a GPU at
    20.2 tokens/s per user, 1.39x under the 128 of DeepSeek's published profile (the calibration's attention share,
    weakly identified, moved it between 92 and 106 as the fit grew; MLA's own share, 0.38 of peak, since 2026-12-08):
    held to 1.4x."""
    code, out, err = run_cli(capsys, "--db", str(real_db), *DEEPSEEK, "--format", "json", "--as-of", "2026-11-30")
    assert (code, err) == (0, "")
    plan = json.loads(out)
    assert 1814 / 1.3 <= plan["chips"] <= 1814 * 1.3
    assert 87072 / 1.3 <= plan["by_price_kind"]["scenario"]["usd_per_day"] <= 87072 * 1.3
    per_gpu = plan["decode_batch_seqs"] / plan["decode_replica_chips"]
    assert 128 / 1.4 <= per_gpu <= 128 * 1.4  # DeepSeek's profile-data decode batch (LMSYS's table quotes it)
    assert plan["tokens_per_s_per_user"] >= 20


def test_a_named_layout_beside_another_replica_size_is_refused_not_overridden(real_db, capsys):
    """--decode-layout deepseek_decode_ep144 --decode-chips 72 planned EP144 and dropped the 72 without a word."""
    base = ["--db", str(real_db), "--model", "DeepSeek-V3", "--chip", "H800", "--number-format", "fp8"]
    for args, message in (
        (
            ["--decode-layout", "deepseek_decode_ep144", "--decode-chips", "72"],
            "Error: --decode-layout deepseek_decode_ep144 sets its replica (144 chips), not the stated --decode-chips",
        ),
        (
            ["--prefill-layout", "deepseek_prefill_ep32", "--prefill-chips", "16"],
            "Error: --prefill-layout deepseek_prefill_ep32 sets its replica (32 chips), not the stated",
        ),
    ):
        code, out, err = run_cli(capsys, *base, "--tokens-per-s", "1e7", *args)
        assert code == 1 and out == "" and err.startswith(message), err
    code, out, err = run_cli(
        capsys, *base, "--tokens-per-s", "1e7", "--decode-layout", "deepseek_decode_ep144", "--decode-chips", "144",
        "--prefill-chips", "16", "--format", "json",
    )  # fmt: skip
    assert (code, err) == (0, "")
    plan = json.loads(out)
    assert (plan["decode_replica_chips"], plan["prefill_replica_chips"]) == (144, 16)


@pytest.mark.parametrize(("model", "distance"), [("gpt-oss-120b", "seen"), ("Qwen3.5-27B", "new_model")])
def test_a_plan_says_how_far_off_its_decode_step_and_prefill_may_be(real_db, capsys, model, distance):
    """A plan's chips rest on the calibrated step times: it prints the held-out error factors of its pools' cells of
    calibration_bands (read here with SQL), at its distance from the calibration runs, for the engines' average (no
    --engine) or the engine it names, of its chip and model where the bands have a cell that narrow; a roofline plan
    is a bound and prints none."""
    args = ("--db", str(real_db), "--model", model, "--chip", "H100", "--tokens-per-s", "1e6", "--format", "json")
    for stated, engine in ((False, ()), (True, ("--engine", "vllm"))):
        code, out, _ = run_cli(capsys, *args, *engine)
        plan = json.loads(out)
        assert code == 0 and plan["error_distance"] == distance and plan["error_engine_stated"] is stated
        code, text, _ = run_cli(capsys, *args[:-2], *engine)
        assert code == 0 and ("predicted with the engine average" in text) is not stated
        with duckdb.connect(str(real_db), read_only=True) as con:
            cells = (("decode_step", "tpot", "disagg_decode"), ("prefill_ttft", "ttft", "disagg_prefill"))
            for pool, target, regime in cells:
                p50, p90, covered, *cell = con.execute(
                    "select error_factor_p50, error_factor_p90, coverage_p90_frac, engine, chip, arch_model "
                    "from calibration_bands where target = ? and regime = ? and distance = ? and engine_stated = ? "
                    "and engine in ('', ?) and chip in ('', 'H100') and arch_model in ('', ?) "
                    "order by engine desc, chip desc, arch_model desc limit 1",
                    [target, regime, distance, stated, "vllm" if stated else "", model],
                ).fetchall()[0]
                assert (plan[f"{pool}_error_factor_p50"], plan[f"{pool}_error_factor_p90"]) == (p50, p90)
                assert plan[f"{pool}_band_coverage_frac"] == covered and 1 < p50 < p90
                said = plan[f"{pool}_error_band_of"]  # whose runs: the cell's engine, chip and model, or every
                assert all(v in said for v in cell) and (any(cell) or said.startswith("runs of every"))
    code, out, _ = run_cli(capsys, *args[:-2], "--scenario", "base")
    assert code == 0 and "error factor" not in out


def test_a_plan_whose_traffic_lies_beyond_the_measured_lengths_or_speculation_says_so(real_db, capsys):
    """The error factors were measured on runs with 128-15,000 prompt and 100-8,192 output tokens (calibration_lengths).
    The scenario's prompt mix puts 15% + 4% + 1% = 20% of requests at 16k, 64k and 128k tokens (data/scenarios.csv's
    context_share_* rows): the plan says so; a plan of 2,000-token prompts does not, and one of 50,000-token outputs
    names them; a roofline plan, which claims no error factor, says nothing of the runs. No run states a draft length
    (InferenceX's MTP launches state none): a plan stating --speculative-tokens says its band was not measured on it."""
    args = ("--db", str(real_db), "--model", "Llama-3.1-70B", "--chip", "H100", "--tokens-per-s", "1e6")
    tail = "of the measured runs: the error factors are measured within that range only"

    def notes(*more, on=args):
        code, out, err = run_cli(capsys, *on, *more, "--format", "json")
        assert code == 0, err
        return json.loads(out)["notes"]

    assert f"20% of requests have prompts outside the 128-15,000 tokens {tail}" in notes()
    assert tail not in notes("--input-tokens", "2000", "--output-tokens", "500")
    said = notes("--input-tokens", "2000", "--output-tokens", "50000")
    assert f"the mean output of 50,000 tokens is outside the 100-8,192 {tail}" in said
    assert tail not in notes("--scenario", "base")
    spoken = "2 draft tokens per step, timed as stated: no measured run states one"  # nor does inferencex_train.csv
    assert spoken in notes("--speculative-tokens", "2", "--acceptance", "0.8") and "draft tokens" not in notes()
    # no run is on AMD's chips: a plan on one says its band is NVIDIA's chips held out (and a roofline plan nothing)
    amd = "the calibration measured no run on AMD's chips: the error band is that of NVIDIA chips held out, not AMD's"
    mi355x = tuple("MI355X" if a == "H100" else a for a in args)
    assert amd in notes(on=mi355x) and amd not in notes() and amd not in notes("--scenario", "base", on=mi355x)
    # no measured model has compressed attention: a plan of DeepSeek-V4 says its band is other architectures'
    v4 = tuple("DeepSeek-V4-Flash" if a == "Llama-3.1-70B" else a for a in args)
    kind = "the calibration measured no model with compressed attention or a sparse-attention indexer"
    assert kind in notes(on=v4) and "the calibration measured no model" not in notes()
    # its engines run its sparse attention on an FP8 cache only: so does the plan, and says so, unless told otherwise
    fp8 = "KV cache fp8: the engines' format for a sparse-attention model (the scenario's bf16 is not theirs)"
    assert fp8 in notes(on=v4) and fp8 not in notes("--kv-cache-format", "bf16", on=v4) and fp8 not in notes()


STATED = ("--model", "DeepSeek-V3", "--chip", "H800", "--number-format", "fp8", "--tokens-per-s", "8.98e6")


def test_a_pools_degrees_are_planned_as_econ_predict_takes_them(real_db, capsys):
    """Issue 23: econ fleet takes each pool's tp, dp, pp (and ep) as econ predict does; the plan is of exactly
    those layouts (DeepSeek's DP144 decode and DP32 prefill units stated by degree, not by name)."""
    code, out, err = run_cli(
        capsys, "--db", str(real_db), *STATED, "--format", "json",
        "--decode-tp", "1", "--decode-dp", "144", "--decode-pp", "1",
        "--prefill-tp", "1", "--prefill-dp", "32", "--prefill-pp", "1",
    )  # fmt: skip
    assert code == 0, err
    plan = json.loads(out)
    assert (plan["decode_replica_chips"], plan["decode_tensor_parallel"], plan["decode_attention_data_parallel"]) == (
        144,
        1,
        144,
    )
    assert (plan["prefill_replica_chips"], plan["prefill_attention_data_parallel"]) == (32, 32)
    code, out, err = run_cli(capsys, "--db", str(real_db), *STATED, "--format", "json", "--decode-tp", "8")
    assert code == 0, err
    assert json.loads(out)["decode_tensor_parallel"] == 8  # one degree stated: the search keeps it


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--decode-tp", "3"], "Error: no decode layout has tp 3"),
        (["--decode-etp", "2"], "Error: --decode-etp 2: econ fleet spreads each expert whole"),
        (["--decode-tp", "1", "--decode-dp", "144"], "Error: --decode-tp 1 x --decode-dp 144 leaves the pipeline"),
        (["--decode-layout", "deepseek_decode_ep144", "--decode-dp", "144"], "Error: --decode-layout deepseek_decode"),
        (["--input-tokens-mix", "1000:0.6,8000:0.3"], "Error: --input-tokens-mix: the shares add up to 0.9"),
        (["--input-tokens", "100", "--input-tokens-mix", "1000:1"], "Error: --input-tokens and --input-tokens-mix"),
        (["--output-tokens-mix", "500:0.5,1500:0.5"], "Error: --output-tokens-mix needs --input-tokens"),
        (["--input-tokens", "100", "--output-tokens-mix", "500:0.5,1500:0.4"], "Error: --output-tokens-mix: the"),
        (["--input-tokens", "1", "--output-tokens", "9", "--output-tokens-mix", "9:1"], "Error: --output-tokens and"),
    ],
)
def test_stated_degrees_and_mixes_that_cannot_be_planned_say_why(real_db, capsys, args, message):
    code, out, err = run_cli(capsys, "--db", str(real_db), *STATED, *args)
    assert code == 1 and out == "" and err.startswith(message), err


def test_a_mix_of_prompt_lengths_is_planned_at_its_mean(real_db, capsys):
    """60% of requests at 1,000 prompt tokens, 30% at 8,000 and 10% at 32,000: a mean prompt of 6,200 tokens (by
    hand), 500 output tokens each."""
    mix = ("--input-tokens-mix", "1000:0.6,8000:0.3,32000:0.1", "--output-tokens", "500", "--format", "json")
    code, out, err = run_cli(capsys, "--db", str(real_db), *STATED, *mix)
    assert code == 0, err
    plan = json.loads(out)
    assert plan["mean_prompt_tokens"] == pytest.approx(6200.0) and plan["output_tokens_per_request"] == (
        pytest.approx(500.0)
    )


def test_a_mix_of_output_lengths_weighs_each_by_its_decoding_time(real_db, capsys):
    """Half the requests writing 500 tokens and half 1,500: the same 1,000 tokens a request as one length of 1,000,
    but a decode batch holds the long ones three times as long, so its sequences attend to 2,000 + 1,250/2 tokens
    (by hand: E[O²]/E[O] = (0.5·500² + 0.5·1,500²)/1,000), not 2,000 + 500; the plan says so and holds more KV cache
    (no fewer chips)."""
    lengths = ("--input-tokens", "2000", "--format", "json")
    code, out, err = run_cli(capsys, "--db", str(real_db), *STATED, *lengths, "--output-tokens", "1000")
    assert code == 0, err
    one = json.loads(out)
    code, out, err = run_cli(capsys, "--db", str(real_db), *STATED, *lengths, "--output-tokens-mix", "500:0.5,1500:0.5")
    assert code == 0, err
    mixed = json.loads(out)
    assert mixed["output_tokens_per_request"] == pytest.approx(one["output_tokens_per_request"]) == pytest.approx(1000)
    assert one["decode_context_tokens"] == pytest.approx(2500.0)
    assert mixed["decode_context_tokens"] == pytest.approx(2625.0)
    assert "E[O²]/E[O]" in mixed["notes"] and "E[O²]/E[O]" not in (one["notes"] or "")
    assert mixed["chips"] >= one["chips"]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    degrees=st.lists(
        st.tuples(
            st.sampled_from(["decode", "prefill"]),
            st.sampled_from(["tp", "dp", "pp", "ep", "etp", "chips"]),
            st.sampled_from(["0", "1", "2", "3", "8", "32", "144", "1e9"]),
        ),
        max_size=4,
    ),
    dense=st.booleans(),
)
@example(
    degrees=[("decode", "ep", "0")], dense=False
)  # found exploring: a ZeroDivisionError, now refused as predict does
def test_no_stated_degree_ends_in_a_traceback(real_db, capsys, degrees, dense):
    """Any mix of stated degrees is planned or refused with a message (exit 1), never a traceback or a NaN."""
    model = ("--model", "Llama-3.1-70B", "--chip", "H100") if dense else ("--model", "DeepSeek-V3", "--chip", "H800")
    flags = [
        x
        for pool, name, value in dict(((p, n), (p, n, v)) for p, n, v in degrees).values()
        for x in (f"--{pool}-{name}", value)
    ]
    code, out, err = run_cli(capsys, "--db", str(real_db), *model, "--tokens-per-s", "1e6", "--format", "json", *flags)
    assert code in (0, 1), err
    if code == 0:
        assert "nan" not in out.lower().replace("nanos", "")
    else:
        assert out == "" and err.startswith("Error: "), err


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    outputs=st.lists(
        st.tuples(st.sampled_from([0.5, 1.0, 64.0, 4096.0, 1e6, 1e9]), st.sampled_from([0.0, 0.2, 0.5, 1.0])),
        min_size=1,
        max_size=3,
    )
)
def test_no_output_length_mix_ends_in_a_traceback(real_db, capsys, outputs):
    """Any mix of output lengths and shares is planned or refused with a message (exit 1), never a traceback or NaN."""
    mix = ",".join(f"{tokens:g}:{share:g}" for tokens, share in outputs)
    code, out, err = run_cli(
        capsys, "--db", str(real_db), *STATED, "--input-tokens", "2000", "--output-tokens-mix", mix, "--format", "json"
    )
    assert code in (0, 1), err
    if code == 0:
        assert "nan" not in out.lower().replace("nanos", "")
    else:
        assert out == "" and err.startswith("Error: "), err


def test_a_plan_for_one_engine_uses_that_engines_calibrated_values(real_db, capsys):
    """--engine plans with the engine's values: a parameter only engines move (the per-sequence cost) is the engine's
    row of calibration_parameters; the plan says which engine; a roofline scenario has none to take."""
    import polars as pl

    from econ.analyses.calibration_scenario import all_scenarios, for_engine
    from tests.analyses.helpers import q

    params = q(real_db, "select * from calibration_parameters")
    with duckdb.connect(str(real_db), read_only=True) as con:
        base = all_scenarios(con)["base"]
    for engine in ("trtllm", "vllm"):
        s = for_engine(base, params, engine)
        row = params.filter((pl.col("parameter") == "sequence_overhead_s") & (pl.col("group") == engine))
        assert s.sequence_overhead_s == pytest.approx(row["estimate"][0], rel=1e-9)
    from econ.errors import EconError

    with pytest.raises(EconError, match="no values for engine 'tgi'"):
        for_engine(base, params, "tgi")
    # the engine average is an average of the engines the runs measured: each efficiency within their range (the
    # shared value alone lay above every engine's GEMM and expert efficiency)
    with duckdb.connect(str(real_db), read_only=True) as con:
        average = all_scenarios(con)["calibrated"]
    engines = [for_engine(base, params, e) for e in ("sglang", "trtllm", "vllm")]
    for field in ("prefill_mfu_frac", "expert_mfu_frac", "decode_mbu_frac", "layer_overhead_s"):
        values = [getattr(e, field) for e in engines]
        assert min(values) <= getattr(average, field) <= max(values), field
    code, out, err = run_cli(capsys, "--db", str(real_db), *STATED, "--engine", "trtllm", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["scenario"] == "calibrated (trtllm)"
    code, out, err = run_cli(capsys, "--db", str(real_db), *STATED, "--engine", "vllm", "--scenario", "base")
    assert code == 1 and err.startswith("Error: --engine vllm: scenario base has no engine values"), err


def test_a_stated_expert_balancer_plans_fewer_decode_chips_and_says_so(real_db, capsys):
    """econ fleet --expert-balanced times the searched DEP32 decode pool's experts as EPLB places them: fewer
    chips for the same traffic, never more, and the plan's notes say so."""
    base = ["--db", str(real_db), "--model", "DeepSeek-V3", "--chip", "H200", "--tokens-per-s", "1e7"]
    plans = []
    for extra in ([], ["--expert-balanced"]):
        code, out, err = run_cli(capsys, *base, "--decode-chips", "32", *extra, "--format", "json")
        assert (code, err) == (0, "")
        plans.append(json.loads(out))
    skewed, balanced = plans
    assert balanced["decode_step_time_s"] < skewed["decode_step_time_s"] and balanced["chips"] < skewed["chips"]
    assert "--expert-balanced" in balanced["notes"] and "--expert-balanced" not in (skewed["notes"] or "")
