-- Every file ingested and every line rejected, so nothing is lost without a trace.

create table ingested_files (
    path varchar not null,
    sha256 varchar not null,
    format varchar not null,
    size_bytes bigint not null,
    lines bigint not null,
    loaded bigint not null,
    rejected bigint not null,
    skipped bigint not null,
    ingested_at timestamptz not null
);

create table rejects (
    path varchar not null,
    line bigint not null,
    reason varchar not null,
    raw varchar,                  -- the line, cut to 4 KB
    ingested_at timestamptz not null
);
