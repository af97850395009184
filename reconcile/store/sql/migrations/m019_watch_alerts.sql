-- What reconcile watch has raised: each alert (a signal that crossed its threshold, a run gone silent) until it
-- clears, so that a restart resumes without alerting twice, and a crossing that clears and comes back is a new one.

create table watch_alerts (
    kind varchar not null,         -- signal | stuck
    name varchar not null,         -- the signal's name; 'stuck_run' for a run gone silent
    key varchar not null,          -- the signal's key (a model, a tool …); the run's id
    raised_at timestamptz not null,
    cleared_at timestamptz,        -- NULL while it holds
    delivered boolean not null,    -- printed and handed to --on-alert; false only if watch stopped in between
    alert json                     -- the alert, as printed
);
