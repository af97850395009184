"""``reconcile ingest``: load journals and transcripts into the store."""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import Progress

from reconcile import store
from reconcile.errors import ExitCode, ReconcileError
from reconcile.formats import FORMATS
from reconcile.ingest.driver import ingest
from reconcile.ingest.result import NOT_LOADED
from reconcile.cli.root import app
from reconcile.errors import BadInput
from reconcile.cli.options import (DatasetLocation, EngineOption, JsonOption, MasterOption, RemoteOption, Store, grouped,
                                  to_folder)
from reconcile.cli.render import LiteralConsole, console, fitted_table, literal, print_json


@app.command("ingest")
@grouped
def ingest_command(
    paths: Annotated[list[str], typer.Argument(metavar="PATH...", help="Files, folders (recursive), globs; .gz is read too.")],
    format: Annotated[str | None, typer.Option("--format", help=f"Force a format: {', '.join(FORMATS)}.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 2 when any line was rejected (a file that could not "
                                                          "be loaded at all is exit 2 always).")] = False,
    json_out: JsonOption = False,
    source: Store = Store(),
    engine: EngineOption = "duckdb",
    to: Annotated[DatasetLocation | None, typer.Option("--to", metavar="DIR", parser=to_folder,
                                            help="With --engine spark: the dataset to write (as reconcile export "
                                                 "writes it; a folder, a file:// URL or s3a://, gs://, abfss://).")] = None,
    master: MasterOption = None,
    remote: RemoteOption = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="A row per file loaded, its skipped lines by "
                                                                   "reason, the files passed over, the rejected "
                                                                   "lines (by default: one summary line).")] = False,
) -> None:
    """Load files into the store; unchanged files are skipped, changed ones replaced.

    Prints one summary line (files, lines loaded, rejected, skipped by reason); -v for each file.
    With --engine spark the files are loaded on Spark's executors, sharded by folder, and the
    result is written as a dataset (--to DIR) for --from-parquet; a local DIR keeps its shards
    (DIR/.reconcile-kept), so a second run reads only the files that changed.
    Example: reconcile ingest sample_runs/ --db night.duckdb
    """
    config, path = source.configured()
    if engine != "duckdb" or to is not None or master or remote:
        _spark_ingest(paths, engine, to, master, remote, config, json_out, strict)
        return
    new = not Path(path).exists()
    try:
        with store.connect(path) as con:
            with _progress() as hook:
                report = ingest(con, paths, format=format, progress=hook, window=config.window,
                                abandoned_after=config.abandoned_after)
            rejects = con.execute("select path, line, reason from rejects where path in (select unnest(?)) "
                                  f"order by path, line limit {REJECTS_SHOWN}", [[f.path for f in report.files]]).fetchall()
    except ReconcileError:  # a path that is not there, a bad --format: a store this command made is not left behind
        if new and holds_nothing(Path(path)):  # (Ctrl-C after some files were saved keeps them)
            remove_store(Path(path))
        raise
    # a store this command made and nothing was loaded into is not left behind: a typo, a folder of pictures
    unmade = new and not any(f.status in ("loaded", "replaced") for f in report.files) and remove_store(Path(path))
    if json_out:
        print_json(report.to_json())
    else:
        _print_report(report, rejects, AsGiven(paths), verbose, unmade=unmade)
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
    from reconcile.engines.distributed import distributed_ingest

    result = distributed_ingest(paths, to, master=master, remote=remote, window=config.window)
    if json_out:
        print_json(result)
    else:
        totals = {k: sum(s[k] for s in result["shard_results"]) for k in ("files", "lines", "loaded", "rejected",
                                                                          "skipped")}
        unchanged = result["shards"] - result["shards_ingested"]
        kept = f" ({unchanged} unchanged since the last run, not read again)" if unchanged else ""
        console.print(f"{result['files']} file(s) in {result['shards']} shard(s){kept}: {totals['lines']} lines, "
                      f"{totals['loaded']} loaded, {totals['rejected']} rejected, {totals['skipped']} skipped; "
                      f"{result['passed_over']} file(s) passed over (no format reconcile reads); "
                      f"{len(result['loaded_again_in_merge'])} file(s) loaded again in the merge "
                      f"({result['shards_read_in_merge']} shard(s) read, the rest merged from their manifests); "
                      f"wrote {to}")
    if strict and any(s["rejected"] for s in result["shard_results"]):
        raise typer.Exit(ExitCode.BAD_INPUT)


class AsGiven:
    """File names as the user gave them: under ``sample_runs`` (typed), ``sample_runs/harness.py``.

    The store keeps absolute paths; a person reads the paths they typed. A file under a folder or
    glob named on the command line is shown from that name; any other (a file a takeover reloaded
    from elsewhere) relative to the working folder when it is under it, else absolute — never as
    ``../../..``.
    """

    def __init__(self, paths: list[str] | None = None):
        self.roots: list[tuple[str, str]] = []  # (resolved, as typed), longest first
        for text in paths or []:
            candidates = sorted(glob.glob(os.path.expanduser(text), recursive=True)) if any(
                ch in text for ch in "*?[") and not os.path.exists(os.path.expanduser(text)) else [text]
            for typed in candidates:
                try:
                    resolved = str(Path(typed).expanduser().resolve())
                except (OSError, RuntimeError, ValueError):
                    continue
                self.roots.append((resolved, typed))
        self.roots.sort(key=lambda root: -len(root[0]))

    def __call__(self, path: str) -> str:
        for resolved, typed in self.roots:
            if path == resolved:
                return typed
            if path.startswith(resolved.rstrip(os.sep) + os.sep):
                return os.path.join(typed, path[len(resolved.rstrip(os.sep)) + 1:])
        try:
            relative = os.path.relpath(path)
        except ValueError:
            return path
        return path if relative.startswith("..") else relative


