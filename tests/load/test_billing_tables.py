"""The billing tables are checked like every input table: a rule value its rule does not take, rules of one scope
that overlap in time, a time zone, day range or time of day that cannot be read, a window across midnight and a
request time without a zone are errors naming the file, line and column, with the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from econ.errors import DataError
from econ.load.billing_tables import BILLING_EXAMPLES, BILLING_RULES, BILLING_WINDOWS
from econ.load.spec import read_table

DATA = Path(__file__).resolve().parents[2] / "data"
RULES = "rule_id,provider,model,variant,rule,value,from_date,to_date,source_url,quote,notes\n"
WINDOWS = (
    "window_id,provider,model,from_date,to_date,timezone,days,start_time,end_time,price_ratio,source_url,quote,notes\n"
)


@pytest.mark.parametrize("spec", [BILLING_RULES, BILLING_WINDOWS, BILLING_EXAMPLES])
def test_the_shipped_tables_read(spec):
    assert read_table(DATA / f"{spec.name}.csv", spec).height > 0


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ("r,xai,,,tier_boundary,above,,,https://x,q,\n", ["billing_rules.csv:2: column value", "exceeds, reaches"]),
        ("r,xai,,,bill_twice,yes,,,https://x,q,\n", ["column rule", "tier_boundary"]),
        ("r,xai,,,retired,billed_as:,,,https://x,q,\n", ["column value", "billed_as:<model>"]),
        (
            "a,xai,,,tier_boundary,exceeds,2026-01-01,,https://x,q,\nb,xai,,,tier_boundary,reaches,2026-06-01,,https://x,q,\n",
            ["billing_rules.csv:3: column from_date", "rule b overlaps a", "end a (to_date) before b starts"],
        ),
        ("r,xai,,,tier_boundary,exceeds,2026-06-01,2026-01-01,https://x,q,\n", ["column to_date", "not after"]),
    ],
)
def test_a_bad_rule_names_file_line_and_column(tmp_path, rows, expected):
    path = tmp_path / "billing_rules.csv"
    path.write_text(RULES + rows, encoding="utf-8")
    with pytest.raises(DataError) as e:
        read_table(path, BILLING_RULES)
    assert all(text in str(e.value) for text in expected), str(e.value)


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("w,deepseek,,2026-08-17,,Beijing,mon-fri,00:00,09:00,0.5,https://x,q,", ["column timezone", "IANA"]),
        ("w,deepseek,,2026-08-17,,UTC,weekdays,00:00,09:00,0.5,https://x,q,", ["column days", "mon-fri"]),
        ("w,deepseek,,2026-08-17,,UTC,all,9am,10:00,0.5,https://x,q,", ["column start_time", "HH:MM"]),
        ("w,deepseek,,2026-08-17,,UTC,all,16:30,00:30,0.5,https://x,q,", ["column end_time", "split a window"]),
        ("w,deepseek,,2026-08-17,,UTC,all,16:30,24:00,0,https://x,q,", ["column price_ratio"]),
    ],
)
def test_a_bad_window_names_file_line_and_column(tmp_path, row, expected):
    path = tmp_path / "billing_windows.csv"
    path.write_text(WINDOWS + row + "\n", encoding="utf-8")
    with pytest.raises(DataError) as e:
        read_table(path, BILLING_WINDOWS)
    assert "billing_windows.csv:2" in str(e.value) and all(t in str(e.value) for t in expected), str(e.value)


def test_a_request_time_without_a_zone_is_an_error(tmp_path):
    header = (DATA / "billing_examples.csv").read_text(encoding="utf-8").splitlines()[0]
    path = tmp_path / "billing_examples.csv"
    path.write_text(header + "\ne,r,deepseek,deepseek-v4-pro,standard,,2026-12-01,2026-12-01 02:00,1,0,0,5m,1,1,,x\n")
    with pytest.raises(DataError, match=r"billing_examples.csv:2: column at: .*2026-12-01T02:00Z"):
        read_table(path, BILLING_EXAMPLES)


def test_references_between_the_billing_tables_are_checked(tmp_path):
    """A rule of a misspelt seller applied to nobody (xai's 'reaches' boundary billed half the 200k request); a worked
    example of no rule, or with both a bill and a refusal, passed the build."""
    import shutil

    from econ.load.loader import load_all

    data = Path(shutil.copytree(DATA, tmp_path / "data"))
    rules = (data / "billing_rules.csv").read_text(encoding="utf-8")
    line = next(i for i, x in enumerate(rules.splitlines(), 1) if x.startswith("xai-tier-reaches,xai,"))
    (data / "billing_rules.csv").write_text(rules.replace("xai-tier-reaches,xai,", "xai-tier-reaches,xia,"))
    examples = (data / "billing_examples.csv").read_text(encoding="utf-8").splitlines()
    first = examples[1].split(",")
    first[1] = "xai-tier-reachs"
    (data / "billing_examples.csv").write_text("\n".join([examples[0], ",".join(first), *examples[2:]]) + "\n")
    with pytest.raises(DataError) as e:
        load_all(data)
    text = str(e.value)
    assert (
        f"billing_rules.csv:{line}: column provider: names no seller of providers.csv ('xia') — did you mean xai?"
        in (text)
    )
    assert "billing_examples.csv:2: column rule_id: names no billing rule or window ('xai-tier-reachs')" in text
