"""Inspect AI's .eval archives as inspect-ai writes them now (issue 57): Zstandard members are read, and a file of
which nothing can be read is never ``loaded`` and never exit 0 -- it is ``failed``, saying why."""

from __future__ import annotations

import json
import zipfile

from conftest import ROOT
from reconcile import store
from reconcile.errors import ExitCode
from reconcile.ingest.driver import ingest

CLIENT = ROOT / "tests" / "fixtures" / "clients" / "inspect_ai" / "logs"


def _methods(path) -> set[int]:
    with zipfile.ZipFile(path) as archive:
        return {info.compress_type for info in archive.infolist()}


def test_inspect_ai_s_own_zstandard_logs_load_every_sample(tmp_path):
    """inspect-ai 0.3.285 writes every member with ZIP method 93; Python 3.11's zipfile cannot inflate it."""
    logs = sorted(CLIENT.glob("*.eval"))
    assert logs and all(_methods(log) == {93} for log in logs)
    samples = 0
    for log in logs:
        with zipfile.ZipFile(log) as archive:
            samples += sum(1 for name in archive.namelist() if name.startswith("samples/") and name.endswith(".json"))
    with store.connect(tmp_path / "s.duckdb") as con:
        report = ingest(con, logs)
        assert [f.status for f in report.files] == ["loaded"] * len(logs)
        assert report.totals["rejected"] == 0 and report.totals["loaded"] == samples
        assert con.execute("select count(*) from runs").fetchone()[0] == samples


def _relabelled(tmp_path, method: int):
    """A stored archive whose sample member claims another compression method (its bytes are not that)."""
    archive = tmp_path / f"m{method}.eval"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as out:
        out.writestr("header.json", json.dumps({"version": 2, "eval": {"task": "t"}}))
        out.writestr("samples/1_epoch_1.json", json.dumps({"id": 1, "epoch": 1, "events": []}))
    data = bytearray(archive.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # local headers, then the central directory
        start = 0
        while (start := data.find(signature, start)) >= 0:
            if b"samples/" in data[start:start + 80]:
                data[start + offset:start + offset + 2] = method.to_bytes(2, "little")
            start += 4
    archive.write_bytes(bytes(data))
    return archive


def test_a_member_that_cannot_be_read_fails_the_file_with_the_reason(tmp_path, cli):
    for method, words in ((93, "Zstandard-compressed member"), (99, "ZIP method 99")):
        archive = _relabelled(tmp_path, method)
        db = tmp_path / f"{method}.duckdb"
        store.connect(db).close()  # into a store that exists, the failure is recorded (a new one is not made)
        result = cli("ingest", archive, "--db", db)
        assert result.code == ExitCode.BAD_INPUT, result.out + result.err
        assert words in result.err and "loaded" not in result.err.split(words)[0][-20:]
        with store.connect(db, read_only=True) as con:
            assert con.execute("select status from ingested_files").fetchall() == [("failed",)]
            assert con.execute("select count(*) from runs").fetchone()[0] == 0
