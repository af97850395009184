-- name: tool_calls_paired
-- invariant: every tool call has exactly one result and every result answers a call a model step asked for
-- severity: error
-- remedy: a call without a result was lost (one the run is still waiting on is in flight: calls_in_flight) between execution and journal (see no_stuck_side_effects for those that changed the world); a second result means the call ran twice; a result without a call means the journal lost the model step
-- needs: call_ids
-- judges: each run
select q.run_id, q.step_idx as step,
       -- one lost result is one finding, naming both sides of it: the call unpaired, the run a result short
       format('call {} to {} asked for at step {} has no result: lost ({}), so the run has a tool result fewer than '
              'the tool calls its model steps asked for', q.call_id, q.tool_name, q.step_idx,
              case when q.run_status = 'running' then 'the run went on past it'
                   when q.run_status = 'abandoned' then 'the run was abandoned without it' else 'the run ended without it' end)
           as detail
from open_calls q
where not q.in_flight  -- a call the running run is still waiting on is calls_in_flight's
union all
select s.run_id, s.idx, format('result of {} answers call {}, which no model step asked for', s.tool_name, coalesce(s.call_id, '(none)'))
from steps s
where s.kind = 'tool'
  and not exists (select 1 from tool_calls q where q.run_id = s.run_id and q.call_id = s.call_id)
union all
select run_id, idx, format('second result for call {} ({}); the first is at step {}', call_id, tool_name, first_idx)
from (select run_id, idx, call_id, tool_name, min(idx) over (partition by run_id, call_id) as first_idx
      from steps where kind = 'tool' and call_id is not null and tool_status is distinct from 'started')
where idx > first_idx
union all
select run_id, max(step_idx), format('call id {} was asked for {} times', call_id, count(*))
from tool_calls
group by run_id, call_id
having count(*) > 1
