-- What each check run found, which checks ran, and the settings checks read.

create table check_runs (
    checked_at timestamptz not null,  -- one value per `reconcile check` invocation
    check_name varchar not null,
    severity varchar not null,
    failures bigint not null,
    source varchar not null           -- the .sql file
);

create table findings (
    checked_at timestamptz not null,
    check_name varchar not null,
    severity varchar not null,
    run_id varchar,
    step integer,
    detail varchar
);

create table check_settings (key varchar not null, value varchar not null, about varchar);
