"""Loader for the native journal, format v1 (``docs/journal-format.md``).

Everything is set-based SQL over the file's lines: validate, de-duplicate, then insert runs,
the tool catalogue, steps and requested tool calls. The caller owns the transaction.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..canonical import canonicalize_column, idempotency_key_sql
from ..journal import EVENTS, TOOL_STATUSES, USAGE_BUCKETS
from ..status import STATUSES
from .accounting import record_outcomes
from .result import FileCounts
from .validate import Field, check_lines, structure_sql

FORMAT = "native"

_IS_STEP = "{type} = 'step'"
_IS_MODEL = "{type} = 'step' and {kind} = 'model'"
_IS_TOOL = "{type} = 'step' and {kind} = 'tool'"
_IS_EVENT = "{type} = 'step' and {kind} = 'event'"
_IS_START = "{type} = 'run_start'"

FIELDS = [
    Field("v", "int", "true"),
    Field("type", "str", "true", ("run_start", "step", "run_end")),
    Field("run_id", "str", "true"),
    Field("ts", "ts", "true"),
    # run_start
    Field("agent", "str", _IS_START),
    *(Field(name, "str") for name in ("task_class", "model", "provider", "api_key_id", "workspace_id",
                                       "project_id", "predicted_stop_reason")),
    Field("limits", "object"),
    *(Field(f"limits.{name}", "count") for name in ("max_steps", "max_tokens", "max_cost_micros",
                                                     "max_repeats", "result_bound_tokens")),
    Field("limits.max_wall_seconds", "number"),
    Field("limits.tool_timeout_seconds", "number"),
    Field("tools", "array", items=(("name", "VARCHAR"), ("side_effect", "BOOLEAN"), ("allow_repeat", "BOOLEAN"),
                                   ("schema_tokens", "BIGINT"))),
    Field("catalogue_tokens", "count"),
    Field("labels", "object"),
    # steps
    Field("idx", "count", _IS_STEP),
    Field("kind", "str", _IS_STEP, ("model", "tool", "event")),
    Field("ms", "number"),
    Field("agent_label", "str"),
    Field("error", "str"),
    Field("usage", "object", _IS_MODEL),
    *(Field(f"usage.{bucket}", "count") for bucket in USAGE_BUCKETS),
    *(Field(name, "str") for name in ("request_id", "response_id", "finish_reason", "text", "text_preview",
                                       "text_sha256", "input_hash")),
    Field("final", "bool"),
    Field("context_tokens", "count"),
    Field("attempt", "count"),
    Field("cost_micros", "count"),
    Field("tool_calls", "array", items=(("call_id", "VARCHAR"), ("name", "VARCHAR"), ("args", "JSON"))),
    Field("call_id", "str", _IS_TOOL),
    Field("tool", "str", _IS_TOOL),
    Field("args", "any"),
    *(Field(name, "str") for name in ("args_hash", "idempotency_key", "result_hash", "result_preview")),
    Field("status", "str", None, TOOL_STATUSES + STATUSES),
    Field("side_effect", "bool"),
    Field("bounded", "bool"),
    Field("result_tokens", "count"),
    Field("result_bytes", "count"),
    Field("event", "str", _IS_EVENT, EVENTS),
    Field("tokens_before", "count"),
    Field("tokens_after", "count"),
    Field("detail", "str"),
    # run_end
    Field("stop_reason", "str", "{type} = 'run_end'"),
    Field("final_output", "str"),
    Field("ledger", "object"),
    *(Field(f"ledger.{name}", "count") for name in ("steps", "input_tokens", "output_tokens", "cost_micros",
                                                     "tool_results")),
]

_VERSION_CHECK = """when json_type(f[1]) in ('BIGINT', 'UBIGINT') and f[1] ->> '$' <> '1'
        then 'journal version ' || (f[1] ->> '$') || ' is not supported; this reconcile reads v1'"""

_SEMANTIC_CHECKS = f"""
case
    when j.kind = 'tool' and j.status not in ({", ".join(repr(s) for s in TOOL_STATUSES)})
        then 'field "status" is ' || j.status || ' on a tool step; expected one of {", ".join(TOOL_STATUSES)}'
    when j.type = 'run_end' and j.status is not null and j.status not in ({", ".join(repr(s) for s in STATUSES if s != "running")})
        then 'field "status" is ' || j.status || ' on a run_end line; expected one of {", ".join(s for s in STATUSES if s != "running")}'
    when j.type = 'run_end' and j.status is null and canonical_status(j.stop_reason) is null
        then 'stop_reason "' || j.stop_reason || '" is not a known stop reason; add "status" (one of {", ".join(s for s in STATUSES if s != "running")}) to the run_end line (see docs/status.md)'
    when not coalesce(list_bool_and(list_transform(j.tool_calls, lambda c: c.call_id is not null and c.name is not null)), true)
        then 'every entry of "tool_calls" needs a string "call_id" and "name"'
    when not coalesce(list_bool_and(list_transform(j.tools, lambda t: t.name is not null)), true)
        then 'every entry of "tools" needs a string "name"'
