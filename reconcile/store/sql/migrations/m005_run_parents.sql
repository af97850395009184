-- A run may be a child of another (a Claude Code subagent transcript of its session).

alter table runs add column parent_run_id varchar;
