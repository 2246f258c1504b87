"""Fleet economics: the pools, chips, racks, megawatts and dollars that serve a traffic (lecture a.6–a.7, b, d).

Pure numpy; every argument broadcasts (a deployment axis, and a last axis of context buckets
where a name says ``_by_context``). Units are in the names: tokens/s, s, chips, W, USD.

The serving fleet is **disaggregated** (scaling book, applied-inference "What about prefill?"):
prefill replicas turn prompts into KV caches, decode replicas batch B sequences and emit one
token each per step. Each pool has its own layout and size (:mod:`econ.physics.deployment` gives its step):

    decode:   tokens/s per replica = B·accepted / t_step,  replicas = output tokens/s ÷ that  (lecture a.7)
    prefill:  replica-seconds per request = t_pass / prompts per pass,
              replicas = requests/s × Σ_k share_k · t_pass,k / b_k                           (lecture f.3)

Both step times are the deployment model's **lower bound** max(compute, memory, communication) + overhead, so
replica counts are lower bounds on what a real stack needs at the scenario's efficiencies.
Whole replicas, chips, nodes and racks are the ceilings of the exact (fractional) counts.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.units import HOURS_PER_DAY, MEGA, SECONDS_PER_HOUR


def _f(x):
    return np.asarray(x, dtype=float)


def whole(count):
    """Smallest whole number ≥ ``count`` (float noise such as 3.0000000001 counts as 3); NaN stays NaN."""
    return np.ceil(np.round(_f(count), 6))


# ---------------------------------------------------------------------------- traffic


@formula("input = T·ρ/(1+ρ), output = T/(1+ρ)", "traffic mix")
def split_traffic(tokens_per_s, input_output_ratio):
    """(input, output) tokens/s of a traffic of T tokens/s with ρ input tokens per output token.

    input = T·ρ/(1+ρ),  output = T/(1+ρ)
    """
    t, rho = _f(tokens_per_s), _f(input_output_ratio)
    return t * rho / (1.0 + rho), t / (1.0 + rho)


@formula("L̄ = Σ_k share_k·L_k", "traffic mix")
def mean_prompt_tokens(prompt_tokens_by_context, share_frac_by_context):
    """Mean prompt length L̄ = Σ_k share_k · L_k [tokens] over the last (context bucket) axis."""
    return np.sum(_f(prompt_tokens_by_context) * _f(share_frac_by_context), axis=-1)


@formula("L_dec = L̄ + n_out/2", "traffic mix")
def decode_context_tokens(mean_prompt_tokens_, output_tokens_per_request):
    """Mean context a decoding sequence attends to: L̄ + n_out/2 [tokens] (it grows from L to L + n_out; with a mix
    of output lengths, ``n_out`` is the batch's length-biased :func:`decoding_output_tokens`).

    Decode KV traffic and memory are linear in each sequence's context, so a batch of mixed
    contexts costs what the same batch at the mean context costs (dense attention).
    """
    return _f(mean_prompt_tokens_) + _f(output_tokens_per_request) / 2.0


@formula("O_dec = Σ_k w_k·O_k² / Σ_k w_k·O_k", "length-biased sampling of the sequences a decode batch holds")
def decoding_output_tokens(output_tokens_by_length, share_frac_by_length):
    """Mean output length of the sequences a decode batch holds at a moment, E[O²]/E[O] [tokens], over the last
    (output length) axis of requests' shares.

    A request decodes for its O steps, so a batch caught at a moment holds it in proportion to O: the length-biased
    sampling of the inspection paradox (Feller, *An Introduction to Probability Theory and Its Applications*, vol. II,
    §I.4). One length gives itself; 500 and 1,500 tokens in equal shares give 1,250, not the mean 1,000. A sequence
    is caught uniformly along its decoding, so the batch's mean context is ``L̄ + O_dec/2``
    (:func:`decode_context_tokens`, prompt and output lengths independent)."""
    o, w = _f(output_tokens_by_length), _f(share_frac_by_length)
    return np.sum(w * o * o, axis=-1) / np.sum(w * o, axis=-1)


# ---------------------------------------------------------------------------- batch policies and replica size


@formula("B = k·B*₀", "lecture b.2")
def balance_multiple_batch(balance_batch_seqs, multiple):
    """The lecture's serving batch: a multiple k of the balance batch B*₀ ("double or triple it", b.2) [sequences]."""
    return _f(multiple) * _f(balance_batch_seqs)


# ---------------------------------------------------------------------------- the two pools


@formula("replicas = output tokens/s / (B·accepted / t_step)", "lecture a.7")
def decode_replicas_needed(output_tokens_per_s, tokens_per_s_per_replica):
    """Decode replicas (fractional) that serve ``output_tokens_per_s`` at a replica's throughput [replicas].

    A replica's throughput is B·accepted/t_step (lecture a.7: "batch size times about 60"); NaN where it is unknown.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return _f(output_tokens_per_s) / _f(tokens_per_s_per_replica)


@formula("replicas = requests/s · Σ_k share_k · t_pass,k / b_k", "lecture f.3")
def prefill_replicas_needed(requests_per_s, share_frac_by_context, pass_time_s_by_context, prompts_by_context):
    """Prefill replicas (fractional) for a request rate over a prompt-length mix (contexts on the last axis).

    Each request of context bucket k occupies a replica for t_pass,k / b_k seconds (b_k prompts share a pass).
    """
    share = _f(share_frac_by_context)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_request = np.where(share > 0, share * _f(pass_time_s_by_context) / _f(prompts_by_context), 0.0)
    return _f(requests_per_s) * np.sum(per_request, axis=-1)


@formula("prefill : decode = t_prefill · B / (t_step · n_out · prompts per pass)", "scaling book applied-inference.md")
def prefill_decode_server_ratio(
    prefill_time_s, decode_step_time_s, decode_batch, output_tokens_per_request, prompts_per_prefill=1.0
):
    """Prefill servers per decode server that keep both saturated [ratio].

    Prompts enter at P·b_p/t_prefill and leave decode at B·G/(t_step·n_out), so
    P/G = t_prefill·B / (b_p·n_out·t_step)   (scaling book, applied-inference: P/0.91 = 32·G/(0.019·512) ⇒ P ≈ 3G).
    """
    return (
        _f(prefill_time_s)
        * _f(decode_batch)
        / (_f(prompts_per_prefill) * _f(output_tokens_per_request) * _f(decode_step_time_s))
    )


# ---------------------------------------------------------------------------- hardware, power, dollars


@formula("replicas = ⌈needed⌉, chips = replicas·G, nodes = ⌈chips/node⌉, racks = ⌈chips/rack⌉", "hardware counts")
def pool_hardware(replicas_needed, chips_per_replica, chips_per_node, chips_per_rack) -> dict:
    """Whole replicas, chips, nodes and racks of a pool (racks NaN where the rack size is unknown).

    replicas = ⌈needed⌉, chips = replicas·G, nodes = ⌈chips/chips per node⌉, racks = ⌈chips/chips per rack⌉
    """
    replicas = whole(replicas_needed)
    chips = replicas * _f(chips_per_replica)
    with np.errstate(invalid="ignore"):
        return {
            "replicas": replicas,
            "chips": chips,
            "nodes": whole(chips / _f(chips_per_node)),
            "racks": whole(chips / _f(chips_per_rack)),
        }


@formula("P = chips·TDP·(server power/TDP)·PUE", "facility power")
def facility_power_w(chips, tdp_w, server_power_ratio, pue_ratio):
    """Facility power of a pool [W] = chips · TDP · (server power / chip TDP) · PUE.

    The server factor adds CPUs, NICs, switches and fans (DGX H100: 10.2 kW for 8 × 700 W ⇒ 1.82);
    PUE adds cooling and power distribution (total facility power / IT power).
    """
    return _f(chips) * _f(tdp_w) * _f(server_power_ratio) * _f(pue_ratio)


@formula("E = P·h / 1e6", "energy")
def energy_mwh(power_w, hours):
    """Energy [MWh] = power [W] × hours / 1e6."""
    return _f(power_w) * _f(hours) / MEGA


@formula("tokens/MWh = tokens/s · 3,600 / (P / 1e6)", "energy")
def tokens_per_mwh(tokens_per_s, power_w):
    """Tokens per MWh of facility energy = tokens/s × 3,600 s / (power in MW)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _f(tokens_per_s) * SECONDS_PER_HOUR / (_f(power_w) / MEGA)


@formula("$/h = chips · p", "lecture a.4")
def usd_per_hour(chips, usd_per_chip_hour):
    """Rental cost of a pool [USD/hour] = chips × $/chip-hour (the rental price includes power)."""
    return _f(chips) * _f(usd_per_chip_hour)


@formula("$/day = chips · p · 24 h", "lecture a.4")
def usd_per_day(chips, usd_per_chip_hour):
    """Rental cost of a pool [USD/day] = chips × $/chip-hour × 24 hours."""
    return usd_per_hour(chips, usd_per_chip_hour) * HOURS_PER_DAY


@formula("$/MTok = ($/h) / (tokens/s · 3,600) · 1e6", "lecture a.4")
def usd_per_mtok(usd_per_hour_, tokens_per_s):
    """Cost per million tokens [USD/MTok] = ($/hour) / (tokens/s × 3,600) × 1e6."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _f(usd_per_hour_) / (_f(tokens_per_s) * SECONDS_PER_HOUR) * MEGA


@formula("revenue = requests/s · Σ_k share_k · (uncached·p_in + cached·p_read + n_out·p_out)", "list prices")
def revenue_usd_per_s(
    requests_per_s,
    share_frac_by_context,
    prompt_tokens_by_context,
    cache_hit_frac,
    output_tokens_per_request,
    input_usd_per_mtok_by_context,
    cache_read_usd_per_mtok_by_context,
    output_usd_per_mtok_by_context,
):
    """What the traffic pays at list prices [USD/s].

    revenue = requests/s · Σ_k share_k · (L_k(1−h)·p_in,k + L_k·h·p_cache,k + n_out·p_out,k) / 1e6,
    with each bucket's prices from the tier its prompt falls in (a long-context tier bills the
    whole request at its rate). A NaN cache price bills cached tokens at the input price.
    """
    prompt, h = _f(prompt_tokens_by_context), _f(cache_hit_frac)
    p_in = _f(input_usd_per_mtok_by_context)
    p_cache = np.where(np.isnan(_f(cache_read_usd_per_mtok_by_context)), p_in, _f(cache_read_usd_per_mtok_by_context))
    per_request = (
        prompt * (1.0 - h) * p_in
        + prompt * h * p_cache
        + _f(output_tokens_per_request) * _f(output_usd_per_mtok_by_context)
    ) / MEGA
    share = _f(share_frac_by_context)
    return _f(requests_per_s) * np.sum(np.where(share > 0, share * per_request, 0.0), axis=-1)


@formula("margin = (revenue − cost) / revenue", "accounting")
def gross_margin_frac(revenue, cost):
    """Gross margin = (revenue − cost) / revenue [frac]; negative when the fleet costs more than it earns."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (_f(revenue) - _f(cost)) / _f(revenue)


