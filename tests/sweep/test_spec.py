"""The sweep spec: defaults, and mistakes named by file, line and key with the fix."""

from __future__ import annotations

import pytest

from econ.errors import EconError
from econ.sweep.run import load_plan
from econ.sweep.spec import Axis, read_spec
from tests.sweep.conftest import SMALL, write_spec


def test_the_small_spec_reads_as_written(tmp_path):
    spec = read_spec(write_spec(tmp_path))
    assert spec.models == ("DeepSeek-V3", "Llama-3.1-70B") and spec.formats == ("fp8",)
    assert spec.batch == Axis(1.0, 4096.0, 13) and spec.draws == 7 and spec.draws_per_partition == 3
    assert spec.keep == ("frontier", "argmin") and spec.layouts == "all" and spec.pool == "decode"


def test_an_empty_spec_takes_the_defaults_and_hashes_by_meaning(tmp_path):
    a = read_spec(write_spec(tmp_path, "", "a.toml"))
    b = read_spec(write_spec(tmp_path, "# only a comment\n\n[select]\n", "b.toml"))
    assert a.models is None and a.draws == 1 and a.batch.points == 15
    assert a.sha256() == b.sha256() and a.sha256() != read_spec(write_spec(tmp_path)).sha256()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("keep = [\n", r"small.toml: not valid TOML: .*line"),
        (SMALL.replace("seed = 11", "seeds = 11"), r"small.toml:17: draws.seeds: is not a key econ reads here"),
        (SMALL.replace("points = 13", "points = 0"), r"small.toml:11: grid.batch: 0 is not a whole number"),
        (SMALL.replace("max = 4096", "max = 0.5"), r"small.toml:11: grid.batch: 0.5 is not a number from 1"),
        (SMALL.replace('keep = ["frontier", "argmin"]', 'keep = ["everything"]'), r"small.toml:2: keep: 'everything'"),
        (SMALL + "\nfoo = 1\n", r"small.toml:19: draws.foo: is not a key"),
        ('pool = "prefill"\n', r"small.toml:1: pool: 'prefill' is not a pool a sweep evaluates"),
        ('[draws]\nvary = ["gross_margin_frac"]\n', r"small.toml:2: draws.vary: 'gross_margin_frac' is not one of"),
        ('[select]\nlayouts = "some"\n', r"small.toml:2: select.layouts: 'some' is not a layout set"),
    ],
)
def test_mistakes_name_the_line_the_key_and_the_fix(tmp_path, text, message):
    with pytest.raises(EconError, match=message) as e:
        read_spec(write_spec(tmp_path, text))
    assert " — " in str(e.value)


def test_a_missing_spec_file_says_so(tmp_path):
    with pytest.raises(EconError, match="no sweep spec at"):
        read_spec(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('"Llama-3.1-70B"]', '"Llama-9"]'), r"select.models: 'Llama-9' is not a model the database can sweep"),
        (('chips = ["H100", "B200"]', 'chips = ["H1OO"]'), r"select.chips: 'H1OO' is not a chip"),
        (('"B200"]\nformats = ["fp8"]', ']\nformats = ["fp4"]'), r"select.formats: 'fp4' is not a number format"),
        (("[limits]", "[limits]"), None),
    ],
)
def test_names_the_database_lacks_are_errors(fixture_db, tmp_path, change, message):
    text = SMALL.replace(*change)
    if message is None:  # a partition too wide for the memory limit
        text += "\n[limits]\nmemory_per_worker_mb = 16\n"
        text = text.replace("points = 13", "points = 10000").replace("max = 4096", "max = 1e6")
        message = r"one draw × context of a partition is [\d,]+ layouts × batches, more than limits"
    with pytest.raises(EconError, match=message):
        load_plan(read_spec(write_spec(tmp_path, text)), fixture_db)


def test_the_docs_example_spec_reads(tmp_path):
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "sweeps.md").read_text(encoding="utf-8")
    example = text.split("```toml\n", 1)[1].split("```", 1)[0]
    spec = read_spec(write_spec(tmp_path, example))
    assert spec.draws == 200 and spec.draws_per_partition == 50 and "kv_cache_format" in spec.vary
