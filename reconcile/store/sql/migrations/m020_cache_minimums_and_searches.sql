-- The shortest prompt a provider caches (OpenAI: 1,024 tokens; Anthropic: 1,024, 2,048 or 4,096 by model), dated
-- like a price: a shorter prompt cannot have been cached, so a call whose record leaves its cached share out is
-- all uncached input, and its cost is exact. Shipped in reconcile/prices/cache_minimums.toml; a price file may add
-- rows (`reconcile prices add`). Each model_prices row carries the minimum in force for its model and day.

create table cache_minimums (
    provider varchar not null,       -- the price list's provider id, or '*' for any
    model varchar not null,          -- a prefix of the price list's model id ('' for every model of the provider)
    effective_from date,             -- null: since always
    effective_to date,               -- exclusive; null: until further notice
    min_tokens bigint not null,      -- a prompt of fewer input tokens (all input buckets together) is never cached
    source varchar not null,         -- 'reconcile-cache-minimums' or the price file it came from
    source_version varchar not null
);

alter table model_prices add column min_cache_tokens bigint;

-- Hosted tools a provider bills per use beside the tokens: the web searches a model call ran (Claude Code's
-- server_tool_use.web_search_requests, Codex's web_search_call items); NULL where the format does not record them.
alter table steps add column web_searches integer;
-- and their price, dollars per thousand searches (genai-prices' web_searches_kcount; NULL: not known)
alter table model_prices add column web_search_kcount decimal(18, 9);
