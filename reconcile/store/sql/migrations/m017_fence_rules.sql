-- Which rules a harness's fence follows (reconcile/store/fences.py): when the wall clock is reached (>= or only
-- past the deadline), which ceiling it checks first, and the words of its stop reasons; NULL when the journal
-- does not say (the configuration's fence setting, else the default rules, apply).

alter table runs add column fence varchar;
