"""A disaggregated run without worker counts takes the pools InferenceX launched it with, only when one set fits."""

from __future__ import annotations

import csv
import datetime as dt
import importlib.util
import subprocess
import sys

import duckdb
import polars as pl
import pytest

from econ.analyses import calibration_tables as ct
from econ.analyses import launch_layouts as ll
from econ.analyses import serving_runs as sr
from econ.analyses.timed_models import MODELS_SQL
from tests.conftest import REPO


@pytest.fixture(scope="module")
def tables(real_db):
    with duckdb.connect(str(real_db), read_only=True) as con:
        return (
            con.sql(MODELS_SQL).pl(),
            con.sql("select * from hardware").pl(),
            con.sql("select * from inferencex_launches").pl(),
            con.sql("select * from inferencex_node_launches").pl(),
        )


LAUNCH = {
    "model_prefix": "dsr1",
    "model_path": "deepseek-ai/DeepSeek-R1",
    "system": "gb200",
    "engine": "trtllm",
    "precision": "fp4",
    "isl": 1024,
    "osl": 1024,
    "speculative_decoding": "none",
    "concurrency": 4301,
    "prefill_workers": 2,
    "prefill_tp": 4,
    "prefill_ep": 4,
    "prefill_dp_attention": 1,
    "decode_workers": 1,
    "decode_tp": 32,
    "decode_ep": 32,
    "decode_dp_attention": 1,
    "recipe": "ctx2_gen1_dep32_batch128_eplb0_mtp0.yaml",
    "decode_max_batch": 128,
    "draft_tokens": 0,
    "first_date": dt.date(2026, 1, 30),
    "last_date": dt.date(2026, 3, 27),
    "first_commit": "a" * 40,
    "last_commit": "b" * 40,
    "config_key": "dsr1-fp4-gb200-dynamo-trt",
}
ROW = {
    "id": "r1",
    "silicon_data_source": "source_file=x.csv; silicon_concurrency=4301; measured=2026-03-23T13:00:07Z",
    "backend": "trtllm",
    "model_path": "nvidia/DeepSeek-R1-0528-FP4-v2",
    "system": "gb200",
    "precision": "fp4",
    "mode": "disagg",
    "isl": 1024,
    "osl": 1024,
    "gemm_quant_mode": "nvfp4",
    "moe_quant_mode": "nvfp4",
    **{f"prefill_{k}": v for k, v in (("tp_size", 4), ("pp_size", 1), ("attention_dp_size", 1), ("moe_tp_size", 1))},
    "prefill_moe_ep_size": 4,
    # the file's defect: a dep32 decode pool stored as tp 32 with the prefill's expert degree
    **{f"decode_{k}": v for k, v in (("tp_size", 32), ("pp_size", 1), ("attention_dp_size", 1), ("moe_tp_size", 8))},
    "decode_moe_ep_size": 4,
}


def read(tables, launches, **changes):
    models, hardware, *_ = tables
    frame = pl.DataFrame([{**ROW, **changes}])
    return sr.configurations(frame, models, hardware, pl.DataFrame(launches) if launches else None).row(0, named=True)


def test_a_run_that_one_launch_fits_takes_its_pools_and_says_which(tables):
    r = read(tables, [LAUNCH])
    assert not r["workers_assumed"]
    assert (r["decode_workers"], r["decode_tensor_parallel"], r["decode_attention_data_parallel"]) == (1, 1, 32)
    assert r["decode_expert_parallel"] == 32 and r["decode_expert_tensor_parallel"] == 1
    assert (r["prefill_workers"], r["prefill_tensor_parallel"], r["prefill_attention_data_parallel"]) == (2, 1, 4)
    assert "InferenceX's launch dsr1-fp4-gb200-dynamo-trt (2 prefill x 4 chips, 1 decode x 32 chips" in r["notes"]


STATED = {  # the run as the database dump stores it: both pools and their workers written out
    "prefill_num_workers": 2,
    "prefill_tp_size": 1,
    "prefill_attention_dp_size": 4,
    "prefill_moe_tp_size": 1,
    "prefill_moe_ep_size": 4,
    "decode_num_workers": 1,
    "decode_tp_size": 1,
    "decode_attention_dp_size": 32,
    "decode_moe_tp_size": 1,
    "decode_moe_ep_size": 32,
}