end"""


def load_native(con: duckdb.DuckDBPyConnection, path: Path, source: str) -> FileCounts:
    """Load one native journal (its lines already in ``_lines``) inside the caller's transaction."""
    check_lines(con, FIELDS, _VERSION_CHECK)
    con.execute(
        f"""create or replace temp table _parsed as
        select line_no, line, j, j.type as type, j.run_id as run_id, j.idx::integer as idx,
               ({_SEMANTIC_CHECKS}) as reason
        from (select line_no, line, json_transform(line, {structure_sql(FIELDS)}) as j from _checked
              where reason is null and not blank)"""
    )
    _resolve_duplicates(con, source)
    _insert_runs(con, source)
    _insert_steps(con)
    con.execute(
        """create or replace temp table _outcome as
        select 1 as file_no, line_no, 'reject' as decision, reason as note from _parsed where reason is not null
        union all select 1, line_no, decision, note from _decided"""
    )
    counts = record_outcomes(con)[1]
    con.execute("drop table _lines; drop table _checked; drop table _parsed; drop table _outcome")
    return counts


def _resolve_duplicates(con: duckdb.DuckDBPyConnection, source: str) -> None:
    """Mark each good line load / skip (an exact repeat, or a run another file owns) / reject.

    Repeated keys are rare, so they are found by aggregation and only their lines compared.
    """
    con.execute(
        """create or replace temp table _repeats as
        select p.line_no, k.first_line, p.line = f.line as same_text
        from (select type, run_id, coalesce(idx, -1) as idx, min(line_no) as first_line
              from _parsed where reason is null group by all having count(*) > 1) k
        join _parsed p on p.reason is null and p.type = k.type and p.run_id = k.run_id
                      and coalesce(p.idx, -1) = k.idx and p.line_no <> k.first_line
        join _parsed f on f.line_no = k.first_line"""
    )
    con.execute(
        """create or replace temp table _decided as
        with started as (select distinct run_id from _parsed where reason is null and type = 'run_start'),
        owned as (select run_id, any_value(source_file) as owner from runs where source_file <> $source group by run_id)
        select g.line_no, g.type, g.run_id, g.idx, g.j,
            case
                when r.same_text then 'skip'
                when r.line_no is not null then 'reject'
                when s.run_id is null then 'reject'
                when o.run_id is not null then 'skip'
                else 'load'
            end as decision,
            case
                when r.same_text then 'exact repeat of line ' || r.first_line
                when r.line_no is not null then 'conflicts with line ' || r.first_line || ' (same ' || g.type
                    || coalesce(' ' || g.idx, '') || ' of run ' || g.run_id || ', different content)'
                when s.run_id is null then 'no run_start line for run ' || g.run_id || ' in this file'
                when o.run_id is not null then 'run ' || g.run_id || ' was already loaded from ' || o.owner
            end as note
        from _parsed g
        left join _repeats r using (line_no)
        left join started s using (run_id)
        left join owned o using (run_id)
        where g.reason is null""",
        {"source": source},
    )


def _insert_runs(con: duckdb.DuckDBPyConnection, source: str) -> None:
    con.execute(
        """insert into runs by name
        select s.run_id, 'native' as source_format, $source as source_file, s.line_no as source_line,
            s.j."agent" as agent, s.j."task_class" as task_class, s.j."model" as model,
            s.j."provider" as provider, s.j."api_key_id" as api_key_id,
            s.j."workspace_id" as workspace_id, s.j."project_id" as project_id,
            s.j."ts"::timestamptz as started_at, e.j."ts"::timestamptz as ended_at,
            s.j."limits"."max_steps"::integer as max_steps,
            s.j."limits"."max_tokens"::bigint as max_tokens,
            s.j."limits"."max_wall_seconds"::double as max_wall_seconds,
            s.j."limits"."max_cost_micros"::bigint as max_cost_micros,
            s.j."limits"."max_repeats"::integer as max_repeats,
            s.j."limits"."tool_timeout_seconds"::double as tool_timeout_seconds,
            s.j."limits"."result_bound_tokens"::integer as result_bound_tokens,
            s.j."catalogue_tokens"::integer as catalogue_tokens,
            s.j."predicted_stop_reason" as predicted_stop_reason,
            case when e.run_id is null then 'running'
                 else coalesce(e.j."status", canonical_status(e.j."stop_reason")) end as status,
            e.j."stop_reason" as stop_reason,
            e.j."final_output" as final_output,
            e.j."ledger"."steps"::integer as ledger_steps,
            e.j."ledger"."input_tokens"::bigint as ledger_input_tokens,
            e.j."ledger"."output_tokens"::bigint as ledger_output_tokens,
            e.j."ledger"."cost_micros"::bigint as ledger_cost_micros,
            e.j."ledger"."tool_results"::integer as ledger_tool_results,
            s.j."labels" as labels
        from _decided s
        left join _decided e on e.run_id = s.run_id and e.type = 'run_end' and e.decision = 'load'
        where s.type = 'run_start' and s.decision = 'load'""",
        {"source": source},
    )
    con.execute(
        """insert into run_tools by name
        select run_id, t.name, coalesce(t.side_effect, false) as side_effect,
            coalesce(t.allow_repeat, false) as allow_repeat, t.schema_tokens::integer as schema_tokens
        from (select run_id, unnest(j.tools) as t
              from _decided where type = 'run_start' and decision = 'load')"""
    )


