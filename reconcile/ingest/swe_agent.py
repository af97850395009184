"""Loader for SWE-agent trajectories (``*.traj``: ``{trajectory, history, info, …}``).

One file is one run (run id = the file name, which SWE-agent makes the instance id). Each
trajectory entry is one model step (its ``thought``/``response``) asking for one command (its
``action``, the tool named by the command's first word, arguments ``{"command": …}``) and one
tool step (its ``observation``). The last entry's ``submit`` is the final answer, not a tool
call; its output is ``info.submission``. A file with only ``history`` (function-calling
demonstrations) is read the same way from its assistant ``action`` messages and the tool message
after each. Records: one per entry.

``info.model_stats`` is the harness ledger (``api_calls`` → steps, ``tokens_sent`` → input
tokens, ``tokens_received`` → output tokens, ``instance_cost`` → cost); all-zero stats
(demonstrations) are treated as no ledger. Trajectories carry no per-step token usage and no
timestamps, so those stay NULL. ``info.exit_status`` is the raw stop reason, mapped to a status
by ``docs/status.md`` (no exit status: ``running``).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..canonical import canonicalize_column, idempotency_key_sql
from .accounting import owner_elsewhere
from .documents import finish_document, read_document, reject_document
from .result import FileCounts

FORMAT = "swe_agent"
SWE_AGENT_SHAPE = "json_type(j, '$.trajectory') = 'ARRAY' or json_type(j, '$.history') = 'ARRAY'"
SWE_AGENT_EXPECTED = 'a SWE-agent trajectory ({"trajectory": [...], "info": {...}})'


def load_swe_agent(con: duckdb.DuckDBPyConnection, path: Path, source: str) -> FileCounts:
    if not read_document(con, path, SWE_AGENT_SHAPE, SWE_AGENT_EXPECTED):
        return reject_document(con, path)
    run_id = path.stem
    owner = owner_elsewhere(con, run_id, source)
    con.execute(
        """create or replace temp table _swe as
        with trajectory as (
            select row_number() over () as record_no, e as raw, e ->> 'thought' as thought, e ->> 'response' as response,
                   e ->> 'action' as action, e ->> 'observation' as observation,
                   try_cast(e ->> 'execution_time' as double) as seconds
            from (select unnest((j -> 'trajectory')::json[]) as e from _doc)
        ),
        history as (
            select row_number() over () as n, h, h ->> 'role' as role from (select unnest((j -> 'history')::json[]) as h from _doc)
        ),
        from_history as (
            select row_number() over (order by a.n) as record_no, a.h as raw, a.h ->> 'thought' as thought,
                   a.h ->> 'content' as response, a.h ->> 'action' as action,
                   (select t.h ->> 'content' from history t where t.n = a.n + 1 and t.role = 'tool') as observation,
                   null::double as seconds
            from history a where a.role = 'assistant' and a.h ->> 'action' is not null
        )
        select * from trajectory
        union all select * from from_history where not exists (select 1 from trajectory)"""
    )
    con.execute(
        """create or replace temp table _records as
        select record_no, raw::varchar as raw,
               case when action is null and response is null then 'reject'
                    when $owner is not null then 'skip' else 'load' end as decision,
               case when action is null and response is null
                        then 'trajectory entry ' || record_no || ' has neither "action" nor "response"'
                    when $owner is not null then 'run ' || $run || ' was already loaded from ' || $owner end as note
        from _swe""",
        {"owner": owner, "run": run_id},
    )
    if owner is None:
        _insert(con, run_id, source)
    return finish_document(con, path, ("_swe",))


def _insert(con: duckdb.DuckDBPyConnection, run_id: str, source: str) -> None:
    con.execute(
        """create or replace temp table _swe_steps as
        select s.*, row_number() over (order by record_no) - 1 as entry,
               record_no = (select max(record_no) from _records where decision = 'load')
                   and trim(coalesce(action, '')) like 'submit%' as is_submit,
               nullif(split_part(trim(coalesce(action, '')), ' ', 1), '') as tool_name,
               json_object('command', trim(action)) as args
        from _swe s join _records r using (record_no) where r.decision = 'load'"""
    )
    con.execute(
        """create or replace temp table _swe_calls as
        select entry * 2 as step_idx, 'call-' || entry as call_id, tool_name, args, entry as cid
        from _swe_steps where not is_submit and tool_name is not null"""
    )
    canonicalize_column(con, "_swe_calls", "cid", "args", "_swe_canon")
    key = idempotency_key_sql("$run", "c.step_idx", "c.tool_name", "sha256(k.canonical)")
    con.execute(
        f"""insert into tool_calls by name
        select $run as run_id, c.step_idx, 0 as call_position, c.call_id, c.tool_name, k.canonical as args_json,
               sha256(k.canonical) as args_hash, {key} as idempotency_key
        from _swe_calls c join _swe_canon k on k.doc = c.cid""",
        {"run": run_id},
    )
    con.execute(
        """insert into steps by name
        select $run as run_id, (entry * 2)::integer as idx, 'model' as kind, record_no::integer as source_line,
               left(coalesce(response, thought), 4000) as output_text, sha256(coalesce(response, thought)) as output_sha256,
               is_submit as is_final, case when is_submit then 'submit' else 'action' end as finish_reason
        from _swe_steps""",
        {"run": run_id},
    )
    con.execute(
        """insert into steps by name
        select $run as run_id, (c.step_idx + 1)::integer as idx, 'tool' as kind,
               round(s.seconds * 1000)::bigint as ms, s.record_no::integer as source_line, c.tool_name, c.call_id,
               k.canonical as args_json, sha256(k.canonical) as args_hash, 'ok' as tool_status,
               ceil(octet_length(encode(coalesce(s.observation, ''))) / 4)::bigint as result_tokens,
               octet_length(encode(coalesce(s.observation, ''))) as result_bytes,
               sha256(coalesce(s.observation, '')) as result_hash, left(s.observation, 1000) as result_preview,
               false as bounded
        from _swe_calls c join _swe_steps s on s.entry = c.cid join _swe_canon k on k.doc = c.cid""",
        {"run": run_id},
    )
    con.execute(
        """insert into runs by name
        with info as (select j -> 'info' as info, j -> 'info' -> 'model_stats' as stats, j ->> 'replay_config' as replay
                      from _doc),
        ledger as (
            select *, coalesce(try_cast(stats ->> 'api_calls' as bigint), 0) + coalesce(try_cast(stats ->> 'tokens_sent' as bigint), 0)
                      + coalesce(try_cast(stats ->> 'tokens_received' as bigint), 0) > 0 as present
            from info
        )
        select $run as run_id, 'swe_agent' as source_format, $source as source_file, 1 as source_line,
               'swe-agent' as agent,
               case when json_valid(replay) then coalesce(replay::json ->> '$.agent.model.name',
                                                          replay::json ->> '$.agent.model.model_name') end as model,
               coalesce(canonical_status(info ->> 'exit_status'), case when info ->> 'exit_status' is not null
                        then 'failed' end, 'running') as status,
               info ->> 'exit_status' as stop_reason, info ->> 'submission' as final_output,
               case when present then try_cast(stats ->> 'api_calls' as integer) end as ledger_steps,
               case when present then try_cast(stats ->> 'tokens_sent' as bigint) end as ledger_input_tokens,
               case when present then try_cast(stats ->> 'tokens_received' as bigint) end as ledger_output_tokens,
               case when present then round(try_cast(stats ->> 'instance_cost' as decimal(24, 12)) * 1000000)::bigint
               end as ledger_cost_micros
        from ledger""",
        {"run": run_id, "source": source},
    )
    con.execute("drop table _swe_steps; drop table _swe_calls; drop table _swe_canon")
