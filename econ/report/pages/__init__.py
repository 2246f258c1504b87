"""The site's pages, in navigation order.

Each entry of :data:`SITE` is a page module (``NAME``, ``TITLE``, ``SUMMARY``, ``REQUIRES``,
``render(ctx) -> PageContent``; see :mod:`econ.report.page`) or a :class:`Planned` page
whose module is not written yet: the index lists it with the tables it will need and
the headline figures it will supply. Adding a page = writing its module and replacing
its ``Planned`` entry here by the module.
"""

from __future__ import annotations

from dataclasses import dataclass

from econ.report.pages import fleet, prices, sources


@dataclass(frozen=True)
class Planned:
    """A page the report will have once its analysis and page module exist."""

    name: str
    title: str
    summary: str
    requires: tuple[str, ...]
    headlines: tuple[tuple[str, str], ...] = ()  # (headline key, title) this page will supply


SITE: tuple = (
    Planned("serving", "Serving", "Latency and cost per token against batch, balance batch and drain time by chip, "
            "what fits in memory, attention vs weight FLOPs.", ("serving_curves", "serving_summary"),
            (("balance_batch", "Balance batch B*₀ per chip"),)),
    Planned("context-pricing", "Context pricing", "Long-context price tiers read backwards: the implied KV-cache bytes "
            "per token, with intervals, next to the true value for open models.", ("fit_context_tiers",),
            (("kv_bytes_per_token", "Implied KV bytes per token, per provider"),)),
    Planned("io-cache", "Input/output & cache", "Output/input price ratios and the implied decode batch; prompt-cache "
            "prices against memory-tier hold costs and drain times.", ("fit_io_prices", "fit_cache_tiers"),
            (("cache_tier", "Memory tier behind each cache duration"),)),
    Planned("fast-mode", "Fast mode", "Price and speed multiples of fast and priority variants, and the batches they "
            "imply.", ("fit_fast_mode",)),
    Planned("training", "Training", "Chinchilla refit, over-training factors by model, the inference-aware optimum and "
            "the sensitivity of the token balance.", ("scaling_law_fits", "token_balance", "overtraining",
                                                      "token_balance_sensitivity"),
            (("over_training", "Over-training factor under the base scenario"),)),
    fleet,
    Planned("what-changed", "What changed", "Price changes between snapshots and what they imply.", ("price_diff",)),
    prices,
    sources,
)
