"""What-changed chart: every change as new/old on a log axis, announced changes marked."""

from __future__ import annotations

from datetime import date

import polars as pl

from econ.report.charts import changes as charts
from econ.report.figures import chart_problems

FRAME = pl.DataFrame(
    {
        "from_date": [date(2026, 11, 20), date(2027, 1, 1)],
        "status": ["in effect", "announced"],
        "source": ["litellm", "hand"],
        "provider": ["gemini", "openai"],
        "model": ["gemini-2.5-pro", "gpt-6"],
        "variant": ["standard"] * 2,
        "tier_min_prompt_tokens": [0, 0],
        "component": ["cache read", "input"],
        "old_usd_per_mtok": [0.3125, 10.0],
        "new_usd_per_mtok": [0.125, 12.0],
    }
).with_columns(
    (pl.col("new_usd_per_mtok") / pl.col("old_usd_per_mtok")).alias("new_over_old_ratio"),
    (pl.col("new_usd_per_mtok") / pl.col("old_usd_per_mtok") - 1).alias("change_frac"),
)


def test_changes_chart_meets_the_contract_and_the_schema():
    assert chart_problems(charts.changes_over_time(FRAME).to_dict(validate=True)) == []


def test_changes_are_ratios_on_a_log_axis_with_dates_as_text():
    spec = charts.changes_over_time(FRAME).to_dict()
    rule, points = spec["layer"]
    assert points["encoding"]["y"]["scale"] == {"type": "log"} and points["encoding"]["x"]["type"] == "temporal"
    assert points["encoding"]["shape"]["field"] == "status"
    cut = spec["datasets"]["changes"][0]
    assert cut["from_date"] == "2026-11-20" and cut["new_over_old_ratio"] == 0.4 and cut["change_frac"] == -0.6
    assert spec["datasets"]["guide"] == [{"new_over_old_ratio": 1.0, "label": "unchanged"}]


def test_dates_are_ticked_on_whole_days_or_months_so_no_label_repeats():
    """The qwen family's prices span ten days of November 2026 and glm's six months: with a month's label on Vega's own
    ticks (every half month, or every few days) both axes read "Nov 2026" over and over. Dates 42 days apart (FRAME)
    are ticked by the week and labelled by day; a year apart, every two months and labelled by month; each axis
    stays under ten ticks."""

    def axis(frame):
        spec = charts.changes_over_time(frame).to_dict(validate=True)
        return spec["layer"][1]["encoding"]["x"]["axis"]

    assert axis(FRAME) == {"format": "%d %b %Y", "tickCount": {"interval": "day", "step": 7}}
    year = FRAME.with_columns(pl.Series("from_date", [date(2025, 11, 20), date(2026, 11, 20)]))
    assert axis(year) == {"format": "%b %Y", "tickCount": {"interval": "month", "step": 2}}
