"""Fleet economics: the pools, chips, racks, megawatts and dollars that serve a traffic (lecture a.6–a.7, b, d).

Pure numpy; every argument broadcasts (a deployment axis, and a last axis of context buckets
where a name says ``_by_context``). Units are in the names: tokens/s, s, chips, W, USD.

The serving fleet is **disaggregated** (scaling book, applied-inference "What about prefill?"):
prefill replicas turn prompts into KV caches, decode replicas batch B sequences and emit one
token each per step. Each pool is sized from its own roofline:

    decode:   tokens/s per replica = B / t_step,  replicas = output tokens/s ÷ that      (lecture a.7)
    prefill:  replica-seconds per request = t_pass / prompts per pass,
              replicas = requests/s × Σ_k share_k · t_pass,k / b_k                           (lecture f.3)

Both step times are the roofline **lower bound** max(compute, memory) of
:mod:`econ.physics.roofline`, so replica counts are lower bounds on what a real stack needs.
Whole replicas, chips, nodes and racks are the ceilings of the exact (fractional) counts.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.physics import memory, roofline
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
    """Mean context a decoding sequence attends to: L̄ + n_out/2 [tokens] (it grows from L to L + n_out).

    Decode KV traffic and memory are linear in each sequence's context, so a batch of mixed
    contexts costs what the same batch at the mean context costs (dense attention).
    """
    return _f(mean_prompt_tokens_) + _f(output_tokens_per_request) / 2.0


# ---------------------------------------------------------------------------- batch policies and replica size


@formula("B = k·B*₀", "lecture b.2")
def balance_multiple_batch(balance_batch_seqs, multiple):
    """The lecture's serving batch: a multiple k of the balance batch B*₀ ("double or triple it", b.2) [sequences]."""
    return _f(multiple) * _f(balance_batch_seqs)


@formula("largest B with t_step(B) ≤ 1/speed", "lecture a.3")
def max_batch_for_speed(
    speed_tokens_per_s_per_user,
    chips,
    peak_flop_per_s,
    hbm_bandwidth_bytes_per_s,
    params_active,
    params_total,
    weight_bytes_per_param,
    context_tokens,
    kv_bytes_per_token,
    *,
    mfu=1.0,
    mbu=1.0,
    pipeline_stages=1.0,
    kv_extra_bytes_per_sequence=0.0,
):
    """Largest decode batch whose step still gives each user ``speed`` tokens/s [sequences]; 0 if none does.

    1/t_step(B) ≥ s with t_step = max(2·B·N_act/(G·F·mfu), (P·N_tot·b_w + B·(L·b_kv + extra))/(G·W·mbu)):
        B ≤ G·F·mfu / (2·N_act·s)   and   B ≤ (G·W·mbu/s − P·N_tot·b_w) / (L·b_kv + extra)
    (the lecture's a.3 latency floor: no B reaches s when the weight read alone takes longer than 1/s).
    """
    step = 1.0 / _f(speed_tokens_per_s_per_user)
    by_compute = step * _f(chips) * _f(peak_flop_per_s) * _f(mfu) / (2.0 * _f(params_active))
    headroom = step * _f(chips) * _f(hbm_bandwidth_bytes_per_s) * _f(mbu) - memory.weight_bytes(
        _f(pipeline_stages) * _f(params_total), weight_bytes_per_param
    )
    per_seq = _f(context_tokens) * _f(kv_bytes_per_token) + _f(kv_extra_bytes_per_sequence)
    with np.errstate(divide="ignore", invalid="ignore"):
        by_memory = np.where(per_seq > 0, headroom / per_seq, np.where(headroom >= 0, np.inf, -np.inf))
    best = np.floor(np.minimum(by_compute, by_memory))
    return np.where(best >= 1.0, best, 0.0)


