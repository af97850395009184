"""The built wheel carries queries/ and reports/ and works from a fresh virtual environment."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv

import pytest

from conftest import ROOT, SAMPLE_NIGHT

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out


@pytest.mark.slow
def test_wheel_installs_and_runs_with_shipped_resources(tmp_path, monkeypatch):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
                   check=True, cwd=tmp_path)
    wheel = next(dist.glob("reconcile-*.whl"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python, reconcile = env_dir / "bin" / "python", env_dir / "bin" / "reconcile"
    # The wheel alone goes into the fresh environment; its dependencies are read from this one's
    # site-packages (installing them again took ~40 s of a 10-minute suite). That folder holds this
    # checkout only as an editable hook (a .pth file, which PYTHONPATH does not run), so reconcile
    # itself can come from nowhere but the wheel, and the assertions below check that it does.
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True, cwd=tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(dict.fromkeys([sysconfig.get_paths()["purelib"],
                                                                    sysconfig.get_paths()["platlib"]])))

    where = subprocess.run([python, "-c", "from reconcile.resources import queries_dir, reports_dir; "
                            "print(queries_dir()); print(reports_dir())"],
                           check=True, cwd=tmp_path, capture_output=True, text=True).stdout.split()
    assert all(str(env_dir) in path for path in where), where  # from the installed package, not the checkout
    journal = SAMPLE_NIGHT / "triage.jsonl"
    ingest = subprocess.run([reconcile, "ingest", journal, "--db", "w.duckdb"], cwd=tmp_path,
                            capture_output=True, text=True)
    assert ingest.returncode == 0, ingest.stderr
    summary = subprocess.run([reconcile, "summary", "--db", "w.duckdb"], cwd=tmp_path, capture_output=True, text=True)
    assert summary.returncode == 0, summary.stderr
    assert "120 runs" in summary.stdout and "triage" in summary.stdout  # rendered from reports/summary.txt.j2
    # every built-in format's staging SQL ships beside its module, and a non-native one loads from the wheel
    shipped = subprocess.run([python, "-c", "from reconcile.formats import transcript_formats; "
                              "print(' '.join(f.name for f in transcript_formats() if f.staging_sql()))"],
                             check=True, cwd=tmp_path, capture_output=True, text=True)
    assert shipped.stdout.split() == ["native", "claude_code", "codex", "gemini_cli", "gemini_cli_jsonl", "langfuse",
                                      "inspect_ai", "mini_swe_agent", "swe_agent", "openhands", "otel"]
    session = ROOT / "tests" / "fixtures" / "realdata" / "spotter-real-sessions" / "extra-fixtures" / "short.jsonl"
    cc = subprocess.run([reconcile, "ingest", "-v", session, "--db", "cc.duckdb"], cwd=tmp_path, capture_output=True, text=True)
    assert cc.returncode == 0 and "claude_code" in cc.stdout, cc.stderr
    # the dated price corrections ship as package data and are loaded from it
    fixes = subprocess.run([python, "-c", "from reconcile.prices.price_files import corrections; print(len(corrections()[1]))"],
                           check=True, cwd=tmp_path, capture_output=True, text=True)
    assert int(fixes.stdout) >= 1
