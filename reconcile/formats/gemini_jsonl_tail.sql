-- Gemini CLI, JSON Lines layout, after the shared staging: what a tail read needs (ingest/tail.py).

-- A tail read's kept model steps (the final answer is found among them and the new ones alike).
create or replace temp table _prior_model as
select k.file_no, s.run_id, s.idx, true as main, coalesce(s.output_text, '') <> '' as has_text,
       exists (select 1 from tool_calls c where c.run_id = s.run_id and c.step_idx = s.idx) as asks
from _gm_carry k join _gm_session g using (file_no)
join steps s on s.run_id = g.run_id and s.idx < (k.carry ->> 'steps')::bigint and s.kind = 'model';

-- What a tail read cannot go on from: a message re-written under the id of one before the line it was read from
-- (its last copy is the message: the earlier copy, kept, would change), a metadata line naming another session.
create or replace temp table _tail_conflicts as
select g.file_no, g.record_no as line,
       case when g.is_meta then 'names the session again'
            else 're-writes message ' || left(g.msg_id, 80) || ', written before the line it was read from' end as reason
from _gm g join _gm_carry k using (file_no)
where g.is_meta or list_contains(from_json(k.carry -> 'ids', '["VARCHAR"]'), g.msg_id);

-- Where the next tail read may go on from: the largest line no message's copies cross, at or before the last
-- line of the file and the session's last message that decides its status; the ids of the messages before it
-- (a later copy of one of them reads the file whole). No state past 10,000 ids: such a session is read whole.
create or replace temp table _tail_spans as
select file_no, min(record_no) as first, max(record_no) as last from _gm where msg_id is not null group by file_no, msg_id;

create or replace temp table _tail_caps as
select e.file_no, least(e.end_line + 1, (select max(record_no) from _gm_said x where x.file_no = e.file_no)) as cap
from file_ends() e;

create or replace temp table _tail_state as
with ends as (select file_no, coalesce(carry, '{}'::json) as carry from _files),  -- (the state read from)
chosen as (select * from resume_lines()),
ids as (
    select ch.file_no, list_concat(coalesce(from_json(any_value(e.carry) -> 'ids', '["VARCHAR"]'), []),
                                   coalesce(list(distinct g.msg_id) filter (where g.msg_id is not null), [])) as ids
    from chosen ch join ends e using (file_no) left join _gm g on g.file_no = ch.file_no and g.record_no < ch.line
    group by ch.file_no
)
select e.file_no, ch.line,
       case when ch.line > 1 and len(i.ids) <= 10000
                 and (e.carry ->> 'run_id' is not null
                      or exists (select 1 from _gm g where g.file_no = e.file_no and g.is_meta and g.record_no < ch.line))
            then json_object(
           'run_id', s.run_id, 'parent_run_id', s.parent_run_id, 'started_at', s.started_at::varchar,
           'steps', coalesce((e.carry ->> 'steps')::bigint, 0)
                    + (select count(*) from _gm_steps x where x.file_no = e.file_no and x.record_no < ch.line),
           'min_ts', least((e.carry ->> 'min_ts')::timestamptz,
                           (select min(staged_timestamp(g.m ->> 'timestamp')) from _gm g
                            where g.file_no = e.file_no and g.record_no < ch.line))::varchar,
           'said_max_ts', greatest((e.carry ->> 'said_max_ts')::timestamptz,
                                   (select max(staged_timestamp(x.m ->> 'timestamp')) from _gm_said x
                                    where x.file_no = e.file_no and x.record_no < ch.line))::varchar,
           'first_model', coalesce(e.carry ->> 'first_model',
                                   (select arg_min(x.model, x.idx) from _stage_steps x where x.file_no = e.file_no
                                    and x.kind = 'model' and x.model is not null and x.source_line < ch.line)),
           'ids', i.ids)
       end as state
from ends e join chosen ch using (file_no) join _gm_session s using (file_no) join ids i using (file_no);
