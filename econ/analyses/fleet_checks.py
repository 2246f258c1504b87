"""``econ fleet``'s inputs checked before anything is read: every number finite, positive and under its ceiling,
and the prompt and output lengths (one each, or a mix with its shares of requests)."""

from __future__ import annotations

import math

from econ.errors import EconError
from econ.load.ceilings import CHIPS, TOKENS, TOKENS_PER_S, USD_PER_CHIP_HOUR


def check_inputs(
    tokens_per_s,
    prefill_chips,
    decode_chips,
    speed,
    ttft_s,
    input_tokens,
    output_tokens,
    cached,
    n_draft,
    acceptance,
    price,
) -> None:
    """Every input finite, positive and under its ceiling before anything is read."""
    if not (math.isfinite(tokens_per_s) and 0 < tokens_per_s <= TOKENS_PER_S.value):
        raise EconError(
            f"--tokens-per-s must be a positive number up to {TOKENS_PER_S.value:g} (got {tokens_per_s:g})",
            f"give the traffic in tokens per second ({TOKENS_PER_S.why})",
        )
    for flag, value in (("--prefill-chips", prefill_chips), ("--decode-chips", decode_chips)):
        if value is not None and not 1 <= value <= CHIPS.value:
            raise EconError(
                f"{flag} must be between 1 and {CHIPS.value:g} (got {value:g})",
                f"give the chips per replica, or leave it out to let the layout search choose ({CHIPS.why})",
            )
    for flag, value, top in (
        ("--tokens-per-s-per-user", speed, 1e6),
        ("--ttft-s", ttft_s, 1e6),
        ("--input-tokens", input_tokens, TOKENS.value),
        ("--output-tokens", output_tokens, TOKENS.value),
        ("--usd-per-chip-hour", price, USD_PER_CHIP_HOUR.value),
    ):
        if value is not None and not (math.isfinite(value) and 0 < value <= top):
            raise EconError(f"{flag} must be a positive number up to {top:g} (got {value:g})", f"give {flag[2:]}")
    if cached is not None and not (math.isfinite(cached) and 0 <= cached < 1):
        raise EconError(f"--cached-input-frac must be in [0, 1) (got {cached:g})", "the share of prompts cached")
    if n_draft is not None and not 0 <= n_draft <= 16:
        raise EconError(f"--speculative-tokens must be from 0 to 16 (got {n_draft})", "the MTP draft tokens per step")
    if acceptance is not None and not (math.isfinite(acceptance) and 0 <= acceptance <= 1):
        raise EconError(f"--acceptance must be in [0, 1] (got {acceptance:g})", "the share of draft tokens accepted")


def prompt_mix(input_tokens, mix) -> tuple[tuple[float, float], ...] | None:
    """The prompt lengths and their shares of requests: one length, a stated mix, or None (the scenario's)."""
    return _lengths("--input-tokens", "a prompt length", input_tokens, mix)


def output_mix(output_tokens, mix) -> tuple[tuple[float, float], ...] | None:
    """The output lengths and their shares of requests: one length, a stated mix, or None (the scenario's ratio)."""
    return _lengths("--output-tokens", "an output length", output_tokens, mix)


def _lengths(flag: str, what: str, one, mix) -> tuple[tuple[float, float], ...] | None:
    """One length given by ``flag``, or a mix given by ``flag``-mix of lengths with their shares of requests
    (``what``: the length with its article, for the messages)."""
    if one is not None and mix is not None:
        raise EconError(f"{flag} and {flag}-mix both give the {what.split(' ', 1)[1]}", "give one of them")
    if mix is None:
        return None if one is None else ((float(one), 1.0),)
    for tokens, share in mix:
        if not (math.isfinite(tokens) and 0 < tokens <= TOKENS.value):
            raise EconError(
                f"{flag}-mix: {tokens:g} tokens is not {what} up to {TOKENS.value:g}",
                "give each length as positive tokens",
            )
        if not (math.isfinite(share) and 0 < share <= 1):
            raise EconError(f"{flag}-mix: share {share:g} is not in (0, 1]", "give each share of requests")
    total = sum(w for _, w in mix)
    if abs(total - 1.0) > 1e-3:
        raise EconError(f"{flag}-mix: the shares add up to {total:g}", "make them add up to 1")
    return tuple((float(t), float(w)) for t, w in mix)
