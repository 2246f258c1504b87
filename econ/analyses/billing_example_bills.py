"""``billing_example_bills``: each worked request of ``data/billing_examples.csv`` billed by econ beside the hand
arithmetic, with the rule it illustrates and the page that states the rule (the report's Prices page shows them).

The bill is :func:`econ.analyses.billing.bill_each` at the example's date (``price_history`` rows in effect then), the
same function ``econ cost`` runs.
"""

from __future__ import annotations

import polars as pl

from econ.analyses.billing import Ask, bill_asks, bill_each
from econ.analyses.billing_rows import BillingTables, read_names
from econ.formula import formula
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "billing_example_bills"
INPUTS = ("price_history", "billing_rules", "billing_windows", "billing_examples", "providers")


@formula(
    "matches = |econ - hand| <= 1e-9 · max(1, hand) (or econ refuses for the example's reason)",
    "data/billing_examples.csv arithmetic",
)
def matches(econ_usd: pl.Expr, hand_usd: pl.Expr, econ_refusal: pl.Expr, hand_refusal: pl.Expr) -> pl.Expr:
    """Whether econ bills the worked example as the hand arithmetic does, or refuses it for the reason the page gives
    (the example's ``refusal`` word in econ's refusal: a refusal for another reason, a misspelt seller say, is not a
    match)."""
    close = (econ_usd - hand_usd).abs() <= 1e-9 * pl.max_horizontal(pl.lit(1.0), hand_usd.abs())
    for_the_reason = econ_refusal.str.contains(hand_refusal, literal=True).fill_null(False)
    return (
        pl.when(hand_refusal.is_not_null())
        .then(for_the_reason)
        .otherwise(close.fill_null(False) & econ_refusal.is_null())
    )


BILLING_EXAMPLE_BILLS = ResultTable(
    name="billing_example_bills",
    grain="worked example (data/billing_examples.csv)",
    key=("example_id",),
    description="Each billing rule's worked request: the hand arithmetic from the seller's page beside econ's bill "
    "(the same function as econ cost), and the rule with its source",
    columns=(
        C("example_id", "str", "", "key", "The example (billing_examples.example_id)"),
        C("rule_id", "str", "", "input", "The billing rule or window it illustrates"),
        C("rule", "str", "", "input", "The rule and its value (tier_boundary = reaches), or the window"),
        C("provider", "str", "", "input", "Seller billed"),
        C("model", "str", "", "input", "Model"),
        C("variant", "str", "", "input", "Service variant"),
        C("as_of", "date", "", "input", "Date of the prices"),
        C("at", "str", "", "input", "Time of the request (time-of-day prices), ISO 8601"),
        C("request", "str", "", "label", "The request's tokens in words"),
        C("arithmetic", "str", "", "input", "The hand arithmetic with the rates and where they are listed"),
        C("hand_usd", "float", "USD", "check", "The bill by hand (null: the seller refuses the request)"),
        C("econ_usd", "float", "USD", "derived", "econ's bill (the function econ cost runs)", bill_each),
        C("econ_refusal", "str", "", "derived", "Why econ refuses it (null: billed)", bill_each),
        C("price_row", "str", "", "label", "The price row econ billed (file line and date, or source and snapshot)"),
        C(
            "matches",
            "bool",
            "",
            "check",
            "econ bills what the hand arithmetic gives (or refuses for the reason the page gives)",
            matches,
        ),
        C("source_url", "str", "", "input", "Page that states the rule"),
        C("quote", "str", "", "input", "The page's words"),
    ),
)
TABLES = (BILLING_EXAMPLE_BILLS,)


def _request(row: dict) -> pl.DataFrame:
    from econ.analyses.cost_command import parse_at, single_request

    return single_request(
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        cached_input_tokens=row["cached_input_tokens"],
        cache_write_tokens=row["cache_write_tokens"],
        cache_ttl=row["cache_ttl"],
        at=parse_at(row["at"]),
    )


def _words(row: dict) -> str:
    parts = [f"{row['input_tokens']:,} input"]
    if row["cached_input_tokens"]:
        parts.append(f"{row['cached_input_tokens']:,} cached")
    if row["cache_write_tokens"]:
        parts.append(f"{row['cache_write_tokens']:,} written ({row['cache_ttl']})")
    parts.append(f"{row['output_tokens']:,} output")
    return ", ".join(parts) + (f" at {row['at']}" if row["at"] else "")


def table(history, rules, windows, examples, providers) -> pl.DataFrame:
    """Bill every example at its date: one bill of the requests of the examples of each seller's model on a date, all
    the bills in one pass (:func:`~econ.analyses.billing.bill_asks`); a bill's requests are billed each on its own,
    and what refuses a bill, a seller that sells no such model, refuses every one of its requests alike."""
    cited = pl.concat(
        [
            rules.select("rule_id", pl.format("{} = {}", "rule", "value").alias("rule"), "source_url", "quote"),
            windows.select(
                pl.col("window_id").alias("rule_id"),
                pl.format("x{} {} {}-{} ({})", "price_ratio", "days", "start_time", "end_time", "timezone").alias(
                    "rule"
                ),
                "source_url",
                "quote",
            ),
        ]
    )
    rows = list(examples.iter_rows(named=True))
    moved = rules.filter(pl.col("value").str.starts_with("billed_as:"))["value"].str.split(":").list.get(1)
    read_names([*examples["model"], *moved])  # every name the bills read, in one query
    seller_of = [tuple(row[k] for k in ("as_of", "provider", "model", "variant", "source")) for row in rows]
    together: dict[tuple, list[int]] = {}  # the examples of one seller's model on one date: one bill of their requests
    for i, key in enumerate(seller_of):
        together.setdefault(key, []).append(i)
    tables_at, by_date = BillingTables.on_each_date(history, rules, windows, providers), {}
    asks = []
    for (when, provider, model, variant, source), members in together.items():
        if when not in by_date:
            by_date[when] = tables_at(when)
        requests = pl.concat([_request(rows[i]) for i in members]).with_columns(
            pl.int_range(len(members), dtype=pl.Int64).alias("request")
        )
        asks.append(Ask(by_date[when], provider, model, variant, requests, source))
    got: dict[int, dict] = {}
    for members, billed in zip(together.values(), bill_asks(asks), strict=True):
        got.update(zip(members, billed, strict=True))
    out = [
        {
            **{
                k: row[k]
                for k in ("example_id", "rule_id", "provider", "model", "variant", "as_of", "at", "arithmetic")
            },
            "request": _words(row),
            "hand_usd": row["expected_usd"],
            "hand_refusal": row["refusal"],
            "econ_usd": got[i]["cost_usd"],
            "econ_refusal": got[i]["refusal"],
            "price_row": got[i]["price_row"],
        }
        for i, row in enumerate(rows)
    ]
    frame = pl.DataFrame(out, infer_schema_length=None).join(cited, on="rule_id", how="left")
    return frame.with_columns(
        matches(
            pl.col("econ_usd"),
            pl.col("hand_usd"),
            pl.col("econ_refusal"),
            pl.col("hand_refusal"),
        ).alias("matches")
    ).drop("hand_refusal")


def run(ctx) -> None:
    q = ctx.query
    ctx.write(
        BILLING_EXAMPLE_BILLS,
        table(
            q("select * from price_history"),
            q("select * from billing_rules"),
            q("select * from billing_windows"),
            q("select * from billing_examples"),
            q("select provider, seller from providers"),
        ),
    )
