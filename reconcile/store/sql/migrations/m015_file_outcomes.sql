-- A file that could not be loaded is recorded too, with why: ``status`` is ``loaded``, ``failed`` (its load
-- failed: a constraint, a cast, a parse; nothing from it is in the store) or ``unreadable`` (it could not be read:
-- permissions, a damaged compressed file); ``reason`` says why, NULL for a loaded file.

alter table ingested_files add column status varchar;

update ingested_files set status = 'loaded';

alter table ingested_files add column reason varchar;
