-- Which file skipped which run because another file owned it: what to reload when that owner goes.

create table ingest_deferrals (path varchar not null, run_id varchar not null, owner varchar not null);
