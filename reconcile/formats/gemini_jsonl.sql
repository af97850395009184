-- Gemini CLI, JSON Lines layout. Input: _parsed(file_no, line_no, j) and the text in _lines: a metadata line, message
-- records (re-appended under the same id when they change), {"$set": …} and {"$rewindTo": id}.

-- A tail read (ingest/tail.py) goes on from _files.first_line with the state kept there: the session it was.
create or replace temp table _gm_carry as select file_no, carry from _files where carry is not null;

-- The run is the session the metadata line names; a sub-agent's recording (kind "subagent") lives in a
-- folder named by its parent session's id.
create or replace temp table _gm_session as
select f.file_no, coalesce(m.session_id, f.stem) as run_id, m.started_at,
       case when m.kind = 'subagent' then f.parent_name end as parent_run_id
from _files f
left join (select file_no, arg_min(j.sessionId, line_no) as session_id, min((j.startTime)::timestamptz) as started_at,
                  arg_min(json_extract_string(line, '$.kind'), line_no) as kind
           from _parsed join _lines using (file_no, line_no) where j.sessionId is not null group by file_no) m using (file_no);

create or replace temp table _gm_all as
select file_no, line_no as record_no, line::json as m, j.id as msg_id, j.type as mtype,
       json_extract_string(line, '$."$rewindTo"') as rewind_to, json_exists(line, '$."$set"') as is_set,
       json_type(line, '$."$set".messages') = 'ARRAY' as sets_history,
       j.sessionId is not null and j.type is null as is_meta
from _parsed join _lines using (file_no, line_no);

update _gm_session set run_id = k.carry ->> 'run_id', parent_run_id = k.carry ->> 'parent_run_id',
                       started_at = (k.carry ->> 'started_at')::timestamptz
from _gm_carry k where k.file_no = _gm_session.file_no;
