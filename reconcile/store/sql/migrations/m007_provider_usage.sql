-- What the providers say was used and billed (their usage and cost exports).

create table usage_buckets (
    provider varchar not null,        -- openai | anthropic
    bucket_start timestamptz not null,
    bucket_end timestamptz not null,
    bucket_width varchar,             -- 1m | 1h | 1d (from the bucket's length)
    model varchar,                    -- the dimensions: NULL unless the export was grouped by them
    api_key_id varchar,
    workspace_id varchar,
    project_id varchar,
    user_id varchar,
    service_tier varchar,
    batch boolean,
    context_window varchar,
    inference_geo varchar,
    input_uncached bigint not null,   -- disjoint buckets, as in steps
    cache_read bigint not null,
    cache_write_5m bigint not null,
    cache_write_1h bigint not null,   -- the long-lived write (OpenAI's 12 h writes land here)
    output_tokens bigint not null,
    input_audio bigint,
    output_audio bigint,
    requests bigint,
    web_search_requests bigint,
    semantics varchar not null,       -- how the source counted input (see docs/usage.md)
    source_file varchar not null,
    source_record integer not null,
    loaded_at timestamptz not null
);

create table billed_costs (
    provider varchar not null,
    bucket_start timestamptz not null,
    bucket_end timestamptz not null,
    amount_usd decimal(24, 10) not null,  -- exact: OpenAI's dollars, Anthropic's cents / 100
    currency varchar not null,
    line_item varchar,                    -- OpenAI line_item, Anthropic description
    cost_type varchar,
    token_type varchar,
    model varchar,
    service_tier varchar,
    workspace_id varchar,
    project_id varchar,
    context_window varchar,
    source_file varchar not null,
    source_record integer not null,
    loaded_at timestamptz not null
);

create table usage_replacements (
    kind varchar not null,            -- usage | cost
    bucket_key varchar not null,
    replaced_file varchar not null,   -- the earlier download
    by_file varchar not null,         -- the later one, which wins
    replaced_at timestamptz not null
);
