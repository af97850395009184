"""The merge step of a distributed ingest, on its own: shards already exported, merged into a new dataset.

    python bench/merge.py prepare --runs 20000 --shards 8   # bench/data/merge-20000-8/pristine (once)
    python bench/merge.py run --runs 20000 --shards 8       # one merge into a fresh dataset

``prepare`` writes one journal per shard (distinct run ids, so the shards share nothing: the common case
of folders as shards) and runs the executors' code (``ingest_shard``) on each. ``--crossing`` also puts
a copy of shard 0's first journal into shard 1's folder, so two shards hold the same runs. ``run`` links
the pristine shards into a fresh staging folder (hard links: the merge renames files, never changes
them) and merges them into a fresh dataset, with whichever implementation the imported reconcile has:
``merge_shards`` (shards that share nothing merged from their manifests), or, before it, the driver
merge that unions every shard in DuckDB and exports the result. Time it side by side with the
workplace's timing tool, the older implementation given by PYTHONPATH (bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ingest import write_journal  # noqa: E402


def folder_of(data: Path, runs: int, shards: int, crossing: bool) -> Path:
    return data / f"merge-{runs}-{shards}{'-crossing' if crossing else ''}"


def prepare(runs: int, shards: int, crossing: bool, data: Path) -> Path:
    from reconcile.engines.distributed import ingest_shard

    folder = folder_of(data, runs, shards, crossing)
    pristine = folder / "pristine"
    if (pristine / f"shard-{shards - 1}" / "manifest.json").exists():
        return pristine
    each = runs // shards
    journals = []
    for number in range(shards):
        (folder / "input" / f"s{number}").mkdir(parents=True, exist_ok=True)
        journals.append(folder / "input" / f"s{number}" / "night.jsonl")
        write_journal(journals[-1], each, seed=number + 1, first=number * each)
    if crossing:
        shutil.copy(journals[0], folder / "input" / "s1" / "again.jsonl")
    for number, journal in enumerate(journals):
        files = sorted(str(p) for p in journal.parent.iterdir())
        ingest_shard(number, [(path, False) for path in files], str(pristine), None)
    return pristine


def run(runs: int, shards: int, crossing: bool, data: Path) -> None:
    pristine = folder_of(data, runs, shards, crossing) / "pristine"
    work = Path(tempfile.mkdtemp(prefix="merge-bench-", dir=pristine.parent))
    try:
        staging, target = work / "staging", work / "dataset"
        shutil.copytree(pristine, staging, copy_function=os.link)
        folders = [staging / f"shard-{n}" for n in range(shards)]
        try:
            from reconcile.engines.merge import merge_shards
        except ImportError:  # the implementation before: every shard unioned on the driver, then exported
            from reconcile.engines.distributed import _merge
            from reconcile.engines.export import export

            _merge(staging / "merged.duckdb", folders, None)
            export(staging / "merged.duckdb", target)
        else:
            merge_shards(folders, staging, target, None, None)
        assert (target / "manifest.json").exists()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("prepare", "run"))
    parser.add_argument("--runs", type=int, default=20000)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--crossing", action="store_true", help="two shards hold the same runs")
    parser.add_argument("--data", type=Path, default=HERE / "data")
    options = parser.parse_args()
    (prepare if options.step == "prepare" else run)(options.runs, options.shards, options.crossing, options.data)


if __name__ == "__main__":
    main()
