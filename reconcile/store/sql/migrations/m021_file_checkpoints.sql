-- Where a later ingest may go on reading a line file from, written in the same transaction as the file's rows
-- (docs/architecture.md, "Reading a grown file"). A file without a row here is read whole when it changes.

create table file_checkpoints (
    path varchar not null,           -- as ingested_files.path
    device bigint not null,          -- the file's identity when read: a rotated or replaced file has another
    inode bigint not null,
    size_bytes bigint not null,      -- its size when read (a last line still without its newline included)
    end_offset bigint not null,      -- just past its last newline
    head_bytes integer not null,     -- how many of its first bytes head_sha256 covers (up to 4,096)
    head_sha256 varchar not null,
    guard_offset bigint not null,    -- guard_sha256 covers guard_offset .. size_bytes: up to 64 KiB before end_offset
    guard_sha256 varchar not null,   --   and the unfinished last line; a file rewritten in place fails it
    resume_line bigint not null,     -- the first line a tail read reads again: no run before it is still open
    resume_offset bigint not null,   -- its byte offset
    prefix_loaded bigint not null,   -- the outcomes of the lines before resume_line, kept as they were
    prefix_rejected bigint not null,
    prefix_skipped bigint not null,
    state json                       -- what the format needs to go on from resume_line inside a run still open
);