def _counted(counts: dict[str, int]) -> str:
    """ "in-flight record", or "808 not a step, 480 repeat of …" when there is more than one reason."""
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{count:,} {reason}" for reason, count in counts.items())


def summary_line(report, verbose: bool = False) -> str:
    """One line for a whole ingest: files, lines loaded, rejected and skipped (by reason), passed over, not loaded."""
    t = report.totals
    if t["files"] and t["unchanged"] == t["files"]:
        parts = [f"{t['files']:,} file(s), all unchanged: nothing new to load"]
    else:
        parts = [f"{t['files']:,} file(s)" + (f" ({t['unchanged']:,} unchanged)" if t["unchanged"] else "")]
        skipped = f" + {t['skipped']:,} skipped" + (f" ({_counted(report.skipped_by_reason)})" if t["skipped"] else "")
        parts.append(f"lines {t['lines']:,} = {t['loaded']:,} loaded + {t['rejected']:,} rejected{skipped}")
    if t["passed_over"]:
        parts.append(f"{t['passed_over']:,} passed over ({_counted(report.passed_over_by_reason)})")
    if t["forgotten"]:
        parts.append(f"{t['forgotten']:,} forgotten (gone, or no longer of a format: their runs went with them)")
    if report.not_loaded:
        parts.append(f"{len(report.not_loaded):,} not loaded (below)")
    line = "ingested " + "; ".join(parts)
    if not verbose and (t["passed_over"] or t["skipped"] or t["forgotten"] or t["files"] > t["unchanged"]):
        line += " (-v for each file)"
    return line


def rejected_note(report) -> str | None:
    """The rejected lines of the files that loaded, and where to read them (None when there are none)."""
    count = sum(f.rejected for f in report.files if f.status not in NOT_LOADED)
    if not count:
        return None
    return (f"{count:,} line(s) rejected (the rest of their files loaded): see them with reconcile ingest -v, or "
            "reconcile sql \"select path, line, reason from rejects\"")


def _print_report(report, rejects, shown: AsGiven, verbose: bool, unmade: bool = False) -> None:
    if verbose:
        _print_details(report, rejects, shown)
    console.print(summary_line(report, verbose))
    if unmade and not report.not_loaded:
        console.print("nothing was loaded, so no store was made (reconcile ingest makes one with the first file it loads)")
    if not verbose and rejected_note(report):
        console.print(rejected_note(report))
    kept = ("nothing was loaded, so no store was made" if unmade else
            "recorded in ingested_files with why; every other file was")
    print_not_loaded(report, f"could not be loaded ({kept}). Fix them and ingest again.", shown)


def _print_details(report, rejects, shown: AsGiven) -> None:
    """-v: a row per file loaded, its skipped lines by note, the files passed over or forgotten, the rejects."""
    columns = ["file", "format", "status", "lines", "loaded", "rejected", "skipped"]
    changed = [f for f in report.files if f.status != "unchanged"]
    rows = [[shown(f.path), f.format, f.status, f.lines, f.loaded, f.rejected, f.skipped] for f in changed]
    if rows:
        console.print(fitted_table(columns, rows, right={"lines", "loaded", "rejected", "skipped"}))
    unchanged = len(report.files) - len(changed)
    if unchanged:
        console.print(f"{unchanged:,} file(s) unchanged since they were loaded: left as they are")
    for f in changed:
        if f.status in NOT_LOADED:
            continue
        if f.read:
            console.print(f"  {shown(f.path)}: {f.read}")
        for note in f.notes:
            console.print(f"  {shown(f.path)}: skipped: {note}")
    for p in report.passed_over:
        console.print(f"passed over {shown(p.path)}: {p.reason}")
    for path in report.forgotten:
        why = "no longer of a format reconcile reads" if os.path.exists(path) else "no longer there"
        console.print(f"forgotten {shown(path)}: {why}, so its runs went with it")
    for path, line, reason in rejects:
        console.print(f"rejected {shown(path)}:{line}: {reason}")
    if len(rejects) == REJECTS_SHOWN:
        console.print(f"(the first {REJECTS_SHOWN}; all of them: reconcile sql \"select * from rejects\")")


REJECTS_SHOWN = 50


def holds_nothing(path: Path) -> bool:
    """True for a store no file was ever recorded in (or none at all)."""
    if not path.exists():
        return False
    try:
        with store.connect(path, read_only=True) as con:
            return con.execute("select count(*) from ingested_files").fetchone()[0] == 0
    except Exception:  # noqa: BLE001 - a store that cannot be read is left as it is
        return False


def remove_store(path: Path) -> bool:
    """Remove a store this command made (its file and write-ahead log); True once it is gone."""
    try:
        for name in (path, Path(f"{path}.wal")):
            name.unlink(missing_ok=True)
    except OSError:
        return False
    return True


def print_not_loaded(report, closing: str, shown: AsGiven | None = None) -> None:
    """On stderr: each file that could not be loaded at all, why, and ``closing`` after their count."""
    if not report.not_loaded:
        return
    shown = shown or AsGiven()
    errors = LiteralConsole(stderr=True)
    for f in report.not_loaded:
        errors.print(f"error: could not {'read' if f.status == 'unreadable' else 'load'} {shown(f.path)}: {f.notes[0]}")
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
