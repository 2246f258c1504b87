-- Per chip and number format: the critical batch R = (F/2) * b_w / W (lecture b.1; scaling book B_crit = F/W for bf16),
-- HBM drain time C/W (lecture a.6), scale-up vs scale-out bandwidth (lecture c.2) and the scale-up domain's W_eff = S * W (d.6).
-- Weights are taken to be stored in the format of the math (bf16 2 B, fp8 1 B, int8 1 B, fp4 0.5 B per parameter).
-- Grain: one row per chip x number format the chip supports.
with formats as (
    select * from (values ('bf16', 2.0), ('fp8', 1.0), ('int8', 1.0), ('fp4', 0.5)) as f (number_format, bytes_per_weight)
),

per_format as (
    select
        h.chip,
        f.number_format,
        f.bytes_per_weight,
        case f.number_format
            when 'bf16' then h.peak_bf16_flop_per_s
            when 'fp8' then h.peak_fp8_flop_per_s
            when 'int8' then h.peak_int8_op_per_s
            when 'fp4' then h.peak_fp4_flop_per_s
        end as peak_flop_per_s,
        h.hbm_capacity_bytes,
        h.hbm_bandwidth_bytes_per_s,
        h.scale_up_domain_chips,
        h.scale_up_bandwidth_bytes_per_s,
        h.scale_out_bandwidth_bytes_per_s
    from hardware as h
    cross join formats as f
),

final as (
    select
        chip,
        number_format,
        bytes_per_weight,
        peak_flop_per_s,
        hbm_capacity_bytes,
        hbm_bandwidth_bytes_per_s,
        peak_flop_per_s / hbm_bandwidth_bytes_per_s as flop_per_byte_ratio,
        (peak_flop_per_s / 2) * bytes_per_weight / hbm_bandwidth_bytes_per_s as critical_batch_ratio,
        hbm_capacity_bytes / hbm_bandwidth_bytes_per_s as hbm_drain_time_s,
        scale_up_domain_chips,
        scale_up_domain_chips * hbm_capacity_bytes as scale_up_hbm_capacity_bytes,
        scale_up_domain_chips * hbm_bandwidth_bytes_per_s as scale_up_hbm_bandwidth_bytes_per_s,
        scale_up_bandwidth_bytes_per_s / scale_out_bandwidth_bytes_per_s as scale_up_over_out_bandwidth_ratio
    from per_format
    where peak_flop_per_s is not null
)

select * from final
