"""The input side of a load: the files' names, and their content as the staging SQL reads it.

``describe_files`` names each file of the load (its stored path, alias, name, stem, parent
folders) in ``_files``; ``read_input`` reads a line format's lines through the typed checks, or a
document format's whole text (UTF-8, strict JSON: what DuckDB parses only leniently is rejected),
and refuses a document that is not the format's shape. Split from ``landing``, which lands what the
staging SQL makes of them.
"""

from __future__ import annotations

import duckdb

from reconcile.errors import BadInput
from reconcile.sql_text import insert_rows
from reconcile.ingest.files import stored_name
from reconcile.ingest.lines import BOM_SQL
from reconcile.ingest.validate import check_lines, lenient_reason_sql, lenient_suspect_sql


def describe_files(con: duckdb.DuckDBPyConnection, sources: list, lines: bool) -> None:
    """``_files``: each file's number, path, alias and the parts of its path formats name runs by.

    For a line format ``_files`` already exists (``lines.load_lines_many``), with newline_at_end.
    """
    con.execute("create or replace temp table _file_names (file_no integer, path varchar, alias varchar, name varchar, "
                "stem varchar, parent_name varchar, grandparent_name varchar, newline_at_end boolean, "
                "first_line bigint, carry json)")
    insert_rows(con, "_file_names",
                    [[number, s.name, s.alias, *map(stored_name, (s.user_path.name, s.user_path.stem,
                      s.user_path.parent.name, s.user_path.parent.parent.name)), s.newline_at_end,
                      s.first_line, s.carry]
                     for number, s in enumerate(sources, 1)])
    # first_line and carry: where a tail read starts and the format's state there (ingest/tail.py); 1 and NULL else
    con.execute("""create or replace temp table _files as
                   select file_no, path, alias, newline_at_end, name, stem, parent_name, grandparent_name,
                          first_line, carry
                   from _file_names""")


def read_input(con: duckdb.DuckDBPyConnection, fmt) -> None:
    if fmt.input == "lines":  # the lines are already in _lines (read before the transaction)
        check_lines(con, fmt.fields, fmt.extra_line_checks, fmt.extra_line_suspect)
        return
    aliases = [row[0] for row in con.execute("select alias from _files order by file_no").fetchall()]
    con.execute(  # the aliases, never the user's names: a name is data, not a pattern (files.Aliases)
        f"""create or replace temp table _text as
        select f.file_no, case when starts_with(t.content, {BOM_SQL}) then substr(t.content, 2) else t.content end as content,
               t.content is null as not_utf8
        from (select filename, try(decode(content)) as content from read_blob(?)) t join _files f on f.alias = t.filename""",
        [aliases],
    )
    con.execute(
        """create or replace temp table _input_rejects as
        select file_no, 'not valid UTF-8 text: a document format needs the whole file to be UTF-8' as reason,
               null::varchar as raw from _text where not_utf8"""
    )
    if fmt.input == "text":
        con.execute("delete from _text where not_utf8")
        return
    # a document DuckDB reads only leniently (a trailing comma, NaN) is not JSON either (see validate.lenient_*)
    con.execute(
        f"""insert into _input_rejects
        select file_no, case when not valid then 'not valid JSON: a document format needs the whole file to parse '
                                                 || '(truncated export?)'
                             else 'not valid JSON: ' || lenient end, left(content, 4096)
        from (select *, case when valid and {lenient_suspect_sql('content')} then {lenient_reason_sql('content')} end
                        as lenient
              from (select *, json_valid(content) as valid from _text where not not_utf8))
        where not valid or lenient is not null"""
    )
    con.execute("""create or replace temp table _doc as select file_no, content::json as j from _text
                   where json_valid(content) and file_no not in (select file_no from _input_rejects)""")
    wrong = con.execute(
        f"""select f.path, case json_type(j) when 'OBJECT' then 'an object with keys ' || array_to_string(json_keys(j)[:6], ', ')
                                else lower(json_type(j)) end
            from _doc join _files f using (file_no) where not coalesce({fmt.shape_sql}, false) order by file_no limit 1"""
    ).fetchall()
    if wrong:
        raise BadInput(f"{wrong[0][0]}: expected {fmt.expected}, found {wrong[0][1]}. "
                       "Check --format, or leave it out to detect it.")
