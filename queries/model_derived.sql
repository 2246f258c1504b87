-- Per model: sparsity by parameters and by experts side by side (lecture b.2: DeepSeek-V3 is 671/37 = 18 by parameters,
-- 256/8 = 32 by experts; the lecture's "8" is neither), KV-cache bytes per token (computed from the architecture at BF16,
-- and at FP8), GQA group size and weight bytes per number format.
-- Grain: one row per model.
with final as (
    select
        model,
        lab,
        attention,
        params_total,
        params_active,
        params_total / params_active as sparsity_param_ratio,
        num_routed_experts::double / experts_per_token as sparsity_expert_ratio,
        num_attention_heads::double / num_kv_heads as gqa_group_ratio,
        kv_bytes_per_token,
        kv_bytes_per_token / 2 as kv_fp8_bytes_per_token,
        kv_window_bytes_per_sequence,
        params_total * 2.0 as weight_bf16_bytes,
        params_total * 1.0 as weight_fp8_bytes,
        params_total * 0.5 as weight_fp4_bytes,
        pretrain_tokens,
        pretrain_tokens / params_active as pretrain_tokens_per_active_param_ratio
    from models
)

select * from final
