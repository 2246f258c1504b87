"""econ.names: one resolver for every command's model, chip and table names, on the shipped data (``real_db``)."""

from __future__ import annotations

import json
import re

import duckdb
import pytest

from econ.cli import main
from econ.errors import EconError
from econ.names import resolve_chip, resolve_model, suggest


@pytest.fixture(scope="module")
def con(real_db):
    with duckdb.connect(str(real_db), read_only=True) as c:
        yield c


@pytest.mark.parametrize(
    ("given", "canonical", "arch"),
    [
        ("deepseek-v3", "deepseek-v3", "DeepSeek-V3"),  # canonical name
        ("DeepSeek-V3", "deepseek-v3", "DeepSeek-V3"),  # models.model
        ("DEEPSEEK-V3", "deepseek-v3", "DeepSeek-V3"),  # any case
        ("deepseek-ai/DeepSeek-V3", "deepseek-v3", "DeepSeek-V3"),  # Hugging Face repo
        ("hyperbolic/deepseek-ai/DeepSeek-V3", "deepseek-v3", "DeepSeek-V3"),  # a seller's price key
        ("claude-4.5-sonnet", "claude-sonnet-4.5", None),  # Replicate's word order
        ("Claude-Sonnet-4-5", "claude-sonnet-4.5", None),  # Anthropic's API spelling
        ("llama-3.1-70b", "llama-3.1-70b", "Llama-3.1-70B"),
    ],
)
def test_every_spelling_resolves_to_one_model(con, given, canonical, arch):
    found = resolve_model(con, given)
    assert (found.canonical_model, found.arch_model) == (canonical, arch)


def test_a_price_key_keeps_its_name(con):
    """A key the user typed is kept (econ cost --model KEY lists that key's schedules), with its canonical model."""
    key = con.sql(
        "select model from price_keys where canonical_model = 'deepseek-v3' order by model limit 1"
    ).fetchall()[0]
    found = resolve_model(con, key[0])
    assert found.price_key == key[0] and found.canonical_model == "deepseek-v3"


def test_suggestions_rank_the_current_versions_nearest_and_newest_first(con):
    """Independent reading: the canonical models named claude-sonnet-<version>, highest version first."""
    with pytest.raises(EconError) as e:
        resolve_model(con, "claude-sonnet")
    shown = re.search(r"did you mean (.*)\?", e.value.hint).group(1).split(", ")
    versions = con.sql(
        "select canonical_model from model_catalog where regexp_matches(canonical_model, '^claude-sonnet-[0-9.]+$')"
    ).fetchall()
    expected = sorted((n for (n,) in versions), key=lambda n: -float(n.rsplit("-", 1)[1]))
    assert shown == expected[: len(shown)] and len(shown) == 5
    assert suggest_names(con, "gpt-oss-120")[0] == "gpt-oss-120b"  # the bare size before its -turbo / -ultra


def suggest_names(con, text):
    from econ.names import _names

    return suggest(_names(con), text)


def test_fleet_and_predict_need_an_architecture(con):
    with pytest.raises(EconError, match="claude-sonnet-4.5 has no architecture in models"):
        resolve_model(con, "claude-sonnet-4.5", need="architecture")
    with pytest.raises(EconError, match=r"did you mean Llama-3.1-70B, Llama-3.1-8B, Llama-3.3-70B, Llama-3.1-405B\?"):
        resolve_model(con, "Llama-3.1-7", need="architecture")


@pytest.mark.parametrize("given", ["", "   "])
def test_an_empty_model_name_is_said_to_be_empty_not_matched_or_warned_about(con, given, recwarn):
    """An empty name has no key to match: it was looked up as a null key (polars warned "Comparisons with None") and
    answered with five unrelated suggestions."""
    with pytest.raises(EconError, match="the model name is empty"):
        resolve_model(con, given)
    assert not [w for w in recwarn if "None" in str(w.message)]


@pytest.mark.parametrize(("given", "chip"), [("gb200", "GB200"), ("tpu-v6e", "TPU-v6e"), ("TPUV6E", "TPU-v6e")])
def test_chips_in_any_case(con, given, chip):
    assert resolve_chip(con, given) == chip


def test_an_unknown_chip_suggests_the_nearest(con):
    with pytest.raises(EconError, match=r"unknown chip 'B20' \(not in hardware\)") as e:
        resolve_chip(con, "B20")
    assert e.value.hint.startswith("did you mean B200")


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_command_takes_every_spelling(real_db, capsys):
    """The issue's check: econ fleet --model deepseek-v3 and econ cost --model DeepSeek-V3 both work, and so do
    predict, diff and describe, with chips in any case."""
    db = str(real_db)
    code, out, err = run(capsys, "fleet", "--db", db, "--model", "deepseek-v3", "--chip", "gb200",
                         "--tokens-per-s", "5e7", "--format", "json")  # fmt: skip
    assert code == 0 and json.loads(out)["model"] == "DeepSeek-V3", err
    code, out, err = run(capsys, "cost", "--db", db, "--model", "DeepSeek-V3", "--input-tokens", "1000",
                         "--output-tokens", "100", "--format", "json")  # fmt: skip
    assert code == 0 and json.loads(out), err
    code, out, err = run(capsys, "predict", "--db", db, "--model", "deepseek-ai/deepseek-v3", "--chip", "h200",
                         "--decode-chips", "16", "--input-tokens", "1000", "--output-tokens", "100", "--batch",
                         "8", "--format", "json")  # fmt: skip
    assert code == 0 and json.loads(out)["model"] == "DeepSeek-V3", err
    code, out, err = run(capsys, "diff", "--db", db, "--model", "DeepSeek-V3", "--format", "csv")
    assert code == 0 and out.startswith("change,"), err
    code, out, err = run(capsys, "describe", "--db", db, "DeepSeek-V3", "--format", "csv")
    assert code == 0 and "canonical model,deepseek-v3," in out and "architecture (models.model),DeepSeek-V3" in out
    code, out, err = run(capsys, "describe", "--db", db, "Price_Current")
    assert code == 0 and out.startswith("price_current (view,")