@formula(
    "smallest power-of-two G ≤ S holding N_tot·b_w + B·(L·b_kv + kv_window), else whole domains", "lecture c.4, d.4"
)
def replica_for_batch(
    params_total,
    weight_bytes_per_param,
    batch,
    context_tokens,
    kv_bytes_per_token,
    hbm_capacity_bytes,
    scale_up_domain_chips,
    kv_extra_bytes_per_sequence=0.0,
):
    """(chips G, pipeline stages P) of a replica that holds the weights and the KV of ``batch`` sequences.

    The smallest power of two chips whose HBM holds N_tot·b_w + B·(L·b_kv + extra), capped at the
    scale-up domain (the lecture's c.6: expert parallelism up to the domain, little pipelining);
    where the weights alone need more than one domain, the pipelined replica of
    :func:`econ.physics.memory.replica_chips`. The batch may still have to be capped to what fits.
    """
    rule_chips, rule_stages = memory.replica_chips(
        params_total, weight_bytes_per_param, hbm_capacity_bytes, scale_up_domain_chips
    )
    need = (
        memory.weight_bytes(params_total, weight_bytes_per_param)
        + memory.kv_bytes(batch, context_tokens, kv_bytes_per_token, kv_extra_bytes_per_sequence)
    ) / _f(hbm_capacity_bytes)
    want = 2.0 ** np.ceil(np.log2(np.maximum(np.nan_to_num(need, nan=1.0), 1.0)))
    domain = _f(scale_up_domain_chips)
    chips = np.where(rule_stages > 1, rule_chips, np.minimum(np.maximum(want, rule_chips), domain))
    return chips, rule_stages


# ---------------------------------------------------------------------------- the two pools


@formula("replicas = output tokens/s / (B / t_step)", "lecture a.7")
def decode_pool(
    *,
    output_tokens_per_s,
    batch,
    context_tokens,
    params_total,
    params_active,
    weight_bytes_per_param,
    kv_bytes_per_token,
    chips,
    peak_flop_per_s,
    hbm_bandwidth_bytes_per_s,
    mfu=1.0,
    mbu=1.0,
    pipeline_stages=1.0,
    kv_extra_bytes_per_sequence=0.0,
) -> dict:
    """The decode pool serving ``output_tokens_per_s`` with replicas of ``chips`` at decode batch B.

    t_step = max(2·B·N_act/(G·F·mfu), (P·N_tot·b_w + B·(L·b_kv + extra))/(G·W·mbu))   (lower bound, lecture a.2)
    tokens/s per replica = B/t_step (a.7: "batch size times about 60");  replicas = output tokens/s ÷ that.

    Returns arrays: ``step_time_s``, ``compute_time_s``, ``memory_time_s``, ``compute_bound``,
    ``tokens_per_s_per_user`` (1/t_step), ``tokens_per_s_per_replica``, ``replicas_needed``
    (fractional; NaN where B < 1, i.e. nothing can be served).
    """
    ok = _f(batch) >= 1.0
    b = np.where(ok, _f(batch), 1.0)
    compute = roofline.compute_time_s(b, 1.0, params_active, chips, peak_flop_per_s, mfu=mfu)
    mem = roofline.memory_time_s(
        b,
        context_tokens,
        kv_bytes_per_token,
        params_total,
        weight_bytes_per_param,
        chips,
        hbm_bandwidth_bytes_per_s,
        mbu=mbu,
        pipeline_stages=pipeline_stages,
        kv_extra_bytes_per_sequence=kv_extra_bytes_per_sequence,
    )
    times = roofline.step_bounds(compute, mem)
    per_replica = np.where(ok, roofline.tokens_per_s(b, times.lower_bound_s), np.nan)
    return {
        "step_time_s": np.where(ok, times.lower_bound_s, np.nan),
        "compute_time_s": times.compute_time_s,
        "memory_time_s": times.memory_time_s,
        "compute_bound": times.compute_bound,
        "tokens_per_s_per_user": np.where(ok, 1.0 / times.lower_bound_s, np.nan),
        "tokens_per_s_per_replica": per_replica,
        "tokens_per_s_per_chip": per_replica / _f(chips),
        "replicas_needed": _f(output_tokens_per_s) / per_replica,
    }


