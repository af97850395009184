-- The tool calls a model step asked for, so calls and results can be paired.

create table tool_calls (
    run_id varchar not null,
    step_idx integer not null,    -- the model step that asked for the call
    call_position integer not null, -- 0, 1, … within that step
    call_id varchar not null,
    tool_name varchar not null,
    args_json varchar,
    args_hash varchar,
    idempotency_key varchar
);