def test_a_run_that_states_its_launchs_pools_reads_the_launch_as_its_unstated_copy_does(tables):
    """A run whose file writes out the pools its launch states keeps them and takes what only the launch says: the
    recipe's decode batch limit (128 a rank x 32 ranks), its balancer and MTP, so it reads as the same run stored
    without workers does. A run stating other pools takes none of it."""
    unstated, stated = read(tables, [LAUNCH]), read(tables, [LAUNCH], **STATED)
    assert stated["launch_max_running"] == unstated["launch_max_running"] == 4096
    assert not stated["workers_assumed"]
    keys = ("prefill_workers", "decode_workers", "decode_attention_data_parallel", "decode_expert_parallel")
    assert [stated[k] for k in keys] == [unstated[k] for k in keys] == [2, 1, 32, 32]
    assert "the stated pools are InferenceX's launch dsr1-fp4-gb200-dynamo-trt" in stated["notes"]
    assert read(tables, [{**LAUNCH, "speculative_decoding": "mtp"}], **STATED)["speculation_launched"]
    other = read(tables, [LAUNCH], **{**STATED, "decode_num_workers": 2})
    assert other["launch_max_running"] is None and not other["speculation_launched"]
    assert "InferenceX's launch" not in (other["notes"] or "")


def test_a_run_stored_under_another_model_of_the_same_architecture_takes_its_launch(tables):
    """InferenceX's database dump stores DeepSeek-R1 runs (ids ``dsr1_…``) as ``deepseek-ai/DeepSeek-V3``; the
    launches name ``dsr1``. The two share one architecture (``model_derived.architecture_group``), and a launch is
    matched by architecture, so such a row reads as its launch says; a model of another architecture does not."""
    v3 = read(tables, [LAUNCH], model_path="deepseek-ai/DeepSeek-V3")
    assert v3["arch_model"] == "DeepSeek-V3" and not v3["workers_assumed"]
    assert (v3["decode_workers"], v3["decode_attention_data_parallel"]) == (1, 32)
    other = read(tables, [{**LAUNCH, "model_path": "moonshotai/Kimi-K2-Instruct"}])
    assert other["workers_assumed"]


@pytest.mark.parametrize(
    ("launches", "speculating"),
    [
        ([{**LAUNCH, "speculative_decoding": "mtp"}], True),
        (
            [{**LAUNCH, "speculative_decoding": "mtp"}, {**LAUNCH, "decode_workers": 2, "speculative_decoding": "mtp"}],
            True,
        ),
        ([{**LAUNCH, "speculative_decoding": "mtp"}, {**LAUNCH, "prefill_workers": 3}], False),  # MTP or not: unknown
        ([LAUNCH], False),
    ],
)
def test_a_run_every_matching_launch_of_which_speculates_is_marked_so(tables, launches, speculating):
    r = read(tables, launches)
    assert r["speculation_launched"] is speculating
    assert ("launched with MTP" in (r["notes"] or "")) is speculating
    assert read(tables, launches, nextn=2, nextn_accept_rate=0.7)["speculation_launched"] is False  # stated: physics


NODE = {
    **{k: LAUNCH[k] for k in ("model_prefix", "model_path", "precision", "isl", "osl", "first_date", "last_date")},
    **{k: LAUNCH[k] for k in ("first_commit", "last_commit")},
    "system": "b200",
    "engine": "trtllm",
    "speculative_decoding": "mtp",
    "image": "nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post3",
    "tp": 8,
    "ep": 1,
    "dp_attention": 0,
    "concurrency_start": 4,
    "concurrency_end": 128,
    "config_key": "dsr1-fp4-b200-trt-mtp",
}
AGG = {
    **{
        k: ROW[k]
        for k in ("id", "backend", "model_path", "precision", "isl", "osl", "gemm_quant_mode", "moe_quant_mode")
    },
    "silicon_data_source": "silicon_concurrency=64; measured=2026-02-06T00:00:00Z; "
    "image=nvcr.io/nvidia/tensorrt-llm/release:1.2.0rc6.post3",
    "system": "b200_sxm",
    "mode": "agg",
    "batch_size": 64,
    "tp_size": 8,
    "pp_size": 1,
    "attention_dp_size": 1,
    "moe_tp_size": 8,
    "moe_ep_size": 1,
}


