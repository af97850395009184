-- Each ingested file's modification time when it was read: an unchanged file is then known without reading it.
--
-- NULL where it was not recorded, or was too close to the read to be trusted: that file is hashed again.

alter table ingested_files add column mtime_ns bigint;
