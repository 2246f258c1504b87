"""The precedence stand-in: the newest evidence, then authority; conflicts between sources listed; one source per
seller for econ cost."""

from __future__ import annotations

from datetime import date

import polars as pl

from econ.fits.source_precedence import conflicts, one_source_per_seller, prevailing

D = date


def periods(*rows) -> pl.DataFrame:
    """(source, model, from, to, input, output, snapshot_date) rows of one seller's canonical model ``m``."""
    return pl.DataFrame(
        [
            {
                "source": s,
                "provider": "acme",
                "model": k,
                "canonical_model": "m",
                "variant": "standard",
                "tier_min_prompt_tokens": 0,
                "from_date": f,
                "to_date": t,
                "input_usd_per_mtok": i,
                "output_usd_per_mtok": o,
                "snapshot_date": seen,
            }  # fmt: skip
            for s, k, f, t, i, o, seen in rows
        ]
    )


def test_the_newest_evidence_prevails_then_the_most_authoritative_source():
    frame = periods(
        ("litellm", "acme/m", D(2026, 1, 1), None, 2.0, 8.0, D(2026, 11, 20)),
        ("genai_prices", "m", D(2026, 1, 1), None, 2.0, 8.0, D(2026, 8, 21)),
        ("llm_prices", "m", D(2026, 3, 1), None, 10.0, 40.0, D(2026, 8, 6)),
        ("hand", "m", D(2026, 6, 1), None, 2.0, 8.0, None),  # a hand-kept row's evidence is its own date
    )
    ranked = prevailing(frame).sort("piece_from", "rank")
    first = ranked.filter(pl.col("piece_from") == D(2026, 1, 1))
    assert first.select("source", "rank", "candidates", "conflict").rows() == [
        ("litellm", 1, 2, False),
        ("genai_prices", 2, 2, False),
    ]
    later = ranked.filter(pl.col("piece_from") == D(2026, 6, 1))
    assert later["source"].to_list() == ["litellm", "genai_prices", "llm_prices", "hand"] and later["conflict"].all()
    same_day = prevailing(
        periods(
            ("litellm", "acme/m", D(2026, 1, 1), None, 2.0, 8.0, D(2026, 8, 21)),
            ("genai_prices", "m", D(2026, 1, 1), None, 3.0, 8.0, D(2026, 8, 21)),
        )
    )
    assert same_day.filter(pl.col("rank") == 1)["source"].to_list() == ["genai_prices"]  # a tie: authority


def test_conflicts_pair_the_prevailing_source_with_each_that_disagrees():
    frame = periods(
        ("genai_prices", "m", D(2026, 1, 1), None, 2.0, 8.0, D(2026, 8, 21)),
        ("llm_prices", "m", D(2026, 3, 1), D(2026, 5, 1), 10.0, 40.0, D(2026, 4, 6)),
        ("llm_prices", "m", D(2026, 5, 1), None, 10.0, 40.0, D(2026, 8, 6)),
    )
    out = conflicts(prevailing(frame))
    assert out.select("from_date", "to_date", "source", "other_source", "other_input_usd_per_mtok").rows() == [
        (D(2026, 3, 1), None, "genai_prices", "llm_prices", 10.0),  # two periods of one disagreement: one row
    ]


def test_one_source_per_seller_and_the_others_that_disagree():
    day = periods(
        ("litellm", "acme/m", D(2026, 1, 1), None, 2.0, 8.0, D(2026, 11, 20)),
        ("llm_prices", "m", D(2026, 3, 1), None, 10.0, 40.0, D(2026, 8, 6)),
        ("genai_prices", "m", D(2026, 1, 1), None, 2.0, 8.0, D(2026, 8, 21)),
    )
    kept, differ = one_source_per_seller(day)
    assert kept["source"].to_list() == ["litellm"]
    assert differ.select("source", "model", "other_source", "other_input_usd_per_mtok").rows() == [
        ("litellm", "acme/m", "llm_prices", 10.0)
    ]
