"""The schema's steps, oldest first: each ``mNNN_what(con)`` changes the store once (see ``reconcile.store.migrations``).

A step that has shipped is never edited: change the schema by adding the next one (its number
places it: ``reconcile.store.migrations.MIGRATIONS`` takes the steps in name order).
"""

from __future__ import annotations

import duckdb


def m001_runs_and_steps(con: duckdb.DuckDBPyConnection) -> None:
    """Runs, their tool catalogue, and steps with disjoint usage buckets."""
    con.execute(
        """
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
        )
        """
    )
    con.execute(
        """
        create table run_tools (
            run_id varchar not null,
            name varchar not null,
            side_effect boolean not null,
            allow_repeat boolean not null,
            schema_tokens integer
        )
        """
    )
    con.execute(
        """
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
        )
        """
    )


def m002_ingest_bookkeeping(con: duckdb.DuckDBPyConnection) -> None:
    """Every file ingested and every line rejected, so nothing is lost without a trace."""
    con.execute(
        """
        create table ingested_files (
            path varchar not null,
            sha256 varchar not null,
            format varchar not null,
            size_bytes bigint not null,
            lines bigint not null,
            loaded bigint not null,
            rejected bigint not null,
            skipped bigint not null,
            ingested_at timestamptz not null
        )
        """
    )
    con.execute(
        """
        create table rejects (
            path varchar not null,
            line bigint not null,
            reason varchar not null,
            raw varchar,                  -- the line, cut to 4 KB
            ingested_at timestamptz not null
        )
        """
    )


def m003_tool_calls(con: duckdb.DuckDBPyConnection) -> None:
    """The tool calls a model step asked for, so calls and results can be paired."""
    con.execute(
        """
        create table tool_calls (
            run_id varchar not null,
            step_idx integer not null,    -- the model step that asked for the call
            call_position integer not null, -- 0, 1, … within that step
            call_id varchar not null,
            tool_name varchar not null,
            args_json varchar,
            args_hash varchar,
            idempotency_key varchar
        )
        """
    )


def m004_findings(con: duckdb.DuckDBPyConnection) -> None:
    """What each check run found, which checks ran, and the settings checks read."""
    con.execute(
        """
        create table check_runs (
            checked_at timestamptz not null,  -- one value per `reconcile check` invocation
            check_name varchar not null,
            severity varchar not null,
            failures bigint not null,
            source varchar not null           -- the .sql file
        )
        """
    )
    con.execute(
        """
        create table findings (
            checked_at timestamptz not null,
            check_name varchar not null,
            severity varchar not null,
            run_id varchar,
            step integer,
            detail varchar
        )
        """
    )
    con.execute("create table check_settings (key varchar not null, value varchar not null, about varchar)")


def m005_run_parents(con: duckdb.DuckDBPyConnection) -> None:
    """A run may be a child of another (a Claude Code subagent transcript of its session)."""
    con.execute("alter table runs add column parent_run_id varchar")


def m006_prices(con: duckdb.DuckDBPyConnection) -> None:
    """Dated model prices (a snapshot of genai-prices, plus user overrides) and their resolution."""
    price_columns = ", ".join(f"{bucket}_mtok decimal(18, 9)" for bucket in
                              ("uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output"))
    tier_columns = ", ".join(f"tier_{bucket}_mtok decimal(18, 9)" for bucket in
                             ("uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output"))
    con.execute(
        f"""
        create table prices (
            provider varchar not null,
            model varchar not null,          -- genai-prices' model id, or an override's model name (a prefix)
            effective_from date,             -- null: since always
            effective_to date,               -- exclusive; null: until further notice
            {price_columns},                 -- dollars per million tokens, each bucket's effective price
            tier_start bigint,               -- above this many input tokens in one request ...
            {tier_columns},                  -- ... every token of the request costs these
            source varchar not null,         -- 'genai-prices' or the override file
            source_version varchar not null
        )
        """
    )
    con.execute(
        f"""
        create table model_prices (
            provider varchar,                -- as the steps name them
            model varchar not null,
            day date,
            matched_provider varchar,        -- what the price list calls them (null: no price found)
            matched_model varchar,
            {price_columns},
            tier_start bigint,
            {tier_columns},
            source varchar,
            source_version varchar
        )
        """
    )