@pytest.mark.parametrize(
    ("nodes", "changes", "speculating"),
    [
        ([NODE], {}, True),  # the image spelled with / matches the config's #
        ([NODE, {**NODE, "speculative_decoding": "none"}], {}, False),  # both ran that image: unknown
        ([NODE, {**NODE, "speculative_decoding": "none", "image": "release:1.2.0rc6.post2"}], {}, True),
        (
            [NODE],
            {"silicon_data_source": "silicon_concurrency=256; measured=2026-02-06; image=" + NODE["image"]},
            False,
        ),
        ([NODE], {"silicon_data_source": "silicon_concurrency=64; measured=2026-02-06; image=other:1"}, False),
        (
            [NODE],
            {"silicon_data_source": "db-dump/x; silicon_concurrency=64; measured=2026-02-06; " + NODE["image"]},
            True,
        ),
    ],
)
def test_an_aggregated_run_is_marked_speculating_by_the_image_and_sweep_it_ran(tables, nodes, changes, speculating):
    models, hardware, *_ = tables
    frame = pl.DataFrame([{**AGG, **changes}])
    r = sr.configurations(frame, models, hardware, None, pl.DataFrame(nodes)).row(0, named=True)
    assert r["speculation_launched"] is speculating


@pytest.mark.parametrize(
    ("launches", "limit"),
    [
        ([LAUNCH], 128 * 32),  # 128 per attention rank, 32 ranks
        ([{**LAUNCH, "decode_dp_attention": 0, "decode_ep": 32}], 128),  # one rank: the worker's limit
        ([{**LAUNCH, "decode_max_batch": None, "recipe": ""}], None),
        ([LAUNCH, {**LAUNCH, "decode_max_batch": 64, "speculative_decoding": "mtp"}], None),  # two limits: unknown
    ],
)
def test_a_matched_run_runs_at_most_its_recipes_decode_batch(tables, launches, limit):
    assert read(tables, launches)["launch_max_running"] == limit


@pytest.mark.parametrize(
    ("recipes", "balanced"),
    [
        (["ctx2_gen1_dep32_batch128_eplb288_mtp0.yaml"], 1.0),  # 32 redundant slots
        (["ctx2_gen1_dep32_batch128_eplb256_mtp0.yaml"], 1.0),  # placed by routing statistics, no copies
        (["ctx2_gen1_dep32_batch128_eplb0_mtp0.yaml"], 0.0),
        (["ctx2_gen1_dep32_batch128_mtp0.yaml"], 0.0),  # not stated
        (["ctx2_gen1_dep32_batch128_eplb288_mtp0.yaml", "ctx2_gen1_dep32_batch128_eplb0_mtp1.yaml"], 0.0),  # unknown
    ],
)
def test_a_run_every_matching_launch_of_which_balances_its_experts_is_timed_so(tables, recipes, balanced):
    launches = [{**LAUNCH, "recipe": r, "speculative_decoding": "mtp" if "mtp1" in r else "none"} for r in recipes]
    r = read(tables, launches)
    assert r[ll.BALANCED] == balanced
    assert ("placed by the launch's load balancer" in (r["notes"] or "")) is (balanced > 0)


def test_the_dump_may_state_the_concurrency_times_the_decode_workers(tables):
    launch = {**LAUNCH, "concurrency": 1075, "decode_workers": 4, "decode_tp": 8, "decode_ep": 8}
    r = read(tables, [launch], silicon_data_source="silicon_concurrency=4300; measured=2026-03-23T13:00:07Z")
    assert r["decode_workers"] == 4 and r["decode_attention_data_parallel"] == 8


@pytest.mark.parametrize(
    ("launches", "changes"),
    [
        ([LAUNCH], {"silicon_data_source": "silicon_concurrency=4301; measured=2026-04-05T00:00:00Z"}),  # too late
        ([LAUNCH], {"silicon_data_source": "silicon_concurrency=4300; measured=2026-03-23T00:00:00Z"}),
        ([LAUNCH], {"isl": 8192}),
        ([LAUNCH], {"backend": "sglang"}),
        ([LAUNCH], {"prefill_num_workers": 3, "decode_num_workers": 1}),  # the run states its own
        ([{**LAUNCH, "prefill_tp": 1}], {}),  # attention data parallel over one chip: a placeholder
        ([{**LAUNCH, "decode_ep": 64}], {}),  # more expert ranks than chips: a placeholder
        (None, {}),
    ],
)
def test_no_launch_leaves_the_run_as_stored(tables, launches, changes):
    r = read(tables, launches, **changes)
    assert "InferenceX's launch" not in (r["notes"] or "")
    assert r["decode_tensor_parallel"] != 1 or r["decode_attention_data_parallel"] != 32


