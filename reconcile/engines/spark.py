"""The Apache Spark engine (``pip install 'reconcile[spark]'``; Java 17 or newer for a local session).

A statement arrives in DuckDB's dialect, as the runner and the views write it; parameters and
``set variable`` values are written into it as DuckDB literals first, then ``spark_sql.render``
makes it Spark SQL. A temporary table becomes a cached temporary view (``CACHE TABLE … AS``), so
what the runner builds once (the runs in scope, the facts each run records) is computed once.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot.tokens import TokenType

from reconcile.engine import Capabilities, Engine, EngineError, Params
from reconcile.errors import BadInput
from reconcile.sql_text import value_literal
from reconcile.engines.spark_sql import NotPortable, render

_SET_VARIABLE = re.compile(r"^\s*set\s+variable\s+(\w+)\s*=\s*(.*)$", re.IGNORECASE | re.DOTALL)
_CREATE = re.compile(r"^\s*create\s+or\s+replace\s+(temp\s+table|temp\s+view|view)\s+(\w+)\s+as\s+(.*)$",
                     re.IGNORECASE | re.DOTALL)
_DROP = re.compile(r"^\s*drop\s+(?:table|view)\s+(?:if\s+exists\s+)?(\w+)\s*$", re.IGNORECASE)


class SparkEngine(Engine):
    """A Spark session with the logical tables bound as temporary views."""

    name = "spark"
    # no store to write to, a temporary view replaced in place (freeze), no statement parser
    capabilities = Capabilities(transactions=False, temp_tables_hide_views=False, parses_statements=False)

    def __init__(self, master: str | None = None, remote: str | None = None):
        check_reachable(remote or master)  # in seconds, not after a minute of retries hidden in the log
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise BadInput("--engine spark needs pyspark: pip install 'reconcile[spark]' (and Java 17+ for a local "
                           "session).") from None
        from pyspark.logger import PySparkLogger

        # pyspark logs every failed query's plan and JVM trace as JSON on stderr (kilobytes) before raising it;
        # reconcile says what failed itself, once
        for logger in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
            PySparkLogger.getLogger(logger).setLevel(logging.CRITICAL + 1)
        builder = SparkSession.builder.appName("reconcile")
        if not remote:  # local workers run this interpreter, so they import this reconcile (distributed ingest)
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        if remote:
            builder = builder.remote(remote)
        else:
            builder = (builder.master(master or "local[*]").config("spark.ui.enabled", "false")
                       .config("spark.ui.showConsoleProgress", "false").config("spark.log.level", "ERROR")
                       .config("spark.sql.shuffle.partitions", os.environ.get("RECONCILE_SPARK_PARTITIONS", "8")))
        # UTC like the store; DuckDB's lenient arithmetic (a division by zero is NULL, not an error)
        builder = builder.config("spark.sql.session.timeZone", "UTC").config("spark.sql.ansi.enabled", "false")
        # a session someone else started (a notebook, a test) is theirs to stop
        self._owned = SparkSession.getActiveSession() is None
        try:
            self.spark = builder.getOrCreate()
        except Exception as exc:  # no Java, a cluster that does not answer
            raise BadInput(f"cannot start Spark ({'remote ' + remote if remote else master or 'local[*]'}): "
                           f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
        if not remote:
            self.spark.sparkContext.setLogLevel("ERROR")
        self.variables: dict[str, str] = {}
        self.cached: dict[str, Any] = {}  # temp tables and frozen views: their materialised frames

    def bind(self, table: str, source: str, partitioned: bool, days: tuple[str, str] | None = None) -> None:
        """``table`` as a temporary view over ``source``: a hive-partitioned folder (its ``day``
        column left out; with ``days``, only the partitions from the first to the last) or one Parquet file."""
        from pyspark.sql import functions

        reader = self.spark.read
        with self._failing(f"reading {source}"):  # the schema is read from the files here
            if partitioned:
                # the partition column stays a string, as the DuckDB reader has it ('unknown' is a day too)
                self.spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
                frame = reader.option("basePath", source).parquet(source)
                if days is not None:
                    frame = frame.where((functions.col("day") >= days[0]) & (functions.col("day") <= days[1]))
                frame = frame.drop("day")
            else:
                frame = reader.parquet(source)
            frame.createOrReplaceTempView(table)  # over Spark Connect the files are first read here

    def register(self, table: str, rows: list[list], schema: str) -> None:
        """A small table from Python rows (``schema`` as Spark DDL, e.g. ``a string, b boolean``)."""
        self.spark.createDataFrame(rows, schema=schema).createOrReplaceTempView(table)

    def register_arrow(self, table: str, data) -> None:
        """A table from an Arrow table (small: it travels through the driver)."""
        self.spark.createDataFrame(data).createOrReplaceTempView(table)

    def run(self, sql: str, params: Params = None) -> None:
        sql = _bind_parameters(sql, params)
        variable = _SET_VARIABLE.match(sql)
        if variable:
            self.variables[variable.group(1).lower()] = variable.group(2).strip().rstrip(";")
            return
        if _DROP.match(sql):  # kept: a cached view built from it is re-read from its definition
            return
        created = _CREATE.match(sql)
        if not created:
            self._run(self._render(sql))
            return
        kind, name, query = created.groups()
        rendered = self._render(query)
        self._drop(name)
        if kind.lower().startswith("temp table"):
            self._materialise(name, rendered)
        else:
            self._run(f"CREATE OR REPLACE TEMPORARY VIEW {name} AS {rendered}")

    def rows(self, sql: str, params: Params = None) -> list[tuple]:
        return self.described(sql, params)[1]

    def described(self, sql: str, params: Params = None) -> tuple[list[str], list[tuple]]:
        frame = self._frame(sql, params)
        with self._failing(sql):  # a query runs when its rows are asked for
            return frame.columns, [tuple(row) for row in frame.collect()]

    def columns(self, sql: str) -> list[str]:
        return self._frame(sql).columns  # analysed, not run

    def execute(self, sql: str, params: Params = None):
        """A query's result as an Arrow table (it is collected on the driver)."""
        frame = self._frame(sql, params)
        with self._failing(sql):
            return frame.toArrow()

    def _frame(self, sql: str, params: Params = None):
        return self._run(self._render(_bind_parameters(sql, params)))

    def _render(self, sql: str) -> str:
        try:
            return render(sql, self.variables)
        except NotPortable as exc:
            raise EngineError(str(exc)) from exc

    def write_parquet(self, sql: str, folder: Path, name: str) -> None:
        """Written by the executors, appended beside what is there (Spark names its own files; a Connect
        server is given the absolute folder)."""
        frame = self._frame(sql)
        with self._failing(sql):
            frame.write.mode("append").parquet(str(Path(folder).resolve()))

    def per_group(self, sql: str, key: str, task, schema: str) -> list[dict]:
        """On the executors, a group per task (``applyInArrow``). ``task``'s module travels with it by value, so the
        executors need no reconcile installed (the module must import only what they have: the standard library)."""
        import pyarrow as pa
        from pyspark import cloudpickle
        from pyspark.sql.pandas.types import to_arrow_schema

        # the declared types, not inferred ones: a group whose answer is all NULL would be typed null
        typed = to_arrow_schema(self.spark.createDataFrame([], schema).schema)
        module = sys.modules[task.__module__]
        cloudpickle.register_pickle_by_value(module)
        try:
            frame = self._frame(sql).groupBy(key).applyInArrow(
                lambda rows: pa.Table.from_pylist([task(rows)], schema=typed), schema)
            with self._failing(sql):
                return [row.asDict() for row in frame.collect()]
        finally:
            cloudpickle.unregister_pickle_by_value(module)

    def freeze(self, view: str) -> None:
        """Compute a view once and put its rows in its place, for every statement that reads it and every view
        built on it afterwards (as ``store.frozen_views`` does in DuckDB)."""
        self._materialise(view, f"select * from {view}")

    def _materialise(self, name: str, query: str) -> None:
        """``name`` as the rows of ``query``, computed now (kept in memory, spilling to disk).

        Not ``CACHE TABLE``: Spark reuses a cached plan only where a later plan matches it, and a plan with a
        non-deterministic expression (``any_value``, ``now()``) never matches — every statement reading such a
        table computed it again, and the tables it was built on. A local checkpoint cuts the plan off at the rows."""
        frame = self._run(query)
        with self._failing(query):
            frame = frame.localCheckpoint(eager=True)
        previous = self.cached.pop(name, None)
        frame.createOrReplaceTempView(name)
        self.cached[name] = frame
        if previous is not None:
            previous.unpersist()

    def close(self) -> None:
        if self._owned:
            self.spark.stop()
            return
        for name in reversed(sorted(self.cached)):  # a session that is not ours: leave it as we found it
            try:
                self._drop(name)
            except EngineError:
                pass  # a view it read was replaced meanwhile; its rows go with the session

    def parallelism(self) -> int | None:
        """How many tasks the cluster runs at once (its cores), or None where Spark Connect does not say."""
        try:
            return int(self.spark.sparkContext.defaultParallelism)
        except Exception:  # Spark Connect: no SparkContext on this side
            return None

    def _hadoop_version(self) -> str:
        """The Hadoop version this Spark runs (a connector must match it), or a placeholder over Spark Connect."""
        try:
            return str(self.spark.sparkContext._jvm.org.apache.hadoop.util.VersionInfo.getVersion())
        except Exception:  # Spark Connect has no JVM on this side
            return "<the Hadoop version of the cluster>"

    def _drop(self, name: str) -> None:
        frame = self.cached.pop(name, None)
        self._run(f"DROP VIEW IF EXISTS {name}")
        if frame is not None:
            frame.unpersist()

    def _run(self, statement: str):
        with self._failing(statement):
            return self.spark.sql(statement)

    @contextmanager
    def _failing(self, statement: str) -> Iterator[None]:
        """Spark's errors as ours: a file of the dataset that cannot be read is the user's (named, exit 2);
        anything else is a statement that failed (its first line, and the statement)."""
        try:
            yield
        except (EngineError, BadInput):
            raise
        except Exception as exc:  # pyspark's AnalysisException, Py4JJavaError and friends
            no_filesystem = _NO_FILESYSTEM.search(str(exc))
            if no_filesystem:
                scheme = no_filesystem.group(1) or no_filesystem.group(2)
                advice = _CONNECTORS.get(scheme.lower(), _CONNECTORS["s3a"]).replace("<version>", self._hadoop_version())
                raise BadInput(f"--from-parquet: this Spark has no file system for {scheme}:// — {advice} "
                               "(docs/scale-out.md)") from None
            unreadable = _FAILED_READ.search(str(exc))
            if unreadable:
                raise BadInput(f"--from-parquet: {unreadable.group(1)} cannot be read ({unreadable.group(2)}). Write "
                               "the dataset again (reconcile export --to DIR) or restore the file.") from None
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EngineError(f"Spark: {first}\n  in: {statement[:400]}") from exc


