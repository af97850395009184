"""The command line: exit codes, messages, and output shapes."""

from __future__ import annotations


from journals import journal_file
from reconcile.errors import ExitCode


def test_ingest_a_folder_passes_over_what_it_does_not_read(cli, tmp_path, db_path):
    folder = tmp_path / "night"
    folder.mkdir()
    journal_file(folder / "a.jsonl", runs=("a",))
    (folder / "harness.py").write_text("print('hi')\n")
    (folder / "planted.json").write_text("[]\n")
    result = cli("ingest", folder, "--db", db_path, "--json")
    assert result.code == ExitCode.OK
    data = result.json()
    assert [f["status"] for f in data["files"]] == ["loaded"]
    assert set(data["files"][0]) >= {"path", "format", "lines", "loaded", "rejected", "skipped", "status"}
    assert sorted(p["path"].rsplit("/", 1)[1] for p in data["passed_over"]) == ["harness.py", "planted.json"]
    assert data["totals"]["loaded"] == 7


def test_an_explicit_file_of_unknown_format_is_an_error(cli, tmp_path, db_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n")
    result = cli("ingest", notes, "--db", db_path)
    assert result.code == ExitCode.BAD_INPUT
    assert "notes.txt: not a format reconcile reads" in result.err
    assert "--format" in result.err
    assert "Traceback" not in result.err


def test_missing_paths_and_unknown_formats_exit_2(cli, tmp_path, db_path):
    assert cli("ingest", tmp_path / "nope.jsonl", "--db", db_path).code == ExitCode.BAD_INPUT
    result = cli("ingest", tmp_path, "--format", "klingon", "--db", db_path)
    assert result.code == ExitCode.BAD_INPUT and "--format 'klingon' is not a known format" in result.err
    assert cli("ingest", "--no-such-flag").code == ExitCode.BAD_INPUT


def test_globs_and_the_env_var_for_the_store(cli, tmp_path, monkeypatch):
    journal_file(tmp_path / "a.jsonl", runs=("a",))
    journal_file(tmp_path / "b.jsonl", runs=("b",))
    monkeypatch.setenv("RECONCILE_DB", str(tmp_path / "env.duckdb"))
    assert cli("ingest", str(tmp_path / "*.jsonl")).code == ExitCode.OK
    assert (tmp_path / "env.duckdb").exists()
    assert cli("sql", "select count(*) as n from runs", "--json").json() == [{"n": 2}]


def test_strict_exits_2_when_a_line_was_rejected(cli, tmp_path, db_path):
    path = journal_file(tmp_path / "a.jsonl", runs=("a",))
    with open(path, "a") as handle:
        handle.write("oops\n")
    result = cli("ingest", path, "--db", db_path, "--strict")
    assert result.code == ExitCode.BAD_INPUT
    assert "1 line(s) rejected" in result.out and "select path, line, reason from rejects" in result.out  # a count, a hint
    again = cli("ingest", path, "--db", tmp_path / "other.duckdb", "--strict", "-v")
    assert again.code == ExitCode.BAD_INPUT and "a.jsonl:8: not valid JSON" in again.out  # -v: each rejected line


def test_show_prints_the_header_and_steps(cli, tmp_path, db_path):
    cli("ingest", journal_file(tmp_path / "a.jsonl", runs=("8f3a", "8f40")), "--db", db_path)
    result = cli("show", "8f3a", "--db", db_path)
    assert result.code == ExitCode.OK
    assert "model_finished" in result.out and "write_file → error" in result.out and "OSError: boom" in result.out
    detail = cli("show", "8f3a", "--step", "1", "--json", "--db", db_path).json()
    assert detail["tool_name"] == "read_file" and detail["args_json"] == '{"lines":[1,2],"path":"a.py"}'
    steps = cli("show", "8f3a", "--json", "--db", db_path).json()["steps"]
    assert [s["kind"] for s in steps] == ["model", "tool", "tool", "event", "model"]


def test_show_resolves_prefixes_and_explains_misses(cli, tmp_path, db_path):
    cli("ingest", journal_file(tmp_path / "a.jsonl", runs=("8f3a", "8f40")), "--db", db_path)
    assert cli("show", "8f3", "--json", "--db", db_path).json()["run"]["run_id"] == "8f3a"
    ambiguous = cli("show", "8f", "--db", db_path)
    assert ambiguous.code == ExitCode.BAD_INPUT and "ambiguous" in ambiguous.err and "8f3a" in ambiguous.err
    missing = cli("show", "zz", "--db", db_path)
    assert missing.code == ExitCode.BAD_INPUT and "No run with id 'zz'" in missing.err
    assert cli("show", "8f3a", "--step", "99", "--db", db_path).code == ExitCode.BAD_INPUT


def test_sql_outputs_and_refuses_writes(cli, tmp_path, db_path):
    cli("ingest", journal_file(tmp_path / "a.jsonl", runs=("a",)), "--db", db_path)
    query = "select idx, kind, tool_name, cost_micros, ms, error from step_view where run_id = 'a'"
    as_json = cli("sql", query, "--json", "--db", db_path).json()
    assert as_json[2] == {"idx": 2, "kind": "tool", "tool_name": "write_file", "cost_micros": None, "ms": 12,
                          "error": "OSError: boom"}
    as_csv = cli("sql", query, "--csv", "--db", db_path).out.splitlines()
    assert as_csv[0] == "idx,kind,tool_name,cost_micros,ms,error" and as_csv[3] == "2,tool,write_file,,12,OSError: boom"
    assert as_csv[1] == "0,model,,3465,900,"  # priced from genai-prices' claude-sonnet-4-5
    assert "5 row(s)" in cli("sql", query, "--db", db_path).out
    tiny = "select 0.000000001::decimal(18, 9) as usd, 1.50::decimal(10, 2) as x"
    assert cli("sql", tiny, "--csv", "--db", db_path).out.splitlines() == ["usd,x", "0.000000001,1.50"]
    assert "0.000000001" in cli("sql", tiny, "--db", db_path).out  # the table too, never 1E-9
    for statement in ("delete from runs", "drop table runs", "copy runs to 'x.csv'", "select 1; select 2"):
        refused = cli("sql", statement, "--db", db_path)
        assert refused.code == ExitCode.BAD_INPUT, statement
    assert cli("sql", "select count(*) as n from runs", "--json", "--db", db_path).json() == [{"n": 1}]
    bad = cli("sql", "select nope from runs", "--db", db_path)
    assert bad.code == ExitCode.BAD_INPUT and "The query failed" in bad.err


def test_read_commands_on_a_missing_store_say_what_to_do(cli, tmp_path):
    result = cli("summary", "--db", tmp_path / "none.duckdb")
    assert result.code == ExitCode.BAD_INPUT and "reconcile ingest" in result.err


def test_summary_renders_the_template(cli, tmp_path, db_path):
    cli("ingest", journal_file(tmp_path / "a.jsonl", runs=("a", "b")), "--db", db_path)
    out = cli("summary", "--db", db_path).out
    assert "2 runs" in out and "lines read 14 = loaded 14 + rejected 0 + skipped 0" in out


def test_internal_errors_exit_3_without_a_traceback(cli, monkeypatch, db_path):
    from reconcile.analyses import summary
    monkeypatch.setattr(summary, "store_summary", lambda con: 1 / 0)
    from reconcile import store
    store.connect(db_path).close()
    result = cli("summary", "--db", db_path)
    assert result.code == ExitCode.INTERNAL
    assert "internal error: ZeroDivisionError" in result.err and "Traceback" not in result.err


def test_every_command_has_help_and_a_db_option(cli):
    from reconcile.cli import app, load_commands
    load_commands()
    names = [c.name for c in app.registered_commands]
    assert set(names) >= {"ingest", "show", "sql", "summary"}
    for name in names:
        result = cli(name, "--help")
        assert result.code == ExitCode.OK and "--db" in result.out and "Example:" in result.out, name
