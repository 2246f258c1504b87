"""billing_example_bills: every billing rule and window has a worked example, and econ bills each as the hand
arithmetic from the seller's page does (or refuses it as the seller does), on the shipped data."""

from __future__ import annotations

from econ.db import connect_read_only


def test_every_rule_and_window_has_a_worked_example_that_econ_bills_as_the_page_says(real_db):
    with connect_read_only(real_db) as con:
        examples = con.sql("select * from billing_example_bills").pl()
        rule_ids = set(
            con.sql("select rule_id from billing_rules union select window_id from billing_windows").pl()["rule_id"]
        )
    assert rule_ids <= set(examples["rule_id"])
    wrong = examples.filter(~examples["matches"]).select("example_id", "hand_usd", "econ_usd", "econ_refusal")
    assert wrong.height == 0, wrong.rows()
    refused = examples.filter(examples["hand_usd"].is_null())
    assert refused.height >= 2 and refused["econ_refusal"].str.contains("retired").all()


def test_a_refusal_for_another_reason_is_not_a_match():
    """A worked example the seller refuses (retired) matches only a refusal for that reason: with its seller misspelt,
    econ refused 'anthropik sells no claude-opus-4' and the example used to count as billed right."""
    import polars as pl

    from econ.analyses.billing_example_bills import matches

    frame = pl.DataFrame(
        {
            "econ_usd": [None, None, 0.5, 0.5],
            "hand_usd": [None, None, 0.5, 0.5],
            "econ_refusal": ["retired (billing rule r)", "anthropik sells no claude-opus-4", None, "retired"],
            "hand_refusal": ["retired", "retired", None, None],
        },
        schema={"econ_usd": pl.Float64, "hand_usd": pl.Float64, "econ_refusal": pl.String, "hand_refusal": pl.String},
    )
    got = frame.select(matches(*(pl.col(c) for c in frame.columns))).to_series().to_list()
    assert got == [True, False, True, False]
