"""The traffic a scenario serves: its prompt-length mix and what follows from it (one reading for every fleet table)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from econ.analyses.scenario import Scenario
from econ.physics import fleet


@dataclass(frozen=True)
class TrafficMix:
    """Prompt lengths and shares of requests, with the mean prompt, output per request and mean decode context (the
    outputs a decode batch holds weighted by their decoding time where the output lengths are a mix)."""

    contexts_tokens: np.ndarray
    shares_frac: np.ndarray
    mean_prompt_tokens: float
    output_tokens_per_request: float
    decode_context_tokens: float
    notes: tuple[str, ...]


def traffic_mix(s: Scenario) -> TrafficMix:
    contexts, shares = np.array(s.contexts_tokens, dtype=float), np.array(s.shares_frac, dtype=float)
    mean_prompt = float(fleet.mean_prompt_tokens(contexts, shares))
    n_out = float(fleet.output_tokens_per_request(mean_prompt, s.input_output_token_ratio))
    decoding = n_out
    notes = []
    if s.output_shares:  # a batch holds each request for its own output's steps: the long ones weigh more
        outputs, output_shares = (np.array(x, dtype=float) for x in zip(*s.output_shares, strict=True))
        spread = fleet.decoding_output_tokens(outputs, output_shares) / np.sum(outputs * output_shares)  # E[O²]/E[O]²
        decoding = n_out * float(spread)
        notes.append(
            f"output lengths a mix (mean {n_out:,.0f} tokens): a decode batch holds each request for its own "
            f"output's steps, so its sequences' outputs average {decoding:,.0f} tokens (E[O²]/E[O])"
        )
    if "context_share_*_tokens_frac" in s.defaulted:
        notes.append("no context_share_* mix in the scenario: every prompt at context_tokens")
    missing = [
        n for n in ("prefill_mfu_frac", "prefill_mbu_frac", "decode_mfu_frac", "decode_mbu_frac") if n in s.defaulted
    ]
    if missing:
        notes.append(f"{'/'.join(missing)} missing: the pure roofline (1.0) where absent")
    return TrafficMix(
        contexts, shares, mean_prompt, n_out, float(fleet.decode_context_tokens(mean_prompt, decoding)), tuple(notes)
    )
