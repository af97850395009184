"""DuckDB's progress bar stays off on every connection reconcile opens for a user's question.

It draws on standard output once a statement passes two seconds — in the middle of a ``--json`` or
``--csv`` answer: at 10 M steps ``reconcile cost --json`` printed bars before its JSON and did not
parse. The suite's stores answer too fast to draw one, so the setting is what is held here, read in a
fresh interpreter: under pytest DuckDB starts with the bar off, outside it (a user's shell, cron, CI
logs) with the bar on.
"""

from __future__ import annotations

import json
import subprocess
import sys

from reconcile.engines.export import export

_SETTINGS = """
import json, sys
from pathlib import Path
from reconcile import store
from reconcile.engines.dataset import open_dataset

def settings(con):
    return con.execute("select current_setting('enable_progress_bar'), current_setting('TimeZone')").fetchall()[0]

plain = __import__("duckdb").connect(":memory:")
found = {"plain duckdb": settings(plain)}
with store.connect(sys.argv[1], read_only=True) as con:
    found["store, read-only"] = settings(con)
with store.connect(":memory:") as con:
    found["store, read-write"] = settings(con)
with open_dataset(Path(sys.argv[2])) as con:
    found["export read back"] = settings(con)
print(json.dumps(found))
"""


def test_every_connection_draws_no_progress_bar(night_db, tmp_path):
    export(night_db, tmp_path / "ds")
    out = subprocess.run([sys.executable, "-c", _SETTINGS, str(night_db), str(tmp_path / "ds")],
                         capture_output=True, text=True, check=True, stdin=subprocess.DEVNULL).stdout
    found = json.loads(out)
    assert found.pop("plain duckdb")[0] is True  # the default this guards against, where users run it
    assert found == {name: [False, "UTC"] for name in ("store, read-only", "store, read-write", "export read back")}
