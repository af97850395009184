"""Secrets never reach a report: not its tables, not a chart's labels, legends, titles or SVG comments.

The secrets sit where transcripts put them — agent and model names (which become chart labels),
task classes, tool arguments, results, errors and final answers — in the shapes people leak.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from journals import StepClock  # noqa: E402
from reconcile import store  # noqa: E402
from reconcile.reports.charts import bar_chart  # noqa: E402
from reconcile.ingest.driver import ingest  # noqa: E402
from reconcile.journal import Journal  # noqa: E402
from reconcile.redact import MASK, redact  # noqa: E402
from reconcile.reports.reporting import write_finance, write_morning  # noqa: E402
from reconcile.engine import DuckDBEngine  # noqa: E402

SECRETS = {  # shape: (text as it is leaked, the part that must never appear)
    "anthropic key": ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "AbCdEfGhIjKlMnOpQrStUv"),
    "openai project key": ("sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2", "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2"),
    "aws access key id": ("AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
    "aws secret in NAME=value": ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
                                 "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"),
    "token in NAME=value": ("export GITHUB_TOKEN=plainvalue123", "plainvalue123"),
    "password in NAME: value": ('"db_password": "hunter2hunter2"', "hunter2hunter2"),
    "bearer token": ("Authorization: Bearer eyAbCdEfGhIjKlMnOpQr1234", "eyAbCdEfGhIjKlMnOpQr1234"),
    "slack bot token": ("xoxb-123456789012-abcdefABCDEF", "123456789012-abcdefABCDEF"),
    "github token": ("ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    "password in a url": ("postgres://admin:s3cr3tPa55@db.internal:5432/prod", "s3cr3tPa55"),
    "google api key": ("AIzaSyA1B2C3D4E5F6G7H8I9J0K1L2M3N4O5P6Q", "SyA1B2C3D4E5F6G7H8I9J0K1L2M3N4O5P6Q"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    "private key": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
                    "MIIEpAIBAAKCAQEA7"),
}


@pytest.mark.parametrize("shape", SECRETS)
def test_each_secret_shape_is_redacted(shape):
    text, secret = SECRETS[shape]
    shown = redact(f"before {text} after")
    assert secret not in shown and MASK in shown and shown.startswith("before ")


def test_counts_named_like_tokens_are_not_secrets():
    for text in ("max_tokens=3000000", "output_tokens: 500", "token_count=12", "tokens=5"):
        assert redact(text) == text


@pytest.fixture(scope="module")
def secret_store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("secrets")
    path = folder / "leaky.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        for number, (shape, (text, _)) in enumerate(SECRETS.items()):
            run = journal.start_run(f"leak-{number}", agent=f"agent {text}", task_class=f"task {text}",
                                    model=f"claude-sonnet-4-5 {text}", provider="anthropic")
            step = run.model_step(model=f"model {text}", ms=5, usage={"input_uncached": 10 + number, "output": 5},
                                  tool_calls=[("shell", {"command": f"echo {text}"})], finish_reason="tool_use")
            run.tool_step(step.calls[0], result=f"out {text}", ms=2, status="error", error=f"failed {text}")
            run.model_step(model=f"model {text}", ms=5, usage={"input_uncached": 10, "output": 5}, text=text, final=True)
            run.end("model_finished", final_output=text)
    db = folder / "leaky.duckdb"
    with store.connect(db) as con:
        ingest(con, [path])
    return db


@pytest.mark.parametrize("report", ["finance", "morning"])
def test_no_secret_reaches_a_report(secret_store, tmp_path, report):
    out = tmp_path / f"{report}.html"
    with store.connect(secret_store) as con:
        (write_finance if report == "finance" else write_morning)(DuckDBEngine(con), out)
    html = out.read_text()
    assert "<svg" in html or report == "morning"
    for shape, (_, secret) in SECRETS.items():
        assert secret not in html, shape
    assert MASK in html


def test_chart_labels_legends_titles_and_comments_are_redacted():
    key = "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2"
    svg = bar_chart([f"agent {key}", "plain"], {"legend xoxb-123456789012-abcdefABCDEF": [1.0, 2.0]},
                    "title AWS_SECRET_ACCESS_KEY=abcdEFGH1234")
    for secret in ("Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2", "123456789012-abcdefABCDEF", "abcdEFGH1234"):
        assert secret not in svg
    assert "<!--" not in svg
