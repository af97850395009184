-- run_facts: one row a run, one boolean column a fact (store/facts.py lists them, in this order): true when
-- the run's data — or, for a fact no column shows, its format's declaration (format_facts) — says the fact
-- is known. A per-step fact is known for a run when some step of the kind records it (or the run has no such
-- step); the checks still judge only the steps whose values are there.
with t as (
    select s.run_id,
           count(*) filter (where s.kind = 'model') as model_steps,
           count(*) filter (where s.kind = 'model' and coalesce(s.input_uncached, s.cache_read, s.cache_write_5m,
                            s.cache_write_1h, s.output_tokens) is not null) as usage_steps,
           count(*) filter (where s.kind = 'model' and coalesce(s.input_uncached, s.cache_read, s.cache_write_5m,
                            s.cache_write_1h, s.output_tokens) is not null
                            and (s.input_uncached is null or s.cache_read is null or s.cache_write_5m is null
                                 or s.cache_write_1h is null or s.output_tokens is null)) as partial_steps,
           count(*) filter (where s.kind = 'tool') as tool_steps,
           count(*) filter (where s.kind = 'tool' and s.tool_status is not null) as status_steps,
           count(*) filter (where s.kind = 'tool' and s.result_tokens is not null) as sized_steps,
           count(*) filter (where s.kind = 'tool' and s.bounded is not null) as marked_steps,
           count(*) filter (where s.kind = 'model' and s.context_tokens is not null) as context_steps,
           count(*) filter (where s.kind = 'model' and s.input_hash is not null) as hashed_steps
    from steps s group by s.run_id
),
cat as (select run_id, true as catalogued, bool_and(side_effect is not null) as side_effects_marked
        from run_tools group by run_id),
tree as (select v.run_id, t.budget_scope as root_scope from run_roots v join runs t on t.run_id = v.root_run_id)
select r.run_id, r.source_format, r.agent,
       (coalesce(t.model_steps, 0) = 0 or t.usage_steps > 0) as usage,
       (r.started_at is not null and (r.ended_at is not null or r.status in ('running', 'abandoned'))) as timestamps,
       (coalesce(t.tool_steps, 0) = 0 or t.status_steps > 0) as tool_status,
       (coalesce(t.tool_steps, 0) = 0 or t.sized_steps > 0) as result_size,
       (coalesce(t.tool_steps, 0) = 0 or t.marked_steps > 0) as bounded,
       (r.result_bound_tokens is not null) as result_bound,
       -- a sub-agent of a shared budget has its root's limits
       (coalesce(r.max_steps, r.max_tokens, r.max_prompt_tokens, r.max_completion_tokens, r.max_wall_seconds,
                 r.max_cost_micros) is not null or coalesce(tree.root_scope = 'tree', false)) as limits,
       (r.loop_detector is not null or r.max_repeats is not null) as loop_detector,
       (r.max_retries is not null) as retry_limit,
       (r.fallback_model is not null) as fallback_route,
       (coalesce(r.ledger_steps, r.ledger_input_tokens, r.ledger_output_tokens, r.ledger_tokens, r.ledger_cost_micros,
                 r.ledger_tool_results) is not null) as ledger,
       -- a run of a format that records catalogues, offered no tool and calling none, has an empty one
       (coalesce(cat.catalogued, false)
        or (coalesce(t.tool_steps, 0) = 0 and coalesce(ff_catalogue.recorded, false))) as catalogue,
       (coalesce(cat.side_effects_marked, false)) as side_effects,
       (coalesce(t.model_steps, 0) = 0 or t.context_steps > 0) as context_size,
       (coalesce(ff_thread.recorded, false)) as thread,
       (coalesce(ff_call_ids.recorded, false)) as call_ids,
       (coalesce(t.model_steps, 0) = 0 or t.hashed_steps > 0) as input_hash,
       (not coalesce(r.status_inferred, false)) as run_status,
       -- last of the run facts: a run lacking another fact a check needs is reported for that one (it ranks first)
       (coalesce(t.usage_steps, 0) = 0 or t.partial_steps = 0) as buckets
from runs r
left join t using (run_id)
left join cat using (run_id)
left join tree using (run_id)
left join format_facts ff_catalogue on ff_catalogue.format = r.source_format and ff_catalogue.fact = 'catalogue'
left join format_facts ff_thread on ff_thread.format = r.source_format and ff_thread.fact = 'thread'
left join format_facts ff_call_ids on ff_call_ids.format = r.source_format and ff_call_ids.fact = 'call_ids'
