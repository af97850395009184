-- The time a run spent working, where its harness tells it apart from waiting (Inspect AI's working_time).
--
-- NULL where the format does not record it: wall time (ended − started) is then all that is known.

alter table runs add column working_seconds double;
