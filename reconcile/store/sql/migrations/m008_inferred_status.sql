-- Whether a run's status was recorded by its harness or inferred by reconcile from the transcript.
--
-- The ``check_settings`` table goes: check settings now come from configuration
-- (``reconcile.toml``), never from values stored in one store.

alter table runs add column status_inferred boolean;

update runs set status_inferred = source_format in ('claude_code', 'langfuse', 'openhands', 'otel');

drop table if exists check_settings;