# Spark's words for a data file it could not read: the file (file:/… or a URL) and the first sentence of why. The
# reading up to " reading file " stops at the next "[": from each of many "[FAILED_READ_FILE" it is quadratic.
_FAILED_READ = re.compile(r"\[FAILED_READ_FILE[^\]\[]*\][^\n\[]*? reading file (?:file:)?(\S+?)\.\s+([^.\n]*)")


# Hadoop's words for a URL scheme it has no file system for: none registered, or its class not on the class path
_NO_FILESYSTEM = re.compile(r'No FileSystem for scheme "([^"]+)"|Class org\.apache\.hadoop\.fs\.(s3a|azurebfs|gs)\.')
_CONNECTORS = {
    "s3a": "put hadoop-aws on the cluster, e.g. spark-submit --packages org.apache.hadoop:hadoop-aws:<version> "
           "(or PYSPARK_SUBMIT_ARGS='--packages org.apache.hadoop:hadoop-aws:<version> pyspark-shell')",
    "s3": "open-source Spark reads S3 as s3a://bucket/…: give that spelling, with hadoop-aws on the cluster",
    "gs": "put Google's gcs-connector on the cluster (com.google.cloud.bigdataoss:gcs-connector)",
    "abfss": "put hadoop-azure on the cluster (org.apache.hadoop:hadoop-azure)",
    "abfs": "put hadoop-azure on the cluster (org.apache.hadoop:hadoop-azure)",
}
_CONNECTORS["azurebfs"] = _CONNECTORS["abfss"]


