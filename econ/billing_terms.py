"""The vocabulary of ``data/billing_rules.csv``: every billing rule, the values it takes and its default.

One home for the names both the loader (which checks the file) and :mod:`econ.fits.billing_rules` (which applies the
rules) use. A rule row says how one seller (``providers.seller``), or one of its models, bills; a seller with no row
for a rule gets the row of provider ``*``, and without one the default here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One billing rule: its values (the first is the default, unless ``has_default`` is False) and what each means."""

    name: str
    values: tuple[str, ...]
    meaning: str
    prefix_values: tuple[str, ...] = ()  # values written as "<prefix>:<argument>" (billed_as:grok-4.3)
    has_default: bool = True  # False: a row with no rule row has no value (a model is not retired by default)

    @property
    def default(self) -> str | None:
        return self.values[0] if self.values and self.has_default else None


RULES: dict[str, Rule] = {
    r.name: r
    for r in (
        Rule(
            "tier_boundary",
            ("exceeds", "reaches"),
            "exceeds: a long-context tier bills the request once the prompt is above its threshold; reaches: once "
            "the prompt is at or above it",
        ),
        Rule(
            "zero_cache_price",
            ("unlisted", "free"),
            "unlisted: a cache price of 0 beside a non-zero input price means the map lists none (read as blank); "
            "free: the seller really charges nothing",
        ),
        Rule(
            "unlisted_cache_write",
            ("input", "unknown"),
            "input: a write with no listed write price is billed as ordinary input; unknown: the cost cannot be "
            "known (no price)",
        ),
        Rule(
            "cache_write_price",
            ("listed", "input"),
            "listed: the row's write price for the retention asked; input: writes bill at the row's input price "
            "whatever a map lists",
        ),
        Rule(
            "write_ttl",
            ("per_ttl", "single"),
            "per_ttl: each retention has its own write price (a retention without one bills as an unlisted write); "
            "single: a row's one listed write price (5-minute or 1-hour) bills a write of either retention",
        ),
        Rule(
            "batch_cache",
            ("listed", "stacks", "cache_wins"),
            "listed: a batch row's own cache prices; stacks: a cache price the batch row lacks is the standard "
            "row's times the batch discount (batch input / standard input); cache_wins: a batch row without a "
            "cache-read price bills cached tokens at the standard row's (the cache discount replaces the batch "
            "discount)",
        ),
        Rule(
            "retired",
            ("refused",),
            "refused: requests fail from from_date on; billed_as:<model>: the seller redirects the model to another "
            "and bills that model's prices",
            prefix_values=("billed_as",),
            has_default=False,
        ),
    )
}
"""Every rule of data/billing_rules.csv."""

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
"""Day names of data/billing_windows.csv (``days`` is a range such as mon-fri, or one day, or all)."""


def day_set(days: str) -> tuple[int, ...] | None:
    """ISO weekday numbers (1 = Monday) of ``days`` (``all``, ``sat``, ``mon-fri``, ``sat-sun``); None if malformed."""
    text = days.strip().lower()
    if text == "all":
        return tuple(range(1, 8))
    first, _, last = text.partition("-")
    if first not in WEEKDAYS or (last and last not in WEEKDAYS):
        return None
    start, end = WEEKDAYS.index(first) + 1, WEEKDAYS.index(last or first) + 1
    return tuple(range(start, end + 1)) if start <= end else None


def clock_minutes(text: str) -> int | None:
    """Minutes after midnight of ``HH:MM`` (``24:00`` is 1440, the end of the day); None if malformed."""
    hours, sep, minutes = text.strip().partition(":")
    if not (sep and hours.isdigit() and minutes.isdigit() and len(minutes) == 2):
        return None
    value = int(hours) * 60 + int(minutes)
    return value if int(minutes) < 60 and 0 <= value <= 24 * 60 else None
