"""What ``econ COMMAND --help`` ends with (two examples each) and the defaults the help texts state.

The examples run as written from the checkout (their files ship in ``examples/``); ``tests/test_cli.py`` parses every
one and runs the read-only ones against the shipped data.
"""

from __future__ import annotations

import argparse

EXAMPLES = {
    "build": (
        "econ build                                   # data/ -> build/econ.duckdb and reports/index.html",
        "econ build --as-of 2026-11-30 --no-report    # prices current on that date; no report",
    ),
    "sql": (
        'econ sql "select chip, number_format, critical_batch_ratio from hardware_derived order by 1"',
        "econ sql -f examples/cheapest_sellers.sql --format markdown",
    ),
    "sweep": (
        "econ sweep examples/sweep.toml               # -> build/sweeps/sweep/, Hive-partitioned Parquet",
        "econ sweep examples/sweep.toml --workers 1 --no-progress",
    ),
    "tables": (
        "econ tables",
        "econ tables --format csv",
    ),
    "describe": (
        "econ describe price_current                  # a table's or view's columns, units and meanings",
        "econ describe deepseek-v3                    # a model: identity, architecture, who sells it",
    ),
    "report": (
        "econ report                                  # reports/ from build/econ.duckdb",
        "econ report --reports site/",
    ),
    "refresh": (
        "econ refresh examples/openrouter_models_2026-12-01.json   # import, rebuild, print what changed",
        "econ refresh --fetch litellm                 # download LiteLLM's current map first",
    ),
    "diff": (
        "econ diff --top 50 --provider anthropic",
        "econ diff --model deepseek-v3 --implied      # what one model's price moves imply",
    ),
    "fleet": (
        "econ fleet --model deepseek-v3 --chip gb200 --tokens-per-s 5e7",
        "econ fleet --model llama-3.1-70b --chip h100 --tokens-per-s 1e6 --format json",
    ),
    "predict": (
        "econ predict --model llama-3.1-70b --chip h100 --decode-chips 4 --input-tokens 3000 --output-tokens 700 "
        "--batch 96",
        "econ predict --model deepseek-v3 --chip h200 --decode-chips 16 --input-tokens 8000 --output-tokens 1000 "
        "--tokens-per-s-per-user 40 --format json",
    ),
    "cost": (
        "econ cost --model claude-sonnet-4.5 --input-tokens 250000 --output-tokens 2000 --cached-input-tokens 50000",
        "econ cost --model deepseek-v3 --requests examples/requests.csv",
    ),
    "import": (
        "econ import openrouter examples/openrouter_models_2026-12-01.json   # a dated snapshot in data/snapshots/",
        "econ import genai_prices data.json --as-of 2026-12-01   # a snapshot of the genai-prices history",
    ),
    "history": (
        "econ history replay genai_prices --repo ../genai-prices   # a clone of github.com/pydantic/genai-prices",
        "econ history replay llm_prices --repo ../llm-prices       # a clone of github.com/simonw/llm-prices",
    ),
}
"""Two examples per command, the last lines of its ``--help``."""

BUILD_DATE = "the date the database was built for: select as_of from build_info"
"""What ``--as-of`` defaults to in every command that reads the database (sql, fleet, cost)."""


def epilog(command: str) -> str:
    """The ``examples:`` block that ends ``econ COMMAND --help``."""
    return "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[command])


def subparser(sub, name: str, **kwargs) -> argparse.ArgumentParser:
    """``sub.add_parser(name)`` whose help ends with the command's examples, printed as written."""
    return sub.add_parser(name, epilog=epilog(name), formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)
