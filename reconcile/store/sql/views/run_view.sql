-- run_view: one row a run, its steps rolled up (columns documented in docs/sql-api.md). Token totals are
-- NULL, not 0, when no step of the run recorded usage; a bucket's total is NULL when a call leaves it out, and every
-- total is when a call records no usage at all (usage_unknown_steps): a known part is no total.
select
    r.run_id,
    r.agent,
    r.task_class,
    r.model,
    coalesce(t.models, case when r.model is null then [] else [r.model] end) as models,
    r.provider,
    r.status,
    coalesce(r.status_inferred, false) as status_inferred,  -- reconcile read the status off the transcript
    r.harness_status,                         -- the harness's own word for how the run ended, as written
    r.stop_reason,
    r.predicted_stop_reason,
    r.started_at,
    r.ended_at,
    date_diff('millisecond', r.started_at, r.ended_at) / 1000.0 as wall_seconds,
    r.working_seconds,  -- time spent working, where the harness records it apart from waiting (Inspect AI)
    coalesce(t.model_steps, 0) as steps,
    coalesce(t.wrap_up_steps, 0) as wrap_up_steps,  -- tool-free wrap-up turns after a budget ran out (seed 001)
    coalesce(t.refused_steps, 0) as refused_steps,  -- calls the provider refused (transport, rate limit)
    -- what a step ceiling counts: model calls, less the wrap-up turn and the provider's refusals
    coalesce(t.model_steps, 0) - coalesce(t.wrap_up_steps, 0) - coalesce(t.refused_steps, 0) as charged_steps,
    coalesce(t.tool_results, 0) as tool_results,
    coalesce(t.events, 0) as events,
    -- Token totals are NULL, not 0, when no step of the run recorded usage (e.g. SWE-agent), and a bucket's
    -- total is NULL when some call's usage leaves that bucket out (unknown_bucket_steps counts those calls).
    -- a run that made no model call used no tokens: 0, exactly (a sample cancelled before its first call)
    case when coalesce(t.model_steps, 0) = 0 then 0
         when t.usage_steps > 0 and t.usage_unknown_steps = 0 and not t.input_uncached_unknown then t.input_uncached end as input_uncached,
    case when coalesce(t.model_steps, 0) = 0 then 0
         when t.usage_steps > 0 and t.usage_unknown_steps = 0 and not t.cache_read_unknown then t.cache_read end as cache_read,
    case when coalesce(t.model_steps, 0) = 0 then 0
         when t.usage_steps > 0 and t.usage_unknown_steps = 0 and not t.cache_write_5m_unknown then t.cache_write_5m end as cache_write_5m,
    case when coalesce(t.model_steps, 0) = 0 then 0
         when t.usage_steps > 0 and t.usage_unknown_steps = 0 and not t.cache_write_1h_unknown then t.cache_write_1h end as cache_write_1h,
    case when coalesce(t.model_steps, 0) = 0 then 0
         when t.usage_steps > 0 and t.usage_unknown_steps = 0 and not t.output_tokens_unknown then t.output_tokens end as output_tokens,
    case when coalesce(t.model_steps, 0) = 0 then 0
         when t.usage_steps > 0 and t.usage_unknown_steps = 0 and t.reasoning_unknown_steps = 0 then t.reasoning_tokens
    end as reasoning_tokens,
    -- all input buckets together (a call's input given whole counts, its split into buckets unknown)
    case when coalesce(t.model_steps, 0) = 0 then 0
         when t.usage_steps > 0 and t.usage_unknown_steps = 0 and t.input_unknown_steps = 0 then t.all_input_tokens
    end as input_tokens,
    case when coalesce(t.model_steps, 0) = 0 then 0
         when t.usage_steps > 0 and t.usage_unknown_steps = 0 and t.input_unknown_steps = 0 and not t.output_tokens_unknown
         then t.all_input_tokens + t.output_tokens
    end as total_tokens,
    coalesce(t.unknown_bucket_steps, 0) as unknown_bucket_steps,  -- calls whose usage leaves a bucket unknown
    coalesce(t.usage_unknown_steps, 0) as usage_unknown_steps,  -- calls with no usage recorded: token totals unknown
    -- priced from model_prices: exact (cost_micros), else a range (cost_low_micros .. cost_high_micros), else at least
    -- cost_low_micros (cost_high_micros NULL); a run without model calls costs 0. See unpriced_steps
    case when t.model_steps is null or t.model_steps = 0 then 0
         when t.exact_steps = t.model_steps then round(t.cost_low_unrounded) end::bigint as cost_micros,
    case when t.model_steps is null or t.model_steps = 0 then 0 else round(t.cost_low_unrounded) end::bigint
        as cost_low_micros,
    case when t.model_steps is null or t.model_steps = 0 then 0
         when t.bounded_steps = t.model_steps then round(t.cost_high_unrounded) end::bigint as cost_high_micros,
    -- the same usage with no cache (all input at the input price)
    case when t.uncached_unknown_steps = 0 then t.uncached_cost_micros end as uncached_cost_micros,
    t.catalogue_tax_tokens,                   -- tool-schema tokens sent, summed over model calls
    -- and what they cost, billed as each call billed them
    case when t.catalogue_tax_unknown_steps = 0 then t.catalogue_tax_micros end as catalogue_tax_micros,
    coalesce(t.unpriced_steps, 0) as unpriced_steps,
    t.harness_step_cost_micros,               -- what the harness priced its own steps at, if it did
    case when t.usage_steps > 0 then t.wrap_up_input_tokens end as wrap_up_input_tokens,
    case when t.usage_steps > 0 then t.wrap_up_output_tokens end as wrap_up_output_tokens,
    t.wrap_up_cost_micros,
    t.wrap_up_harness_cost_micros,
    coalesce(t.has_final_answer, false) as has_final_answer,
    t.final_answer_step,
    r.final_output,
    r.max_steps,
    r.max_tokens,
    r.max_prompt_tokens,
    r.max_completion_tokens,
    r.max_wall_seconds,
    r.max_cost_micros,
    r.max_repeats,
    r.max_retries,
    coalesce(r.budget_scope, 'run') as budget_scope,  -- 'tree': the limits are shared by every run under this one
    r.fence,  -- the rules its harness's fence follows, as the journal says (docs/status.md): NULL when it does not
    r.loop_detector,
    r.loop_limit,
    r.loop_window,
    r.fallback_model,
    r.tool_timeout_seconds,
    r.result_bound_tokens,
    r.catalogue_tokens,
    r.ledger_steps,
    r.ledger_input_tokens,
    r.ledger_output_tokens,
    r.ledger_tokens,
    r.ledger_cost_micros,
    r.ledger_tool_results,
    r.api_key_id,
    r.workspace_id,
    r.project_id,
    r.parent_run_id,
    rt.root_run_id,  -- the topmost ancestor in the store (the run itself when it has none): its agent tree
    r.source_format,
    r.source_file
from runs r
left join run_totals t using (run_id)  -- its steps rolled up and priced (kept in a store)
join run_roots rt using (run_id)