def test_of_several_sets_of_launched_pools_a_run_takes_the_median_in_chips_and_stays_unstated(tables):
    """InferenceX sweeps several systems at one concurrency: a row that states no workers takes, of the launches whose
    chips a worker its stored layout states (where any are), the set of median size (here 1, 2 and 3 decode workers
    of 32 chips beside 2 prefill workers of 4: 40, 72 and 104 chips), whichever order the launches come in, and its
    regime stays one whose workers are not stated."""
    launches = [
        {**LAUNCH, "decode_workers": w, "speculative_decoding": s} for w, s in ((3, "none"), (1, "mtp"), (2, "none"))
    ]
    for order in (launches, launches[::-1]):
        r = read(tables, order)
        assert (r["decode_workers"], r["decode_attention_data_parallel"], r["prefill_workers"]) == (2, 32, 2)
        assert r["launch_choices"] == 3 and not r["workers_assumed"]
        assert "1 decode x 32 chips" not in r["notes"] and "2 decode x 32 chips" in r["notes"]
        assert "the median in chips of the 3 sets of pools its matching launches state" in r["notes"]
        assert pl.DataFrame([r]).select(ct.workers_unstated()).item()
    two = [LAUNCH, {**LAUNCH, "decode_tp": 16, "decode_ep": 16}]
    r = read(tables, two)  # the stored layout's 32 decode chips a worker settle it
    assert (r["decode_workers"], r["decode_attention_data_parallel"], r["launch_choices"]) == (1, 32, 1)
    r = read(tables, two, decode_tp_size=8, decode_moe_tp_size=2)  # neither: of two, the smaller (24 chips)
    assert (r["decode_workers"], r["decode_attention_data_parallel"], r["launch_choices"]) == (1, 16, 2)
    one = read(tables, [LAUNCH])
    assert one["launch_choices"] == 1 and not pl.DataFrame([one]).select(ct.workers_unstated()).item()


@pytest.mark.parametrize(("days", "found"), [(ll.SLACK_DAYS, True), (ll.SLACK_DAYS + 1, False)])
def test_a_run_measured_days_after_the_last_version_that_held_the_launch(tables, days, found):
    measured = LAUNCH["last_date"] + dt.timedelta(days=days)
    r = read(tables, [LAUNCH], silicon_data_source=f"silicon_concurrency=4301; measured={measured}T00:00:00Z")
    assert ("InferenceX's launch" in (r["notes"] or "")) is found


def test_the_same_launch_table_whichever_order_its_rows_come_in(tables):
    launches = [LAUNCH, {**LAUNCH, "concurrency": 2048, "decode_workers": 2}]
    a = read(tables, launches)
    b = read(tables, launches[::-1])
    assert a == b


def test_the_measured_files_runs_without_worker_counts_mostly_find_their_launch(tables):
    """730 of the 793 disaggregated rows without worker counts match a launch: 483 one set of launched pools (of those
    whose chips a worker the stored layout states, where any are), 247 several (read as the median); each matched row
    keeps its model, chip, engine and lengths, and every GB200 TensorRT-LLM row stored as tp 32 with expert degree 4
    (the defect) that matches is read with 32 attention ranks. 141 rows that state their pools state a launch's. 106
    aggregated and 157 disaggregated runs were launched speculating (MTP)."""
    models, hardware, launches, nodes = tables
    raw = pl.read_csv(REPO / "data" / "inferencex_train.csv", infer_schema_length=0)
    configs = sr.configurations(raw, models, hardware, launches, nodes)
    speculating = configs.filter("speculation_launched")
    assert speculating["mode"].value_counts().sort("mode").rows() == [("agg", 106), ("disagg", 157)]
    matched = configs.filter(pl.col("notes").str.contains("not stated: InferenceX's launch"))
    assert configs.filter(pl.col("notes").str.contains("the stated pools are InferenceX's launch")).height == 141
    unstated = raw.filter((pl.col("mode") == "disagg") & pl.col("decode_num_workers").is_null()).height
    assert unstated == 793 and matched.height == 730
    assert matched.group_by("launch_choices").len().filter(pl.col("launch_choices") > 1)["len"].sum() == 247
    tp32 = matched.join(
        raw.filter((pl.col("decode_tp_size") == "32") & (pl.col("decode_moe_ep_size") == "4")).select(
            pl.col("id").alias("run_id")
        ),
        on="run_id",
    )
    assert tp32.height > 0 and (tp32["decode_attention_data_parallel"] * tp32["decode_tensor_parallel"] == 32).all()


