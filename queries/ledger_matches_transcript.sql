-- name: ledger_matches_transcript
-- invariant: the harness ledger's counters (steps, input, output and total tokens, cost, tool results) equal what the steps it covers add up to — the run's, or its agent tree's when the tree shares one budget — counting the wrap-up turn or not
-- severity: error
-- remedy: find the counter the harness keeps differently from its journal (a retry it forgets, a token bucket it leaves out) and fix one of them; the journal is the evidence
-- needs: ledger, buckets
-- judges: each run
with counted as (
    -- what the steps add up to, with the wrap-up turns (w = 1) and without them (w = 0), over the runs the ledger
    -- covers (ledger_view: the run, or the agent tree whose root keeps the shared budget's ledger)
    select l.run_id, w.w, l.ledger_scope, l.runs, l.wrap_up_steps, l.ledger_steps, l.ledger_input_tokens,
           l.ledger_output_tokens, l.ledger_tokens, l.ledger_cost_micros, l.ledger_tool_results, l.tool_results,
           l.steps - (1 - w.w) * l.wrap_up_steps as steps,
           l.input_tokens - (1 - w.w) * coalesce(l.wrap_up_input_tokens, 0) as input_tokens,
           l.output_tokens - (1 - w.w) * coalesce(l.wrap_up_output_tokens, 0) as output_tokens,
           l.cost_micros - (1 - w.w) * coalesce(l.wrap_up_cost_micros, 0) as cost_micros
    from ledger_view l
    join (select 1 as w union all select 0) w on w.w = 1 or l.wrap_up_steps > 0
),
compared as (
    select *, list_filter([
           case when ledger_steps <> steps then format('steps {} vs {}', ledger_steps, steps) end,
           case when ledger_input_tokens <> input_tokens
                then format('input tokens {} vs {}', ledger_input_tokens, input_tokens) end,
           case when ledger_output_tokens <> output_tokens
                then format('output tokens {} vs {}', ledger_output_tokens, output_tokens) end,
           case when ledger_tokens <> input_tokens + output_tokens
                then format('tokens {} vs {}', ledger_tokens, input_tokens + output_tokens) end,
           -- costs recorded in dollars become whole micro-dollars one by one: each rounding moves the sum by
           -- under half a micro-dollar, so a ledger within (steps + 1) / 2 of its steps' sum agrees
           case when abs(ledger_cost_micros - cost_micros) > (steps + 1) / 2
                then format('cost ${:.6f} vs ${:.6f}', ledger_cost_micros / 1e6, cost_micros / 1e6) end,
           case when ledger_tool_results <> tool_results
                then format('tool results {} vs {}', ledger_tool_results, tool_results) end
       ], lambda x: x is not null) as differences
    from counted
)
select run_id, null as step,
       case when max(ledger_scope) = 'tree' then format('ledger of the agent tree ({} runs) vs their steps: ', max(runs))
            else 'ledger vs steps: ' end || array_to_string(max(differences) filter (where w = 1), '; ')
       || case when max(wrap_up_steps) > 0 then '; without its wrap-up turn: '
               || array_to_string(max(differences) filter (where w = 0), '; ') else '' end as detail
from compared
group by run_id
having min(array_length(differences)) > 0
