"""``reconcile check --findings-to DIR``: every finding as a Parquet dataset, written where the engine computes it.

On Spark a check's findings then never travel to the driver: the executors compute them once, write
them, and count them; the driver gets the count and the first few (``runner.SHOWN``) to print. DuckDB
writes the same table. What DIR holds:

- ``findings/``: one Parquet table, columns ``check``, ``severity``, ``run_id``, ``step``, ``detail``
  (one or more files per check; an empty file with the columns when nothing was found);
- ``summary.json``: what the check run said of each check (its outcome, how many findings, what it
  could not judge), so a reader can tell the table is whole: its rows per check equal the counts.

The dataset is written in a folder beside DIR (on Spark, one the executors share with the driver) and
put in DIR's place only when every check is written; a previous findings dataset there is replaced,
a folder of anything else is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from reconcile.engines.export import dataset_location
from reconcile.engines.object_store import RemoteDataset
from reconcile.errors import BadInput

FORMAT = "reconcile-findings"
SUMMARY = "summary.json"
TABLE = "findings"


def write_findings(target: Path, run: Callable[[Path], object]):
    """Call ``run`` with the folder of the findings table (a check run writing into it), then put the dataset,
    with its summary, in ``target``'s place; return what ``run`` returned (its ``CheckReport``)."""
    target = _refusing_what_is_not_ours(target)
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".reconcile-findings-", dir=parent))
    try:
        table = staging / TABLE
        table.mkdir()
        report = run(table)
        if not any(table.glob("*.parquet")):
            _empty_table(table / "none.parquet")
        report.findings_to = target / TABLE  # where the table is once in place
        summary = {"format": FORMAT, "checked_at": report.checked_at.isoformat(), "table": TABLE,
                   **{k: v for k, v in report.to_json().items() if k != "findings"}}
        (staging / SUMMARY).write_text(json.dumps(summary, indent=1, default=str) + "\n", encoding="utf-8")
        _swap(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return report


def _refusing_what_is_not_ours(target: Path | str) -> Path:
    """The absolute folder (Spark resolves a relative one elsewhere); a file, a URL, or a folder of someone else's
    files is refused before any check runs."""
    location = dataset_location(target, "--findings-to")  # a file:// URL is a folder; hdfs://, http(s):// refused
    if isinstance(location, RemoteDataset):
        raise BadInput(f"--findings-to {location}: give a local folder (one the Spark executors share, on a cluster); "
                       "findings are not written to object stores")
    target = location.resolve()
    if target.exists() and not target.is_dir():
        raise BadInput(f"--findings-to {target}: is a file; give a folder (it is created if missing)")
    if target.exists() and any(target.iterdir()) and not (target / SUMMARY).is_file():
        raise BadInput(f"--findings-to {target}: the folder has files but no {SUMMARY}; give an empty or new folder, "
                       "or one a previous --findings-to wrote (it is replaced)")
    return target


def _empty_table(path: Path) -> None:
    """No check found anything: the table still exists, with its columns, so every reader can open it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("check", pa.string()), ("severity", pa.string()), ("run_id", pa.string()),
                        ("step", pa.int32()), ("detail", pa.string())])
    pq.write_table(schema.empty_table(), path)


def _swap(staging: Path, target: Path) -> None:
    """The new dataset into ``target``'s place; a previous one is moved aside first and removed after."""
    if not target.exists():
        os.replace(staging, target)
        return
    old = Path(tempfile.mkdtemp(prefix=".reconcile-findings-old-", dir=target.parent))
    os.replace(target, old / "previous")
    os.replace(staging, target)
    shutil.rmtree(old, ignore_errors=True)