REACH_SECONDS = 5  # how long a master or a Spark Connect server has to accept a connection


def check_reachable(url: str | None) -> None:
    """Refuse a cluster URL none of whose hosts accepts a connection (``spark://h:7077``, ``spark://a:7077,b:7077``,
    ``sc://h:15002``); a local master (``local[*]``, none) needs no network."""
    if not url or "://" not in url:
        return
    scheme, rest = url.split("://", 1)
    if scheme not in ("spark", "sc"):
        return  # yarn, k8s, mesos: the resource manager's own client says why it cannot start
    default = 7077 if scheme == "spark" else 15002
    reasons = []
    for address in rest.split("/", 1)[0].split(";", 1)[0].split(","):
        host, _, port = address.rpartition(":") if ":" in address else (address, "", str(default))
        try:
            number = int(port)
        except ValueError:
            raise BadInput(f"{url}: the port {port!r} is not a number; give host:port") from None
        try:
            socket.create_connection((host.strip("[]"), number), timeout=REACH_SECONDS).close()
            return
        except OSError as exc:
            reasons.append(f"{host}:{number} ({exc.strerror or exc})")
    raise BadInput(f"cannot reach the Spark {'master' if scheme == 'spark' else 'Connect server'} at {url}: "
                   f"{'; '.join(reasons)}. Is it running, and is the address right?")


def _bind_parameters(sql: str, params: Any) -> str:
    """``$name`` (a dict) or ``?`` (a list) replaced by DuckDB literals, before rendering: the places
    sqlglot's tokenizer reads as parameters, so a ``?`` inside a string or a comment stays as it is."""
    if not params:
        return sql
    tokens = sqlglot.Dialect.get_or_raise("duckdb").tokenize(sql)
    places: list[tuple[int, int, Any]] = []  # (start, end, value) in the text
    positional = iter(params) if not isinstance(params, dict) else None
    for token, following in zip(tokens, [*tokens[1:], None]):
        if token.token_type == TokenType.PLACEHOLDER and token.text == "?" and positional is not None:
            places.append((token.start, token.end, next(positional)))
        elif token.token_type == TokenType.PARAMETER and isinstance(params, dict) and following is not None \
                and following.text in params and following.start == token.end + 1:
            places.append((token.start, following.end, params[following.text]))
    for start, end, value in reversed(places):
        sql = sql[:start] + value_literal(value) + sql[end + 1:]
    return sql
