"""Benchmark: a distributed ingest's second run with one new file, against that file alone (issue 59).

    python bench/distributed.py            # 8 folders of one 5,000-run native journal each, 40 new files

Writes bench/data/distributed/ (git-ignored): the inputs, a dataset ingested from them on Spark
(local[2]), and a pool of new files (500 runs each, run ids no other file has). Prints the two commands
to time as a pair: A copies the next new file into the inputs (a folder of new files) and runs the
distributed ingest of all the inputs into the dataset, which kept its shards from the run before; B
ingests that one file, alone, into a new dataset. Their ratio, pair by pair, is the figure
(bench/RESULTS.md); both pay Spark's start, which is most of B.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

FOLDERS = 8
RUNS = 5_000
NEW_FILES = 40
NEW_RUNS = 500
MASTER = "local[2]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    from ingest import write_journal  # bench/ingest.py: runs of ~20 steps written through reconcile.journal

    folder = HERE / "data" / "distributed"
    if folder.exists():
        shutil.rmtree(folder)
    inputs, pool = folder / "in", folder / "pool"
    for number in range(FOLDERS):
        (inputs / f"team-{number}").mkdir(parents=True)
        write_journal(inputs / f"team-{number}" / "night.jsonl", RUNS, seed=number, first=number * RUNS)
    (inputs / "new").mkdir()
    pool.mkdir()
    for number in range(NEW_FILES):
        write_journal(pool / f"new-{number}.jsonl", NEW_RUNS, seed=1000 + number,
                      first=FOLDERS * RUNS + number * NEW_RUNS)
    reconcile = Path(sys.executable).with_name("reconcile")
    dataset, alone = folder / "dataset", folder / "alone"
    subprocess.run([reconcile, "ingest", str(inputs), "--engine", "spark", "--master", MASTER, "--to", str(dataset)],
                   check=True, stdout=subprocess.DEVNULL)
    (folder / "next").write_text("0\n")
    q = shlex.quote
    spark = f"{q(str(reconcile))} ingest --engine spark --master \"{MASTER}\""
    add = (f"n=$(cat {q(str(folder / 'next'))}); cp {q(str(pool))}/new-$n.jsonl {q(str(inputs / 'new'))}/; "
           f"echo $((n+1)) > {q(str(folder / 'next'))}")
    latest = f"n=$(($(cat {q(str(folder / 'next'))})-1)); rm -rf {q(str(alone))}"
    print(json.dumps({
        "A (second run, one new file)": f"sh -c '{add}; exec {spark} {q(str(inputs))} --to {q(str(dataset))}'",
        "B (that file alone)": f"sh -c '{latest}; exec {spark} {q(str(inputs / 'new'))}/new-$n.jsonl "
                               f"--to {q(str(alone))}'",
        "inputs": str(inputs), "bytes": sum(p.stat().st_size for p in inputs.rglob("*.jsonl"))}, indent=2))


if __name__ == "__main__":
    main()
