-- name: ledger_matches_transcript
-- invariant: the harness ledger's counters (steps, input tokens, output tokens, cost, tool results) equal what the run's steps add up to
-- severity: error
-- remedy: find the counter the harness keeps differently from its journal (a retry it forgets, a token bucket it leaves out) and fix one of them; the journal is the evidence
-- needs: ledger
select run_id, null as step,
       'ledger vs steps: ' || array_to_string(list_filter([
           case when ledger_steps <> steps then format('steps {} vs {}', ledger_steps, steps) end,
           case when ledger_input_tokens <> input_tokens
                then format('input tokens {} vs {}', ledger_input_tokens, input_tokens) end,
           case when ledger_output_tokens <> output_tokens
                then format('output tokens {} vs {}', ledger_output_tokens, output_tokens) end,
           case when abs(ledger_cost_micros - harness_step_cost_micros) > (steps + 1) / 2
                then format('cost ${:.6f} vs ${:.6f}', ledger_cost_micros / 1e6, harness_step_cost_micros / 1e6) end,
           case when ledger_tool_results <> tool_results
                then format('tool results {} vs {}', ledger_tool_results, tool_results) end
       ], lambda x: x is not null), '; ') as detail
from run_view
where ledger_steps <> steps
   or ledger_input_tokens <> input_tokens
   or ledger_output_tokens <> output_tokens
   -- costs recorded in dollars become whole micro-dollars one by one: each rounding moves the sum by
   -- under half a micro-dollar, so a ledger within (steps + 1) / 2 of its steps' sum agrees
   or abs(ledger_cost_micros - harness_step_cost_micros) > (steps + 1) / 2
   or ledger_tool_results <> tool_results