def _insert_steps(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """create or replace temp table _step_lines as
        select line_no as sid, * from _decided where type = 'step' and decision = 'load'"""
    )
    con.execute(
        """create or replace temp table _calls as
        select row_number() over () as cid, run_id, idx as step_idx, position - 1 as call_position,
               c.call_id, c.name as tool_name, c.args
        from (select run_id, idx, unnest(j.tool_calls) as c, generate_subscripts(j.tool_calls, 1) as position
              from _step_lines where j.tool_calls is not null)"""
    )
    # One canonicalization pass over the calls' arguments and any arguments on tool steps.
    con.execute(
        """create or replace temp table _args as
        select 'c' || cid as doc, args from _calls
        union all select 's' || sid, j."args" from _step_lines where j."kind" = 'tool'"""
    )
    canonicalize_column(con, "_args", "doc", "args", "_canon")
    key = idempotency_key_sql("c.run_id", "c.step_idx", "c.tool_name", "sha256(k.canonical)")
    con.execute(
        f"""insert into tool_calls by name
        select c.run_id, c.step_idx, c.call_position, c.call_id, c.tool_name, k.canonical as args_json,
               sha256(k.canonical) as args_hash, {key} as idempotency_key
        from _calls c left join _canon k on k.doc = 'c' || c.cid"""
    )
    con.execute(
        """insert into steps by name
        select s.run_id, s.idx, s.j."kind" as kind, s.j."ts"::timestamptz as started_at,
            round(s.j."ms"::double)::bigint as ms, s.j."agent_label" as agent_label,
            s.line_no as source_line, s.j."error" as error,
            s.j."model" as model, s.j."provider" as provider,
            s.j."request_id" as request_id, s.j."response_id" as response_id,
            s.j."usage"."input_uncached"::bigint as input_uncached,
            s.j."usage"."cache_read"::bigint as cache_read,
            s.j."usage"."cache_write_5m"::bigint as cache_write_5m,
            s.j."usage"."cache_write_1h"::bigint as cache_write_1h,
            s.j."usage"."output"::bigint as output_tokens,
            s.j."usage"."reasoning"::bigint as reasoning_tokens,
            s.j."finish_reason" as finish_reason,
            case when s.j."kind" = 'model' then coalesce(s.j."final"::boolean, false) end as is_final,
            coalesce(s.j."text", s.j."text_preview") as output_text,
            coalesce(s.j."text_sha256", sha256(s.j."text")) as output_sha256,
            s.j."context_tokens"::bigint as context_tokens, s.j."input_hash" as input_hash,
            s.j."attempt"::integer as attempt, s.j."cost_micros"::bigint as harness_cost_micros,
            coalesce(s.j."tool", c.tool_name) as tool_name, s.j."call_id" as call_id,
            coalesce(own.canonical, c.args_json) as args_json,
            coalesce(sha256(own.canonical), c.args_hash) as args_hash,
            coalesce(s.j."idempotency_key", c.idempotency_key) as idempotency_key,
            coalesce(s.j."side_effect"::boolean, t.side_effect) as side_effect,
            s.j."status" as tool_status,
            s.j."result_tokens"::bigint as result_tokens, s.j."result_bytes"::bigint as result_bytes,
            s.j."result_hash" as result_hash, s.j."result_preview" as result_preview,
            case when s.j."kind" = 'tool' then coalesce(s.j."bounded"::boolean, false) end as bounded,
            s.j."event" as event, s.j."tokens_before"::bigint as tokens_before,
            s.j."tokens_after"::bigint as tokens_after, s.j."detail" as detail
        from _step_lines s
        left join _canon own on own.doc = 's' || s.sid
        left join (select * from tool_calls qualify row_number() over (partition by run_id, call_id order by step_idx) = 1) c
            on c.run_id = s.run_id and c.call_id = s.j."call_id"
        left join run_tools t on t.run_id = s.run_id and t.name = coalesce(s.j."tool", c.tool_name)"""
    )
    con.execute("drop table _step_lines; drop table _calls; drop table _args; drop table _canon")
