-- Each run's latest landing, numbered: written by the landing in the transaction that inserts the run's row, so a
-- run whose rows were written again (a tail read going on with it, a file read again) has a new number and one whose
-- rows were kept (an earlier run of a grown file) keeps its own. The kept run totals key on it
-- (store/kept_totals.py): the runs whose totals are written again are the runs landed, not every run of the file.

create sequence run_load;
create table run_loads (run_id varchar primary key, load bigint not null);
