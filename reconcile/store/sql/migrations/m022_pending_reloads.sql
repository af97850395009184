-- Files to load again because a run they defer to lost its owner (the owner forgotten, changed or taken over).
-- Written in the transaction that forgets the owner and deleted in the one that loads the file again, so an ingest
-- stopped between the two (a kill, a full disk) leaves the reload to the next ingest: a run is never left skipped
-- as "already loaded" from a file that no longer holds it.

create table pending_reloads (path varchar not null);
