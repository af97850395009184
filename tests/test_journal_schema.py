"""The shipped JSON Schema accepts what the writer writes and refuses what ingest rejects."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from conftest import SAMPLE_NIGHT
from journals import journal_file


@pytest.fixture(scope="module")
def validator():
    schema = json.loads((resources.files("reconcile") / "schema" / "journal-v1.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_every_line_of_the_sample_night_is_valid(validator):
    for journal in sorted(SAMPLE_NIGHT.glob("*.jsonl")):
        for number, line in enumerate(journal.read_text().splitlines(), 1):
            errors = list(validator.iter_errors(json.loads(line)))
            assert not errors, f"{journal.name}:{number}: {errors[0].message}"


def test_writer_output_is_valid(validator, tmp_path):
    for line in journal_file(tmp_path / "j.jsonl").read_text().splitlines():
        validator.validate(json.loads(line))


@pytest.mark.parametrize("record", [
    {"v": 1, "type": "step", "run_id": "a", "ts": "2026-11-28T23:00:00Z", "idx": 0, "kind": "model",
     "usage": {"output": "zzz"}},
    {"v": 1, "type": "step", "run_id": "a", "ts": "2026-11-28T23:00:00Z", "idx": 0, "kind": "tool",
     "call_id": "c", "tool": "t", "status": "fine"},
    {"v": 2, "type": "run_start", "run_id": "a", "ts": "2026-11-28T23:00:00Z", "agent": "x"},
    {"v": 1, "type": "run_end", "run_id": "a", "ts": "2026-11-28T23:00:00Z"},
])
def test_bad_records_are_invalid(validator, record):
    assert list(validator.iter_errors(record))