def test_the_launch_tables_are_what_the_script_writes_from_a_config_history(tmp_path):
    """scripts/inferencex_launches.py on a three-commit history: one row per launch with its first and last commit, the
    same bytes twice; a version that does not parse and a pool of 0 workers launch nothing."""
    pytest.importorskip("yaml")
    spec = importlib.util.spec_from_file_location("launches_script", REPO / "scripts" / "inferencex_launches.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    config = """
dsr1-fp4-gb200-dynamo-trt:
  model-prefix: dsr1
  runner: gb200
  precision: fp4
  framework: dynamo-trt
  disagg: true
  seq-len-configs:
  - isl: 1024
    osl: 1024
    search-space:
    - conc-list: [{concs}]
      prefill: {{num-worker: 2, tp: 4, ep: 4, dp-attn: true}}
      decode: {{num-worker: 1, tp: 32, ep: 32, dp-attn: true}}
    - conc-list: [8]
      prefill: {{num-worker: 1, tp: 4, ep: 4, dp-attn: true}}
      decode: {{num-worker: 0, tp: 8, ep: 8}}
dsr1-fp8-b200-trt-mtp:
  image: nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post3
  model-prefix: dsr1
  runner: b200
  precision: fp8
  framework: trt
  multinode: false
  seq-len-configs:
  - isl: 1024
    osl: 1024
    search-space:
    - {{ tp: 8, ep: 1, conc-start: 4, conc-end: 128, spec-decoding: mtp }}
"""
    repo = tmp_path / "ix"
    path = repo / ".github" / "configs"
    path.mkdir(parents=True)

    def commit(text, date):
        (path / "nvidia-master.yaml").write_text(text)
        env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "HOME": str(tmp_path)}
        git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run([*git, "add", "-A"], check=True, env=env)
        subprocess.run([*git, "commit", "-qm", date], check=True, env=env)

    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    commit(config.format(concs="2048, 4301"), "2026-01-30T12:00:00Z")
    commit("{ tp: 8， ep: 1 }", "2026-02-01T12:00:00Z")  # a full-width comma: does not parse
    commit(config.format(concs="4301"), "2026-03-27T12:00:00Z")

    def run(out):
        out.mkdir()
        subprocess.run(
            [sys.executable, str(REPO / "scripts" / "inferencex_launches.py"), str(repo), str(out)], check=True
        )
        return {name: (out / name).read_text() for name in script.OUTPUTS}

    first = run(tmp_path / "a")
    assert first == run(tmp_path / "b")
    rows = list(csv.DictReader(first["inferencex_launches.csv"].splitlines()))
    assert [(r["concurrency"], r["first_date"], r["last_date"]) for r in rows] == [
        ("2048", "2026-01-30", "2026-01-30"),
        ("4301", "2026-01-30", "2026-03-27"),
    ]
    assert rows[0]["decode_tp"] == "32" and rows[0]["model_path"] == "deepseek-ai/DeepSeek-R1"
    assert tuple(rows[0]) == script.SPLIT
    (node,) = csv.DictReader(first["inferencex_node_launches.csv"].splitlines())
    assert (node["engine"], node["speculative_decoding"], node["concurrency_start"], node["concurrency_end"]) == (
        "trtllm",
        "mtp",
        "4",
        "128",
    )
    assert node["image"] == "nvcr.io#nvidia/tensorrt-llm/release:1.2.0rc6.post3" and tuple(node) == script.NODE


def test_a_recipes_batch_limit_is_per_attention_rank_as_the_configs_size_their_concurrency():
    """InferenceX sizes each launch's concurrency to its decode slots: read per attention rank (times the ranks when
    attention runs data parallel, times the decode workers), the recipes' limits give a median concurrency per slot
    near 1 (1.05); read per worker, the attention-data-parallel launches would sit near their rank count (8-32x)."""
    launches = pl.read_csv(REPO / "data" / "inferencex_launches.csv").filter(pl.col("decode_max_batch").is_not_null())
    ranks = pl.when(pl.col("decode_dp_attention") == 1).then(pl.col("decode_tp")).otherwise(1)
    slots = pl.col("decode_max_batch") * ranks * pl.col("decode_workers")
    per_slot = launches.select((pl.col("concurrency") / slots).median()).item()
    dp = launches.filter(pl.col("decode_dp_attention") == 1)
    per_worker = dp.select((pl.col("concurrency") / (pl.col("decode_max_batch") * pl.col("decode_workers"))).median())
    assert launches.height >= 400 and 0.8 <= per_slot <= 1.3
    assert per_worker.item() >= 4.0
