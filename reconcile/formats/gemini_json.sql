-- Gemini CLI, legacy layout. Input: _doc(file_no, j), one chat recording per file: its messages.

create or replace temp table _gm_carry as select file_no, carry from _files where carry is not null;  -- (none: a document)

create or replace temp table _gm_session as
select d.file_no, coalesce(d.j ->> 'sessionId', f.stem) as run_id, staged_timestamp(d.j ->> 'startTime') as started_at,
       case when d.j ->> 'kind' = 'subagent' then f.parent_name end as parent_run_id
from _doc d join _files f using (file_no);

create or replace temp table _gm_all as
select file_no, position as record_no, m, m ->> 'id' as msg_id, m ->> 'type' as mtype,
       null::varchar as rewind_to, false as is_set, false as sets_history, false as is_meta
from (select file_no, unnest(messages) as m, generate_subscripts(messages, 1) as position
      from (select file_no, json_list(j -> 'messages') as messages from _doc));