@formula("replicas = requests/s · Σ_k share_k · t_pass,k / prompts per pass_k", "lecture f.3")
def prefill_pool(
    *,
    requests_per_s,
    share_frac_by_context,
    prompt_tokens_by_context,
    cache_hit_frac,
    tokens_per_pass_target,
    max_prompts_by_context,
    params_total,
    params_active,
    weight_bytes_per_param,
    kv_bytes_per_token,
    chips,
    peak_flop_per_s,
    hbm_bandwidth_bytes_per_s,
    mfu=1.0,
    mbu=1.0,
    pipeline_stages=1.0,
    kv_extra_by_context=0.0,
) -> dict:
    """The prefill pool: each request's uncached prompt ℓ = L·(1 − h) runs through a prefill replica.

    A pass batches b = ceil(target/ℓ) prompts (at least 1, at most what fits at context L), so
    that it is compute-bound where it can be:
        t_pass = max(2·b·ℓ·N_act/(G·F·mfu), (P·N_tot·b_w + b·(L·b_kv + extra))/(G·W·mbu))   (lecture f.3)
        replicas = requests/s · Σ_k share_k · t_pass,k / b_k
    Cached prompt tokens (hit rate h) are read, not recomputed. Context buckets on the last axis;
    per-deployment arguments broadcast against it (pass them with a trailing axis of 1).

    Returns ``prompts_per_pass`` and ``pass_time_s`` (by context), ``compute_bound`` (by context),
    ``replicas_needed`` and ``tokens_per_s_per_replica`` (uncached prompt tokens/s per replica).
    """
    prompt = _f(prompt_tokens_by_context)
    new = prompt * (1.0 - _f(cache_hit_frac))
    with np.errstate(divide="ignore", invalid="ignore"):
        wanted = np.where(new > 0, np.ceil(np.round(_f(tokens_per_pass_target) / np.where(new > 0, new, 1.0), 6)), 1.0)
    fit = _f(max_prompts_by_context)
    prompts = np.where(fit >= 1.0, np.clip(wanted, 1.0, np.maximum(fit, 1.0)), np.nan)
    compute = roofline.compute_time_s(prompts, new, params_active, chips, peak_flop_per_s, mfu=mfu)
    mem = roofline.memory_time_s(
        prompts,
        prompt,
        kv_bytes_per_token,
        params_total,
        weight_bytes_per_param,
        chips,
        hbm_bandwidth_bytes_per_s,
        mbu=mbu,
        pipeline_stages=pipeline_stages,
        kv_extra_bytes_per_sequence=kv_extra_by_context,
    )
    times = roofline.step_bounds(compute, mem)
    share = _f(share_frac_by_context)
    replica_s_per_request = np.where(new > 0, times.lower_bound_s / prompts, 0.0)
    replica_s = np.sum(np.where(share > 0, share * replica_s_per_request, 0.0), axis=-1)
    needed = _f(requests_per_s) * replica_s
    uncached = _f(requests_per_s) * np.sum(share * new, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_replica = np.where(needed > 0, uncached / needed, np.nan)
    return {
        "prompts_per_pass": prompts,
        "pass_time_s": times.lower_bound_s,
        "compute_bound": times.compute_bound,
        "replicas_needed": needed,
        "tokens_per_s_per_replica": per_replica,
    }


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


@formula("per user 1/t_step, per chip B/(t_step·G), cost t_step·G·p/B over B", "lecture a.3–a.4")
def frontier(
    *,
    batch,
    context_tokens,
    params_total,
    params_active,
    weight_bytes_per_param,
    kv_bytes_per_token,
    chips,
    peak_flop_per_s,
    hbm_bandwidth_bytes_per_s,
    hbm_capacity_bytes,
    usd_per_chip_hour,
    mfu=1.0,
    mbu=1.0,
    pipeline_stages=1.0,
    kv_extra_bytes_per_sequence=0.0,
) -> dict:
    """Throughput per chip against per-user speed as the decode batch varies, with the cost along it.

    Per-case arguments are 1-D (cases); ``batch`` is 1-D (points); results are cases × points:
        speed = 1/t_step [tokens/s/user],  throughput = B/(t_step·G) [tokens/s/chip],
        cost = t_step·G·p/B [USD/token] (lecture a.4)
    Batch 1 runs at the latency floor's speed (a.3: 1/(P·N_tot·b_w/(G·W·mbu)) when weight-bound);
    large batches approach the cost floor p·max(2·N_act/(F·mfu), (L·b_kv + extra)/(W·mbu)) (a.4).
    """

    def col(x):
        x = _f(x)
        return x[:, None] if x.ndim == 1 else x

    b = _f(batch)[None, :]
    g, stages = col(chips), col(pipeline_stages)
    compute = roofline.compute_time_s(b, 1.0, col(params_active), g, col(peak_flop_per_s), mfu=col(mfu))
    mem = roofline.memory_time_s(
        b,
        col(context_tokens),
        col(kv_bytes_per_token),
        col(params_total),
        col(weight_bytes_per_param),
        g,
        col(hbm_bandwidth_bytes_per_s),
        mbu=col(mbu),
        pipeline_stages=stages,
        kv_extra_bytes_per_sequence=col(kv_extra_bytes_per_sequence),
    )
    times = roofline.step_bounds(compute, mem)
    step = times.lower_bound_s
    cap = memory.max_batch(
        g,
        col(hbm_capacity_bytes),
        col(params_total),
        col(weight_bytes_per_param),
        col(context_tokens),
        col(kv_bytes_per_token),
        col(kv_extra_bytes_per_sequence),
    )
    return {
        "step_time_s": step,
        "compute_bound": times.compute_bound,
        "tokens_per_s_per_user": 1.0 / step,
        "tokens_per_s_per_chip": b / (step * g),
        "usd_per_mtok": roofline.usd_per_token(step, b, g, col(usd_per_chip_hour)) * MEGA,
        "fits_in_memory": b <= cap,
    }


@formula("no point as fast per user with more throughput per chip", "Pareto frontier")
def pareto_optimal(group, speed, throughput) -> np.ndarray:
    """True where no point of the same group is at least as fast and has more throughput (throughput >= 0).

    Sort by group, then speed descending; a point is optimal when its throughput beats the running
    maximum of every faster point of its group. One lexsort and one cumulative maximum over
    all groups at once: each group's throughputs are lifted by an offset larger than any throughput,
    so the running maximum never carries over from the group before.
    """
    group, speed, throughput = (np.asarray(x, dtype=float) for x in (group, speed, throughput))
    if not speed.size:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((-throughput, -speed, group))
    lift = group[order] * (2.0 * float(throughput.max()) + 1.0)
    lifted = throughput[order] + lift
    before = np.concatenate([[-np.inf], np.maximum.accumulate(lifted)[:-1]])
    optimal = np.empty(speed.size, dtype=bool)
    optimal[order] = lifted > np.maximum(before, lift - 1.0)
    return optimal


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
def combine_pools(prefill: dict, decode: dict, prefill_needed, decode_needed, chips_per_replica) -> dict:
    """Fleet totals of a prefill and a decode pool (:func:`pool_hardware` dicts) and how busy each is."""
    return {
        "prefill_decode_replica_ratio": _f(prefill_needed) / _f(decode_needed),
        "chips": prefill["chips"] + decode["chips"],
        "nodes": prefill["nodes"] + decode["nodes"],
        "racks": prefill["racks"] + decode["racks"],
        "serving_mean_chips": (_f(prefill_needed) + _f(decode_needed)) * _f(chips_per_replica),
        "decode_utilization_frac": _f(decode_needed) / decode["replicas"],
        "prefill_utilization_frac": _f(prefill_needed) / prefill["replicas"],
    }


@formula("n_out = L̄ / ρ", "traffic mix (ρ input tokens per output token)")
def output_tokens_per_request(mean_prompt_tokens_, input_output_ratio):
    """Output tokens per request from the mean prompt and the traffic's input/output token ratio [tokens]."""
    return _f(mean_prompt_tokens_) / _f(input_output_ratio)
