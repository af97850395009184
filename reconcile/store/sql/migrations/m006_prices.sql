-- Dated model prices (a snapshot of genai-prices, plus user overrides) and their resolution.

create table prices (
    provider varchar not null,
    model varchar not null,          -- genai-prices' model id, or an override's model name (a prefix)
    effective_from date,             -- null: since always
    effective_to date,               -- exclusive; null: until further notice
    uncached_mtok decimal(18, 9),
    cache_read_mtok decimal(18, 9),
    cache_write_5m_mtok decimal(18, 9),
    cache_write_1h_mtok decimal(18, 9),
    output_mtok decimal(18, 9),  -- dollars per million tokens, each bucket's effective price
    tier_start bigint,               -- above this many input tokens in one request ...
    tier_uncached_mtok decimal(18, 9),
    tier_cache_read_mtok decimal(18, 9),
    tier_cache_write_5m_mtok decimal(18, 9),
    tier_cache_write_1h_mtok decimal(18, 9),
    tier_output_mtok decimal(18, 9),  -- ... every token of the request costs these
    source varchar not null,         -- 'genai-prices' or the override file
    source_version varchar not null
);

create table model_prices (
    provider varchar,                -- as the steps name them
    model varchar not null,
    day date,
    matched_provider varchar,        -- what the price list calls them (null: no price found)
    matched_model varchar,
    uncached_mtok decimal(18, 9),
    cache_read_mtok decimal(18, 9),
    cache_write_5m_mtok decimal(18, 9),
    cache_write_1h_mtok decimal(18, 9),
    output_mtok decimal(18, 9),
    tier_start bigint,
    tier_uncached_mtok decimal(18, 9),
    tier_cache_read_mtok decimal(18, 9),
    tier_cache_write_5m_mtok decimal(18, 9),
    tier_cache_write_1h_mtok decimal(18, 9),
    tier_output_mtok decimal(18, 9),
    source varchar,
    source_version varchar
);
