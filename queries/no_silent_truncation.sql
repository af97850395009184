-- name: no_silent_truncation
-- invariant: the context never shrinks between consecutive model calls of the same agent thread without a compaction (or resume) event between them (by more than the reasoning of earlier calls, which providers may leave out)
-- severity: error
-- remedy: something dropped context without saying so (a client-side trim, a provider truncation); make it a recorded compaction so the run's behaviour can be explained
-- needs: context_size, thread
-- judges: each run
with thread_calls as (
    select run_id, idx, context_tokens, coalesce(agent_label, '') as thread,
           -- the reasoning of the calls before: a provider may leave earlier turns' reasoning out of the
           -- context it is sent again (OpenAI reasoning models, Gemini's thoughts), so the context may
           -- shrink by up to that much without anything being cut
           coalesce(sum(reasoning_tokens) over (partition by run_id, coalesce(agent_label, '') order by idx
                                                rows between unbounded preceding and 1 preceding), 0) as earlier_reasoning
    from steps
    where kind = 'model'
),
model_calls as (
    select run_id, idx, context_tokens, earlier_reasoning,
           lag(idx) over w as previous_idx, lag(context_tokens) over w as previous_context
    from thread_calls
    where context_tokens is not null
    window w as (partition by run_id, thread order by idx)
)
select m.run_id, m.idx as step,
       format('context shrank from {} to {} tokens between steps {} and {} with no compaction event',
              m.previous_context, m.context_tokens, m.previous_idx, m.idx) as detail
from model_calls m
where m.context_tokens < m.previous_context - m.earlier_reasoning
  -- a compaction, or a resumed session's context rebuilt (Codex), is on the record
  and not exists (select 1 from steps e where e.run_id = m.run_id and e.kind = 'event' and e.event in ('compaction', 'resume')
                  and e.idx between m.previous_idx and m.idx)
