"""``reconcile ingest``: load journals and transcripts into the store."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import Progress

from .. import store
from ..errors import ExitCode
from ..formats import FORMATS
from ..ingest import ingest
from ..ingest.result import NOT_LOADED
from . import app
from ..errors import BadInput
from .options import ConfigOption, DbOption, EngineOption, JsonOption, MasterOption, RemoteOption, configured
from .render import LiteralConsole, console, literal, print_json, table


@app.command("ingest")
def ingest_command(
    paths: Annotated[list[str], typer.Argument(metavar="PATH...", help="Files, folders (recursive), globs; .gz is read too.")],
    format: Annotated[str | None, typer.Option("--format", help=f"Force a format: {', '.join(FORMATS)}.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 2 when any line was rejected (a file that could not "
                                                          "be loaded at all is exit 2 always).")] = False,
    json_out: JsonOption = False,
    config_file: ConfigOption = None,
    db: DbOption = None,
    engine: EngineOption = "duckdb",
    to: Annotated[Path | None, typer.Option("--to", metavar="DIR", help="With --engine spark: the dataset to write "
                                                                       "(as reconcile export writes it).")] = None,
    master: MasterOption = None,
    remote: RemoteOption = None,
) -> None:
    """Load files into the store; unchanged files are skipped, changed ones replaced.

    With --engine spark the files are loaded on Spark's executors, sharded by folder, and the
    result is written as a dataset (--to DIR) for --from-parquet.
    Example: reconcile ingest sample_runs/ --db night.duckdb
    """
    config, path = configured(config_file, db)
    if engine != "duckdb" or to is not None or master or remote:
        _spark_ingest(paths, engine, to, master, remote, config, json_out, strict)
        return
    with store.connect(path) as con:
        with _progress() as hook:
            report = ingest(con, paths, format=format, progress=hook, window=config.window)
        rejects = con.execute("select path, line, reason from rejects where path in (select unnest(?)) "
                              "order by path, line limit 20", [[f.path for f in report.files]]).fetchall()
    if json_out:
        print_json(report.to_json())
    else:
        _print_report(report, rejects)
    if report.not_loaded or (strict and report.totals["rejected"]):
        raise typer.Exit(ExitCode.BAD_INPUT)


def _spark_ingest(paths, engine, to, master, remote, config, json_out, strict) -> None:
    if engine != "spark":
        raise BadInput("--to, --master and --remote are for --engine spark (reconcile export --to writes a store's "
                       "dataset)")
    if to is None:
        raise BadInput("--engine spark writes a dataset, not a store: give --to DIR")
    if master and remote:
        raise BadInput("give --master (a cluster) or --remote (Spark Connect), not both")
    from ..engines.distributed import distributed_ingest

    result = distributed_ingest(paths, to, master=master, remote=remote, window=config.window)
    if json_out:
        print_json(result)
    else:
        totals = {k: sum(s[k] for s in result["shard_results"]) for k in ("files", "lines", "loaded", "rejected",
                                                                          "skipped")}
        console.print(f"{result['files']} file(s) in {result['shards']} shard(s): {totals['lines']} lines, "
                      f"{totals['loaded']} loaded, {totals['rejected']} rejected, {totals['skipped']} skipped; "
                      f"{len(result['loaded_again_in_merge'])} file(s) loaded again in the merge; wrote {to}")
    if strict and any(s["rejected"] for s in result["shard_results"]):
        raise typer.Exit(ExitCode.BAD_INPUT)


def _shown(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return path


def _print_report(report, rejects) -> None:
    columns = ["file", "format", "status", "lines", "loaded", "rejected", "skipped"]
    rows = [[_shown(f.path), f.format, f.status, f.lines, f.loaded, f.rejected, f.skipped] for f in report.files]
    if rows:
        console.print(table(columns, rows, right={"lines", "loaded", "rejected", "skipped"}))
    for f in report.files:
        if f.status in NOT_LOADED:
            continue
        for note in f.notes[:2]:
            console.print(f"  {_shown(f.path)}: skipped: {note}")
        if len(f.notes) > 2:
            console.print(f"  {_shown(f.path)}: … {len(f.notes) - 2} more kinds of skipped line (--json lists them)")
    for p in report.passed_over:
        console.print(f"passed over {_shown(p.path)}: {p.reason}")
    for path in report.forgotten:
        why = "no longer of a format reconcile reads" if os.path.exists(path) else "no longer there"
        console.print(f"forgotten {_shown(path)}: {why}, so its runs went with it")
    for path, line, reason in rejects:
        console.print(f"rejected {_shown(path)}:{line}: {reason}")
    t = report.totals
    lost = f", {t['failed'] + t['unreadable']} not loaded" if report.not_loaded else ""
    console.print(f"{t['files']} file(s), {t['unchanged']} unchanged{lost}, {t['passed_over']} passed over; "
                  f"lines {t['lines']} = loaded {t['loaded']} + rejected {t['rejected']} + skipped {t['skipped']}")
    print_not_loaded(report, "could not be loaded (recorded in ingested_files with why); every other file was. "
                     "Fix them and ingest again.")


def print_not_loaded(report, closing: str) -> None:
    """On stderr: each file that could not be loaded at all, why, and ``closing`` after their count."""
    if not report.not_loaded:
        return
    errors = LiteralConsole(stderr=True)
    for f in report.not_loaded:
        errors.print(f"error: could not {'read' if f.status == 'unreadable' else 'load'} {_shown(f.path)}: {f.notes[0]}")
    errors.print(f"{len(report.not_loaded)} file(s) {closing}")


class _progress:
    """A progress bar on stderr for many files, only when stderr is a terminal (never under cron)."""

    def __enter__(self):
        self.bar = None
        if not sys.stderr.isatty():
            return None
        return self._hook

    def _hook(self, path: Path, position: int, total: int) -> None:
        if self.bar is None and total < 5 and path.stat().st_size < 50_000_000:
            return  # a few small files load faster than a bar draws
        if self.bar is None:
            self.bar = Progress(console=LiteralConsole(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("ingesting", total=total)
        self.bar.update(self.task, completed=position, description=f"ingesting {escape(literal(path.name[:40]))}")  # a description is markup

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()
