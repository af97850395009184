-- name: no_silent_truncation
-- invariant: the context never shrinks between consecutive model calls of the same agent thread without a compaction event between them
-- severity: error
-- remedy: something dropped context without saying so (a client-side trim, a provider truncation); make it a recorded compaction so the run's behaviour can be explained
-- needs: context_size, thread
with model_calls as (
    select run_id, idx, context_tokens,
           lag(idx) over w as previous_idx, lag(context_tokens) over w as previous_context
    from steps
    where kind = 'model' and context_tokens is not null
    window w as (partition by run_id, coalesce(agent_label, '') order by idx)
)
select m.run_id, m.idx as step,
       format('context shrank from {} to {} tokens between steps {} and {} with no compaction event',
              m.previous_context, m.context_tokens, m.previous_idx, m.idx) as detail
from model_calls m
where m.context_tokens < m.previous_context
  and not exists (select 1 from steps e where e.run_id = m.run_id and e.kind = 'event' and e.event = 'compaction'
                  and e.idx between m.previous_idx and m.idx)
