-- The shape of a tool result (issue 49, schema drift): its JSON's key paths and value types, sorted
-- ("$ object, $.rows array, $.rows[] object, $.rows[].id number"), computed at ingest from the result's text
-- where the format gives it whole; NULL where the result is not a JSON object or array, or is cut (a preview).
-- result_schema: the hash of the result schema the harness pins, where its journal gives one.

alter table steps add column result_shape varchar;
alter table steps add column result_schema varchar;
