"""Checks stay written once in DuckDB's dialect: every shipped one renders for Spark, strictly, and the lint
rejects the constructs that would mean something else there. (The Spark run itself: tests/test_spark.py.)"""

from __future__ import annotations

import pytest

from reconcile.store import views
from reconcile.checks import load_checks
from reconcile.config.settings import DEFAULTS
from reconcile.engines.lint import lint
from reconcile.engines.spark_sql import NotPortable, render

CHECKS = load_checks(None)
VARIABLES = {key: "null" for key in [*DEFAULTS, "scope_since", "scope_until", "reconcile_tz"]}


@pytest.mark.parametrize("check", CHECKS, ids=[c.name for c in CHECKS])
def test_every_shipped_check_renders_for_spark_and_passes_the_lint(check):
    assert render(check.sql, VARIABLES).upper().lstrip().startswith(("SELECT", "WITH", "/*"))
    assert lint(check.sql, check.name) == []


@pytest.mark.parametrize("name", views.VIEW_NAMES)
def test_every_view_the_checks_read_renders_for_spark_and_passes_the_lint(name):
    sql = views.VIEWS[name]
    assert render(sql, VARIABLES).upper().lstrip().startswith(("CREATE OR REPLACE VIEW", "/*"))  # the engine makes it temporary
    assert lint(sql, f"view {name}") == []


@pytest.mark.parametrize("sql, construct, portable", [
    ("select x from t qualify row_number() over () = 1", "QUALIFY", "in a subquery"),
    ("unpivot t on a, b into name k value v", "UNPIVOT", "UNION ALL"),
    ("select dayofweek(d) from t", "day-of-week", "% 7"),
    ("select extract(isodow from d) from t", "day-of-week", "% 7"),
    ("select len(x) from t", "len()", "array_length()"),
    ("select string_agg(a, ',' order by b) from t", "string_agg", "array_to_string"),
    ("select quantile_disc(x, 0.5) from t", "quantile_disc", "quantile_cont"),
    ("select j ->> 'a' from t", "JSON arrows", "typed column"),
    ("select a from t where a not in (select b from u)", "NOT IN (subquery)", "not exists"),
    ("select list_aggregate(l, 'sum') from t", "untranslated", "both engines have"),
    ("select list(x order by y desc) from t", "refuses", "ascending"),
    ("select format('{:>5}', x) from t", "refuses", "placeholders"),
    ("select s[-1] from t", "refuses", "negative list index"),
])
def test_the_lint_names_each_trap_and_its_portable_spelling(sql, construct, portable):
    findings = lint(sql, "planted.sql")
    assert findings, sql
    text = str(findings[0])
    assert text.startswith("planted.sql: ") and construct in text and portable in text


def test_the_lint_reads_words_not_strings():
    assert lint("select 'len(' as a, length(x) from t", "ok.sql") == []


def test_the_lint_allows_not_in_a_list_of_values():
    assert lint("select a from t where a not in ('x', 'y') and not exists (select 1 from u where u.b = t.a)",
                "ok.sql") == []


@pytest.mark.parametrize("duckdb, spark", [
    # format('{}') would become printf-style format_string with the braces left in
    ("select format('{} of {}', a, b) from t", "CONCAT(CAST(a AS STRING), ' of ', CAST(b AS STRING))"),
    ("select format('${:.4f}', x) from t",
     "CASE WHEN x IS NULL THEN NULL ELSE FORMAT_STRING('%.4f', CAST(x AS DOUBLE)) END"),
    # Spark's format_string writes 'null' for a NULL argument; DuckDB's printf gives NULL
    ("select '$' || printf('%.2f', m) from t", "'$' || CASE WHEN m IS NULL THEN NULL ELSE FORMAT_STRING('%.2f', m) END"),
    # DuckDB counts boundaries crossed, Spark's DATEDIFF whole units elapsed
    ("select date_diff('millisecond', a, b) from t", "(UNIX_MILLIS(b) - UNIX_MILLIS(a))"),
    ("select date_diff('second', a, b) from t", "(UNIX_SECONDS(b) - UNIX_SECONDS(a))"),
    ("select format('a {} ' 'b', x) from t", "CONCAT('a ', CAST(x AS STRING), ' b')"),
    # list(x order by y) would become collect_list(x), its order lost
    ("select list(distinct m order by m) from t", "ARRAY_SORT(COLLECT_SET(m))"),
    ("select list(s order by n) filter (where k) from t",
     "TRANSFORM(ARRAY_SORT(COLLECT_LIST(NAMED_STRUCT('k', n, 'v', s)) FILTER(WHERE k)), e -> e.v)"),
    # DuckDB lists count from 1; sqlglot moves a literal index but leaves an expression as written
    ("select l[1], l[n + 1] from t", "ELEMENT_AT(l, 1), ELEMENT_AT(l, n + 1)"),
    # quantile_cont is exact; sqlglot's percentile_cont reads back only with WITHIN GROUP
    ("select quantile_cont(v, [0.5, 0.99]) from t", "PERCENTILE(v, ARRAY(0.5, 0.99))"),
    ("select to_milliseconds(ms) + ts from t", "MAKE_DT_INTERVAL(0, 0, 0, ms / 1000) + ts"),
    ("select regexp_full_match(s, 'a|b') from t", "s RLIKE '^(?:a|b)$'"),
    ("select timezone('Europe/Paris', ts) from t", "FROM_UTC_TIMESTAMP(ts, 'Europe/Paris')"),
    ("select getvariable('stall_window') from t", "SELECT (6) FROM t"),
    ("select 'getvariable(''x'')' from t", "SELECT 'getvariable(\\'x\\')' FROM t"),  # in a string: left alone
])
def test_rendering_rewrites_what_sqlglot_would_translate_wrongly(duckdb, spark):
    assert spark in render(duckdb, {"stall_window": "6"})


def test_the_status_macro_is_expanded_and_an_unset_setting_is_refused():
    rendered = render("select canonical_status(stop_reason) from runs")
    assert "canonical_status" not in rendered.lower() and "RLIKE" in rendered and "stop_reason" in rendered
    with pytest.raises(NotPortable, match="getvariable\\('stall_window'\\) has no value"):
        render("select getvariable('stall_window')")


def test_a_128_bit_integer_becomes_a_38_digit_decimal():
    assert "CAST(SUM(x) AS DECIMAL(38, 0))" in render("select sum(x)::hugeint from t")


def test_the_spark_engine_binds_parameters_where_the_sql_has_them_not_inside_strings():
    from reconcile.engines.spark import _bind_parameters

    assert (_bind_parameters("select '?' as q, ? as a from t where b = ? -- ?", [3, "it's"])
            == "select '?' as q, 3 as a from t where b = 'it''s' -- ?")
    assert (_bind_parameters("select '$since' as q, $since, $since_day from t", {"since": None, "since_day": 2})
            == "select '$since' as q, null, 2 from t")