def m007_provider_usage(con: duckdb.DuckDBPyConnection) -> None:
    """What the providers say was used and billed (their usage and cost exports)."""
    con.execute(
        """
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
        )
        """
    )
    con.execute(
        """
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
        )
        """
    )
    con.execute(
        """
        create table usage_replacements (
            kind varchar not null,            -- usage | cost
            bucket_key varchar not null,
            replaced_file varchar not null,   -- the earlier download
            by_file varchar not null,         -- the later one, which wins
            replaced_at timestamptz not null
        )
        """
    )


def m008_inferred_status(con: duckdb.DuckDBPyConnection) -> None:
    """Whether a run's status was recorded by its harness or inferred by reconcile from the transcript.

    The ``check_settings`` table goes: check settings now come from configuration
    (``reconcile.toml``), never from values stored in one store.
    """
    con.execute("alter table runs add column status_inferred boolean")
    con.execute("update runs set status_inferred = source_format in ('claude_code', 'langfuse', 'openhands', 'otel')")
    con.execute("drop table if exists check_settings")


def m009_price_lookup(con: duckdb.DuckDBPyConnection) -> None:
    """The normalised model id a price was found under (a Bedrock, Vertex or routed id reduced), when not the id as written."""
    con.execute("alter table model_prices add column lookup_model varchar")


def m010_ingest_deferrals(con: duckdb.DuckDBPyConnection) -> None:
    """Which file skipped which run because another file owned it: what to reload when that owner goes."""
    con.execute("create table ingest_deferrals (path varchar not null, run_id varchar not null, owner varchar not null)")


def m011_file_stamps(con: duckdb.DuckDBPyConnection) -> None:
    """Each ingested file's modification time when it was read: an unchanged file is then known without reading it.

    NULL where it was not recorded, or was too close to the read to be trusted: that file is hashed again.
    """
    con.execute("alter table ingested_files add column mtime_ns bigint")


def m012_working_time(con: duckdb.DuckDBPyConnection) -> None:
    """The time a run spent working, where its harness tells it apart from waiting (Inspect AI's working_time).

    NULL where the format does not record it: wall time (ended − started) is then all that is known.
    """
    con.execute("alter table runs add column working_seconds double")


def m013_harness_policy(con: duckdb.DuckDBPyConnection) -> None:
    """What a harness declares of its own policy: its own word for how a run ended, prompt and completion ceilings,
    retries, a budget shared by an agent tree, its loop detector and fallback route, a ledger that counts tokens as one
    total (seed 001); and how a model call failed."""
    for column, kind in (("harness_status", "varchar"), ("max_prompt_tokens", "bigint"),
                         ("max_completion_tokens", "bigint"), ("max_retries", "integer"), ("budget_scope", "varchar"),
                         ("loop_detector", "varchar"), ("loop_limit", "integer"), ("loop_window", "integer"),
                         ("fallback_model", "varchar"), ("ledger_tokens", "bigint")):
        con.execute(f"alter table runs add column {column} {kind}")
    con.execute("alter table steps add column error_class varchar")  # transport | rate_limit | invalid_output


def m014_unknown_side_effects(con: duckdb.DuckDBPyConnection) -> None:
    """A catalogue entry whose format does not say whether the tool changes the world (Inspect AI, Langfuse, OTel
    tool definitions) keeps side_effect NULL, not false."""
    con.execute("alter table run_tools alter column side_effect drop not null")


def m015_file_outcomes(con: duckdb.DuckDBPyConnection) -> None:
    """A file that could not be loaded is recorded too, with why: ``status`` is ``loaded``, ``failed`` (its load
    failed: a constraint, a cast, a parse; nothing from it is in the store) or ``unreadable`` (it could not be read:
    permissions, a damaged compressed file); ``reason`` says why, NULL for a loaded file."""
    con.execute("alter table ingested_files add column status varchar")
    con.execute("update ingested_files set status = 'loaded'")
    con.execute("alter table ingested_files add column reason varchar")


def m016_kept_judgements(con: duckdb.DuckDBPyConnection) -> None:
    """A check's verdict on each run, kept while nothing it depends on changes (``checks.kept``): which runs
    were judged under which keys, and what was found on them (no row: nothing)."""
    con.execute("create table kept_judgements (check_name varchar not null, check_key varchar not null, "
                "run_id varchar not null, run_key varchar not null)")
    con.execute("create table kept_findings (check_name varchar not null, check_key varchar not null, "
                "run_id varchar not null, run_key varchar not null, step integer, detail varchar)")
