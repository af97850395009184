-- Runs, their tool catalogue, and steps with disjoint usage buckets.

create table runs (
    run_id varchar not null,
    source_format varchar not null,
    source_file varchar not null,
    source_line integer,
    agent varchar,
    task_class varchar,
    model varchar,                -- the model the run was configured with
    provider varchar,
    api_key_id varchar,
    workspace_id varchar,
    project_id varchar,
    started_at timestamptz,
    ended_at timestamptz,
    max_steps integer,
    max_tokens bigint,
    max_wall_seconds double,
    max_cost_micros bigint,
    max_repeats integer,
    tool_timeout_seconds double,
    result_bound_tokens integer,
    catalogue_tokens integer,
    predicted_stop_reason varchar,
    status varchar not null,      -- the canonical status taxonomy
    stop_reason varchar,          -- the raw reason, exactly as recorded
    final_output varchar,
    ledger_steps integer,         -- the harness's own counters, never recomputed
    ledger_input_tokens bigint,
    ledger_output_tokens bigint,
    ledger_cost_micros bigint,
    ledger_tool_results integer,
    labels json
);

create table run_tools (
    run_id varchar not null,
    name varchar not null,
    side_effect boolean not null,
    allow_repeat boolean not null,
    schema_tokens integer
);

create table steps (
    run_id varchar not null,
    idx integer not null,
    kind varchar not null,        -- model | tool | event
    started_at timestamptz,
    ms bigint,
    agent_label varchar,          -- e.g. a subagent's name inside its parent run
    source_line integer,
    error varchar,
    -- model steps
    model varchar,
    provider varchar,
    request_id varchar,
    response_id varchar,
    input_uncached bigint,        -- the five usage buckets are disjoint ...
    cache_read bigint,
    cache_write_5m bigint,
    cache_write_1h bigint,
    output_tokens bigint,
    reasoning_tokens bigint,      -- ... and reasoning is a subset of output
    finish_reason varchar,
    is_final boolean,
    output_text varchar,
    output_sha256 varchar,
    context_tokens bigint,
    input_hash varchar,
    attempt integer,
    harness_cost_micros bigint,
    -- tool steps
    tool_name varchar,
    call_id varchar,
    args_json varchar,            -- canonical JSON: sorted keys, no whitespace
    args_hash varchar,
    idempotency_key varchar,
    side_effect boolean,
    tool_status varchar,          -- ok | error | timeout | unknown_tool | invalid_args
    result_tokens bigint,
    result_bytes bigint,
    result_hash varchar,
    result_preview varchar,
    bounded boolean,
    -- events
    event varchar,                -- compaction | retry | fallback | cancel | wrap_up
    tokens_before bigint,
    tokens_after bigint,
    detail varchar
);
