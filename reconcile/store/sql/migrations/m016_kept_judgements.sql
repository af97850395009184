-- A check's verdict on each run, kept while nothing it depends on changes (``checks.kept``): which runs
-- were judged under which keys, and what was found on them (no row: nothing).

create table kept_judgements (check_name varchar not null, check_key varchar not null, run_id varchar not null, run_key varchar not null);

create table kept_findings (check_name varchar not null, check_key varchar not null, run_id varchar not null, run_key varchar not null, step integer, detail varchar);