# ---------------------------------------------------------------------------- the cost–speed frontier


@formula("x̄ = Σ_k share_k·x_k", "request-weighted mean over the context mix")
def request_weighted_mean(values_by_context, share_frac_by_context):
    """Mean of a per-context-bucket quantity weighted by the share of requests in each bucket (NaN counts 0)."""
    return np.sum(_f(share_frac_by_context) * np.nan_to_num(_f(values_by_context), nan=0.0), axis=-1)


@formula("Σ_k share_k·[L_k + n_out > L_native]", "the model's native context")
def share_beyond_context(
    share_frac_by_context, prompt_tokens_by_context, output_tokens_per_request, max_position_embeddings
):
    """Share of requests whose prompt plus output exceeds the model's native context [frac]; NaN when unknown."""
    over = _f(prompt_tokens_by_context) + _f(output_tokens_per_request) > _f(max_position_embeddings)[..., None]
    share = np.sum(_f(share_frac_by_context) * over, axis=-1)
    return np.where(np.isnan(_f(max_position_embeddings)), np.nan, share)


@formula(
    "totals = prefill + decode; utilisation = needed / whole replicas; ratio = prefill / decode needed",
    "disaggregated serving (scaling book applied-inference.md)",
)
def combine_pools(
    prefill: dict, decode: dict, prefill_needed, decode_needed, prefill_chips_per_replica, decode_chips_per_replica
) -> dict:
    """Fleet totals of a prefill and a decode pool (:func:`pool_hardware` dicts) and how busy each is."""
    return {
        "prefill_decode_replica_ratio": _f(prefill_needed) / _f(decode_needed),
        "chips": prefill["chips"] + decode["chips"],
        "nodes": prefill["nodes"] + decode["nodes"],
        "racks": prefill["racks"] + decode["racks"],
        "serving_mean_chips": _f(prefill_needed) * _f(prefill_chips_per_replica)
        + _f(decode_needed) * _f(decode_chips_per_replica),
        "decode_utilization_frac": _f(decode_needed) / decode["replicas"],
        "prefill_utilization_frac": _f(prefill_needed) / prefill["replicas"],
    }


@formula("n_out = L̄ / ρ", "traffic mix (ρ input tokens per output token)")
def output_tokens_per_request(mean_prompt_tokens_, input_output_ratio):
    """Output tokens per request from the mean prompt and the traffic's input/output token ratio [tokens]."""
    return _f(mean_prompt_tokens_) / _f(input_output_ratio)
