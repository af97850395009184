-- name: known_tools_only
-- invariant: no model step calls a tool missing from its run's tool catalogue
-- severity: error
-- remedy: the model invented a tool name (or the catalogue in the journal is incomplete); the harness should answer such calls with unknown_tool and never execute them
-- needs: catalogue
-- judges: each run
with catalogue as (
    select run_id, count(*) as tools from run_tools group by run_id
)
select q.run_id, q.step_idx as step,
       format('call to {}, which is not among the run''s {} catalogued tool(s)', q.tool_name, c.tools) as detail
from tool_calls q
join catalogue c using (run_id)
where not exists (select 1 from run_tools t where t.run_id = q.run_id and t.name = q.tool_name)
union all
select s.run_id, s.idx, format('result of {}, which is not among the run''s {} catalogued tool(s)', s.tool_name, c.tools)
from steps s
join catalogue c using (run_id)
where s.kind = 'tool'
  and not exists (select 1 from tool_calls q where q.run_id = s.run_id and q.call_id = s.call_id)
  and not exists (select 1 from run_tools t where t.run_id = s.run_id and t.name = s.tool_name)
