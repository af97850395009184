"""Loaders for the providers' usage and cost exports — the bill side of the three-way match.

Four kinds, each as the API returns it (one page ``{"data": [...]}``, an array of pages, or the
pages' ``data`` arrays concatenated) or as CSV (the result's fields as columns, plus the bucket's
bounds: ``start_time,end_time`` for OpenAI, ``starting_at,ending_at`` for Anthropic; nested fields
flattened with ``_``, e.g. ``amount_value``, ``cache_creation_ephemeral_5m_input_tokens``):

- ``openai_usage``: ``GET /v1/organization/usage/completions``. ``input_tokens`` *includes*
  cached tokens (``input_cached_tokens``) and, when reported, cache writes; uncached input is
  ``input_uncached_tokens`` when given, else what is left.
- ``openai_costs``: ``GET /v1/organization/costs``; ``amount.value`` is in dollars.
- ``anthropic_usage``: ``GET /v1/organizations/usage_report/messages``; buckets are additive.
- ``anthropic_costs``: ``GET /v1/organizations/cost_report``; ``amount`` is a decimal *string in
  cents* ("123.45" is $1.2345).

Records: one per result. A result missing a required field is rejected with the reason; unknown
fields are ignored. Overlapping downloads never double count: a result whose bucket and
dimensions repeat within a file keeps its last copy (the earlier ones are skipped), and one that
repeats a row loaded from another file replaces it (the later download wins) and the replacement
is logged in ``usage_replacements``.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import ClassVar

import duckdb

from reconcile.ingest.accounting import account_records
from reconcile.ingest.lines import BOM_SQL, _load_lines_exactly
from reconcile.ingest.ranges import COUNT, WINDOW_TEXT, create_staging_macros, range_test, window_test
from reconcile.ingest.result import FileCounts
from reconcile.ingest.validate import lenient_reason_sql, lenient_suspect_sql
from reconcile.sql_text import string_literal
from reconcile.formats.base import Format

KINDS = {
    "openai_usage": ("openai", "usage", "start_time", "end_time"),
    "openai_costs": ("openai", "cost", "start_time", "end_time"),
    "anthropic_usage": ("anthropic", "usage", "starting_at", "ending_at"),
    "anthropic_costs": ("anthropic", "cost", "starting_at", "ending_at"),
}
DIMENSIONS = ("model", "api_key_id", "workspace_id", "project_id", "user_id", "service_tier", "batch",
              "context_window", "inference_geo")
COST_KEYS = ("line_item", "cost_type", "token_type", "model", "service_tier", "workspace_id", "project_id",
             "context_window")


def _field(name: str) -> str:
    """A result field, nested (JSON) or flattened (CSV) — e.g. cache_creation.ephemeral_5m_input_tokens."""
    flat = name.replace(".", "_")
    return f"coalesce(r ->> '$.{name}', r ->> '{flat}')" if "." in name else f"(r ->> '{name}')"


def _count(*names: str) -> str:
    """A token or request count as the file gives it (its magnitude kept, for the range test)."""
    return "coalesce(" + ", ".join(f"staged_number({_field(n)})" for n in names) + ")"


def _when(key: str) -> str:
    """A bucket bound: an RFC 3339 time (Anthropic) or Unix seconds (OpenAI); NULL when it is neither."""
    return (f"coalesce(staged_timestamp(r ->> '{key}'), "
            f"try(to_timestamp(try_cast(r ->> '{key}' as bigint))))")


_USAGE_COUNTS = ("cache_read", "cache_write_5m", "cache_write_1h", "input_uncached", "output_tokens", "input_audio",
                 "output_audio", "requests", "web_search_requests")


def _out_of_range(table: str) -> str:
    """A CASE naming the first count (usage) or bucket bound outside its declared range (``ingest.ranges``)."""
    branches = [f"when {b} is not null and not {window_test(b)} then 'the bucket''s {b} is ' || {b}::varchar "
                f"|| '; expected a time {WINDOW_TEXT}'" for b in ("bucket_start", "bucket_end")]
    if table == "usage":
        branches += [f"when {c} is not null and not {range_test(c, COUNT)} then '\"{c}\" is ' || "
                     f"case when isnan({c}) then 'not a number' else {c}::varchar end || '; expected {COUNT.expected()}'"
                     for c in _USAGE_COUNTS]
    return "case " + " ".join(branches) + " end"


_USAGE_SQL = {
    "openai_usage": f"""
        {_count('input_cached_tokens')} as cache_read,
        {_count('input_cache_write_tokens')} as cache_write_5m,
        {_count('input_cache_write_12h_tokens')} as cache_write_1h,
        coalesce({_count('input_uncached_tokens')}, {_count('input_tokens')} - coalesce({_count('input_cached_tokens')}, 0)
                 - coalesce({_count('input_cache_write_tokens')}, 0) - coalesce({_count('input_cache_write_12h_tokens')}, 0))
            as input_uncached,
        {_count('output_tokens')} as output_tokens, {_count('input_audio_tokens')} as input_audio,
        {_count('output_audio_tokens')} as output_audio, {_count('num_model_requests')} as requests,
        null::double as web_search_requests,
        'openai: input_tokens includes cached tokens; uncached = input - cached - cache writes' as semantics,
        case when {_count('input_tokens')} is null and {_count('input_uncached_tokens')} is null
                 then 'result has no "input_tokens"'
             when {_count('output_tokens')} is null then 'result has no "output_tokens"' end as missing""",
    "anthropic_usage": f"""
        {_count('cache_read_input_tokens')} as cache_read,
        {_count('cache_creation.ephemeral_5m_input_tokens', 'cache_creation_5m_input_tokens')} as cache_write_5m,
        {_count('cache_creation.ephemeral_1h_input_tokens', 'cache_creation_1h_input_tokens')} as cache_write_1h,
        {_count('uncached_input_tokens')} as input_uncached, {_count('output_tokens')} as output_tokens,
        null::double as input_audio, null::double as output_audio, null::double as requests,
        {_count('server_tool_use.web_search_requests')} as web_search_requests,
        'anthropic: additive buckets (uncached, cache read, cache creation 5 m / 1 h)' as semantics,
        case when {_count('uncached_input_tokens')} is null then 'result has no "uncached_input_tokens"'
             when {_count('output_tokens')} is null then 'result has no "output_tokens"' end as missing""",
}

_COST_SQL = {
    "openai_costs": f"""
        try_cast({_field('amount.value')} as decimal(24, 10)) as amount_usd,
        upper(coalesce({_field('amount.currency')}, 'usd')) as currency,
        {_field('line_item')} as line_item, null as cost_type, null as token_type, null as model,
        null as service_tier, null as workspace_id, {_field('project_id')} as project_id, null as context_window,
        case when try_cast({_field('amount.value')} as decimal(24, 10)) is null
             then 'result has no numeric "amount.value"' end as missing""",
    # Anthropic reports the amount as a decimal string in cents: "123.45" is $1.2345.
    "anthropic_costs": f"""
        try_cast({_field('amount')} as decimal(24, 10)) / 100 as amount_usd,
        upper(coalesce({_field('currency')}, 'USD')) as currency,
        {_field('description')} as line_item, {_field('cost_type')} as cost_type, {_field('token_type')} as token_type,
        {_field('model')} as model, {_field('service_tier')} as service_tier, {_field('workspace_id')} as workspace_id,
        null as project_id, {_field('context_window')} as context_window,
        case when try_cast({_field('amount')} as decimal(24, 10)) is null
             then 'result has no "amount" (a decimal string of cents)' end as missing""",
}


# One CSV field (RFC 4180): quoted, with quotes inside doubled (spaces around the quotes allowed); or
# unquoted, not starting with a quote (a quote later in it is kept, as Python's csv module keeps it); or empty.
_CSV_FIELD = '(?:[ \t]*"(?:[^"]|"")*"[ \t]*|[^,"][^,]*|)'
_CSV_ROW = f"{_CSV_FIELD}(?:,{_CSV_FIELD})*"


def _read_records(con: duckdb.DuckDBPyConnection, source, start: str, end: str) -> str | None:
    """Create ``_pr(record_no, label, r JSON, raw, problem, blank)``: every result, bounds as ``_start``/``_end``.

    ``problem`` says why a record cannot be read (``r`` is then NULL); ``blank`` marks a blank CSV line
    (skipped). Returns why the whole file cannot be read (a JSON export that does not parse), else None.
    """
    path = Path(source.alias)
    with open(path, "rb") as handle:
        head = handle.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()[:1] or b"{"
    if head not in (b"{", b"["):
        _read_csv_records(con, source, start, end)
        return None
    con.execute(f"""create or replace temp table _doc as
                    select case when starts_with(text, {BOM_SQL}) then substr(text, 2) else text end as content
                    from (select try(decode(content)) as text from read_blob(?))""", [str(path)])
    if con.execute("select content is null from _doc").fetchall()[0][0]:
        return ("not valid UTF-8: the export must be UTF-8 text as the API returns it "
                "(download it again, or convert it: iconv -t UTF-8)")
    if not con.execute("select json_valid(content) from _doc").fetchall()[0][0]:
        return "not valid JSON: the export needs the whole file to parse (a truncated download?)"
    lenient = con.execute(f"select case when {lenient_suspect_sql('content')} then {lenient_reason_sql('content')} end "
                          "from _doc").fetchall()[0][0]
    if lenient:  # DuckDB parses it; no other JSON reader would
        return f"not valid JSON: {lenient}"
    con.execute("create or replace temp table _doc as select content::json as j from _doc")
    con.execute(
        f"""create or replace temp table _pr as
        with items as (
            select unnest(list) as item, generate_subscripts(list, 1) as page
            from (select case when json_type(j) = 'ARRAY' then j::json[] else [j] end as list from _doc)
        ),
        buckets as (
            select page, unnest(list) as b, generate_subscripts(list, 1) as bucket
            from (select page, case when json_type(item, '$.data') = 'ARRAY' then (item -> 'data')::json[]
                                    else [item] end as list from items)
        ),
        results as (
            select page, bucket, b, unnest(list) as r, generate_subscripts(list, 1) as position
            from (select *, coalesce((b -> 'results')::json[], []) as list from buckets)
        )
        select record_no, 'result ' || record_no as label, r, r::varchar as raw, null::varchar as problem,
               false as blank
        from (select row_number() over (order by page, bucket, position) as record_no,
                     json_merge_patch(r, json_object('_start', b -> '{start}', '_end', b -> '{end}')) as r
              from results)"""
    )
    return None


def _read_csv_lines(con: duckdb.DuckDBPyConnection, source) -> None:
    """``_lines(line_no, line, read_error)``: the file's lines, split on ``\\n`` as every reader here splits them.

    In SQL when the file is UTF-8 throughout; otherwise line by line (the rare path), so one bad
    byte costs one line. No reader here may fail: this runs inside the file's transaction.
    """
    con.execute("""create or replace temp table _csv_text as
                   select try(decode(content)) as text from read_blob(?)""", [source.alias])
    if con.execute("select text is null from _csv_text").fetchall()[0][0]:
        con.execute("create or replace temp table _lines "
                    "(file_no integer, line_no bigint, line varchar, read_error varchar)")
        _load_lines_exactly(con, 1, source)
    else:
        con.execute(r"""create or replace temp table _lines as
            select 1 as file_no, generate_subscripts(parts, 1)::bigint as line_no,
                   regexp_replace(unnest(parts), '\r$', '') as line, null::varchar as read_error
            from (select case when ends_with(text, chr(10)) then list_slice(parts, 1, len(parts) - 1) else parts end
                         as parts
                  from (select text, string_split(text, chr(10)) as parts from _csv_text))""")
    con.execute(f"update _lines set line = substr(line, 2) where line_no = 1 and starts_with(line, {BOM_SQL})")
    con.execute("drop table if exists _csv_text")


def _read_csv_records(con: duckdb.DuckDBPyConnection, source, start: str, end: str) -> None:
    """A CSV export's rows as ``_pr``, numbered from the header (a row's reason also names its line).

    Parsed here rather than by DuckDB's CSV sniffer, which gives up on the whole file (and names its
    columns column0, column1, …) at one short row or one open quote: here such a row is one rejected
    line, named with what is wrong, and the other rows load.
    """
    _read_csv_lines(con, source)
    found = con.execute("select line_no, line from _lines where trim(coalesce(line, '')) <> '' "
                        "and read_error is null order by line_no limit 1").fetchall()
    header_no, header = found[0] if found else (0, "")
    names = [name.strip() for name in next(csv.reader([header]), [])]
    seen: dict[str, int] = {}
    problem = "null"
    for number, name in enumerate(names, 1):
        if name and name in seen:
            problem = string_literal(f'the header (line {header_no}) names column "{name}" twice (columns '
                                     f'{seen[name]} and {number}); rename or remove one and ingest the file again')
            break
        seen[name] = number
    pairs = [f"{string_literal(name)}, v[{number}]" for name, number in seen.items() if name and name not in ("_start", "_end")]
    pairs += [f"'{key}', {f'v[{seen[column]}]' if column in seen else 'null'}"
              for key, column in (("_start", start), ("_end", end))]
    # a quoted field without its quotes (spaces outside them are not part of it), an unquoted one trimmed
    value = "case when starts_with(trim(f), '\"') then replace(trim(f)[2:-2], '\"\"', '\"') else trim(f) end"
    con.execute(
        f"""create or replace temp table _pr as
        with rows as (
            -- a row is numbered from the header (row 1 is the first line after it), as a JSON result is
            -- numbered in its file; its reason names the file's own line too
            select line_no - {header_no} as record_no, 'row ' || (line_no - {header_no}) || ' (line ' || line_no || ')'
                       as label,
                   line, read_error, trim(coalesce(line, '')) = '' as blank,
                   regexp_full_match(coalesce(line, ''), '{_CSV_ROW}') as well_formed,
                   regexp_extract_all(',' || coalesce(line, ''), ',({_CSV_FIELD})', 1) as fields
            from _lines where line_no > {header_no}
        ),
        checked as (
            select *, case
                when blank then null
                when read_error is not null then label || ': ' || read_error
                when {problem} is not null then label || ': ' || {problem}
                when not well_formed then label || ' is not a CSV row: a quoted field is left open or has text after '
                    || 'its closing quote; quote the whole field and double each quote inside it ("")'
                when len(fields) < {len(names)} then label || ' has ' || len(fields) || ' field(s); the header has '
                    || '{len(names)}: the row is cut short (a truncated download?) — download the export again'
                when len(fields) > {len(names)} then label || ' has ' || len(fields) || ' fields; the header has '
                    || '{len(names)}: quote a value that holds a comma'
            end as problem
            from rows
        )
        select record_no, label, raw, problem, blank,
               case when problem is null and not blank
                    then json_object({", ".join(pairs)}) end as r
        from (select *, line as raw, list_transform(fields, lambda f: nullif({value}, '')) as v from checked)"""
    )


def load_provider_export(kind: str):
    provider, table, start, end = KINDS[kind]

    def load(con: duckdb.DuckDBPyConnection, file) -> FileCounts:
        source = file.name  # the name the store keeps (see ingest.files.stored_name)
        create_staging_macros(con)
        unreadable = _read_records(con, file, start, end)
        if unreadable:
            con.execute("""create or replace temp table _stage_records as
                           select 1 as file_no, 1 as record_no, left(content, 4096) as raw, 'reject' as decision,
                                  ? as note
                           from _doc""", [unreadable])
            return _finish(con, source)
        body = _USAGE_SQL[kind] if table == "usage" else _COST_SQL[kind]
        when_start, when_end = _when("_start"), _when("_end")
        con.execute(
            f"""create or replace temp table _pn as
            select record_no, label, raw, problem, blank, problem is null and not blank as r_read, {when_start} as bucket_start, {when_end} as bucket_end,
                   {", ".join(f"nullif({_field(d)}, '') as {d}" for d in DIMENSIONS if table == 'usage')}
                   {"," if table == "usage" else ""} {body}
            from _pr"""
        )
        con.execute(f"update _pn set missing = coalesce(missing, {_out_of_range(table)}) where r_read")
        keys = DIMENSIONS if table == "usage" else COST_KEYS

        def bucket_key(alias: str = "") -> str:  # a bucket's identity, over the staged rows or (alias) the stored ones
            return (f"concat_ws('|', '{provider}', {alias}bucket_start, {alias}bucket_end, "
                    + ", ".join(f"coalesce({alias}{k}::varchar, '')" for k in keys) + ")")

        key = bucket_key()
        con.execute(
            f"""create or replace temp table _stage_records as
            select 1 as file_no, record_no, raw,
                   -- the last *valid* copy of a bucket wins: a broken duplicate never displaces a good row
                   case when blank then 'skip'
                        when not valid then 'reject'
                        when record_no < max(case when valid then record_no end) over (partition by {key}) then 'skip'
                        else 'load' end as decision,
                   case when blank then 'blank line'
                        when problem is not null then problem
                        when bucket_start is null or bucket_end is null
                            then label || ': the bucket has no valid {start} / {end}'
                        when missing is not null then label || ': ' || missing
                        when record_no < max(case when valid then record_no end) over (partition by {key})
                            then 'the same bucket and dimensions again later in the file (overlapping pages)' end as note,
                   {key} as bucket_key
            from (select *, r_read and bucket_start is not null and bucket_end is not null and missing is null as valid
                  from _pn)"""
        )
        target = "usage_buckets" if table == "usage" else "billed_costs"
        stored_key = bucket_key("t.")
        con.execute(
            f"""insert into usage_replacements
            select distinct '{table}', r.bucket_key, t.source_file, $source, now()
            from {target} t join _stage_records r on r.decision = 'load' and r.bucket_key = {stored_key}
            where t.provider = '{provider}' and t.source_file <> $source""", {"source": source})
        con.execute(
            f"""delete from {target} t where t.provider = '{provider}' and t.source_file <> $source
                and {stored_key} in (select bucket_key from _stage_records where decision = 'load')""", {"source": source})
        columns = (["bucket_width", *DIMENSIONS, "input_uncached", "cache_read", "cache_write_5m", "cache_write_1h",
                    "output_tokens", "input_audio", "output_audio", "requests", "web_search_requests", "semantics"]
                   if table == "usage" else
                   ["amount_usd", "currency", *COST_KEYS])
        width = ("case date_diff('second', bucket_start, bucket_end) when 60 then '1m' when 3600 then '1h' "
                 "when 86400 then '1d' else date_diff('second', bucket_start, bucket_end) || 's' end as bucket_width")
        select = ", ".join(width if c == "bucket_width" else
                           (f"try_cast({c} as boolean) as {c}" if c == "batch" else
                            (f"coalesce({c}, 0) as {c}" if c in ("cache_read", "cache_write_5m", "cache_write_1h") else c))
                           for c in columns)
        con.execute(
            f"""insert into {target} by name
            select '{provider}' as provider, bucket_start, bucket_end, {select},
                   $source as source_file, record_no::integer as source_record, now() as loaded_at
            from _pn join _stage_records using (record_no) where decision = 'load'""", {"source": source})
        return _finish(con, source)

    return load


def _finish(con: duckdb.DuckDBPyConnection, source: str) -> FileCounts:
    con.execute("create or replace temp table _files as select 1 as file_no, ? as path", [source])
    counts = account_records(con)[1]
    for scratch in ("_doc", "_lines", "_pr", "_pn", "_stage_records", "_landing_records", "_checked", "_outcome", "_files"):
        con.execute(f"drop table if exists {scratch}")
    return counts


# Keys, not values: a cost report's token_type *value* can be "uncached_input_tokens".
_JSON_MARKERS = {
    "openai_usage": (r'"organization\.usage\.completions\.result"', r'"num_model_requests"\s*:'),
    "openai_costs": (r'"organization\.costs\.result"',),
    "anthropic_usage": (r'"uncached_input_tokens"\s*:',),
    "anthropic_costs": (r'"starting_at"\s*:', r'"cost_type"\s*:'),
}
_CSV_COLUMNS = {
    "openai_usage": {"start_time", "input_tokens"}, "openai_costs": {"start_time", "amount_value"},
    "anthropic_usage": {"starting_at", "uncached_input_tokens"}, "anthropic_costs": {"starting_at", "amount"},
}


class UsageExport(Format):
    """A provider's usage or cost export, JSON or CSV: it lands in usage_buckets or billed_costs."""

    batch: ClassVar[bool] = False
    input = "document"

    def __init__(self, kind: str):
        self.kind = kind
        self.name = kind
        self.description = f"{kind.replace('_', ' ')} export (JSON pages or CSV)"
        self._load = load_provider_export(kind)

    def sniff(self, values: list[object], text: str) -> bool:
        """Recognised by the fields only that kind has."""
        head = text.lstrip()
        if head[:1] in ("{", "["):
            markers = _JSON_MARKERS[self.kind]
            if self.kind == "anthropic_costs":
                return all(re.search(m, text) for m in markers) and bool(re.search(r'"amount"\s*:', text))
            return any(re.search(m, text) for m in markers)
        header = {column.strip().strip('"') for column in head.splitlines()[0].split(",")} if head else set()
        return _CSV_COLUMNS[self.kind] <= header and (self.kind != "anthropic_costs" or "uncached_input_tokens" not in header)

    def load(self, con: duckdb.DuckDBPyConnection, sources: list, forced: bool) -> dict[int, FileCounts]:
        return {number: self._load(con, s) for number, s in enumerate(sources, 1)}


OPENAI_USAGE, OPENAI_COSTS, ANTHROPIC_USAGE, ANTHROPIC_COSTS = (UsageExport(kind) for kind in KINDS)
