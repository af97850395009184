-- ledger_view: one row a run that kept a ledger: the ledger beside what its steps add up to, over the runs the
-- ledger covers — the run, or, for the root of an agent tree sharing one budget (seed 001), every run of the
-- tree — with the wrap-up turns apart, since a harness may charge them or not.
with members as (
    select run_id as subject, run_id from run_view where not (budget_scope = 'tree' and root_run_id = run_id)
    union all
    select t.run_id, m.run_id from run_view t join run_view m on m.root_run_id = t.run_id
    where t.budget_scope = 'tree' and t.root_run_id = t.run_id
)
select l.run_id, case when count(*) > 1 or any_value(l.budget_scope) = 'tree' then 'tree' else 'run' end as ledger_scope,
       count(*) as runs, sum(v.steps) as steps, sum(v.wrap_up_steps) as wrap_up_steps,
       sum(v.input_tokens) as input_tokens, sum(v.output_tokens) as output_tokens,
       sum(v.wrap_up_input_tokens) as wrap_up_input_tokens, sum(v.wrap_up_output_tokens) as wrap_up_output_tokens,
       sum(v.harness_step_cost_micros) as cost_micros, sum(v.wrap_up_harness_cost_micros) as wrap_up_cost_micros,
       sum(v.tool_results) as tool_results,
       any_value(l.ledger_steps) as ledger_steps, any_value(l.ledger_input_tokens) as ledger_input_tokens,
       any_value(l.ledger_output_tokens) as ledger_output_tokens, any_value(l.ledger_tokens) as ledger_tokens,
       any_value(l.ledger_cost_micros) as ledger_cost_micros, any_value(l.ledger_tool_results) as ledger_tool_results
from members x
join run_view l on l.run_id = x.subject
join run_view v on v.run_id = x.run_id
group by l.run_id
