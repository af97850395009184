-- What a harness declares of its own policy: its own word for how a run ended, prompt and completion ceilings,
-- retries, a budget shared by an agent tree, its loop detector and fallback route, a ledger that counts tokens as one
-- total (seed 001); and how a model call failed.

alter table runs add column harness_status varchar;

alter table runs add column max_prompt_tokens bigint;

alter table runs add column max_completion_tokens bigint;

alter table runs add column max_retries integer;

alter table runs add column budget_scope varchar;

alter table runs add column loop_detector varchar;

alter table runs add column loop_limit integer;

alter table runs add column loop_window integer;

alter table runs add column fallback_model varchar;

alter table runs add column ledger_tokens bigint;

alter table steps add column error_class varchar  -- transport | rate_limit | invalid_output;
