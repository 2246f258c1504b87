"""Which models the serving model can time: every model of the shipped data is timed or says why not, and the
commands that time a model (``econ predict``, ``econ fleet``) refuse the others with that reason."""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest

from econ.analyses.timed_models import MODELS_SQL, UNTIMED_SQL, refuse_untimed
from econ.cli import main
from econ.errors import EconError


def _with_an_untimed_model(real_db, tmp_path):
    """The shipped build with DeepSeek-V4-Pro's attention written as 'other' (a layout econ does not model), as it
    was before compressed attention was modelled."""
    db = shutil.copy(real_db, tmp_path / "econ.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("update models set attention = 'other' where model = 'DeepSeek-V4-Pro'")
        con.execute("update model_derived set kv_bytes_per_token = null where model = 'DeepSeek-V4-Pro'")
    return db


def test_every_shipped_model_is_timed(real_db):
    """Every model of data/models.csv has a modelled cache (DeepSeek-V4's compressed attention included)."""
    with duckdb.connect(str(real_db), read_only=True) as con:
        timed = {r[0] for r in con.execute(MODELS_SQL).fetchall()}
        every = {r[0] for r in con.execute("select model from models").fetchall()}
        assert timed == every and not con.execute(UNTIMED_SQL).fetchall()
        assert {"DeepSeek-V4-Pro", "DeepSeek-V4-Flash"} <= timed


def test_a_model_whose_attention_is_not_modelled_says_why(real_db, tmp_path):
    """The two sets split the models; an 'other' attention has no modelled KV cache, and the refusal says so."""
    with duckdb.connect(str(_with_an_untimed_model(real_db, tmp_path)), read_only=True) as con:
        timed = {r[0] for r in con.execute(MODELS_SQL).fetchall()}
        untimed = dict(con.execute(f"select model, why from ({UNTIMED_SQL})").fetchall())
        every = {r[0] for r in con.execute("select model from models").fetchall()}
        assert not timed & set(untimed) and timed | set(untimed) == every
        assert untimed == {"DeepSeek-V4-Pro": "its attention ('other') has no modelled KV cache"}
        refuse_untimed(con, "Llama-3.1-70B")  # timed: nothing to say
        with pytest.raises(EconError, match=r"^econ cannot time DeepSeek-V4-Pro: its attention \('other'\)"):
            refuse_untimed(con, "DeepSeek-V4-Pro")


@pytest.mark.parametrize(
    "args",
    [
        ["predict", "--input-tokens", "1000", "--output-tokens", "100", "--concurrency", "8"],
        ["fleet", "--tokens-per-s", "1e6"],
    ],
)
def test_a_command_that_times_a_model_refuses_an_untimed_one_with_why(real_db, tmp_path, capsys, args):
    """econ fleet said 'nothing fits ... give more chips per replica', and econ predict 'no modelled cache', for a model
    no chip count would let econ time."""
    db = _with_an_untimed_model(real_db, tmp_path)
    code = main([args[0], "--db", str(db), "--model", "DeepSeek-V4-Pro", "--chip", "GB200", *args[1:]])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err.startswith(
        "Error: econ cannot time DeepSeek-V4-Pro: its attention ('other') has no modelled KV cache — pick a model "
        "whose KV cache econ models"
    )


def test_deepseek_v4_is_predicted_end_to_end(real_db, capsys):
    """DeepSeek-V4-Pro (compressed attention) through econ predict: a finite TPOT and TTFT with their bands; and from
    8k- to 1M-token prompts its decode step grows by less than half as much as DeepSeek-V3.2's on the same chips, whose
    indexer reads a key of every token on all 61 layers where V4's reads one per 4 tokens on 30 (at 16 users its larger
    weights and more kernels a layer keep its step no faster than V3.2's: the cache is a small part of it)."""
    tpot = {}
    for model in ("DeepSeek-V4-Pro", "DeepSeek-V3.2"):
        for prompt in (8192, 1_000_000):
            args = ["predict", "--db", str(real_db), "--model", model, "--chip", "B200", "--mode", "disagg"]
            args += ["--input-tokens", str(prompt), "--output-tokens", "1024", "--concurrency", "16"]
            args += ["--format", "json", "--expert-format", "fp4", "--decode-chips", "8", "--prefill-chips", "8"]
            assert main(args) == 0
            out = json.loads(capsys.readouterr().out)
            tpot[model, prompt] = out["tpot_s"]
            assert out["tpot_bound_s"] < out["tpot_s"] and out["ttft_bound_s"] < out["ttft_s"] < 600
            assert out["tpot_error_factor_p90"] > 1 and out["ttft_error_factor_p90"] > 1
    growth = {m: tpot[m, 1_000_000] - tpot[m, 8192] for m in ("DeepSeek-V4-Pro", "DeepSeek-V3.2")}
    assert 0 < growth["DeepSeek-V4-Pro"] < 0.5 * growth["DeepSeek-V3.2"]


def test_a_sparse_attention_model_is_predicted_with_its_engines_fp8_cache_and_says_so(real_db, capsys):
    """The scenario's cache is BF16; DeepSeek-V4's engines run it on FP8 only, so econ predict does too, says so, and
    takes a stated --kv-cache-format as stated."""
    args = ["predict", "--db", str(real_db), "--model", "DeepSeek-V4-Flash", "--chip", "B200", "--input-tokens"]
    args += ["32768", "--output-tokens", "1024", "--concurrency", "64", "--format", "json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kv_cache_format"] == "fp8" and "the engines' format for a sparse-attention model" in out["notes"]
    assert main([*args, "--kv-cache-format", "bf16"]) == 0
    stated = json.loads(capsys.readouterr().out)
    assert stated["kv_cache_format"] == "bf16" and "sparse-attention model" not in (stated["notes"] or "")
    assert stated["tpot_s"] > out["tpot_s"]  # twice the cache read each step
