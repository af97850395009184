-- open_calls: tool calls with no result. One asked for by the last model step of a run still running, with no
-- event after it, is in flight (the harness is mid-call, or died there); any other has lost its result.
-- the run's last model call or event: a call after it may still be answered; one before it was passed by
with last_model as (select run_id, max(idx) as idx from steps where kind in ('model', 'event') group by run_id),
answered as (  -- a call recorded as started, never completed, has no result yet
    select distinct run_id, call_id from steps where kind = 'tool' and tool_status is distinct from 'started'
)
select q.run_id, q.step_idx, q.call_id, q.tool_name, r.status as run_status,
       r.status = 'running' and q.step_idx >= coalesce(m.idx, -1) as in_flight
from tool_calls q
join runs r using (run_id)
left join last_model m using (run_id)
where not exists (select 1 from answered a where a.run_id = q.run_id and a.call_id = q.call_id)
